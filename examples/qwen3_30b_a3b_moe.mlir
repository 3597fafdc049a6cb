// Qwen3-30B-A3B: the MoE block of one decoder layer at real dimensions.
//
// Dimensions (HF Qwen/Qwen3-30B-A3B config.json): hidden 2048, 128 routed
// experts of intermediate size 768 (gate and up fused: 1536), top-8
// routing, no shared expert; 48 layers, all MoE. One sequence of 4096
// tokens: the routed grouped GEMMs see 4096 x 8 = 32768 rows. K = 768 (the
// down projection) is not a multiple of 128: its 24 scale columns pad to 24.
// Routing (softmax top-8, sort) is done by the framework: `%routed_x` holds
// the tokens sorted by expert and `%offsets` the 128 end offsets.

func.func @moe(%h: tensor<4096x2048xbf16>, %router_w: tensor<128x2048xbf16>,
               %routed_x: tensor<32768x2048xbf16>, %offsets: tensor<128xi32>,
               %w13: tensor<128x1536x2048xbf16>, %act: tensor<32768x768xbf16>,
               %w2: tensor<128x2048x768xbf16>)
    -> (tensor<4096x128xbf16>, tensor<32768x1536xbf16>, tensor<32768x2048xbf16>) {
  %logits = mxmoe.linear %h, %router_w {fqn = "layers.0.mlp.gate"}
      : (tensor<4096x2048xbf16>, tensor<128x2048xbf16>) -> tensor<4096x128xbf16>
  %gate_up = mxmoe.scaled_grouped_matmul %routed_x, %w13, %offsets {fqn = "layers.0.mlp.experts.gate_up_proj"}
      : (tensor<32768x2048xbf16>, tensor<128x1536x2048xbf16>, tensor<128xi32>) -> tensor<32768x1536xbf16>
  %down = mxmoe.scaled_grouped_matmul %act, %w2, %offsets {fqn = "layers.0.mlp.experts.down_proj"}
      : (tensor<32768x768xbf16>, tensor<128x2048x768xbf16>, tensor<128xi32>) -> tensor<32768x2048xbf16>
  return %logits, %gate_up, %down
      : tensor<4096x128xbf16>, tensor<32768x1536xbf16>, tensor<32768x2048xbf16>
}
