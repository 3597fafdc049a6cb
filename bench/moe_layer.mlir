// Routed-expert GEMMs of one MoE layer at real shapes, for bench/moe_layer_bench.py.
// scout: 8192 tokens x top-1 = 8192 routed rows, 16 experts, hidden 5120, expert dim 8192.
func.func @scout(%x: tensor<8192x5120xbf16>, %w13: tensor<16x16384x5120xbf16>,
                   %w2: tensor<16x5120x8192xbf16>, %offsets: tensor<16xi32>)
    -> (tensor<8192x16384xbf16>, tensor<8192x5120xbf16>) {
  %h = mxmoe.scaled_grouped_matmul %x, %w13, %offsets {fqn = "scout.w13"}
      : (tensor<8192x5120xbf16>, tensor<16x16384x5120xbf16>, tensor<16xi32>) -> tensor<8192x16384xbf16>
  %a = tensor.extract_slice %h[0, 0] [8192, 8192] [1, 1] : tensor<8192x16384xbf16> to tensor<8192x8192xbf16>
  %y = mxmoe.scaled_grouped_matmul %a, %w2, %offsets {fqn = "scout.w2"}
      : (tensor<8192x8192xbf16>, tensor<16x5120x8192xbf16>, tensor<16xi32>) -> tensor<8192x5120xbf16>
  return %h, %y : tensor<8192x16384xbf16>, tensor<8192x5120xbf16>
}
// qwen3: 4096 tokens x top-8 = 32768 routed rows, 128 experts, hidden 2048, expert dim 768.
func.func @qwen3(%x: tensor<32768x2048xbf16>, %w13: tensor<128x1536x2048xbf16>,
                   %w2: tensor<128x2048x768xbf16>, %offsets: tensor<128xi32>)
    -> (tensor<32768x1536xbf16>, tensor<32768x2048xbf16>) {
  %h = mxmoe.scaled_grouped_matmul %x, %w13, %offsets {fqn = "qwen3.w13"}
      : (tensor<32768x2048xbf16>, tensor<128x1536x2048xbf16>, tensor<128xi32>) -> tensor<32768x1536xbf16>
  %a = tensor.extract_slice %h[0, 0] [32768, 768] [1, 1] : tensor<32768x1536xbf16> to tensor<32768x768xbf16>
  %y = mxmoe.scaled_grouped_matmul %a, %w2, %offsets {fqn = "qwen3.w2"}
      : (tensor<32768x768xbf16>, tensor<128x2048x768xbf16>, tensor<128xi32>) -> tensor<32768x2048xbf16>
  return %h, %y : tensor<32768x1536xbf16>, tensor<32768x2048xbf16>
}
// The same experts as one mxmoe.swiglu_experts each (the SwiGLU between the
// GEMMs compiled with them: forward and backward programs).
func.func @scout_block(%x: tensor<8192x5120xbf16>, %w13: tensor<16x16384x5120xbf16>,
                       %w2: tensor<16x5120x8192xbf16>, %offsets: tensor<16xi32>) -> tensor<8192x5120xbf16> {
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offsets {fqn = "scout.experts"}
      : (tensor<8192x5120xbf16>, tensor<16x16384x5120xbf16>, tensor<16x5120x8192xbf16>, tensor<16xi32>) -> tensor<8192x5120xbf16>
  return %y : tensor<8192x5120xbf16>
}
func.func @qwen3_block(%x: tensor<32768x2048xbf16>, %w13: tensor<128x1536x2048xbf16>,
                       %w2: tensor<128x2048x768xbf16>, %offsets: tensor<128xi32>) -> tensor<32768x2048xbf16> {
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offsets {fqn = "qwen3.experts"}
      : (tensor<32768x2048xbf16>, tensor<128x1536x2048xbf16>, tensor<128x2048x768xbf16>, tensor<128xi32>) -> tensor<32768x2048xbf16>
  return %y : tensor<32768x2048xbf16>
}
// The whole routed block (dispatch, experts, weighted combine) as one op.
func.func @scout_routed(%x: tensor<8192x5120xbf16>, %w13: tensor<16x16384x5120xbf16>,
                        %w2: tensor<16x5120x8192xbf16>, %offsets: tensor<16xi32>,
                        %idx: tensor<8192xi32>, %s: tensor<8192x1xf32>) -> tensor<8192x5120xbf16> {
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offsets routing(%idx, %s : tensor<8192xi32>, tensor<8192x1xf32>) {fqn = "scout.routed"}
      : (tensor<8192x5120xbf16>, tensor<16x16384x5120xbf16>, tensor<16x5120x8192xbf16>, tensor<16xi32>) -> tensor<8192x5120xbf16>
  return %y : tensor<8192x5120xbf16>
}
func.func @qwen3_routed(%x: tensor<4096x2048xbf16>, %w13: tensor<128x1536x2048xbf16>,
                        %w2: tensor<128x2048x768xbf16>, %offsets: tensor<128xi32>,
                        %idx: tensor<32768xi32>, %s: tensor<4096x8xf32>) -> tensor<4096x2048xbf16> {
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offsets routing(%idx, %s : tensor<32768xi32>, tensor<4096x8xf32>) {fqn = "qwen3.routed"}
      : (tensor<4096x2048xbf16>, tensor<128x1536x2048xbf16>, tensor<128x2048x768xbf16>, tensor<128xi32>) -> tensor<4096x2048xbf16>
  return %y : tensor<4096x2048xbf16>
}
