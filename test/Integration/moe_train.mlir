// Routed experts of the small Qwen3-MoE model trained by train_hf_moe.py:
// hidden 256, expert dim 128, 8 experts, top-2, batch 8 x 256 tokens ->
// 4096 routed rows. One pair of programs serves every layer.
// `mxmoe-compile test/Integration/moe_train.mlir --chip sm_90a -o .device/train`
func.func @experts(%x: tensor<4096x256xbf16>, %w13: tensor<8x256x256xbf16>,
                   %w2: tensor<8x256x128xbf16>, %offsets: tensor<8xi32>)
    -> (tensor<4096x256xbf16>, tensor<4096x256xbf16>) {
  %h = mxmoe.scaled_grouped_matmul %x, %w13, %offsets {fqn = "experts.w13"}
      : (tensor<4096x256xbf16>, tensor<8x256x256xbf16>, tensor<8xi32>) -> tensor<4096x256xbf16>
  %a = tensor.extract_slice %h[0, 0] [4096, 128] [1, 1] : tensor<4096x256xbf16> to tensor<4096x128xbf16>
  %y = mxmoe.scaled_grouped_matmul %a, %w2, %offsets {fqn = "experts.w2"}
      : (tensor<4096x128xbf16>, tensor<8x256x128xbf16>, tensor<8xi32>) -> tensor<4096x256xbf16>
  return %h, %y : tensor<4096x256xbf16>, tensor<4096x256xbf16>
}
