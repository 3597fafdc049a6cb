//===- MXMoEAttrs.td - mxmoe attributes --------------------*- tablegen -*-===//

#ifndef MXMOE_ATTRS
#define MXMOE_ATTRS

include "mxmoe/Dialect/MXMoE/IR/MXMoEDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

class MXMoE_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<MXMoE_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Rounding mode of the shared E8M0 scale
//===----------------------------------------------------------------------===//

def MXMoE_RoundingMode : I32EnumAttr<"RoundingMode",
    "how the E8M0 scale of an MX block is derived from the block's amax", [
      I32EnumAttrCase<"floor", 0>,
      I32EnumAttrCase<"rceil", 1>,
      I32EnumAttrCase<"ceil", 2>,
      I32EnumAttrCase<"even", 3>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::mxmoe";
}

def MXMoE_RoundingModeAttr : EnumAttr<MXMoE_Dialect, MXMoE_RoundingMode,
                                      "rounding"> {
  let summary = "MX scale rounding mode (floor, rceil, ceil, even)";
  let description = [{
    How the shared E8M0 scale exponent `s` (scale = 2^s) of a 32-element
    block is derived from the block's absolute maximum `amax` (fp32), for an
    element format with largest normal `max_pos` and its exponent
    `emax_elem` (8 for E4M3, 15 for E5M2, 2 for E2M1):

    | mode    | s                                              | source |
    |---------|------------------------------------------------|--------|
    | `floor` | floor(log2 amax) - emax_elem                   | OCP MX v1.0 spec, section 6.3 |
    | `rceil` | ceil(log2(amax * fp32(1/max_pos)))             | torchao `ScaleCalculationMode.RCEIL`, PTX `cvt.rp.ue8m0x2.f32`; MoE training default |
    | `ceil`  | ceil(log2 amax) - emax_elem                    | torchao `ScaleCalculationMode.CEIL` |
    | `even`  | floor(log2(rne_mbits(amax))) - emax_elem       | torchao `ScaleCalculationMode.EVEN` |

    `s` is clamped to [-127, 127]; a block containing NaN or Inf gets the
    E8M0 NaN byte 0xFF. `floor` may saturate (data clamped to +-max_pos);
    `rceil` never needs to for finite input.

    Example: `#mxmoe.rounding<rceil>`
  }];
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Precision chosen for a model-level op
//===----------------------------------------------------------------------===//

def MXMoE_Precision : I32EnumAttr<"Precision",
    "the number format a GEMM runs in", [
      I32EnumAttrCase<"bf16", 0>,
      I32EnumAttrCase<"mxfp8", 1>,
      I32EnumAttrCase<"mxfp4", 2>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::mxmoe";
}

def MXMoE_PrecisionAttr : EnumAttr<MXMoE_Dialect, MXMoE_Precision,
                                   "precision"> {
  let summary = "GEMM precision: bf16, mxfp8 (E4M3 + E8M0/32) or mxfp4 "
                "(E2M1 + E8M0/32)";
  let description = [{
    The precision a model-level op (`mxmoe.linear`,
    `mxmoe.scaled_grouped_matmul`) runs in. Set by the user (which overrides
    the policy) or by `mxmoe-precision-policy`. `bf16` keeps the op in
    bfloat16 with fp32 accumulation; `mxfp8` quantizes both operands of every
    GEMM to E4M3 with one E8M0 scale per 32 elements along the contraction
    axis; `mxfp4` does the same with E2M1 elements.

    Example: `#mxmoe.precision<mxfp8>`
  }];
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Scale layout (a tensor encoding)
//===----------------------------------------------------------------------===//

def MXMoE_ScaleLayoutKind : I32EnumAttr<"ScaleLayoutKind",
    "physical layout of an E8M0 scale tensor", [
      I32EnumAttrCase<"row_major", 0>,
      I32EnumAttrCase<"blocked_128x4", 1>,
      I32EnumAttrCase<"compact", 2>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::mxmoe";
}

def MXMoE_ScaleLayoutAttr : MXMoE_Attr<"ScaleLayout", "scale_layout"> {
  let summary = "physical layout of an E8M0 scale tensor (tensor encoding)";
  let description = [{
    Used as the encoding of a `f8E8M0FNU` scale tensor, so that layouts are
    checked by the type system. A scale tensor without encoding is row-major.

    * `row_major`: logical scale matrix S (R rows, C = K/32 columns) stored
      row by row; shape `R x C` (`E x R x C` for 3-D per-expert scales).
    * `blocked_128x4`: the 128x4 blocked ("swizzled", SWIZZLE_32_4_4) layout
      of cuBLAS/CUTLASS/PyTorch and of the tcgen05 block-scaled MMA. The
      tensor shape is the padded logical shape `Rp x Cp` with
      Rp = roundUp(R, 128), Cp = roundUp(C, 4); the byte of scale (r, c) is at

          ((r/128)*(Cp/4) + c/4)*512 + (r%32)*16 + ((r%128)/32)*4 + c%4

      (one 512-byte atom = 128 rows x 4 scale columns = one
      `tcgen05.cp.32x128b.warpx4`). Padding bytes are 0x00. A rank-3 tensor
      `E x Rp x Cp` is blocked per leading index (expert e at byte
      e*Rp*Cp). M-grouped scales (groups of rows, each padded to 128 rows)
      use this layout on the matrix whose group g starts at row
      P_g = sum_{h<g} roundUp(m_h, 128).
    * `blocked_128x4, per_k_group`: groups along the scale columns (the
      contraction axis of the 2D x 2D weight-gradient GEMM); each group g
      with k_g scale columns is an independent `Rp x roundUp(k_g, 4)` blocked
      buffer starting at byte Q_g*Rp, Q_g = sum_{h<g} roundUp(k_h, 4).

    * `compact, tile = [r, c]`: one byte per scale tile of an MX128-style
      quantization (`mxmoe.quantize` with `scale_tile = [r, c]`, c a
      multiple of 32): the scale of the r x c tile (i, j) of the data
      matrix [R, L] (rows x contraction) at row-major index (i, j) of a
      `[ceil(R/r), ceil(L/c)]` tensor (rank 3: `[E, ceil(R/r), ceil(L/c)]`,
      tiles never cross experts). Partial tiles at the R and L tails have a
      scale like any other (their amax covers the elements that exist).
      This is the form DeepGEMM's and TransformerEngine's Hopper kernels
      read (one scale per 1x128 activation block and per 128x128 weight
      block; DeepSeek-V3 report, arXiv 2412.19437 section 3.3.2).
    * `compact, tile = [1, c], per_k_group`: the compact form of a
      quantization along a jagged token axis: the c-token windows restart
      at every group start, group g's windows at columns
      W_g .. W_g + ceil(m_g / c) - 1 with W_g = sum_{h<g} ceil(m_h / c), so
      the tensor is `[R, Wp]`, Wp >= sum_g ceil(m_g / c)
      (floor((T + (c-1)*G) / c) always fits; a smaller Wp is checked at run
      time).

    * `tile = [r, c]` on `row_major` or `blocked_128x4` (optionally with
      `per_k_group`, then r = 1): the layout is unchanged (one byte per 1x32
      block), and every r x c tile of the data has one scale, written into
      each of its c/32 slots (an MX128 quantization, `mxmoe.quantize` with
      `scale_tile = [r, c]`). Such scales are valid MX scales for any
      consumer; `mxmoe.grouped_matmul` on sm_90a promotes its fp8 partial
      sums once per 128 contraction elements instead of once per 32 when
      both operands' tiles have c a multiple of 128 (DeepSeek-V3 report,
      arXiv 2412.19437 section 3.3.2). Along a jagged token axis the c-token
      windows restart at every group's (32-padded) start. Tiles follow the
      rules of the compact layout's (r >= 1, c a multiple of 32).

    Source: pytorch/ao `torchao/prototype/mx_formats/utils.py::to_blocked`,
    `torchao/prototype/moe_training/kernels/mxfp8/quant.py`; CUTLASS
    `sm100_blockscaled_layout.hpp`; PTX ISA section 9.7.16 (tcgen05 block
    scaling).

    Examples: `#mxmoe.scale_layout<row_major>`,
    `#mxmoe.scale_layout<blocked_128x4>`,
    `#mxmoe.scale_layout<blocked_128x4, per_k_group>`,
    `#mxmoe.scale_layout<compact, tile = [128, 128]>`,
    `#mxmoe.scale_layout<compact, tile = [1, 128], per_k_group>`,
    `#mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>`.
  }];
  let parameters = (ins
    EnumParameter<MXMoE_ScaleLayoutKind>:$kind,
    DefaultValuedParameter<"bool", "false">:$perKGroup,
    OptionalArrayRefParameter<"int64_t">:$tile
  );
  let builders = [
    AttrBuilder<(ins "ScaleLayoutKind":$kind,
                     CArg<"bool", "false">:$perKGroup), [{
      return $_get($_ctxt, kind, perKGroup, ArrayRef<int64_t>());
    }]>,
    AttrBuilder<(ins "ScaleLayoutKind":$kind, "bool":$perKGroup,
                     "ArrayRef<int64_t>":$tile), [{
      return $_get($_ctxt, kind, perKGroup, tile);
    }]>
  ];
  let skipDefaultBuilders = 1;
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True for both blocked variants.
    bool isBlocked() const {
      return getKind() == ScaleLayoutKind::blocked_128x4;
    }
    /// True for the compact (one byte per scale tile) layout.
    bool isCompact() const { return getKind() == ScaleLayoutKind::compact; }
  }];
}

//===----------------------------------------------------------------------===//
// MX recipe
//===----------------------------------------------------------------------===//

def MXMoE_ScaleGranularity : I32EnumAttr<"ScaleGranularity",
    "how many elements share one E8M0 scale in an MX recipe", [
      I32EnumAttrCase<"mx32", 0>,
      I32EnumAttrCase<"mx128", 1>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::mxmoe";
}

/// An enum parameter with a default: omitted from the printed form when it
/// has the default value.
class MXMoE_DefaultValuedEnumParameter<EnumAttrInfo info, string value>
    : EnumParameter<info> {
  let defaultValue = value;
}

def MXMoE_MXRecipeAttr : MXMoE_Attr<"MXRecipe", "mx_recipe"> {
  let summary = "how a GEMM's operands are quantized: element type, block "
                "size, scale rounding";
  let description = [{
    The MX quantization recipe of a model-level op, applied to both operands
    of each GEMM along that GEMM's contraction axis (forward, input gradient
    and weight gradient alike; TorchAO `MXFP8TrainingRecipe.MXFP8_RCEIL`):

    * `element`: the MX element type: `f8E4M3FN` (MXFP8, the training
      default), `f8E5M2`, `f6E2M3FN`, `f6E3M2FN` or `f4E2M1FN` (MXFP4);
    * `block_size`: elements per E8M0 scale slot; must be 32 (OCP MX v1.0);
    * `rounding`: the scale rounding mode (`rceil` is the MoE default);
    * `granularity` (optional, default `mx32`): which elements share one
      scale value.
      - `mx32`: every 1x32 block has its own scale (OCP MX; TorchAO's MXFP8
        MoE recipe). Native on tcgen05; on sm_90a exact but promoted once
        per 32 K, below bf16 speed.
      - `mx128`: power-of-two scales shared over 1x128 blocks of the
        activations and gradients along each GEMM's contraction axis
        (128x1 along tokens for both weight-gradient operands, restarting
        at every token group's start) and over 128x128 blocks of the
        weights, so the input gradient's weight (quantized along N with
        128x128 blocks) holds exactly the forward's values, transposed
        (DeepSeek-V3 report, arXiv 2412.19437 section 3.3.2; TransformerEngine
        `Float8BlockScaling` with power-of-two scales). Every 1x32 slot
        of an mx128 tensor holds its tile's scale, so the tensors are valid
        MXFP8 and every MX consumer (the tcgen05 block-scaled MMA included)
        reads them unchanged; a Hopper kernel can promote once per 128 K.
        Only the 8-bit elements (f8E4M3FN, f8E5M2).

    Examples: `#mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>`,
    `#mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil, granularity = mx128>`
  }];
  let parameters = (ins
    "::mlir::Type":$element,
    "int64_t":$blockSize,
    EnumParameter<MXMoE_RoundingMode>:$rounding,
    MXMoE_DefaultValuedEnumParameter<MXMoE_ScaleGranularity,
        "::mlir::mxmoe::ScaleGranularity::mx32">:$granularity
  );
  let builders = [
    AttrBuilder<(ins "::mlir::Type":$element, "int64_t":$blockSize,
                     "RoundingMode":$rounding,
                     CArg<"ScaleGranularity", "ScaleGranularity::mx32">:$granularity), [{
      return $_get($_ctxt, element, blockSize, rounding, granularity);
    }]>
  ];
  let skipDefaultBuilders = 1;
  let assemblyFormat = [{
    `<` $element `,` `block_size` `=` $blockSize `,` `rounding` `=` $rounding
    (`,` `granularity` `=` $granularity^)? `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True for the mx128 granularity.
    bool isMX128() const {
      return getGranularity() == ScaleGranularity::mx128;
    }
  }];
}

//===----------------------------------------------------------------------===//
// Router score function
//===----------------------------------------------------------------------===//

def MXMoE_RouterScore : I32EnumAttr<"RouterScore",
    "score function of an MoE router's logits", [
      I32EnumAttrCase<"softmax", 0>,
      I32EnumAttrCase<"sigmoid", 1>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::mxmoe";
}
def MXMoE_RouterScoreAttr : EnumAttr<MXMoE_Dialect, MXMoE_RouterScore,
                                     "router_score"> {
  let summary = "score function of an MoE router (softmax, sigmoid)";
  let description = [{
    How `mxmoe.router_topk` turns a token's router logits into expert
    scores: `softmax` over the experts (Qwen3-MoE, Mixtral, gpt-oss) or
    the elementwise logistic `sigmoid` (Llama 4, DeepSeek-V3).

    Example: `#mxmoe.router_score<sigmoid>`
  }];
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Kernel parameter bindings
//===----------------------------------------------------------------------===//

def MXMoE_KernelArgKind : I32EnumAttr<"KernelArgKind",
    "what a generated kernel's parameter binds to", [
      I32EnumAttrCase<"operand", 0>,
      I32EnumAttrCase<"result", 1>,
      I32EnumAttrCase<"tensor_map", 2>,
      I32EnumAttrCase<"status", 3>,
      I32EnumAttrCase<"value", 4>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::mxmoe";
}

def MXMoE_KernelArgAttr : MXMoE_Attr<"KernelArg", "kernel_arg"> {
  let summary = "what one parameter of an op's generated kernel binds to";
  let description = [{
    One entry of `mxmoe.kernel_args`, the list (one per kernel parameter,
    in order) that `convert-mxmoe-to-gpu` with `host-launch=false` puts on
    an op implemented by a generated kernel (`mxmoe.kernel`); launchers
    (mxmoe-compile's manifest, docs/kernel-abi.md) bind each parameter from
    it:

    * `#mxmoe.kernel_arg<operand N>`: the device buffer of the op's operand
      N (a pointer);
    * `#mxmoe.kernel_arg<result N>`: the device buffer of the op's result N
      (allocated by the launcher);
    * `#mxmoe.kernel_arg<tensor_map N>`: a 128-byte CUtensorMap over operand
      N (built by the launcher from the kernel's `mxmoe.tensor_map`
      parameter attribute: box, swizzle, element type; CUDA Driver API
      cuTensorMapEncodeTiled), passed as a device pointer;
    * `#mxmoe.kernel_arg<status>`: the op's i32 status word (0 done, else
      the kernel's error code: mxmoe/KernelStatus.h);
    * `#mxmoe.kernel_arg<value V>`: the i64 scalar V (a run-time size).

    N must name one of the op's operands or results (checked with the op);
    the dialect rejects other entries.
  }];
  let parameters = (ins
    EnumParameter<MXMoE_KernelArgKind>:$kind,
    "int64_t":$index
  );
  let builders = [
    AttrBuilder<(ins "KernelArgKind":$kind, CArg<"int64_t", "0">:$index), [{
      return $_get($_ctxt, kind, index);
    }]>
  ];
  let skipDefaultBuilders = 1;
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True for the kinds that name an operand or a result.
    bool namesValue() const {
      return getKind() != KernelArgKind::status &&
             getKind() != KernelArgKind::value;
    }
  }];
}

//===----------------------------------------------------------------------===//
// Grouped-GEMM kernel configuration
//===----------------------------------------------------------------------===//

def MXMoE_GemmStrategy : I32EnumAttr<"GemmStrategy",
    "the MMA strategy of a grouped-GEMM kernel (also the kernel's mxmoe.mma)", [
      I32EnumAttrCase<"wgmma_fp8_promote", 0>,
      I32EnumAttrCase<"wgmma_bf16_upcast", 1>,
      I32EnumAttrCase<"wgmma_fp8_promote_k128", 2>,
      I32EnumAttrCase<"tcgen05_mxf8f6f4", 3>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::mxmoe";
}

def MXMoE_GemmConfigAttr : MXMoE_Attr<"GemmConfig", "gemm_config"> {
  let summary = "kernel configuration of a grouped GEMM: MMA strategy, tile, "
                "pipeline stages, persistent CTAs";
  let description = [{
    The configuration of the kernel that implements an
    `mxmoe.grouped_matmul`, carried by the op as `mxmoe.gemm_config`.
    `mxmoe-select-gemm-config` attaches it from its options, the chip and
    the op's operands; an op that already carries one keeps it (a user or a
    test pins a configuration), and `convert-mxmoe-to-gpu` builds the
    kernel it describes (an op without one gets the same selection there).
    Ops whose configuration and kind (2D x 3D or 2D x 2D, element types,
    output type, K % 128 == 0) are equal share one kernel.

    * `strategy`: the MMA strategy, also the kernel's `mxmoe.mma` (and the
      manifest's `"mma"`):
      - `wgmma_fp8_promote` (sm_90a): per 32-wide MX block an fp8 wgmma
        m64nNk32 into a fresh fp32 partial and a tf32 wgmma forming the
        block's scale product, promoted into the fp32 accumulator by one
        FFMA per element (`gemm-sm90-mma=fp8`; `auto` for bf16 outputs of
        MX32 operands);
      - `wgmma_bf16_upcast` (sm_90a): each stage dequantized exactly to
        bf16 in shared memory, bf16 wgmma m64nNk16 accumulating the whole
        K in fp32 (`gemm-sm90-mma=bf16`; `auto` for f32 outputs);
      - `wgmma_fp8_promote_k128` (sm_90a): MX128 operands (both scale
        layouts record a tile whose c is a multiple of 128): a stage's four
        k32 fp8 wgmmas chain into one partial, promoted once per 128 K
        (`fp8` and `auto` for bf16 outputs of MX128 operands);
      - `tcgen05_mxf8f6f4` (sm_100a and sm_103a): block-scaled
        `tcgen05.mma kind::mxf8f6f4` (fp8 and fp4 operands).
    * `tile_m`: rows of the output tile, 128 (sm_90a: two consumer
      warpgroups of 64 rows; tcgen05: the MMA's M).
    * `tile_n`: columns of the output tile (the MMA's N): 64 or 128 on
      sm_90a (192 with `wgmma_fp8_promote_k128` on a 2D x 3D op with bf16
      output: a tile spans two 128-row blocks of the weight's N, each
      with its own 128x128 scale), 64, 128 or 256 on sm_100a / sm_103a.
      K is 128 per stage.
    * `stages`: shared-memory pipeline stages, 2 to 8 (each 128 x 128 bytes
      of A, tile_n x 128 of B and two 512-byte scale atoms; the kernel's
      whole shared memory, `mxmoe.dynamic_smem`, must stay within the
      chip's 227 KB, and on tcgen05 its TMEM within 512 columns: checked
      when the kernel is built, against the op's output type and scales).
    * `ctas`: CTAs of the persistent grid (the target GPU's SM count, 132
      on H100/H200 SXM), 1 to 2^31 - 1.
    * `cluster` (optional, default 1, printed only when not 1): CTAs per
      thread-block cluster along M (PTX ISA 9.7.9.25
      `cp.async.bulk.tensor ... .multicast::cluster`; CUDA Programming
      Guide, "Thread Block Clusters"). 2 (`wgmma_fp8_promote_k128` only, the
      sm_90a MX128 2D x 3D kernels with bf16 output; `ctas` even): the two
      CTAs of a cluster compute vertically adjacent 128-row tiles of one
      expert and N block and each loads half of the shared weight tile,
      multicast into both CTAs' shared memory (DeepGEMM's configuration
      at these shapes); a group with an odd number of 128-row tiles gets
      one tile computed but not written.

    Example: `#mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128,
    tile_n = 128, stages = 4, ctas = 132>`
  }];
  let parameters = (ins
    EnumParameter<MXMoE_GemmStrategy>:$strategy,
    "int64_t":$tile_m,
    "int64_t":$tile_n,
    "int64_t":$stages,
    "int64_t":$ctas,
    DefaultValuedParameter<"int64_t", "1">:$cluster
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True for the tcgen05 strategy (sm_100a, sm_103a), false for the
    /// wgmma ones (sm_90a).
    bool isTcgen05() const {
      return getStrategy() == GemmStrategy::tcgen05_mxf8f6f4;
    }
    /// The chips whose kernels use the strategy ("sm_90a" or "sm_100a,
    /// sm_103a").
    ::llvm::StringRef getChips() const {
      return isTcgen05() ? "sm_100a, sm_103a" : "sm_90a";
    }
  }];
}

#endif // MXMOE_ATTRS
