//===- MXMoEOps.td - mxmoe operations ----------------------*- tablegen -*-===//
//
// Operations of the mxmoe dialect, model level then MX level. Every op's
// verifier lives in lib/Dialect/MXMoE/IR/MXMoEOps.cpp under the op's name;
// its round-trip tests in test/Dialect/MXMoE/<op>.mlir and the invalid-IR
// tests in <op>-invalid-<topic>.mlir (op names with '-' for '_'); its
// GPU lowering in lib/Conversion/MXMoEToGPU/ (test/Conversion/MXMoEToGPU/).
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_OPS
#define MXMOE_OPS

include "mxmoe/Dialect/MXMoE/IR/MXMoEDialect.td"
include "mxmoe/Dialect/MXMoE/IR/MXMoEAttrs.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def MXMoE_HighPrecisionFloat : AnyTypeOf<[BF16, F16, F32],
    "bf16, f16 or f32">;
def MXMoE_MXElementType : AnyTypeOf<[F8E4M3FN, F8E5M2, F6E2M3FN, F6E3M2FN,
                                     F4E2M1FN],
    "an MX element type (f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN, f4E2M1FN)">;
def MXMoE_GemmOperandElement : AnyTypeOf<[F8E4M3FN, F8E5M2, F6E2M3FN,
                                          F6E3M2FN, F4E2M1FN, BF16, F16, F32],
    "an MX element type or bf16/f16/f32">;

def MXMoE_HPTensor : RankedTensorOf<[MXMoE_HighPrecisionFloat]>;
def MXMoE_MXTensor : RankedTensorOf<[MXMoE_MXElementType]>;
// Element types of scale tensors are checked by the verifiers so that the
// message names the rule ("scale element type must be f8E8M0FNU").
def MXMoE_ScaleTensor : RankedTensorOf<[AnyType]>;
def MXMoE_OffsetsTensor : RankedTensorOf<[AnyType]>;
def MXMoE_GemmTensor : RankedTensorOf<[MXMoE_GemmOperandElement]>;

//===----------------------------------------------------------------------===//
// Model level
//===----------------------------------------------------------------------===//

def MXMoE_LinearOp : MXMoE_Op<"linear", [Pure]> {
  let summary = "dense linear layer y = x W^T (+ bias), a precision-policy "
                "candidate";
  let description = [{
    A dense projection of a model (attention wq/wk/wv/wo, router gate, shared
    expert, output head), named by its fully qualified name `fqn` so that
    `mxmoe-precision-policy` can decide whether it runs in MXFP8 or stays in
    bf16.

    Shapes and types:
    * `input`: `[..., K]` (rank >= 2; leading dims are tokens), bf16/f16/f32;
    * `weight`: `[N, K]` (the PyTorch `nn.Linear.weight` layout), same
      element type as `input`;
    * `bias` (optional): `[N]`;
    * result: `[..., N]` with the input's leading dims, bf16/f16/f32.

    Semantics: `y[..., n] = sum_k x[..., k] * W[n, k] (+ bias[n])`,
    accumulated in fp32. With `precision = #mxmoe.precision<mxfp8>` both
    operands are quantized along K with `recipe` (default: E4M3, block 32,
    RCEIL), as TorchAO's `MXLinear` does.

    Attributes: `fqn` (required), `precision` (optional; absent = decided by
    the policy; a user-set value overrides the policy), `recipe` (optional).
    An MX precision needs K and N to be multiples of 32 (the forward and the
    input gradient contract over them); the token count need not be, the
    weight-gradient quantization pads it per 32-block.

    Example:
    ```mlir
    %q = mxmoe.linear %x, %wq {fqn = "layers.0.attention.wq"}
        : (tensor<8192x5120xbf16>, tensor<5120x5120xbf16>) -> tensor<8192x5120xbf16>
    ```
  }];
  let arguments = (ins
    MXMoE_HPTensor:$input,
    MXMoE_HPTensor:$weight,
    Optional<MXMoE_HPTensor>:$bias,
    StrAttr:$fqn,
    OptionalAttr<MXMoE_PrecisionAttr>:$precision,
    OptionalAttr<MXMoE_MXRecipeAttr>:$recipe
  );
  let results = (outs MXMoE_HPTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)? attr-dict `:`
    `(` type($input) `,` type($weight) (`,` type($bias)^)? `)` `->` type($result)
  }];
  let hasVerifier = 1;
}

def MXMoE_ScaledGroupedMatmulOp : MXMoE_Op<"scaled_grouped_matmul", [Pure]> {
  let summary = "routed-expert grouped GEMM in MX precision (model level)";
  let description = [{
    The routed experts' grouped GEMM of an MoE layer: each group of token
    rows is multiplied by its expert's weight. This is TorchAO's
    `_to_mxfp8_then_scaled_grouped_mm(A, B_t, offs)`: high-precision operands
    in, the MX recipe as an attribute; `mxmoe-expand-scaled-matmul` turns it
    into quantize + swizzle + `mxmoe.grouped_matmul` for the forward, the
    input gradient and the weight gradient, each GEMM quantized along its own
    contraction axis.

    Shapes and types:
    * `input`: `[M, K]` routed token rows sorted by expert, bf16/f16/f32;
    * `weight`: `[G, N, K]` expert weights (K contiguous; TorchAO's
      `B_t = W.transpose(-2, -1)`), same element type as `input`;
    * `offsets`: `[G]` i32 **end** offsets: group g is rows
      `[offsets[g-1], offsets[g])` (offsets[-1] = 0); non-decreasing,
      `offsets[G-1] <= M`; empty groups allowed. Constant offsets that
      break this are a verifier error; run-time ones are checked by the
      kernels (a status word, nothing written);
    * result: `[M, N]`, bf16 (default of the recipe) or f32.

    Semantics: `y[i, n] = sum_k x[i, k] * W[g, n, k]` for row i of group g,
    with both operands MX-quantized along K per `recipe` and fp32
    accumulation; rows `i >= offsets[G-1]` are zero.

    Attributes: `fqn` (required); `recipe` (optional, default
    `#mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>`);
    `precision` (optional, set by the policy or the user). The recipe's
    element type must agree with `precision` (mxfp8: f8E4M3FN/f8E5M2,
    mxfp4: f4E2M1FN).

    Source: pytorch/ao `torchao/prototype/moe_training/mxfp8_grouped_mm.py`.

    Example:
    ```mlir
    %h = mxmoe.scaled_grouped_matmul %x, %w1, %offs {fqn = "layers.0.feed_forward.experts.w1"}
        : (tensor<8192x5120xbf16>, tensor<16x16384x5120xbf16>, tensor<16xi32>) -> tensor<8192x16384xbf16>
    ```
  }];
  let arguments = (ins
    MXMoE_HPTensor:$input,
    MXMoE_HPTensor:$weight,
    MXMoE_OffsetsTensor:$offsets,
    StrAttr:$fqn,
    OptionalAttr<MXMoE_MXRecipeAttr>:$recipe,
    OptionalAttr<MXMoE_PrecisionAttr>:$precision
  );
  let results = (outs MXMoE_HPTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $offsets attr-dict `:`
    `(` type($input) `,` type($weight) `,` type($offsets) `)` `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The recipe attribute, or the default MXFP8 RCEIL recipe.
    MXRecipeAttr getRecipeOrDefault();
  }];
}

def MXMoE_SwiGLUExpertsOp : MXMoE_Op<"swiglu_experts", [Pure,
    AttrSizedOperandSegments]> {
  let summary = "routed experts' SwiGLU MLP (w13 grouped GEMM, SwiGLU, w2 "
                "grouped GEMM) in MX precision (model level)";
  let description = [{
    The routed experts of an MoE layer as one op: per expert group of token
    rows, `y = (silu(x w1^T) * (x w3^T)) w2^T` with the gate and up
    projections fused into one weight `w13 = [w1; w3]` (TorchTitan's
    `GroupedExperts`, Hugging Face's fused `gate_up_proj`). Both grouped
    GEMMs are MX-quantized per `recipe` as `mxmoe.scaled_grouped_matmul`
    does. `mxmoe-expand-scaled-matmul` expands it into `<fqn>.forward` and
    `<fqn>.backward` functions in which the SwiGLU and its backward are
    elementwise `linalg.generic`s feeding quantizations, which
    `mxmoe-fuse-quantize-producers` fuses into the quantize kernels (the
    activation `a`, its token-axis copy and `dh = [d gate | d up]` are
    never written in bf16).

    Shapes and types (bf16 only: the SwiGLU's roundings are bf16's):
    * `input`: `[M, H]` routed token rows sorted by expert;
    * `w13`: `[E, 2I, H]`: rows `[0, I)` the gate projection w1, rows
      `[I, 2I)` the up projection w3 (H contiguous);
    * `w2`: `[E, H, I]` the down projection (I contiguous);
    * `offsets`: `[E]` i32 end offsets, as `mxmoe.scaled_grouped_matmul`'s;
    * result: `[M, H]`; rows `i >= offsets[E-1]` are zero.
    I and H must be multiples of 32 (MX blocks along each GEMM's
    contraction); the verifier says which is not.

    Semantics, per row of group e, with PyTorch's bf16 roundings (so that
    `F.silu(g) * u` in bf16 computes the same `a`):
    `h = x . w13[e]^T` (MX GEMM, f32 accumulation, bf16 result),
    `g = h[:, :I]`, `u = h[:, I:]`,
    `a = bf16(f32(bf16(g / (1 + exp(-g)))) * f32(u))` (f32 math),
    `y = a . w2[e]^T` (MX GEMM). The backward (`<fqn>.backward`) is
    PyTorch's autograd of that SwiGLU: `ds = bf16(da * u)`,
    `d g = bf16(ds * s * (1 + g * (1 - s)))` with `s = 1 / (1 + exp(-g))`,
    `d u = bf16(da * bf16(silu(g)))`; exp is MLIR's polynomial
    approximation in the kernels (`math.exp`).

    With `routing(indices, scores)` the op is the whole routed MoE
    block, dispatch and combine included: `input` is then the token rows
    `[T, H]`, `indices` `[M]` i32 the flattened (token, slot) index `t *
    top_k + j` of each routed row in expert order (an expert-sorting
    argsort of the router's `[T, top_k]` choices), `scores` `[T, top_k]`
    bf16/f16/f32 the router's weights, M = T * top_k, `offsets` over the M
    routed rows, and the result `[T, H]`: `out[t] = sum_j scores[t, j] *
    y[r(t, j)]` with `y` the experts' output above for the routed rows
    `x[indices[r] / top_k]` (`mxmoe.gather_rows`, `mxmoe.combine_rows`: f32
    sums in slot order). Its gradients are those of x, w13, w2 and
    scores. The expansion fuses the gathers into the quantize kernels
    (neither the routed input nor the routed output gradient is written).

    Attributes: `fqn` (required; names the expanded functions), `recipe`
    and `precision` as on `mxmoe.scaled_grouped_matmul` (one recipe for
    both GEMMs; the precision policy assigns them).

    Sources: SwiGLU, Shazeer, "GLU Variants Improve Transformer",
    arXiv 2002.05202; the MX GEMMs as `mxmoe.scaled_grouped_matmul`
    (pytorch/ao `torchao/prototype/moe_training`).

    Example:
    ```mlir
    %y = mxmoe.swiglu_experts %x, %w13, %w2, %offs {fqn = "layers.0.mlp.experts"}
        : (tensor<32768x2048xbf16>, tensor<128x1536x2048xbf16>,
           tensor<128x2048x768xbf16>, tensor<128xi32>) -> tensor<32768x2048xbf16>
    ```
  }];
  let arguments = (ins
    MXMoE_HPTensor:$input,
    MXMoE_HPTensor:$w13,
    MXMoE_HPTensor:$w2,
    MXMoE_OffsetsTensor:$offsets,
    Optional<RankedTensorOf<[I32]>>:$indices,
    Optional<MXMoE_HPTensor>:$scores,
    StrAttr:$fqn,
    OptionalAttr<MXMoE_MXRecipeAttr>:$recipe,
    OptionalAttr<MXMoE_PrecisionAttr>:$precision
  );
  let results = (outs MXMoE_HPTensor:$result);
  let assemblyFormat = [{
    $input `,` $w13 `,` $w2 `,` $offsets
    (`routing` `(` $indices^ `,` $scores `:` type($indices) `,`
     type($scores) `)`)?
    attr-dict `:`
    `(` type($input) `,` type($w13) `,` type($w2) `,` type($offsets) `)`
    `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The recipe attribute, or the default MXFP8 RCEIL recipe.
    MXRecipeAttr getRecipeOrDefault();
    ::mlir::LogicalResult verifyRouting();
    /// Whether the op includes dispatch and combine (`routing(...)`).
    bool isRouted() { return static_cast<bool>(getIndices()); }
    /// The routed rows M (the indices' count, or the input's rows) and,
    /// routed, top_k (scores dim 1; else 1).
    int64_t getRoutedRows() {
      return isRouted() ? getIndices().getType().getDimSize(0)
                        : getInput().getType().getDimSize(0);
    }
    int64_t getTopK() {
      return isRouted() ? ::llvm::cast<::mlir::RankedTensorType>(
                              getScores().getType()).getDimSize(1)
                        : 1;
    }
    /// E, I and H.
    int64_t getNumExperts() { return getW13().getType().getDimSize(0); }
    int64_t getExpertDim() { return getW2().getType().getDimSize(2); }
    int64_t getHidden() { return getInput().getType().getDimSize(1); }
  }];
}

def MXMoE_TiledMLPOp : MXMoE_Op<"tiled_mlp", [
    IsolatedFromAbove, SingleBlock, RecursiveMemoryEffects,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "MLP/MoE block computed shard by shard along the token axis";
  let description = [{
    A token-separable body (an MLP such as a shared expert) applied to
    shards of the token axis, so that only one shard's activations are
    alive at a time; the backward recomputes each shard (DeepSpeed
    `TiledMLP`, ALST arXiv 2506.13996). `mxmoe-tile-mlp` lowers it to loops
    over shards for forward and backward. A whole MoE block is
    token-separable too (Axolotl's tiled MoE): router (`mxmoe.linear`,
    `mxmoe.router_topk`), `mxmoe.sort_by_expert` (the shard's group offsets
    computed in the body), `mxmoe.gather_rows`, the experts'
    `mxmoe.scaled_grouped_matmul`s around their activation, and
    `mxmoe.combine_rows`; in a static shard loop `mxmoe-tile-mlp` expands
    and differentiates every GEMM of it (the ops its backward supports are
    listed under mxmoe-tile-mlp).

    Operands: `input` is the token input, `[T, H]` or `[B, S, H]` (batch is
    flattened into the token axis, T = B*S; T > 0); `params` are the body's
    parameters (weights and their scales), passed whole to every shard:
    integer tensors (e.g. group offsets, which depend on the tokens) are
    rejected.

    Region: one block with arguments `(shard, params...)`: `shard` has type
    `tensor<?xHxE>` (the input's last dim and element type, a dynamic token
    count), every parameter argument has its operand's type. The region is
    isolated from above and ends with `mxmoe.yield`, one value per result,
    each `tensor<?x...>` with the trailing dims of its result.

    Results: each result is `[T, ...]` (or `[B, S, ...]`), the shards'
    outputs concatenated in token order. Output width may differ from the
    input width. The last `summed_results` results instead are sums over
    the shards: a static-shape float tensor without token dims (e.g. a
    router's per-expert statistics for a load-balancing loss: the sum over
    tokens of its scores, `mxmoe.router_topk`'s `scores` reduced over dim
    0, and its choices per expert, the `mxmoe.sort_by_expert` end offsets
    converted to f32, whose sum over shards is the cumulative count), the
    body yielding the shard's part in the same type. A summed result's
    gradient reaches every shard whole (the sum's Jacobian); an empty
    shard adds nothing.

    Attributes:
    * `num_shards`: shard count >= 1; absent (printed `shards = auto`) means
      `ceil(T / 32768)` capped by T (Axolotl's MoE rule), chosen by the pass.
      The shard partition is balanced (sizes differ by at most 1), the same
      in forward and backward, and always has exactly `num_shards` shards
      (empty shards when T < num_shards; they compute nothing, and static
      shard loops skip them).
    * `grad_accumulator`: element type of parameter-gradient accumulation
      across shards (f32, bf16 or f16); absent = the parameter's own type
      (what autograd does untiled), `f32` on request. It must be f32 or the
      element type of every bf16/f16/f32 parameter (gradients are widened
      into it, never narrowed).
    * `save_routing`: keep each body `mxmoe.router_topk`'s decision (its
      `weights` [T, top_k] f32 and `experts` [T, top_k] i32, all shards'
      rows) from the forward for the backward instead of recomputing the
      choice (Axolotl's tiled MoE option), and in static shard loops the
      body's `mxmoe.sort_by_expert` of those experts (its `indices`, [T *
      top_k] i32, each shard's block of shard-local row ids, and its end
      `offsets`, [shards * E] i32, shard i's at i * E): T * top_k * 12 +
      shards * E * 4 bytes per router. `mxmoe-tile-mlp` then emits
      `@"<fqn>.forward"(x, params...) -> (results..., weights, experts[,
      indices, offsets], ...)`, the op becomes a call of it, and
      `<fqn>.backward` takes the saved values after the parameters. The
      backward's shards read them: neither router_topk nor the sort is
      recomputed; the router's logits are, as its gradient
      (`mxmoe.router_topk_grad`) reads them. Needs an `fqn` and at least
      one `mxmoe.router_topk` in the body.
    * `summed_results`: how many trailing results are sums over shards
      (0 when absent; at most the result count minus one: the first
      result is always token rows).
    * `fqn`: the block's fully qualified name (optional; it names the
      backward function `<fqn>.backward`, `tiled_mlp.backward` without one,
      uniquified as `tiled_mlp.backward_0`, ...; two tiled MLPs with the same
      fqn are an error of mxmoe-tile-mlp).

    Parameter gradients are summed over shards, never averaged. The body must
    be token-separable (each output token depends only on its own input
    token and the parameters).

    Example:
    ```mlir
    %y = mxmoe.tiled_mlp shards = 4 (%x, %w) {fqn = "layers.0.feed_forward"}
        : (tensor<8192x5120xbf16>, tensor<5120x5120xbf16>) -> tensor<8192x5120xbf16> {
    ^bb0(%xs: tensor<?x5120xbf16>, %ws: tensor<5120x5120xbf16>):
      %o = mxmoe.linear %xs, %ws {fqn = "layers.0.feed_forward.w"}
          : (tensor<?x5120xbf16>, tensor<5120x5120xbf16>) -> tensor<?x5120xbf16>
      mxmoe.yield %o : tensor<?x5120xbf16>
    }
    ```
  }];
  let arguments = (ins
    MXMoE_HPTensor:$input,
    Variadic<AnyType>:$params,
    OptionalAttr<I64Attr>:$num_shards,
    OptionalAttr<TypeAttr>:$grad_accumulator,
    OptionalAttr<StrAttr>:$fqn,
    OptionalAttr<I64Attr>:$summed_results,
    UnitAttr:$save_routing
  );
  let results = (outs Variadic<RankedTensorOf<[AnyFloat]>>:$results);
  let extraClassDeclaration = [{
    /// The number of trailing results summed over shards (0 when absent).
    unsigned getNumSummedResults() {
      return static_cast<unsigned>(getSummedResults().value_or(0));
    }
    /// Whether result `i` is a sum over shards (else token rows).
    bool isSummedResult(unsigned i) {
      return i >= getNumResults() - getNumSummedResults();
    }
  }];
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def MXMoE_YieldOp : MXMoE_Op<"yield", [
    Pure, Terminator, ReturnLike,
    ParentOneOf<["TiledMLPOp", "FusedQuantizeOp"]>]> {
  let summary = "terminator of mxmoe.tiled_mlp and mxmoe.fused_quantize";
  let description = [{
    Returns the current shard's results from the body of `mxmoe.tiled_mlp`,
    one value per result of the parent, each `tensor<?x...>`; in
    `mxmoe.fused_quantize`, the results of its quantizations.

    Example: `mxmoe.yield %o : tensor<?x5120xbf16>`
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ /* nothing to build */ }]>];
}

//===----------------------------------------------------------------------===//
// MX level
//===----------------------------------------------------------------------===//

def MXMoE_QuantizeOp : MXMoE_Op<"quantize", [Pure]> {
  let summary = "quantize to MX: element data + one E8M0 scale per 32 "
                "elements along an axis";
  let description = [{
    OCP MX quantization of a high-precision tensor along `axis` (the
    contraction axis of the GEMM that consumes it).

    Shapes and types:
    * `input`: `[M, K]` or `[E, N, K]`, bf16/f16/f32;
    * `axis`: the quantized axis; `rank-1` is rowwise (1x32 blocks), `0` of
      a 2-D input is columnwise (32x1 blocks, along tokens);
    * `data`: the input's shape with `axis` moved to the last position (so
      the data is contiguous along the contraction axis, as the GEMM reads
      it: a columnwise quantization writes the transpose in the same pass),
      element type f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN or f4E2M1FN (MXFP4,
      stored two per byte, element 2i in the low nibble);
    * `scales`: f8E8M0FNU. Row-major: the data shape with the last dim L
      replaced by L/32. `#mxmoe.scale_layout<blocked_128x4>`: the padded
      blocked shape `[roundUp(R, 128), roundUp(L/32, 4)]` (rank 3:
      `[E, roundUp(R, 128), roundUp(L/32, 4)]`), i.e. the swizzle is fused
      into the quantization;
    * `offsets` (optional, 2-D input only): `[G]` i32 end offsets of token
      groups along dim 0 (see `mxmoe.scaled_grouped_matmul`).
      - `axis = 0`: the token axis is quantized and its 32-blocks restart at
        every group start. Group sizes need not be multiples of 32: group g
        is stored at column P_g = sum_{h<g} roundUp(m_h, 32) of `data`,
        zero-padded to a multiple of 32, so `data` is `[K, Tp]` with Tp a
        multiple of 32 and Tp >= T. `getGroupPaddedExtent(T, G, 32)` =
        roundDown(T + 31*G, 32) always fits; a smaller Tp is checked at run
        time. Blocked scales must then be `per_k_group`.
      - `axis = 1`: only meaningful with blocked scales: the M-grouped
        layout, each group's rows padded to a multiple of 128 (scale rows a
        multiple of 128; roundDown(M + 127*G, 128) always fits).

    Semantics per block of 32 elements x_i (OCP MX v1.0 section 6.3):
    amax = max_i |x_i| (fp32); scale byte b from amax by `rounding` (see
    `#mxmoe.rounding`); q_i = cvt_rne_satfinite(x_i * 2^(127-b)) (e4m3
    saturates to +-448). Any NaN/Inf in the block gives b = 0xFF and NaN data;
    an all-zero block gives b = 0 and zero data.

    **Scale tiles (MX128).** `scale_tile = array<i64: r, c>` (default
    `[1, 32]`, plain MX) makes one scale shared by every r x c tile of the
    data matrix (data orientation: [rows, L], tiles along L restart at
    every token group's start on a jagged token axis; rank 3: tiles never
    cross experts): amax is taken over the whole tile and every 1x32 block
    of the tile is quantized with that one scale. `c` is a multiple of 32
    and `r >= 1`; `r > 1` is for operands without token groups (weights).
    Tiles at the tails are partial (K = 2880 with c = 128 ends in a 64-wide
    tile; R and L need not be multiples of r or c). The MX recipes use
    `[1, 128]` for activations and gradients and `[128, 128]` for weights
    (the DeepSeek-V3 recipe, arXiv 2412.19437 section 3.3.2). With power-of-two
    scales the result is still valid MX: in row-major and blocked layouts
    each 1x32 slot holds its tile's scale (so c/32 equal bytes per tile
    row), and any MX consumer reads it unchanged. `#mxmoe.scale_layout<compact,
    tile = [r, c]>` scales (tile equal to `scale_tile`) hold one byte per
    tile instead.

    Attributes: `axis` (required), `block_size` (must be 32),
    `rounding` (default `rceil`), `scale_tile` (default `[1, 32]`).

    Example:
    ```mlir
    %q, %s = mxmoe.quantize %x {axis = 1 : i64}
        : tensor<8192x5120xbf16> -> tensor<8192x5120xf8E4M3FN>, tensor<8192x160xf8E8M0FNU>
    %wq, %ws = mxmoe.quantize %w {axis = 2 : i64, scale_tile = array<i64: 128, 128>}
        : tensor<16x8192x5120xbf16> -> tensor<16x8192x5120xf8E4M3FN>,
          tensor<16x64x40xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
    ```
  }];
  let arguments = (ins
    MXMoE_HPTensor:$input,
    Optional<MXMoE_OffsetsTensor>:$offsets,
    I64Attr:$axis,
    DefaultValuedAttr<I64Attr, "32">:$block_size,
    DefaultValuedAttr<MXMoE_RoundingModeAttr,
                      "::mlir::mxmoe::RoundingMode::rceil">:$rounding,
    OptionalAttr<DenseI64ArrayAttr>:$scale_tile
  );
  let extraClassDeclaration = [{
    /// The scale tile [rows, columns] (along the data's last two axes):
    /// `scale_tile`, or [1, 32] (one scale per MX block) without it.
    std::array<int64_t, 2> getScaleTileOrDefault() {
      if (std::optional<ArrayRef<int64_t>> t = getScaleTile())
        if (t->size() == 2)
          return {(*t)[0], (*t)[1]};
      return {1, 32};
    }
  }];
  let results = (outs MXMoE_MXTensor:$data, MXMoE_ScaleTensor:$scales);
  let assemblyFormat = [{
    $input (`offsets` `(` $offsets^ `:` type($offsets) `)`)? attr-dict `:`
    type($input) `->` type($data) `,` type($scales)
  }];
  let hasVerifier = 1;
}

def MXMoE_FusedQuantizeOp : MXMoE_Op<"fused_quantize", [
    IsolatedFromAbove, SingleBlock, RecursiveMemoryEffects]> {
  let summary = "quantizations of an elementwise producer's result, computed "
                "in one kernel each without writing the producer's result";
  let description = [{
    An elementwise computation (a `linalg.generic`) and the `mxmoe.quantize`
    ops that consume its result, grouped so that each quantization becomes
    one kernel that computes the producer's elements in registers from the
    producer's inputs: the high-precision tensor between them is never
    written to memory (e.g. the SwiGLU `silu(gate) * up` that feeds the
    down projection's grouped GEMM, quantized where it is produced instead
    of written as bf16 and read back). `mxmoe-fuse-quantize-producers`
    forms it from an unfused producer and its quantizations.

    Operands: the producer's inputs and the quantizations' group offsets,
    in any order; the region is isolated from above and its block takes one
    argument per operand, of the operand's type.

    Region (one block, in this order):
    * column slices of block arguments: `tensor.extract_slice` at offsets
      `[0, c]` (static c) over all rows, unit strides (e.g. the gate and up
      halves of a fused gate/up GEMM's result `h`, at c = 0 and c = I),
      and scalar `arith.constant`s the producer's body may use;
    * the producer: one or more parts, each a `tensor.empty` (the part's
      init; never read) followed by a `linalg.generic` of rank 2: all
      loops parallel, identity indexing maps, one output (that
      `tensor.empty`), every input a block argument or one of the slices;
      its body only arith and math ops on scalars;
    * with more than one part, a `tensor.concat` along dim 1 of the parts'
      results in order, each read by it alone (e.g. the SwiGLU backward's
      [d gate | d up], two elementwise formulas side by side);
    * or, instead of the slices, constants and parts: one
      `mxmoe.gather_rows` of block arguments (the MoE dispatch: the routed
      rows of a token tensor, optionally times their routing scores), so
      that the quantize kernels read token rows through the routing
      indices and the routed copy is never written;
    * one or more `mxmoe.quantize` ops of the producer's result (the
      generic's, or the concat's; their offsets, if any, block arguments);
    * `mxmoe.yield` of every quantization's (data, scales), in order.

    Results: the yielded values' types.

    Semantics: exactly the region's ops executed in order (the producer's
    scalar body per element, with the roundings its ops state, then each
    quantization as `mxmoe.quantize` defines it, OCP MX v1.0 section 6.3).
    The GPU lowering (convert-mxmoe-to-gpu) generates each quantization's
    kernel with the producer's body evaluated at every element it loads;
    math ops (e.g. `math.exp`) are lowered by MLIR's polynomial
    approximations (`populateMathPolynomialApproximationPatterns`), so the
    results do not depend on a CUDA math library. It lowers quantizations
    along the contiguous axis (`axis = 1`: rowwise MX and `[1, c]` scale
    tiles, row-major, compact or blocked scales, M-grouped with offsets)
    and along the token axis in token groups (`axis = 0` with offsets: the
    weight gradient's operand, 1x32 / 1x64 / 1x128 windows, data written
    transposed); `mxmoe-fuse-quantize-producers` forms the op only for
    those.

    Example (SwiGLU of a gate/up result, quantized 1x128 for the next
    GEMM):
    ```mlir
    %q, %s = mxmoe.fused_quantize (%h) : (tensor<4096x1536xbf16>)
        -> (tensor<4096x768xf8E4M3FN>, tensor<4096x24xf8E8M0FNU>) {
    ^bb0(%hh: tensor<4096x1536xbf16>):
      %gate = tensor.extract_slice %hh[0, 0] [4096, 768] [1, 1]
          : tensor<4096x1536xbf16> to tensor<4096x768xbf16>
      %up = tensor.extract_slice %hh[0, 768] [4096, 768] [1, 1]
          : tensor<4096x1536xbf16> to tensor<4096x768xbf16>
      %init = tensor.empty() : tensor<4096x768xbf16>
      %act = linalg.generic {
          indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                           affine_map<(d0, d1) -> (d0, d1)>,
                           affine_map<(d0, d1) -> (d0, d1)>],
          iterator_types = ["parallel", "parallel"]}
          ins(%gate, %up : tensor<4096x768xbf16>, tensor<4096x768xbf16>)
          outs(%init : tensor<4096x768xbf16>) {
      ^bb0(%g: bf16, %u: bf16, %o: bf16):
        ...
        linalg.yield %v : bf16
      } -> tensor<4096x768xbf16>
      %q, %s = mxmoe.quantize %act {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
          : tensor<4096x768xbf16> -> tensor<4096x768xf8E4M3FN>, tensor<4096x24xf8E8M0FNU>
      mxmoe.yield %q, %s : tensor<4096x768xf8E4M3FN>, tensor<4096x24xf8E8M0FNU>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body
  }];
  let extraClassDeclaration = [{
    /// The producer's parts (the region's linalg.generic ops, in order:
    /// one, or the operands of its tensor.concat; a template only because
    /// linalg::GenericOp is incomplete here).
    template <typename GenericOpT = ::mlir::linalg::GenericOp>
    ::llvm::SmallVector<GenericOpT> getProducers() {
      ::llvm::SmallVector<GenericOpT> parts;
      for (::mlir::Operation &op : getBody().front())
        if (auto g = ::llvm::dyn_cast<GenericOpT>(op))
          parts.push_back(g);
      return parts;
    }
    /// The value the quantizations quantize: the concat's result, the
    /// one part's, or the gather's.
    ::mlir::Value getProduced();
    /// The region's mxmoe.gather_rows when the producer is a gather, else
    /// null.
    GatherRowsOp getGather();
    /// The quantizations of the producer's result, in order (a template
    /// only because QuantizeOp is declared after this class).
    template <typename QuantizeOpT = QuantizeOp>
    ::llvm::SmallVector<QuantizeOpT> getQuantizations() {
      ::llvm::SmallVector<QuantizeOpT> qs;
      for (::mlir::Operation &op : getBody().front())
        if (auto q = ::llvm::dyn_cast<QuantizeOpT>(op))
          qs.push_back(q);
      return qs;
    }
    /// The block argument input `i` of producer part `part` reads and the
    /// column where it starts (0, or c of a `tensor.extract_slice` at
    /// [0, c]).
    static std::pair<::mlir::BlockArgument, int64_t>
    getProducerInput(::mlir::linalg::GenericOp part, unsigned i);
    /// The tensor a producer input reads and the column where it starts:
    /// {in, 0}, or for a `tensor.extract_slice` of a static 2-D tensor at
    /// [0, c] over all rows with unit strides {its source, c}; {} for any
    /// other slice.
    static std::pair<::mlir::Value, int64_t> getColumnSlice(::mlir::Value in);
    /// Why `g` is not a producer this op can hold (`why` empty when it
    /// is), and the op at fault (`g` or an op of its body): two parallel
    /// loops, identity maps, one init (a tensor.empty), inputs that are
    /// tensors or column slices (getColumnSlice), a body of arith and math
    /// ops only. Where the inputs come from is the caller's to check.
    struct ProducerError {
      std::string why;
      ::mlir::Operation *at = nullptr;
    };
    static ProducerError whyNotProducer(::mlir::linalg::GenericOp g);
    /// Why convert-mxmoe-to-gpu cannot generate the kernel of quantization
    /// `q` with the producer `parts` (concatenated along dim 1 when more
    /// than one, each a multiple of 32 columns wide) computed at its loads
    /// ("" when it can): `q`
    /// of a 2-D tensor with one-row scale tiles, along the contiguous axis
    /// (axis 1) or along the token axis in token groups (axis 0 with
    /// offsets); each producer input a bf16/f16/f32 tensor (or a column
    /// slice of one, `tensor.extract_slice` at [0, c]) whose rows and
    /// column offset c are multiples of 16 bytes (the kernels' vector
    /// loads); the producer's init never read. mxmoe-fuse-quantize-producers
    /// forms only ops that pass.
    static std::string
    whyNotLowered(QuantizeOp q,
                  ::llvm::ArrayRef<::mlir::linalg::GenericOp> parts);
    /// The same for a gather producer: the quantization's rules, token
    /// groups (offsets: the kernel's status word reports bad routing
    /// indices, status 3), and a static source whose rows are a multiple
    /// of 16 bytes.
    static std::string whyNotLowered(QuantizeOp q, GatherRowsOp gather);
  }];
  let hasRegionVerifier = 1;
}

def MXMoE_QuantizeWeightOp : MXMoE_Op<"quantize_weight", [Pure]> {
  let summary = "quantize a weight once with square scale tiles, in both "
                "orientations (forward and input gradient)";
  let description = [{
    One MX128 quantization of a weight that serves two GEMMs: the forward
    (contraction over K, data `[.., N, K]`) and the input gradient
    (contraction over N, data `[.., K, N]`). With a square scale tile
    (`[t, t]`, t a multiple of 32; the MX128 recipe's `[128, 128]`, the
    DeepSeek-V3 report, arXiv 2412.19437 section 3.3.2) a tile of the
    weight is the same block of elements whichever axis is quantized, so
    both quantizations compute the same scale per tile and the same
    element codes: `transposed_data` is `data` transposed, and the input
    gradient needs no second quantization of the weight.

    Semantics: exactly `mxmoe.quantize %input {axis = rank-1, scale_tile =
    [t, t]}` for (`data`, `scales`) and `mxmoe.quantize %input {axis =
    rank-2, scale_tile = [t, t]}` for (`transposed_data`,
    `transposed_scales`), with the same `rounding` (see `mxmoe.quantize`
    for the scale math, OCP MX v1.0 section 6.3, and the scale layouts).
    The GPU lowering reads the input once and writes both results
    (bf16/f16 input, `[128, 128]` tiles, K a multiple of 8, 256-thread
    CTAs); other cases are lowered as the two quantizations.

    Shapes and types:
    * `input`: `[N, K]` or `[E, N, K]`, bf16/f16/f32, N and K multiples of
      32 (tails of a tile are partial, as for `mxmoe.quantize`);
    * `data`: the input's shape; `transposed_data`: its last two axes
      swapped; both the same MX element type;
    * `scales`, `transposed_scales`: f8E8M0FNU in any layout
      `mxmoe.quantize` writes for its data (row-major, blocked, compact with
      `tile = [t, t]`); each independently.

    Attributes: `scale_tile` (required, square), `block_size` (must be 32),
    `rounding` (default `rceil`).

    Example:
    ```mlir
    %wq, %ws, %wqt, %wst = mxmoe.quantize_weight %w {scale_tile = array<i64: 128, 128>}
        : tensor<16x8192x5120xbf16> -> tensor<16x8192x5120xf8E4M3FN>, tensor<16x8192x160xf8E8M0FNU>,
          tensor<16x5120x8192xf8E4M3FN>, tensor<16x5120x256xf8E8M0FNU>
    ```
  }];
  let arguments = (ins
    MXMoE_HPTensor:$input,
    DenseI64ArrayAttr:$scale_tile,
    DefaultValuedAttr<I64Attr, "32">:$block_size,
    DefaultValuedAttr<MXMoE_RoundingModeAttr,
                      "::mlir::mxmoe::RoundingMode::rceil">:$rounding
  );
  let results = (outs MXMoE_MXTensor:$data, MXMoE_ScaleTensor:$scales,
                      MXMoE_MXTensor:$transposed_data,
                      MXMoE_ScaleTensor:$transposed_scales);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($data) `,` type($scales) `,`
    type($transposed_data) `,` type($transposed_scales)
  }];
  let hasVerifier = 1;
}

def MXMoE_RequantizeOp : MXMoE_Op<"requantize", [Pure]> {
  let summary = "MX (1x32) data to one scale per scale tile (MX128) by "
                "exponent shifts";
  let description = [{
    Converts MX data that arrives quantized with one E8M0 scale per 1x32
    block (e.g. MXFP8 checkpoint weights) to the scale tiles of
    `mxmoe.quantize`'s `scale_tile` (`[128, 128]` for MX128 weights,
    `[1, 128]` for activations) without the high-precision values.

    Semantics, per tile T of the data matrix `[.., R, L]` (tiles as in
    `mxmoe.quantize`, partial at the tails, never crossing experts): the
    tile's scale byte S is the largest of its 1x32 blocks' bytes (0xFF if
    any is 0xFF); each code q of a block with byte s becomes
    cvt_rne_satfinite(value(q) * 2^(s - S)) in the same element type
    (exact unless the shifted value falls into the element's subnormal
    range; never larger in magnitude, so no saturation). A tile with S =
    0xFF holds NaN codes. Since the scale rule of `mxmoe.quantize` is
    monotone in amax, S is the byte a direct tiled quantization of the
    original values would pick (OCP MX v1.0 section 6.3; the DeepSeek-V3
    report, arXiv 2412.19437 section 3.3.2, for the tiles). Reference:
    `python/mxmoe/reference.py` `mx_to_tiled`.

    Shapes and types:
    * `data`: `[M, K]` or `[E, N, K]` FP8 (f8E4M3FN, f8E5M2) codes, the
      scaled axis last; `tiled_data`: the same shape and type;
    * `scales`: row-major f8E8M0FNU `[.., R, L/32]` (one per 1x32 block; no
      layout encoding);
    * `tiled_scales`: row-major MX scales (each 1x32 slot holds its tile's
      byte; the encoding may record the tile) or compact scales
      (`#mxmoe.scale_layout<compact, tile = [r, c]>`, one byte per tile).
      Blocked scales come from `mxmoe.swizzle_scales` of the row-major
      ones.

    Attributes: `scale_tile` (required, `[r, c]`, r >= 1, c a multiple of
    32; the GPU lowering needs r a power of two <= 256).

    Example:
    ```mlir
    %q, %s = mxmoe.requantize %q32, %s32 {scale_tile = array<i64: 128, 128>}
        : tensor<16x8192x5120xf8E4M3FN>, tensor<16x8192x160xf8E8M0FNU>
        -> tensor<16x8192x5120xf8E4M3FN>, tensor<16x64x40xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
    ```
  }];
  let arguments = (ins MXMoE_MXTensor:$data, MXMoE_ScaleTensor:$scales,
                       DenseI64ArrayAttr:$scale_tile);
  let results = (outs MXMoE_MXTensor:$tiled_data,
                      MXMoE_ScaleTensor:$tiled_scales);
  let assemblyFormat = [{
    $data `,` $scales attr-dict `:` type($data) `,` type($scales) `->`
    type($tiled_data) `,` type($tiled_scales)
  }];
  let hasVerifier = 1;
}

def MXMoE_DequantizeOp : MXMoE_Op<"dequantize", [Pure]> {
  let summary = "dequantize MX data: x = q * 2^(b - 127)";
  let description = [{
    The inverse of `mxmoe.quantize` with the same `axis` and `offsets`:
    `result` has the data's shape with its last dimension moved back to
    `axis` (for a jagged token axis, `T` columns of the `Tp` stored ones,
    group padding dropped).

    Shapes and types: `data` MX elements, `scales` f8E8M0FNU in row-major or
    blocked layout exactly as `mxmoe.quantize` produces them; `result`
    bf16/f16/f32.

    Semantics (OCP MX v1.0 section 6.2): x = float(q) * 2^(b - 127); scale
    byte 0 is 2^-127 (never zero), byte 0xFF gives NaN. In bf16 the product
    is exact except below 2^-126 or above the fp32 range. Compact scales
    (`#mxmoe.scale_layout<compact, tile = [r, c]>`, one byte per r x c
    tile, see `mxmoe.quantize`'s scale tiles) apply their tile's byte to
    every element of the tile.

    Example:
    ```mlir
    %x = mxmoe.dequantize %q, %s {axis = 1 : i64}
        : tensor<8192x5120xf8E4M3FN>, tensor<8192x160xf8E8M0FNU> -> tensor<8192x5120xbf16>
    ```
  }];
  let arguments = (ins
    MXMoE_MXTensor:$data,
    MXMoE_ScaleTensor:$scales,
    Optional<MXMoE_OffsetsTensor>:$offsets,
    I64Attr:$axis,
    DefaultValuedAttr<I64Attr, "32">:$block_size
  );
  let results = (outs MXMoE_HPTensor:$result);
  let assemblyFormat = [{
    $data `,` $scales (`offsets` `(` $offsets^ `:` type($offsets) `)`)?
    attr-dict `:` type($data) `,` type($scales) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Routing: token rows to routed rows and back (dispatch and combine)
//===----------------------------------------------------------------------===//

def MXMoE_RouterTopKOp : MXMoE_Op<"router_topk", [Pure]> {
  let summary = "token-choice top-k routing: each token's top_k experts and "
                "their weights from the router's logits";
  let description = [{
    For every token row t of `logits` ([T, E], the router linear's output):

    1. scores `s[t, e]` = softmax over the E experts (`score = softmax`,
       computed in f32 after subtracting the row's maximum) or the
       elementwise logistic sigmoid (`score = sigmoid`), in f32;
    2. selection keys `s[t, e] + bias[e]` with `bias` ([E] f32, DeepSeek-V3's
       auxiliary-loss-free load-balancing bias: it moves the choice, not
       the weights), else `s[t, e]`;
    3. with `num_groups` G and `topk_groups` g (DeepSeek-V3's group-limited
       routing): the E experts form G groups of E/G consecutive ones, a
       group's key is the sum of its two largest keys (its one key when E/G
       is 1), and only the experts of the g groups with the largest group
       keys stay candidates (ties: the lower group index);
    4. `experts[t, :]` = the top_k candidates in descending key order, ties
       broken by the lower expert index;
    5. `weights[t, j] = s[t, experts[t, j]]` (the unbiased scores), divided
       by their sum over j when `renormalize` (plus 1e-20, as DeepSeek-V3's
       reference), then multiplied by `scaling_factor`.
    6. optionally `scores` ([T, E] f32): step 1's `s[t, e]` for every
       expert, the distribution a load-balancing (auxiliary) loss averages:
       Switch Transformer (arXiv 2101.03961, eq. 4-6) and transformers'
       `load_balancing_loss_func` (Mixtral, Qwen3-MoE: E * sum_e f_e P_e
       with P_e the mean over tokens of `s[t, e]` and f_e the fraction of
       the T * top_k choices that picked e). Its gradient is
       `mxmoe.router_topk_grad`'s `scores_grad`.

    The Hugging Face routers this covers (transformers, modeling files):
    Qwen3-MoE and Mixtral (softmax, renormalize; Mixtral's softmax over the
    k selected logits is the same distribution), gpt-oss (softmax over the
    selected logits: softmax, renormalize), Llama 4 (top-1, sigmoid of the
    selected logit: sigmoid, no renormalization), DeepSeek-V3 (sigmoid,
    bias, num_groups 8, topk_groups 4, renormalize, scaling_factor 2.5).

    Shapes and types: `logits` [T, E] bf16/f16/f32; `bias` [E] f32;
    `weights` [T, top_k] f32; `experts` [T, top_k] i32 (each in [0, E), a
    row's entries distinct); `scores` [T, E] f32. 1 <= top_k <= E; G divides E, 1 <= g <= G and
    top_k <= g * E / G; `scaling_factor` finite and > 0. The verifier
    checks them. `mxmoe.sort_by_expert` turns `experts` into the routed-row
    order and the group offsets of the experts' grouped GEMMs.

    NaN: a NaN key is taken as -inf (ties with a real -inf key go to the
    lower expert index), so `experts` stays distinct and in range; a chosen
    expert's NaN score reaches `weights` (with softmax, one NaN logit
    makes every score of the row NaN, as PyTorch's softmax does).

    Lowering (convert-mxmoe-to-gpu, RouterTopK.cpp): one warp per token
    row, the token count a run-time kernel value; the row's scores and
    choices live in one warp's registers: E <= 1024, top_k <= 64 and
    ceil(E / 32) * ceil(top_k / 32) <= 32 (beyond, ptxas spilled; a
    conversion error).
    Scores and keys are f32; exp is MLIR's polynomial approximation
    (within 2 ulp of f32 exp), so keys closer than that may order
    differently from a float64 reference; exact ties keep step 4's order.

    Example (Qwen3-30B-A3B: 128 experts, top-8, normalized):
    ```mlir
    %w, %e = mxmoe.router_topk %logits {top_k = 8 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<4096x128xbf16> -> tensor<4096x8xf32>, tensor<4096x8xi32>
    ```
  }];
  let arguments = (ins
    MXMoE_HPTensor:$logits,
    Optional<RankedTensorOf<[F32]>>:$bias,
    I64Attr:$top_k,
    MXMoE_RouterScoreAttr:$score,
    UnitAttr:$renormalize,
    DefaultValuedAttr<F64Attr, "1.0">:$scaling_factor,
    OptionalAttr<I64Attr>:$num_groups,
    OptionalAttr<I64Attr>:$topk_groups
  );
  let results = (outs
    RankedTensorOf<[F32]>:$weights,
    RankedTensorOf<[I32]>:$experts,
    Optional<RankedTensorOf<[F32]>>:$scores
  );
  let assemblyFormat = [{
    $logits (`bias` $bias^ `:` type($bias))? attr-dict `:` type($logits)
    `->` type($weights) `,` type($experts) (`,` type($scores)^)?
  }];
  let hasVerifier = 1;
}

def MXMoE_RouterTopKGradOp : MXMoE_Op<"router_topk_grad", [Pure]> {
  let summary = "gradient of mxmoe.router_topk's weights with respect to "
                "the router logits";
  let description = [{
    The reverse-mode rule of `mxmoe.router_topk`: from the same `logits`
    ([T, E]), the forward's `experts` ([T, top_k] i32) and the gradient of
    its `weights` (`weights_grad`, [T, top_k] f32), the gradient of the
    logits. The choice of experts is piecewise constant in the logits, so
    the bias and the group-limited routing (which only move the choice)
    have no gradient and are not operands. With s the scores
    (`score`: softmax over the E experts, or the logistic sigmoid, f32),
    w_j = s[t, experts[t, j]], g_j = weights_grad[t, j] and c =
    `scaling_factor`:

    * dL/dw_j = c g_j, or with `renormalize` (S = sum_j w_j + 1e-20, as
      the forward) c / S (g_j - sum_i g_i w_i / S);
    * ds[t, e] = the sum of dL/dw_j over the slots j choosing e (0 for an
      expert no slot chose);
    * with `scores_grad` (the gradient of router_topk's `scores` result),
      ds[t, e] also adds scores_grad[t, e], or scores_grad[e] when it is
      [E]: one gradient row for every token, the gradient of the scores'
      sum over tokens that a load-balancing loss reads;
    * softmax: grad[t, e] = s_e (ds_e - sum_e' ds_e' s_e') (the softmax
      Jacobian s_e (delta_ee' - s_e'); without `scores_grad` the sum is
      sum_j dL/dw_j w_j); sigmoid: grad[t, e] = ds_e s_e (1 - s_e);

    computed in f32 and rounded once to the result's element type (what
    PyTorch's autograd gives for `torch.softmax(logits.float(), -1)` or
    `torch.sigmoid`, gather, renormalization and scaling, up to f32
    summation order).

    Shapes and types: `logits` [T, E] bf16/f16/f32; `experts` [T, top_k]
    i32; `weights_grad` [T, top_k] f32; `scores_grad` [T, E] or [E] f32;
    result [T, E] bf16/f16/f32. The verifier checks them. An expert id outside [0, E) is run-time data:
    the kernel gives that slot no gradient and sets its status word to 4;
    nothing is read or written out of bounds.

    Lowering (convert-mxmoe-to-gpu, RouterTopK.cpp): one warp per token
    row, with the forward's size limits.

    Example (Qwen3-30B-A3B):
    ```mlir
    %dl = mxmoe.router_topk_grad %logits, %e, %dw {score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<4096x128xbf16>, tensor<4096x8xi32>, tensor<4096x8xf32> -> tensor<4096x128xbf16>
    ```
  }];
  let arguments = (ins
    MXMoE_HPTensor:$logits,
    RankedTensorOf<[I32]>:$experts,
    RankedTensorOf<[F32]>:$weights_grad,
    Optional<RankedTensorOf<[F32]>>:$scores_grad,
    MXMoE_RouterScoreAttr:$score,
    UnitAttr:$renormalize,
    DefaultValuedAttr<F64Attr, "1.0">:$scaling_factor
  );
  let results = (outs MXMoE_HPTensor:$result);
  let assemblyFormat = [{
    $logits `,` $experts `,` $weights_grad (`scores_grad` $scores_grad^ `:`
    type($scores_grad))? attr-dict `:` type($logits) `,` type($experts) `,`
    type($weights_grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

def MXMoE_SortByExpertOp : MXMoE_Op<"sort_by_expert", [Pure]> {
  let summary = "routed-row order and group offsets of top-k expert choices";
  let description = [{
    From every token's expert choices (`experts`, [T, top_k] i32, as
    `mxmoe.router_topk` gives them) the order in which the experts' grouped
    GEMMs see the routed rows, and where each expert's rows end:

    * `indices` [T * top_k] i32: the flattened (token, slot) indices `t *
      top_k + j`, stably sorted by expert `experts[t, j]` (a stable argsort:
      within an expert, ascending (token, slot) index; TorchTitan's
      `token_indices_experts_sorted`, times top_k plus the slot). It is the
      `indices` operand of `mxmoe.gather_rows`, `mxmoe.combine_rows` and
      `mxmoe.invert_permutation`;
    * `offsets` [num_experts] i32: the end offset of each expert's rows
      (the cumulative sum of the per-expert counts; an expert no token
      chose has an empty group), the `offsets` operand of the grouped
      GEMMs. The last offset is T * top_k when every id is valid.

    Shapes and types: `experts` [T, top_k] i32, top_k >= 1; `indices`
    [T * top_k] i32; `offsets` [num_experts] i32, num_experts >= 1. The
    verifier checks them. The expert ids themselves are run-time data: an
    id outside [0, num_experts) sets the kernel's status word to 4 (the
    runtime raises it as a rejected input); its choices follow every
    expert's rows in `indices` (which stays a permutation) and lie in no
    expert's offsets range; nothing is written out of bounds.

    Lowering (convert-mxmoe-to-gpu, SortByExpert.cpp): a stable counting
    sort in one CTA (per-warp histograms in shared memory, a CTA scan,
    an in-order scatter with `match.any.sync`), the entry count a run-time
    kernel value; num_experts <= 12255 (the histograms' 48 KiB; more is a
    conversion error). Deterministic: the same bytes on every run.

    Example (Qwen3-30B-A3B, 4096 tokens, top-8 of 128 experts):
    ```mlir
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 128 : i64}
        : tensor<4096x8xi32> -> tensor<32768xi32>, tensor<128xi32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[I32]>:$experts,
    I64Attr:$num_experts
  );
  let results = (outs
    RankedTensorOf<[I32]>:$indices,
    RankedTensorOf<[I32]>:$offsets
  );
  let assemblyFormat = [{
    $experts attr-dict `:` type($experts) `->` type($indices) `,`
    type($offsets)
  }];
  let hasVerifier = 1;
}

def MXMoE_GatherRowsOp : MXMoE_Op<"gather_rows", [Pure]> {
  let summary = "routed rows of a token tensor (MoE dispatch), optionally "
                "scaled by each row's routing score";
  let description = [{
    Row `r` of the result is row `indices[r] / top_k` of `source`:
    `indices` holds, per routed row, the flattened (token, slot) index
    `t * top_k + j` of the routing choice it carries (the order of an
    expert-sorting `argsort` of the router's `[T, top_k]` expert choices,
    TorchTitan's `token_indices_experts_sorted`). With `scores` (`[T,
    top_k]`, the router's weights) every element is also multiplied by the
    row's score `scores[indices[r]]` in f32 and rounded once to the
    result's element type (PyTorch's `dout[token] * score` in the combine's
    backward).

    Shapes and types: `source` [T, H] bf16/f16/f32; `indices` [M] i32;
    `scores` [T, top_k] bf16/f16/f32; result [M, H] of `source`'s element
    type; `top_k` >= 1. The verifier checks the static shapes (M <= T *
    top_k). Index values are checked when the kernel runs: a row whose
    index is negative or >= T * top_k is written as zeros and the kernel's
    status word is 3 (routing indices rejected); nothing is read or written
    out of bounds.

    `mxmoe-fuse-quantize-producers` moves a gather whose users are all
    quantizations into an `mxmoe.fused_quantize`: the quantize kernels then
    read the token rows directly (the routed copy is never written).

    Example (Qwen3-30B-A3B, 4096 tokens, top-8):
    ```mlir
    %xr = mxmoe.gather_rows %x[%idx] {top_k = 8 : i64}
        : tensor<4096x2048xbf16>, tensor<32768xi32> -> tensor<32768x2048xbf16>
    ```
  }];
  let arguments = (ins
    MXMoE_HPTensor:$source,
    RankedTensorOf<[I32]>:$indices,
    Optional<MXMoE_HPTensor>:$scores,
    I64Attr:$top_k
  );
  let results = (outs MXMoE_HPTensor:$result);
  let assemblyFormat = [{
    $source `[` $indices `]` (`scaled_by` $scores^ `:` type($scores))?
    attr-dict `:` type($source) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def MXMoE_InvertPermutationOp : MXMoE_Op<"invert_permutation", [Pure]> {
  let summary = "inverse of a permutation of routed rows: inverse[indices[r]] "
                "= r";
  let description = [{
    For routing `indices` ([M] i32, the flattened (token, slot) index of
    every routed row, as `mxmoe.gather_rows` takes them) the routed row of
    each (token, slot): `inverse[indices[r]] = r`. `mxmoe.combine_rows`
    reads it to sum a token's routed rows without atomics.

    Shapes: `indices` and the result [M] i32. An index outside [0, M) is
    skipped (nothing is written out of bounds) and the kernel's status word
    is 3; `indices` that are not a permutation of [0, M) leave entries of
    the result undefined, which `mxmoe.combine_rows` and
    `mxmoe.combine_scores_grad` detect (they check `indices[inverse[i]] ==
    i`).

    Example:
    ```mlir
    %inv = mxmoe.invert_permutation %idx : tensor<32768xi32> -> tensor<32768xi32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I32]>:$indices);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = [{
    $indices attr-dict `:` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def MXMoE_CombineRowsOp : MXMoE_Op<"combine_rows", [Pure]> {
  let summary = "weighted sum of every token's routed rows (MoE combine)";
  let description = [{
    The inverse of `mxmoe.gather_rows`: token `t`'s row of the result is
    `sum_j s[t, j] * rows[inverse[t * top_k + j]]` over its `top_k` routed
    rows, `s = scores` (the router's weights) or 1 without `scores`. Each
    product and the sum are f32, in slot order j = 0 .. top_k - 1, rounded
    once to the result's element type (PyTorch's `index_add` of `rows *
    score` accumulates in the result type, in an order its atomics pick;
    this is its deterministic form). Without scores it is the input
    gradient of the gather (`x[token]`'s backward).

    Shapes and types: `rows` [M, H] bf16/f16/f32 (the experts' output, in
    routed order); `indices` and `inverse` [M] i32 (`inverse` from
    `mxmoe.invert_permutation` of `indices`); `scores` [T, top_k]; result
    [T, H] of `rows`' element type; M = T * top_k (no dropped tokens).
    The kernel checks `inverse[i] < M` and `indices[inverse[i]] == i` for
    every (token, slot) i: a token with a slot that fails (indices not a
    permutation) gets a zero row and the status word is 3.

    Example:
    ```mlir
    %out = mxmoe.combine_rows %y, %idx, %inv scaled_by %w : tensor<4096x8xf32>
        {top_k = 8 : i64} : tensor<32768x2048xbf16>, tensor<32768xi32>,
        tensor<32768xi32> -> tensor<4096x2048xbf16>
    ```
  }];
  let arguments = (ins
    MXMoE_HPTensor:$rows,
    RankedTensorOf<[I32]>:$indices,
    RankedTensorOf<[I32]>:$inverse,
    Optional<MXMoE_HPTensor>:$scores,
    I64Attr:$top_k
  );
  let results = (outs MXMoE_HPTensor:$result);
  let assemblyFormat = [{
    $rows `,` $indices `,` $inverse (`scaled_by` $scores^ `:` type($scores))?
    attr-dict `:` type($rows) `,` type($indices) `,` type($inverse) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def MXMoE_CombineScoresGradOp : MXMoE_Op<"combine_scores_grad", [Pure]> {
  let summary = "gradient of mxmoe.combine_rows with respect to its scores";
  let description = [{
    `result[t, j] = sum_h grad[t, h] * rows[inverse[t * top_k + j], h]`:
    the derivative of `mxmoe.combine_rows`'s output with respect to score
    `s[t, j]`, given the output's gradient `grad` (f32 products and sum in
    column order, rounded once to the result's element type).

    Shapes and types: `grad` [T, H], `rows` [M, H] bf16/f16/f32; `indices`
    and `inverse` [M] i32 as `mxmoe.combine_rows` takes them; result [T,
    top_k] bf16/f16/f32 (the scores' type); M = T * top_k. The same checks
    as `mxmoe.combine_rows`: an entry whose slot fails them is 0 and the
    status word is 3.

    Example:
    ```mlir
    %ds = mxmoe.combine_scores_grad %dout, %y, %idx, %inv {top_k = 8 : i64}
        : tensor<4096x2048xbf16>, tensor<32768x2048xbf16>, tensor<32768xi32>,
          tensor<32768xi32> -> tensor<4096x8xf32>
    ```
  }];
  let arguments = (ins
    MXMoE_HPTensor:$grad,
    MXMoE_HPTensor:$rows,
    RankedTensorOf<[I32]>:$indices,
    RankedTensorOf<[I32]>:$inverse,
    I64Attr:$top_k
  );
  let results = (outs MXMoE_HPTensor:$result);
  let assemblyFormat = [{
    $grad `,` $rows `,` $indices `,` $inverse attr-dict `:` type($grad) `,`
    type($rows) `,` type($indices) `,` type($inverse) `->` type($result)
  }];
  let hasVerifier = 1;
}

def MXMoE_SwizzleScalesOp : MXMoE_Op<"swizzle_scales", [Pure]> {
  let summary = "convert E8M0 scales between row-major and the blocked "
                "128x4 layout";
  let description = [{
    Rearranges E8M0 scales between row-major and
    `#mxmoe.scale_layout<blocked_128x4>` (either direction: exactly one of
    source and result is blocked). Padding bytes of a blocked result are
    0x00; a row-major result drops them.

    Variants (the rearrangements of torchao's
    torchao/prototype/moe_training/kernels/mxfp8/quant.py):
    * 2-D, no offsets: `[R, C]` <-> `[roundUp(R, 128), roundUp(C, 4)]`;
    * 3-D per expert: `[E, R, C]` <-> `[E, roundUp(R, 128), roundUp(C, 4)]`,
      expert e at byte e*Rp*Cp;
    * M-groups (`offsets`, plain blocked): row groups of `[M, C]` scales,
      each padded to a multiple of 128 rows; blocked rows Mp a multiple of
      128, Mp >= roundUp(M, 128) (roundDown(M + 127*G, 128) always fits);
    * K-groups (`offsets`, `per_k_group` blocked): token groups along the
      columns of `[R, Ct]` scales, as `mxmoe.quantize` along a jagged token
      axis writes them (group g at column P_g/32 with ceil(m_g/32)
      columns); each group becomes its own `[roundUp(R, 128),
      roundUp(k_g, 4)]` blocked buffer; blocked columns a multiple of 4 and
      >= roundUp(Ct, 4).

    Source: pytorch/ao `to_blocked`, `triton_mx_block_rearrange_2d_M_groups`,
    `triton_mx_block_rearrange_2d_K_groups`,
    `triton_mx_block_rearrange_per_group_3d`.

    Example:
    ```mlir
    %b = mxmoe.swizzle_scales %s
        : tensor<200x10xf8E8M0FNU> -> tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
    ```
  }];
  let arguments = (ins
    MXMoE_ScaleTensor:$source,
    Optional<MXMoE_OffsetsTensor>:$offsets
  );
  let results = (outs MXMoE_ScaleTensor:$result);
  let assemblyFormat = [{
    $source (`offsets` `(` $offsets^ `:` type($offsets) `)`)? attr-dict `:`
    type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def MXMoE_GroupedMatmulOp : MXMoE_Op<"grouped_matmul",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "grouped GEMM on MX (or bf16) operands: 2D x 3D -> 2D and "
                "2D x 2D -> 3D";
  let description = [{
    The grouped GEMM of MoE experts. Both operands are contraction-contiguous
    ("TN": `out = lhs * rhs^T` per group) and the kind follows from the
    ranks:

    * **2D x 3D -> 2D** (forward, input gradient; groups along M): `lhs`
      `[M, K]`, `rhs` `[G, N, K]`, result `[M, N]`:
      `out[i, n] = sum_k lhs[i, k] * rhs[g, n, k]` for row i of group g =
      `[offsets[g-1], offsets[g])`; rows `i >= offsets[G-1]` are zero.
    * **2D x 2D -> 3D** (weight gradient; groups along the contraction/token
      axis): `lhs` `[M', T]`, `rhs` `[N', T]`, result `[G, M', N']`:
      `out[g, m, n] = sum_{t in group g} lhs[m, t] * rhs[n, t]`; an empty
      group's output is exactly zero. With MX operands the token axis is
      stored as `mxmoe.quantize` along a jagged token axis writes it: group
      g at column P_g = sum_{h<g} roundUp(m_h, 32), zero-padded.

    Operands: MX element types (f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN,
    f4E2M1FN; lhs and rhs may differ) each with its f8E8M0FNU scales (one per
    32 elements along K), or both bf16/f16/f32 without scales. `offsets`:
    `[G]` i32 end offsets (non-decreasing, last <= M or T; constant ones
    that are not are a verifier error). Result bf16 or f32; accumulation
    is fp32.

    Scale shapes (row-major | blocked):
    * 2D x 3D lhs: `[M, K/32]` | M-grouped `[Mp, roundUp(K/32, 4)]`, Mp a
      multiple of 128, Mp >= roundUp(M, 128);
    * 2D x 3D rhs: `[G, N, K/32]` | `[G, roundUp(N, 128), roundUp(K/32, 4)]`;
    * 2D x 2D lhs/rhs: `[R, T/32]` | `per_k_group`
      `[roundUp(R, 128), Qp]`, Qp a multiple of 4, Qp >= roundUp(T/32, 4).

    Semantics of MX operands: value = q * 2^(b - 127) (OCP MX v1.0), so the
    result equals the fp32-accumulated product of the dequantized operands.
    Source: PyTorch `torch._scaled_grouped_mm`, TorchAO MXFP8 MoE training.

    MX128: scales whose layout records a tile (`#mxmoe.scale_layout<...,
    tile = [r, c]>`, written by `mxmoe.quantize` with `scale_tile`) are
    still one e8m0 byte per 32 elements, each c-run equal. When both
    operands' tiles have c a multiple of 128, the sm_90a lowering promotes
    the fp8 partial sums once per 128 K instead of once per 32 (DeepSeek-V3
    report, arXiv 2412.19437 section 3.3.2); the result is the same product
    up to the fp8 MMA's internal accumulation of 128 terms instead of 32.

    Accumulation (2D x 2D only): with `accumulate %acc` (`%acc` of the
    result's type) the op returns `acc + product`, the fp32 sum of the
    accumulator's element and the fp32-accumulated product rounded once
    to the result type (an empty group's slice is `acc` itself, up to the
    sign of a zero). It is the `beta = 1` (C + A * B) form of BLAS GEMM.
    `mxmoe-accumulate-in-gemm` forms it from a tiled MLP's per-shard
    weight-gradient sums; the kernels read and write the output buffer
    (launch programs pass the accumulator's buffer, updated in place;
    one-shot bufferization passes a fresh buffer holding a copy of
    `%acc`), so the sum costs one read of the accumulator in the GEMM's
    epilogue instead of an elementwise kernel's two reads and one write.

    Kernel configuration: the op may carry `mxmoe.gemm_config =
    #mxmoe.gemm_config<...>` (MMA strategy, tile, pipeline stages,
    persistent CTAs of its kernel), attached by `mxmoe-select-gemm-config`
    or pinned by the user; `convert-mxmoe-to-gpu` builds that kernel, and
    selects one itself for an op without.

    Example:
    ```mlir
    %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
        : (tensor<8192x5120xf8E4M3FN>, tensor<8192x160xf8E8M0FNU>,
           tensor<16x8192x5120xf8E4M3FN>, tensor<16x8192x160xf8E8M0FNU>,
           tensor<16xi32>) -> tensor<8192x8192xbf16>
    ```
  }];
  let arguments = (ins
    MXMoE_GemmTensor:$lhs,
    Optional<MXMoE_ScaleTensor>:$lhs_scales,
    MXMoE_GemmTensor:$rhs,
    Optional<MXMoE_ScaleTensor>:$rhs_scales,
    MXMoE_OffsetsTensor:$offsets,
    Optional<RankedTensorOf<[BF16, F32]>>:$accumulator
  );
  let results = (outs RankedTensorOf<[BF16, F32]>:$result);
  let assemblyFormat = [{
    $lhs (`scales` $lhs_scales^)? `,` $rhs (`scales` $rhs_scales^)?
    `offsets` $offsets (`accumulate` $accumulator^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True for 2D x 2D -> 3D (groups along the contraction axis).
    bool isKGrouped() { return getRhs().getType().getRank() == 2; }
    /// True when the operands are MX (carry scales).
    bool isMX() { return getLhsScales() != nullptr; }
  }];
}

#endif // MXMOE_OPS
