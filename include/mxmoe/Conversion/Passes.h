//===- Passes.h - mxmoe lowering passes -------------------------*- C++ -*-===//

#ifndef MXMOE_CONVERSION_PASSES_H
#define MXMOE_CONVERSION_PASSES_H

#include "mxmoe/Conversion/Chips.h"
#include "mxmoe/Dialect/MXMoE/Transforms/OptionEnums.h"

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

/// Registers the named pipeline `mxmoe-to-nvvm{chip=sm_90a|sm_100a|sm_103a
/// block-size=N}`: convert-mxmoe-to-gpu followed by buildNVVMKernelPipeline.
void registerMXMoEPipelines();

/// The kernel half of mxmoe-to-nvvm: attaches `#nvvm.target<chip>` (PTX 8.3
/// for sm_90a, 8.8 for sm_100a; sm_103a kernels get the sm_100a target, see
/// nvvmTargetChipFor in Chips.h, and compileModule retargets their PTX) and
/// lowers every gpu.module to NVVM/LLVM with bare-pointer kernel
/// parameters, ready for gpu-module-to-binary.
/// `llvmOptLevel` is the target's O (LLVM IR optimization before NVPTX
/// code generation, 0-3).
void buildNVVMKernelPipeline(OpPassManager &pm, llvm::StringRef chip,
                             int64_t llvmOptLevel = 3);

} // namespace mlir::mxmoe

#endif // MXMOE_CONVERSION_PASSES_H
