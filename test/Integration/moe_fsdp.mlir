// Routed experts of the small MoE model of fsdp2_moe.py: 8 experts, hidden
// 1024, expert dim 768, batch 2 x 2047 tokens x top-2 = 8188 routed rows.
// `mxmoe-compile test/Integration/moe_fsdp.mlir --chip sm_90a -o .device/fsdp`
func.func @experts(%x: tensor<8188x1024xbf16>, %w13: tensor<8x1536x1024xbf16>,
                   %w2: tensor<8x1024x768xbf16>, %offsets: tensor<8xi32>)
    -> (tensor<8188x1536xbf16>, tensor<8188x1024xbf16>) {
  %h = mxmoe.scaled_grouped_matmul %x, %w13, %offsets {fqn = "experts.w13"}
      : (tensor<8188x1024xbf16>, tensor<8x1536x1024xbf16>, tensor<8xi32>) -> tensor<8188x1536xbf16>
  %a = tensor.extract_slice %h[0, 0] [8188, 768] [1, 1] : tensor<8188x1536xbf16> to tensor<8188x768xbf16>
  %y = mxmoe.scaled_grouped_matmul %a, %w2, %offsets {fqn = "experts.w2"}
      : (tensor<8188x768xbf16>, tensor<8x1024x768xbf16>, tensor<8xi32>) -> tensor<8188x1024xbf16>
  return %h, %y : tensor<8188x1536xbf16>, tensor<8188x1024xbf16>
}
