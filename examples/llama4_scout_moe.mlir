// Llama 4 Scout 17B-16E: the linears and the MoE block of one decoder layer,
// at the model's real dimensions, in the mxmoe dialect (model level).
//
// Dimensions (HF meta-llama/Llama-4-Scout-17B-16E config.json; torchtitan
// llama4 "17bx16e"): hidden 5120; 40 query heads and 8 KV heads of dim 128
// (wq 5120 -> 5120, wk/wv 5120 -> 1024, wo 5120 -> 5120); 16 routed experts
// of intermediate size 8192 with top-1 routing; one shared expert of
// intermediate size 8192; vocabulary 202048. One sequence of 8192 tokens
// (local batch 1, seq 8192, the TorchTitan MXFP8 recipe's setting), so the
// routed expert GEMMs see M = 8192 x top-1 = 8192 rows.
//
// Out of scope of the compiler and done by the framework: attention scores
// (SDPA), the top-k/sort/permute of routing (`%routed_x` holds the tokens
// sorted by expert, `%offsets` the int32 end offsets of the 16 groups) and
// the un-permute/combine.
//
// Fully qualified names follow TorchTitan's Llama 4 modules; they are what
// `mxmoe-precision-policy` matches (by default `output`, `router.gate`,
// `attention.wk` and `attention.wv` stay in bf16). No op pins a recipe, so
// the policy's (mxmoe-compile --recipe mx32 | mx128 | auto) applies to all.

// The attention projections.
func.func @attention(%x: tensor<8192x5120xbf16>,
                     %attn_ctx: tensor<8192x5120xbf16>,
                     %wq: tensor<5120x5120xbf16>,
                     %wk: tensor<1024x5120xbf16>,
                     %wv: tensor<1024x5120xbf16>,
                     %wo: tensor<5120x5120xbf16>)
    -> (tensor<8192x5120xbf16>, tensor<8192x1024xbf16>,
        tensor<8192x1024xbf16>, tensor<8192x5120xbf16>) {
  %q = mxmoe.linear %x, %wq {fqn = "layers.0.attention.wq"}
      : (tensor<8192x5120xbf16>, tensor<5120x5120xbf16>) -> tensor<8192x5120xbf16>
  %k = mxmoe.linear %x, %wk {fqn = "layers.0.attention.wk"}
      : (tensor<8192x5120xbf16>, tensor<1024x5120xbf16>) -> tensor<8192x1024xbf16>
  %v = mxmoe.linear %x, %wv {fqn = "layers.0.attention.wv"}
      : (tensor<8192x5120xbf16>, tensor<1024x5120xbf16>) -> tensor<8192x1024xbf16>
  %o = mxmoe.linear %attn_ctx, %wo {fqn = "layers.0.attention.wo"}
      : (tensor<8192x5120xbf16>, tensor<5120x5120xbf16>) -> tensor<8192x5120xbf16>
  return %q, %k, %v, %o
      : tensor<8192x5120xbf16>, tensor<8192x1024xbf16>, tensor<8192x1024xbf16>,
        tensor<8192x5120xbf16>
}

// The MoE block: router logits, 16 routed experts (gate and up projections
// fused into w13: [16, 2*8192, 5120]; down projection w2: [16, 5120, 8192])
// with SwiGLU, and the shared expert as a tiled MLP over the token axis.
func.func @moe(%h: tensor<8192x5120xbf16>,
               %router_w: tensor<16x5120xbf16>,
               %routed_x: tensor<8192x5120xbf16>,
               %offsets: tensor<16xi32>,
               %w13: tensor<16x16384x5120xbf16>,
               %w2: tensor<16x5120x8192xbf16>,
               %shared_w13: tensor<16384x5120xbf16>,
               %shared_w2: tensor<5120x8192xbf16>)
    -> (tensor<8192x16xbf16>, tensor<8192x5120xbf16>, tensor<8192x5120xbf16>) {
  // Router: 16 outputs (not a multiple of 32): kept in bf16 by the policy.
  %logits = mxmoe.linear %h, %router_w {fqn = "layers.0.moe.router.gate"}
      : (tensor<8192x5120xbf16>, tensor<16x5120xbf16>) -> tensor<8192x16xbf16>

  // Routed experts.
  %gate_up = mxmoe.scaled_grouped_matmul %routed_x, %w13, %offsets
      {fqn = "layers.0.moe.experts.w13"}
      : (tensor<8192x5120xbf16>, tensor<16x16384x5120xbf16>, tensor<16xi32>)
      -> tensor<8192x16384xbf16>
  %gate = tensor.extract_slice %gate_up[0, 0] [8192, 8192] [1, 1]
      : tensor<8192x16384xbf16> to tensor<8192x8192xbf16>
  %up = tensor.extract_slice %gate_up[0, 8192] [8192, 8192] [1, 1]
      : tensor<8192x16384xbf16> to tensor<8192x8192xbf16>
  %one = arith.constant dense<1.0> : tensor<8192x8192xbf16>
  %neg = arith.negf %gate : tensor<8192x8192xbf16>
  %exp = math.exp %neg : tensor<8192x8192xbf16>
  %den = arith.addf %one, %exp : tensor<8192x8192xbf16>
  %silu = arith.divf %gate, %den : tensor<8192x8192xbf16>
  %act = arith.mulf %silu, %up : tensor<8192x8192xbf16>
  %routed_out = mxmoe.scaled_grouped_matmul %act, %w2, %offsets
      {fqn = "layers.0.moe.experts.w2"}
      : (tensor<8192x8192xbf16>, tensor<16x5120x8192xbf16>, tensor<16xi32>)
      -> tensor<8192x5120xbf16>

  // Shared expert, token-tiled (shards = auto: ceil(8192 / 32768) = 1 here;
  // the same IR at 512K tokens runs 16 shards).
  %shared_out = mxmoe.tiled_mlp shards = auto (%h, %shared_w13, %shared_w2)
      {fqn = "layers.0.moe.shared_expert"}
      : (tensor<8192x5120xbf16>, tensor<16384x5120xbf16>, tensor<5120x8192xbf16>)
      -> tensor<8192x5120xbf16> {
  ^bb0(%xs: tensor<?x5120xbf16>, %sw13: tensor<16384x5120xbf16>,
       %sw2: tensor<5120x8192xbf16>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xs, %c0 : tensor<?x5120xbf16>
    %sgu = mxmoe.linear %xs, %sw13 {fqn = "layers.0.moe.shared_expert.w13"}
        : (tensor<?x5120xbf16>, tensor<16384x5120xbf16>) -> tensor<?x16384xbf16>
    %sg = tensor.extract_slice %sgu[0, 0] [%n, 8192] [1, 1]
        : tensor<?x16384xbf16> to tensor<?x8192xbf16>
    %su = tensor.extract_slice %sgu[0, 8192] [%n, 8192] [1, 1]
        : tensor<?x16384xbf16> to tensor<?x8192xbf16>
    %sneg = arith.negf %sg : tensor<?x8192xbf16>
    %sexp = math.exp %sneg : tensor<?x8192xbf16>
    %cone = arith.constant 1.0 : bf16
    %ones = tensor.splat %cone[%n] : tensor<?x8192xbf16>
    %sden = arith.addf %ones, %sexp : tensor<?x8192xbf16>
    %ssilu = arith.divf %sg, %sden : tensor<?x8192xbf16>
    %sact = arith.mulf %ssilu, %su : tensor<?x8192xbf16>
    %sout = mxmoe.linear %sact, %sw2 {fqn = "layers.0.moe.shared_expert.w2"}
        : (tensor<?x8192xbf16>, tensor<5120x8192xbf16>) -> tensor<?x5120xbf16>
    mxmoe.yield %sout : tensor<?x5120xbf16>
  }
  return %logits, %routed_out, %shared_out
      : tensor<8192x16xbf16>, tensor<8192x5120xbf16>, tensor<8192x5120xbf16>
}

// The output projection (lm head): kept in bf16 by the policy.
func.func @output(%h: tensor<8192x5120xbf16>, %w: tensor<202048x5120xbf16>)
    -> tensor<8192x202048xbf16> {
  %logits = mxmoe.linear %h, %w {fqn = "output"}
      : (tensor<8192x5120xbf16>, tensor<202048x5120xbf16>) -> tensor<8192x202048xbf16>
  return %logits : tensor<8192x202048xbf16>
}
