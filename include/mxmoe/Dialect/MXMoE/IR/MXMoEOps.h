//===- MXMoEOps.h - mxmoe operations ----------------------------*- C++ -*-===//
//
// Model-level (linear, scaled_grouped_matmul, tiled_mlp, yield) and MX-level
// (quantize, quantize_weight, requantize, dequantize, swizzle_scales,
// grouped_matmul) operations.
// Definitions: MXMoEOps.td; verifiers: lib/Dialect/MXMoE/IR/MXMoEOps.cpp
// (model-level ops) and MXMoEMXOps.cpp (MX-level ops).
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_DIALECT_MXMOE_IR_MXMOEOPS_H
#define MXMOE_DIALECT_MXMOE_IR_MXMOEOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <array>

#include "mxmoe/Dialect/MXMoE/IR/MXMoEAttrs.h"
#include "mxmoe/Dialect/MXMoE/IR/MXMoEDialect.h"

namespace mlir::linalg {
class GenericOp; // mxmoe.fused_quantize's producer
} // namespace mlir::linalg

#define GET_OP_CLASSES
#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h.inc"

#endif // MXMOE_DIALECT_MXMOE_IR_MXMOEOPS_H
