//===- Passes.h - mxmoe lowering passes -------------------------*- C++ -*-===//

#ifndef MXMOE_CONVERSION_PASSES_H
#define MXMOE_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::mxmoe {

#define GEN_PASS_DECL
#include "mxmoe/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mxmoe/Conversion/Passes.h.inc"

/// Registers the named pipelines `mxmoe-to-nvvm` (lowering to NVVM with a
/// chip option) .
void registerMXMoEPipelines();

} // namespace mlir::mxmoe

#endif // MXMOE_CONVERSION_PASSES_H
