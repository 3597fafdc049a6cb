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

    * **Model level**: `mxmoe.linear`, `mxmoe.scaled_grouped_matmul` and
      `mxmoe.tiled_mlp` carry the layer's fully qualified name (`fqn`), which
      the precision policy matches, and high-precision (bf16/f32) operands.
    * **MX level**: `mxmoe.quantize`, `mxmoe.dequantize`,
      `mxmoe.swizzle_scales` and `mxmoe.grouped_matmul` operate on MX data
      (builtin `f8E4M3FN`, `f8E5M2`, `f6E2M3FN`, `f6E3M2FN`, `f4E2M1FN`
      elements) and E8M0 scales (builtin `f8E8M0FNU`), one scale per block of
      32 consecutive elements along the quantized (contraction) axis.
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
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class MXMoE_Op<string mnemonic, list<Trait> traits = []>
    : Op<MXMoE_Dialect, mnemonic, traits>;

#endif // MXMOE_DIALECT
