//===- Passes.td - mxmoe model-level passes ----------------*- tablegen -*-===//

#ifndef MXMOE_TRANSFORMS_PASSES
#define MXMOE_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def MXMoEPrecisionPolicy : Pass<"mxmoe-precision-policy", "::mlir::ModuleOp"> {
  let summary = "Decide per linear / grouped GEMM whether it runs in MX "
                "precision or stays bf16";
  let description = [{
    Sets `precision` (and, for MX, a default `recipe`) on every
    `mxmoe.linear` and `mxmoe.scaled_grouped_matmul` that has none. Rules,
    in order (the first that applies decides):

    1. `user`: an op that already carries `precision` keeps it.
    2. `include`: with a non-empty include list, an op whose fqn matches no
       include pattern stays bf16 (TorchTitan's `fqns` include list).
    3. `exclude`: an op whose fqn matches an exclude pattern stays bf16.
       The user's `exclude` patterns come first, then (unless
       `default-excludes=false`) `output`, `lm_head`, `router.gate`,
       `attention.wk`, `attention.wv` (the TorchAO/TorchTitan MXFP8 MoE
       recipe: the output projection is too sensitive, wk/wv too small to
       gain) and the Hugging Face names of the same layers: `mlp.gate`
       (Qwen3-MoE, DeepSeek-V3 router), `block_sparse_moe.gate` (Mixtral),
       `mlp.router` (gpt-oss), `feed_forward.router` (Llama 4),
       `self_attn.k_proj`, `self_attn.v_proj`.
    4. `legality`: every GEMM of the op (forward over K, input gradient over
       N) must contract over a multiple of 32; otherwise bf16 (e.g. a router
       gate with 16 experts), never an error.
    5. `min-dim`: an op with K, N or a static token count below `min-dim`
       stays bf16 (quantization costs more than it saves on tiny GEMMs).
    6. `default`: the op runs in `precision` (mxfp8 by default).

    An op that carries a `recipe` but no `precision` gets the MX precision
    of its recipe's element type when it is not kept in bf16 (rule
    `recipe` where that differs from `precision`: f8E4M3FN/f8E5M2 ->
    mxfp8, f4E2M1FN -> mxfp4); an FP6 recipe has no MX precision and fails
    the pass naming the op.

    Patterns match dot-separated fqn components: a pattern matches when its
    components occur as a contiguous run of the fqn's components, `*`
    matching any one component (`router.gate` matches
    `layers.3.moe.router.gate`; `output` does not match `outputs`;
    `layers.*.attention.wk` works too).

    Every decision is reported as a remark on the op ("mxmoe-precision-policy:
    <fqn> -> <precision> (rule <rule>: <why>)"; `remarks=false` turns them
    off); a routed-expert `mxmoe.scaled_grouped_matmul` that the `legality`
    rule keeps in bf16 (e.g. K = 2050) is a warning instead, since it then
    gets no MX kernels. `report=FILE` writes all decisions as JSON (fqn,
    op, shape, precision, rule, reason, and for MX ops the recipe's
    granularity) with the resolved `recipe` at the top; `report=-` writes
    it to stderr.

    The recipe assigned to MX ops without one is `precision`'s element type
    (f8E4M3FN or f4E2M1FN), block size 32, `rounding`, and the granularity
    `recipe` names (`#mxmoe.mx_recipe` documents both):
    * `mx32` (default): one scale per 1x32 block (OCP MX, TorchAO's MXFP8
      recipe);
    * `mx128`: 1x128 activation / gradient and 128x128 weight scale tiles
      (DeepSeek-V3's recipe with e8m0 scales); fp8 only (an error with
      `precision=mxfp4`);
    * `auto`: mx128 when `chips` includes sm_90a, mx32 when every chip is
      sm_100a / sm_103a or the precision is mxfp4. One model serves every
      chip of a compilation (its quantize kernels and programs are shared),
      so with sm_90a and Blackwell chips together auto picks mx128: MX128
      tensors are valid MXFP8, which Blackwell's block-scaled MMA runs at
      its full rate, while on Hopper only MX128 lets the GEMM promote once
      per 128 K instead of once per 32. `auto` needs `chips`.
    A recipe written on an op always wins; when its scale granularity is
    not the option's, the pass warns on the op (the option then has no
    effect on it).
  }];
  // The pass creates mxmoe attributes (the default recipe) even when the
  // input has no mxmoe op, so the dialect must be loaded.
  let dependentDialects = ["::mlir::mxmoe::MXMoEDialect"];
  let options = [
    ListOption<"exclude", "exclude", "std::string",
               "fqn patterns kept in bf16, checked before the default ones">,
    Option<"defaultExcludes", "default-excludes", "bool", /*default=*/"true",
           "also keep the default patterns in bf16: output, lm_head, "
           "router.gate, attention.wk, attention.wv, mlp.gate, "
           "block_sparse_moe.gate, mlp.router, feed_forward.router, "
           "self_attn.k_proj, "
           "self_attn.v_proj">,
    ListOption<"include", "include", "std::string",
               "if set, only fqns matching one of these patterns may use MX "
               "precision">,
    Option<"minDim", "min-dim", "int64_t", /*default=*/"0",
           "ops with K, N or a static token count below this stay bf16 "
           "(0 disables the rule)">,
    Option<"precision", "precision", "::mlir::mxmoe::Precision",
           /*default=*/"::mlir::mxmoe::Precision::mxfp8",
           "precision assigned to the ops that pass every rule: mxfp8 or "
           "mxfp4", "MXMOE_PRECISION_OPTION_VALUES">,
    Option<"rounding", "rounding", "::mlir::mxmoe::RoundingMode",
           /*default=*/"::mlir::mxmoe::RoundingMode::rceil",
           "scale rounding of the assigned recipe: floor, rceil, ceil, even",
           "MXMOE_ROUNDING_OPTION_VALUES">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "write the decisions as JSON to this file ('-' = stderr, so "
           "that the IR on stdout stays parseable)">,
    Option<"remarks", "remarks", "bool", /*default=*/"true",
           "report every decision as a remark on its op (the warning for "
           "a routed-expert GEMM kept in bf16 by its shape stays)">,
    Option<"recipe", "recipe", "::mlir::mxmoe::RecipeChoice",
           /*default=*/"::mlir::mxmoe::RecipeChoice::mx32",
           "scale granularity of the assigned recipe: mx32 (1x32 blocks), "
           "mx128 (1x128 activations and gradients, 128x128 weights) or "
           "auto (mx128 when `chips` includes sm_90a, else mx32)",
           "MXMOE_RECIPE_OPTION_VALUES">,
    ListOption<"chips", "chips", "std::string",
               "the target chips `recipe=auto` decides for (sm_90a, "
               "sm_100a, sm_103a)">
  ];
}

def MXMoEExpandScaledMatmul
    : Pass<"mxmoe-expand-scaled-matmul", "::mlir::ModuleOp"> {
  let summary = "Expand MX model-level grouped GEMMs into quantize + swizzle "
                "+ grouped_matmul for forward, input and weight gradient";
  let description = [{
    For every `mxmoe.scaled_grouped_matmul` whose precision is MX (set by
    `mxmoe-precision-policy` or by the user; an op without `precision` is
    treated as MX with its recipe) this pass creates three public functions
    named after the op's fqn, each GEMM's operands quantized along that
    GEMM's own contraction axis (TorchAO `_MXFP8GroupedMM`,
    torchao/prototype/moe_training/mxfp8_grouped_mm.py):

    * `@"<fqn>.forward"(x [M,K], w [G,N,K], offsets [G]) -> y [M,N]`:
      x along K (rowwise, M-grouped blocked scales), w along K (per-expert
      blocked scales), 2D x 3D `mxmoe.grouped_matmul`.
    * `@"<fqn>.input_grad"(dy [M,N], w [G,N,K], offsets) -> dx [M,K]`:
      dy along N (rowwise, M-grouped blocked), w along N (32x1; data written
      as [G,K,N]), 2D x 3D grouped matmul.
    * `@"<fqn>.weight_grad"(dy [M,N], x [M,K], offsets) -> dw [G,N,K]`:
      dy and x along the token axis per group (32x1 with offsets: data
      [N,Tp] / [K,Tp], per-K-group blocked scales), 2D x 2D grouped matmul.
      With `weight-grad-bf16` the weight gradient stays in bf16 (TorchAO
      `wgrad_with_hp`): transposes + a bf16 2D x 2D grouped matmul. With an
      MXFP4 (e2m1) recipe the weight gradient's operands are quantized to
      MXFP8 e4m3 (FP4 operands are lowered for 2D x 3D GEMMs only).

    An `mxmoe.linear` with an MX `precision` (set by the policy or the user)
    is expanded the same way as the one-group case: tokens flattened to
    [T, *], the weight viewed as [1, N, K], offsets = [T]; the bias is added
    in the forward function (its gradient, a sum over tokens, is left to the
    framework); input_grad returns dx in the input's shape and weight_grad
    dW as [N, K].

    An `mxmoe.swiglu_experts` (the experts' w13 GEMM, SwiGLU and w2 GEMM;
    MXFP8 recipes) becomes two functions:
    `@"<fqn>.forward"(x [M,H], w13 [E,2I,H], w2 [E,H,I], offsets) -> (y
    [M,H], h [M,2I])` and `@"<fqn>.backward"(dy, x, h, w13, w2, offsets) ->
    (dx, dw13, dw2)`, made of the same forward / input-gradient /
    weight-gradient steps as above with the SwiGLU and its backward
    (PyTorch's bf16 roundings, as the op's description states) as
    elementwise `linalg.generic` producers of the quantizations that read
    them; `mxmoe-fuse-quantize-producers` moves them into the quantize
    kernels. An FP4 recipe on it fails the pass.

    The model-level op itself is replaced by a `func.call` of the forward
    function. Scales are produced row-major and converted with explicit
    `mxmoe.swizzle_scales` ops (`mxmoe-pack-scales` fuses them later).
    Ops whose precision is bf16 are left alone. Static shapes only: a
    dynamic dimension fails the pass naming the op. Ops inside an
    `mxmoe.tiled_mlp` body are left alone (with a remark): `mxmoe-tile-mlp`
    expands the MX linears and grouped GEMMs among them the same way, once
    per static shard size (`createLinearFunctions`,
    `createGroupedMatmulFunctions`, Passes.h).

    With `quantize-weights-once`, a `scaled_grouped_matmul` whose recipe is
    MX128 quantizes its weight once per step: `mxmoe.quantize_weight`
    (128x128 tiles are the same blocks along K and along N, so the input
    gradient's weight is the forward's, transposed) in the forward, which
    returns it for the backward:

    * `@"<fqn>.forward"(x, w, offsets) -> (y [M,N], wt [G,K,N],
      wt_scales [G, roundUp(K,128), roundUp(N/32,4)] blocked)`;
    * `@"<fqn>.input_grad"(dy, wt, wt_scales, offsets) -> dx`.

    The trade: one read of the bf16 weight per step instead of two (about
    a third of the weight quantization's bytes), against holding the fp8
    transposed copy (1 byte per weight element, plus scales) from the
    forward to the backward. With activation checkpointing of the layer the
    copy lives only during the recomputed forward and its backward. MX32
    ops keep two quantizations (their 1x32 and 32x1 blocks differ) and so
    do `mxmoe.linear`s.
    An MX128 `mxmoe.swiglu_experts` does the same for both of its weights:
    its forward also returns (wt13, wt13 scales, wt2, wt2 scales), which
    its backward takes last.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
  let options = [
    Option<"weightGradBF16", "weight-grad-bf16", "bool", /*default=*/"false",
           "keep the weight-gradient GEMM in bf16 (TorchAO wgrad_with_hp)">,
    Option<"backward", "backward", "bool", /*default=*/"true",
           "also emit the input-gradient and weight-gradient functions">,
    Option<"quantizeWeightsOnce", "quantize-weights-once", "bool",
           /*default=*/"false",
           "MX128 grouped GEMMs: quantize the weight once in the forward "
           "(both orientations, mxmoe.quantize_weight) and pass the "
           "transposed copy to input_grad">
  ];
}

def MXMoEPackScales : Pass<"mxmoe-pack-scales", "::mlir::ModuleOp"> {
  let summary = "Fuse scale swizzles into the quantizations that produce "
                "the scales";
  let description = [{
    A `mxmoe.swizzle_scales` (row-major -> blocked) whose source is the
    scales result of a `mxmoe.quantize` is folded into that quantize: the
    quantize writes the blocked layout directly (one pass over the scales
    instead of two kernels), for every variant the kernels support:

    * plain 2-D and per-expert 3-D blocked scales;
    * M-grouped: a rowwise quantize without offsets followed by a swizzle
      with offsets becomes a quantize with those offsets and M-grouped
      blocked scales;
    * K-groups: a jagged quantize (offsets, axis 0) followed by a
      per-K-group swizzle with the same offsets.

    The fold applies when the swizzle is the only user of the scales; a
    quantize whose row-major scales are also used elsewhere is left alone.
    Blocked 128x4 is the layout the tcgen05 block-scaled MMA reads
    (CUTLASS `tmem_sf_frg`, cute/atom/mma_traits_sm100_frag.hpp).
  }];
}

def MXMoEAccumulateInGemm
    : Pass<"mxmoe-accumulate-in-gemm", "::mlir::ModuleOp"> {
  let summary = "Fold a shard loop's weight-gradient sums into the grouped "
                "GEMMs that compute the gradients (`accumulate`)";
  let description = [{
    A tiled MLP's backward loop (mxmoe-tile-mlp) sums every parameter's
    per-shard gradient into a loop-carried accumulator:
    `%sum = arith.addf %acc, %g` (or `arith.addf %acc, (arith.extf %g)`
    for an f32 `grad_accumulator`), where `%g` is returned by a called
    function's 2D x 2D `mxmoe.grouped_matmul` (the expert weight gradient
    of `<fqn>.experts.backward`). This pass passes `%acc` to the callee
    and makes that GEMM `accumulate %acc` (producing the accumulator's
    element type), so the loop yields the call's result: the sum happens
    in the GEMM's epilogue (one read of the accumulator) instead of an
    elementwise kernel (two reads and a write per element per shard, and,
    for f32 accumulators, a separate widening kernel), and an f32
    accumulator receives the fp32 GEMM result without a bf16 rounding.

    Applies when `%acc` has no other use in the loop body, `%g` (and the
    `extf`) has no other use, and the GEMM's result is used only by the
    callee's return. The call then calls a private clone
    `<callee>.accumulate` (the callee keeps its signature, and its launch
    program; a private function has none of its own). Other sums are left
    as they are. Semantics of `accumulate`: see `mxmoe.grouped_matmul`.
  }];
}

def MXMoEFuseQuantizeProducers
    : Pass<"mxmoe-fuse-quantize-producers", "::mlir::ModuleOp"> {
  let summary = "Fuse elementwise and gather producers into the "
                "quantizations of their results (mxmoe.fused_quantize)";
  let description = [{
    A `linalg.generic` that computes a tensor elementwise (rank 2, all loops
    parallel, identity maps, a `tensor.empty` init) and whose every user is
    an `mxmoe.quantize` becomes, with those quantizations, one
    `mxmoe.fused_quantize`: each quantization's kernel computes the
    producer's elements from its inputs in registers, so the producer's
    result is neither written nor read back (TransformerEngine's
    activation + cast kernels do this by hand; here it is any elementwise
    body). Inputs that are `tensor.extract_slice`s of a tensor at [0, c]
    over all rows (the gate and up halves of a gate/up GEMM's result)
    move into the fused op, which then reads the whole tensor. An
    `mxmoe.gather_rows` (the MoE dispatch) whose every user is an
    `mxmoe.quantize` is fused the same way: the quantize kernels read the
    token rows through the routing indices (times the rows' scores when it
    is scaled), so the routed copy is never written.

    Fused only when convert-mxmoe-to-gpu generates the result
    (`FusedQuantizeOp::whyNotLowered`: quantizations with one-row scale
    tiles along the contiguous axis, or along the token axis in token
    groups (the weight gradient's jagged operands); 16-byte aligned input
    rows and column offsets); a remark says why a producer was left alone.
    Elementwise `arith` / `math` ops on tensors are turned into one
    `linalg.generic` by MLIR's `convert-elementwise-to-linalg` and
    `linalg-fuse-elementwise-ops`, run first (see
    test/Dialect/MXMoE/fuse-quantize-producers.mlir).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MXMoETileMLP : Pass<"mxmoe-tile-mlp", "::mlir::ModuleOp"> {
  let summary = "Lower mxmoe.tiled_mlp to loops over token shards (forward "
                "and recomputing backward)";
  let description = [{
    Replaces every `mxmoe.tiled_mlp` by `scf.for` loops over its token
    shards: `[B, S, H]` inputs are flattened to `[T = B*S, H]`; shard i takes
    rows `[i*q + min(i, r), +q + (i < r))` with q = T / N, r = T % N
    (balanced: sizes differ by at most one); the body is inlined per shard
    on `tensor.extract_slice`s and each result is written back with
    `tensor.insert_slice` into a `[T, ...]` tensor, reshaped to the op's
    result type. The loops carry `mxmoe.num_shards`, the
    gradient-accumulator type and `mxmoe.tiled_mlp_id` (the op's position in
    the module, shared by its forward and backward loops; drivers group
    loops by it).

    Static shards (option `static-shards`, on by default): when T and N are
    known at compile time the split is too, and the pass emits one loop per
    shard size, each with static shapes (`mxmoe.shard_tokens`): r shards of
    q + 1 tokens, then N - r shards of q tokens (shard i of the second loop
    starts at i*q + r); empty shards (T < N) compute nothing and get no
    loop. The body's ops are cloned with static result types (tensor.dim of
    the shard folds to a constant; tensor.extract_slice / splat / empty with
    constant sizes, elementwise ops, destination-style ops, `mxmoe.linear`,
    the routing ops and `mxmoe.scaled_grouped_matmul` are refined: their
    rows follow their operands'). Each MX `mxmoe.linear`,
    `mxmoe.scaled_grouped_matmul` and `mxmoe.swiglu_experts` of the body
    (precision mxfp8 / mxfp4; the latter two unless bf16) is expanded as
    `mxmoe-expand-scaled-matmul` expands it, once per shard size:
    `@"<fqn>.forward"`, `.input_grad`, `.weight_grad` (and `.bias_grad`; a
    grouped GEMM's take the body's group offsets too), or an experts
    block's `.forward` / `.backward`, for the first loop's
    shards and `@"<fqn>.tail.forward"` etc. for the second loop's, every
    function tagged `mxmoe.fqn = <fqn>`; the loops call the forward
    functions and the backward calls the gradient functions, so every GEMM
    of the tiled MLP, the routed experts' included, compiles to MX kernels
    (`mxmoe-compile`). A body op
    whose result cannot be made static (e.g. a size read from the data)
    keeps the single loop over run-time bounds below, with a remark.

    Run-time shards (T or N dynamic, or `static-shards=false`): one loop
    over all N shards with the bounds computed at run time (exactly N
    shards, empty ones when T < N); MX linears and grouped GEMMs in it stay
    model-level ops (`mxmoe-compile` reports them as not compiled), and a
    grouped GEMM there has no gradient rule (the backward fails naming
    it).

    Shard count: the op's `num_shards`, or `auto`: `ceil(T / tokens-per-shard)`
    (default 32768, Axolotl's MoE rule) or with `rule=square` `ceil(T / H)`
    (DeepSpeed/ALST), at least 1 and at most T (computed at run time when T
    is dynamic). Shard sizes are the same in forward and backward because
    both use this partition.

    Shard-invariant work in the body (e.g. `mxmoe.dequantize` of MXFP4
    expert weights) is hoisted out of the loop (loop-invariant code
    motion), so one buffer serves every shard.

    Backward (option `backward`, on by default): for every op a function
    `@"<fqn>.backward"(x, params..., dys...) -> (dx, dparams...)` loops over
    the same shards, recomputes each shard's body and propagates that
    shard's slice of the cotangents back through it (reverse mode with
    rules for arith.addf/subf/mulf/divf/negf, math.exp, math.tanh,
    tensor.extract_slice and mxmoe.linear, whose gradients are mxmoe.linear
    ops `<fqn>.input_grad` / `<fqn>.weight_grad` of the same precision,
    for the calls of expanded MX linears and grouped GEMMs in static loops,
    whose gradients are calls of their input_grad / weight_grad /
    bias_grad functions (dx = input_grad(dy, w[, offsets]), dw =
    weight_grad(dy, x[, offsets])) or, for an experts block, of its
    backward (with the forward call's h and y), and for the routing ops
    (mxmoe.router_topk through mxmoe.router_topk_grad, its `scores`
    through the `scores_grad` operand, gather_rows and combine_rows
    through each other and combine_scores_grad; sort, permutation
    inversion and integer-to-float conversions carry no gradient), and
    for linalg.reduce sums over dim 0 (the gradient broadcast over the
    rows; a broadcast [E] row reaches router_topk_grad as its one-row
    `scores_grad`); a
    recomputed forward call whose result no gradient reads is dropped, as
    is a gradient call whose result nothing reads (frozen weights), and
    with an f32 `grad_accumulator` the expanded weight_grad / bias_grad
    functions return f32);
    dx slices are written in place, parameter gradients are summed over
    shards (never averaged) in `grad_accumulator` (default: the parameter's
    type) and returned in the parameter's type. Summed results
    (`summed_results`, e.g. a router's load-balancing statistics) start at
    zeros and add every shard's part in the forward loop; in the backward
    every shard is seeded with their whole cotangent. Gradients are returned for
    the bf16/f16/f32 tensor parameters; quantized (frozen) weights get none.
    A body op without a rule fails the pass naming it.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
  let options = [
    Option<"rule", "rule", "::mlir::mxmoe::ShardRule",
           /*default=*/"::mlir::mxmoe::ShardRule::tokens",
           "auto shard-count rule: tokens (ceil(T / tokens-per-shard)) or "
           "square (ceil(T / hidden))", "MXMOE_SHARD_RULE_OPTION_VALUES">,
    Option<"tokensPerShard", "tokens-per-shard", "int64_t",
           /*default=*/"32768", "tokens per shard of the `tokens` rule">,
    Option<"backward", "backward", "bool", /*default=*/"true",
           "also emit the <fqn>.backward function">,
    Option<"staticShards", "static-shards", "bool", /*default=*/"true",
           "with a static token and shard count, emit one loop per shard "
           "size with static shapes and expand the body's MX linears "
           "(false: one loop over run-time shard bounds)">,
    Option<"weightGradBF16", "weight-grad-bf16", "bool", /*default=*/"false",
           "expanded MX linears keep their weight gradient in bf16 (as "
           "mxmoe-expand-scaled-matmul's option)">
  ];
}

def MXMoELinearToLinalg : Pass<"mxmoe-linear-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower high-precision mxmoe.linear to linalg (reference "
                "path)";
  let description = [{
    Rewrites every `mxmoe.linear` whose precision is bf16 (or unset) into
    `linalg.matmul` on the weight's transpose plus a broadcast bias add, so
    that host-level IR (e.g. a tiled MLP and its backward) can run on any
    backend, the CPU included. Accumulation is fp32 as `mxmoe.linear`
    specifies: bf16/f16 results get an f32 matmul and bias add and one
    `arith.truncf` (f32 and f64 results accumulate in their own type). MX
    linears are left for `mxmoe-expand-scaled-matmul`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // MXMOE_TRANSFORMS_PASSES
