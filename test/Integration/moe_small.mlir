// A small routed-expert MLP (SwiGLU-free: two grouped GEMMs) at sizes a
// device test can check against float64: 8 experts, 2048 routed tokens,
// hidden 1024, expert dim 768 (K = 768 is not a multiple of 128, so the
// w2 GEMMs end their K loops with a partial stage). Compiled by
// `mxmoe-compile test/Integration/moe_small.mlir --chip sm_90a` and run by
// moe_layer_gpu.py. The ops carry no recipe, so `--recipe mx128` (and
// `--quantize-weights-once`) apply to them.
func.func @experts(%x: tensor<2048x1024xbf16>, %w13: tensor<8x768x1024xbf16>,
                   %w2: tensor<8x1024x768xbf16>, %offsets: tensor<8xi32>)
    -> tensor<2048x1024xbf16> {
  %h = mxmoe.scaled_grouped_matmul %x, %w13, %offsets
      {fqn = "experts.w13"}
      : (tensor<2048x1024xbf16>, tensor<8x768x1024xbf16>, tensor<8xi32>)
      -> tensor<2048x768xbf16>
  %y = mxmoe.scaled_grouped_matmul %h, %w2, %offsets
      {fqn = "experts.w2"}
      : (tensor<2048x768xbf16>, tensor<8x1024x768xbf16>, tensor<8xi32>)
      -> tensor<2048x1024xbf16>
  return %y : tensor<2048x1024xbf16>
}

// A dense MX linear (one-group grouped GEMM): its programs bind the
// one-group offsets as a program constant and reshape the weight in place.
func.func @proj(%x: tensor<2048x1024xbf16>, %w: tensor<768x1024xbf16>)
    -> tensor<2048x768xbf16> {
  %y = mxmoe.linear %x, %w {fqn = "proj", precision = #mxmoe.precision<mxfp8>}
      : (tensor<2048x1024xbf16>, tensor<768x1024xbf16>) -> tensor<2048x768xbf16>
  return %y : tensor<2048x768xbf16>
}
