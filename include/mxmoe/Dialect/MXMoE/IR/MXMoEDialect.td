//===- MXMoEDialect.td - mxmoe dialect definition ----------*- tablegen -*-===//
//
// The mxmoe dialect: Mixture-of-Experts training with OCP MX (microscaling)
// formats.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_DIALECT
#define MXMOE_DIALECT

include "mlir/IR/OpBase.td"

def MXMoE_Dialect : Dialect {
  let name = "mxmoe";
  let cppNamespace = "::mlir::mxmoe";
  let summary = "MX-format (MXFP8/MXFP4) grouped GEMMs and tiled MLPs for "
                "Mixture-of-Experts training";
  let description = [{
    The `mxmoe` dialect models the routed-expert computation of
    Mixture-of-Experts (MoE) training in OCP Microscaling (MX) formats, at
    three levels:

    * **Model level**: `mxmoe.linear`, `mxmoe.scaled_grouped_matmul`,
      `mxmoe.swiglu_experts` (the routed experts' whole MLP, optionally with
      dispatch and combine) and `mxmoe.tiled_mlp` carry the layer's fully
      qualified name (`fqn`), which the precision policy matches, and
      high-precision (bf16/f32) operands.
    * **MX level**: `mxmoe.quantize`, `mxmoe.dequantize`,
      `mxmoe.swizzle_scales` and `mxmoe.grouped_matmul` operate on MX data
      (builtin `f8E4M3FN`, `f8E5M2`, `f6E2M3FN`, `f6E3M2FN`, `f4E2M1FN`
      elements) and E8M0 scales (builtin `f8E8M0FNU`), one scale per block of
      32 consecutive elements along the quantized (contraction) axis;
      `mxmoe.fused_quantize` computes a producer inside the quantize
      kernels; the routing ops (`mxmoe.gather_rows`, `invert_permutation`,
      `combine_rows`, `combine_scores_grad`) move rows between token and
      routed (expert) order.
    * Kernel level: the lowering passes produce `gpu`/`nvvm` IR.

    The physical layout of a scale tensor is part of its type: a scale tensor
    without encoding (or with `#mxmoe.scale_layout<row_major>`) is row-major;
    `#mxmoe.scale_layout<blocked_128x4>` is the 128x4 blocked layout read by
    tcgen05 block-scaled MMAs (and cuBLAS/CUTLASS/PyTorch).

    Sources: OCP Microscaling Formats (MX) v1.0 spec; the TorchAO/TorchTitan
    MXFP8 MoE training recipe (pytorch/ao
    `torchao/prototype/moe_training`).
  }];
  let useDefaultAttributePrinterParser = 1;
  // linalg, arith and math: the producer in mxmoe.fused_quantize's region.
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];

  // The attributes the passes attach to ops of other dialects (the kernel
  // ABI between kernel generation, the manifest and the runtime; the
  // tiled-MLP loop tags): named here once, each with its type, checked by
  // verifyOperationAttribute (a wrong type or value is a verifier error;
  // an `mxmoe.` attribute not listed is one too). Field meanings:
  // docs/kernel-abi.md, docs/mxmoe-compile.md (manifest) and
  // docs/passes-and-lowering.md.
  let discardableAttrs = (ins
    // Kernel (gpu.func) attributes: launch shape, shared memory, MMA.
    "::mlir::DenseI64ArrayAttr":$grid,        // [x, y, z], each >= 1
    "::mlir::DenseI64ArrayAttr":$block,       // [x, y, z], each >= 1
    "::mlir::IntegerAttr":$dynamic_smem,      // bytes, >= 0
    "::mlir::IntegerAttr":$tmem_columns,      // TMEM columns, >= 0
    "::mlir::StringAttr":$mma,                // the MMA strategy
    // An op implemented by a generated kernel (host-launch=false).
    "::mlir::SymbolRefAttr":$kernel,          // @module::@kernel
    "::mlir::ArrayAttr":$kernel_args,         // #mxmoe.kernel_arg per parameter
    "::mlir::UnitAttr":$empty_result,         // results with no elements
    "::mlir::UnitAttr":$zero_result,          // results that are zeros
    // The kernel configuration of an mxmoe.grouped_matmul (only there).
    "::mlir::Attribute":$gemm_config,         // #mxmoe.gemm_config
    // Expanded functions.
    "::mlir::StringAttr":$fqn,
    "::mlir::StringAttr":$pass,
    // Tiled-MLP shard loops (scf.for).
    "::mlir::Attribute":$tiled_mlp,           // the fqn, or unit
    "::mlir::Attribute":$tiled_mlp_backward,  // the fqn, or unit
    "::mlir::IntegerAttr":$tiled_mlp_id,
    "::mlir::IntegerAttr":$num_shards,
    "::mlir::IntegerAttr":$shard_tokens,
    "::mlir::StringAttr":$dynamic_shards,     // why the loop is not static
    "::mlir::TypeAttr":$grad_accumulator
  );
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class MXMoE_Op<string mnemonic, list<Trait> traits = []>
    : Op<MXMoE_Dialect, mnemonic, traits>;

#endif // MXMOE_DIALECT
