// test/Integration/swiglu_experts_gpu.py: the routed experts as one
// mxmoe.swiglu_experts (@block: <fqn>.forward / <fqn>.backward programs,
// the SwiGLU fused into the quantize kernels) and as two
// mxmoe.scaled_grouped_matmul ops (@gemms: the per-GEMM programs the
// layer used before, with PyTorch's SwiGLU between them), same shapes.
// Build: mxmoe-compile test/Integration/swiglu_experts.mlir --chip sm_90a --recipe mx128 -o DIR
func.func @block(%x: tensor<512x256xbf16>, %w13: tensor<4x512x256xbf16>, %w2: tensor<4x256x256xbf16>, %offs: tensor<4xi32>) -> tensor<512x256xbf16> {
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offs {fqn = "block.experts"}
      : (tensor<512x256xbf16>, tensor<4x512x256xbf16>, tensor<4x256x256xbf16>, tensor<4xi32>) -> tensor<512x256xbf16>
  return %y : tensor<512x256xbf16>
}
func.func @gemms(%x: tensor<512x256xbf16>, %w13: tensor<4x512x256xbf16>, %a: tensor<512x256xbf16>, %w2: tensor<4x256x256xbf16>, %offs: tensor<4xi32>) -> (tensor<512x512xbf16>, tensor<512x256xbf16>) {
  %h = mxmoe.scaled_grouped_matmul %x, %w13, %offs {fqn = "gemms.w13"}
      : (tensor<512x256xbf16>, tensor<4x512x256xbf16>, tensor<4xi32>) -> tensor<512x512xbf16>
  %y = mxmoe.scaled_grouped_matmul %a, %w2, %offs {fqn = "gemms.w2"}
      : (tensor<512x256xbf16>, tensor<4x256x256xbf16>, tensor<4xi32>) -> tensor<512x256xbf16>
  return %h, %y : tensor<512x512xbf16>, tensor<512x256xbf16>
}
// @routed: the same experts with dispatch and combine compiled in: 128
// tokens, top-4 (512 routed rows, as @block's), f32 router weights.
func.func @routed(%x: tensor<128x256xbf16>, %w13: tensor<4x512x256xbf16>, %w2: tensor<4x256x256xbf16>, %offs: tensor<4xi32>, %idx: tensor<512xi32>, %s: tensor<128x4xf32>) -> tensor<128x256xbf16> {
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offs routing(%idx, %s : tensor<512xi32>, tensor<128x4xf32>) {fqn = "routed.experts"}
      : (tensor<128x256xbf16>, tensor<4x512x256xbf16>, tensor<4x256x256xbf16>, tensor<4xi32>) -> tensor<128x256xbf16>
  return %y : tensor<128x256xbf16>
}
