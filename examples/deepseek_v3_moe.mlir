// DeepSeek-V3 (671B): the linears of one MoE decoder layer at real dimensions,
// in the mxmoe dialect (model level).
//
// Dimensions (HF deepseek-ai/DeepSeek-V3 config.json): hidden 7168; MLA
// attention with q_lora_rank 1536, kv_lora_rank 512, 128 heads,
// qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128 (wq_a 7168 ->
// 1536, wq_b 1536 -> 128 x 192 = 24576, wkv_a 7168 -> 512 + 64 = 576,
// wkv_b 512 -> 128 x (128 + 128) = 32768, wo 16384 -> 7168); 256 routed
// experts of intermediate size 2048, top-8 routing; one shared expert of
// intermediate 2048; vocabulary 129280. One sequence of 4096 tokens, so the
// routed grouped GEMMs see 4096 x 8 = 32768 rows. FQNs follow TorchTitan's
// deepseek_v3 modules. Routing (top-k, sort) is done by the framework:
// `%routed_x` is sorted by expert and `%offsets` holds the 256 end offsets.

func.func @attention(%x: tensor<4096x7168xbf16>, %cq: tensor<4096x1536xbf16>,
                     %ckv: tensor<4096x512xbf16>, %ctx: tensor<4096x16384xbf16>,
                     %wq_a: tensor<1536x7168xbf16>, %wq_b: tensor<24576x1536xbf16>,
                     %wkv_a: tensor<576x7168xbf16>, %wkv_b: tensor<32768x512xbf16>,
                     %wo: tensor<7168x16384xbf16>)
    -> (tensor<4096x1536xbf16>, tensor<4096x24576xbf16>, tensor<4096x576xbf16>,
        tensor<4096x32768xbf16>, tensor<4096x7168xbf16>) {
  %qa = mxmoe.linear %x, %wq_a {fqn = "layers.3.attention.wq_a"}
      : (tensor<4096x7168xbf16>, tensor<1536x7168xbf16>) -> tensor<4096x1536xbf16>
  %qb = mxmoe.linear %cq, %wq_b {fqn = "layers.3.attention.wq_b"}
      : (tensor<4096x1536xbf16>, tensor<24576x1536xbf16>) -> tensor<4096x24576xbf16>
  %kva = mxmoe.linear %x, %wkv_a {fqn = "layers.3.attention.wkv_a"}
      : (tensor<4096x7168xbf16>, tensor<576x7168xbf16>) -> tensor<4096x576xbf16>
  %kvb = mxmoe.linear %ckv, %wkv_b {fqn = "layers.3.attention.wkv_b"}
      : (tensor<4096x512xbf16>, tensor<32768x512xbf16>) -> tensor<4096x32768xbf16>
  %o = mxmoe.linear %ctx, %wo {fqn = "layers.3.attention.wo"}
      : (tensor<4096x16384xbf16>, tensor<7168x16384xbf16>) -> tensor<4096x7168xbf16>
  return %qa, %qb, %kva, %kvb, %o
      : tensor<4096x1536xbf16>, tensor<4096x24576xbf16>, tensor<4096x576xbf16>,
        tensor<4096x32768xbf16>, tensor<4096x7168xbf16>
}

func.func @moe(%h: tensor<4096x7168xbf16>, %router_w: tensor<256x7168xbf16>,
               %routed_x: tensor<32768x7168xbf16>, %offsets: tensor<256xi32>,
               %w13: tensor<256x4096x7168xbf16>, %act: tensor<32768x2048xbf16>,
               %w2: tensor<256x7168x2048xbf16>,
               %shared_w13: tensor<4096x7168xbf16>, %shared_act: tensor<4096x2048xbf16>,
               %shared_w2: tensor<7168x2048xbf16>)
    -> (tensor<4096x256xbf16>, tensor<32768x4096xbf16>, tensor<32768x7168xbf16>,
        tensor<4096x4096xbf16>, tensor<4096x7168xbf16>) {
  %logits = mxmoe.linear %h, %router_w {fqn = "layers.3.moe.router.gate"}
      : (tensor<4096x7168xbf16>, tensor<256x7168xbf16>) -> tensor<4096x256xbf16>
  %gate_up = mxmoe.scaled_grouped_matmul %routed_x, %w13, %offsets {fqn = "layers.3.moe.experts.w13"}
      : (tensor<32768x7168xbf16>, tensor<256x4096x7168xbf16>, tensor<256xi32>) -> tensor<32768x4096xbf16>
  %down = mxmoe.scaled_grouped_matmul %act, %w2, %offsets {fqn = "layers.3.moe.experts.w2"}
      : (tensor<32768x2048xbf16>, tensor<256x7168x2048xbf16>, tensor<256xi32>) -> tensor<32768x7168xbf16>
  %sgu = mxmoe.linear %h, %shared_w13 {fqn = "layers.3.moe.shared_experts.w13"}
      : (tensor<4096x7168xbf16>, tensor<4096x7168xbf16>) -> tensor<4096x4096xbf16>
  %sd = mxmoe.linear %shared_act, %shared_w2 {fqn = "layers.3.moe.shared_experts.w2"}
      : (tensor<4096x2048xbf16>, tensor<7168x2048xbf16>) -> tensor<4096x7168xbf16>
  return %logits, %gate_up, %down, %sgu, %sd
      : tensor<4096x256xbf16>, tensor<32768x4096xbf16>, tensor<32768x7168xbf16>,
        tensor<4096x4096xbf16>, tensor<4096x7168xbf16>
}

func.func @output(%h: tensor<4096x7168xbf16>, %w: tensor<129280x7168xbf16>)
    -> tensor<4096x129280xbf16> {
  %logits = mxmoe.linear %h, %w {fqn = "output"}
      : (tensor<4096x7168xbf16>, tensor<129280x7168xbf16>) -> tensor<4096x129280xbf16>
  return %logits : tensor<4096x129280xbf16>
}
