// gpt-oss-20b: the MoE block of one decoder layer at real dimensions, with
// the expert weights stored in MXFP4 (E2M1 data, one E8M0 scale per 32
// elements along K) as released.
//
// Dimensions (HF openai/gpt-oss-20b config.json; openai/gpt-oss
// gpt_oss/torch/model.py): hidden 2880, 32 experts, intermediate 2880
// (mlp1 out 5760: interleaved SwiGLU), top-4 routing; 24 layers. K = 2880
// gives 90 scale columns (padded to 92 in the blocked layout). One sequence
// of 4096 tokens: 4096 x 4 = 16384 routed rows. The MXFP4 weights are
// dequantized in the graph (one kernel; inside an `mxmoe.tiled_mlp` body
// mxmoe-tile-mlp would hoist it out of the shard loop), and the experts'
// GEMMs run in MXFP8 (the MoE training recipe) on the bf16 copy.

func.func @mlp1(%routed_x: tensor<16384x2880xbf16>, %offsets: tensor<32xi32>,
                %w1q: tensor<32x5760x2880xf4E2M1FN>,
                %w1s: tensor<32x5760x90xf8E8M0FNU>) -> tensor<16384x5760xbf16> {
  %w1 = mxmoe.dequantize %w1q, %w1s {axis = 2 : i64}
      : tensor<32x5760x2880xf4E2M1FN>, tensor<32x5760x90xf8E8M0FNU> -> tensor<32x5760x2880xbf16>
  %h = mxmoe.scaled_grouped_matmul %routed_x, %w1, %offsets {fqn = "block.0.mlp.mlp1"}
      : (tensor<16384x2880xbf16>, tensor<32x5760x2880xbf16>, tensor<32xi32>) -> tensor<16384x5760xbf16>
  return %h : tensor<16384x5760xbf16>
}

func.func @router(%x: tensor<4096x2880xbf16>, %gate: tensor<32x2880xbf16>) -> tensor<4096x32xbf16> {
  // 32 experts: a multiple of 32, but the router stays bf16 by name.
  %l = mxmoe.linear %x, %gate {fqn = "block.0.mlp.router.gate"}
      : (tensor<4096x2880xbf16>, tensor<32x2880xbf16>) -> tensor<4096x32xbf16>
  return %l : tensor<4096x32xbf16>
}
