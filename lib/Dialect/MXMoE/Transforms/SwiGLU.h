//===- SwiGLU.h - the SwiGLU of mxmoe.swiglu_experts as linalg.generic -*- C++
//-*-===//
//
// Private to lib/Dialect/MXMoE/Transforms: the elementwise SwiGLU between
// the experts' two grouped GEMMs and its backward, built as linalg.generic
// ops that mxmoe-fuse-quantize-producers fuses into the quantizations of
// their results. The formulas (PyTorch's bf16 roundings) are
// mxmoe.swiglu_experts' description (MXMoEOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_LIB_DIALECT_MXMOE_TRANSFORMS_SWIGLU_H
#define MXMOE_LIB_DIALECT_MXMOE_TRANSFORMS_SWIGLU_H

#include "mlir/IR/Builders.h"

namespace mlir::mxmoe::swiglu {

/// a [M, I] = bf16(bf16(silu(g)) * u) of h [M, 2I] = [g | u] (bf16).
Value forward(OpBuilder &b, Location loc, Value h);

/// dh [M, 2I] = [d g | d u] of the SwiGLU at h [M, 2I], given da [M, I]:
/// two generics joined by a tensor.concat along dim 1.
Value backward(OpBuilder &b, Location loc, Value da, Value h);

} // namespace mlir::mxmoe::swiglu

#endif // MXMOE_LIB_DIALECT_MXMOE_TRANSFORMS_SWIGLU_H
