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
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::mxmoe {

#define GEN_PASS_DECL
#include "mxmoe/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mxmoe/Conversion/Passes.h.inc"

/// The nvgpu dialect (the grouped-GEMM kernels' TMA-map parameters have its
/// type) and the interfaces the lowering attaches to dialects (external
/// models):
/// - on nvgpu, a ConvertToLLVMPatternInterface that converts
///   `!nvgpu.tensormap.descriptor` to `!llvm.ptr` (LLVM 22 converts it only
///   inside convert-nvgpu-to-nvvm), so convert-gpu-to-nvvm lowers the
///   grouped-GEMM kernels, whose TMA-map parameters have that type, and
///   gpu-to-llvm the host launches that pass them;
/// - on mxmoe, BufferizableOpInterface for the ops convert-mxmoe-to-gpu
///   annotated with their kernel (host-launch=false; grouped GEMMs
///   always), so one-shot-bufferize turns each into its kernel's launch on
///   buffers (BufferizableOpInterfaceImpl.cpp; docs/embedding.md says what
///   the caller owns).
/// convert-mxmoe-to-gpu registers them as dependencies; a tool that runs
/// the kernel pipeline or bufferization in a pass manager of its own
/// (mxmoe-opt, mxmoe-compile, the C API, an embedding compiler) adds them
/// to its registry.
void registerMXMoEToGPUInterfaces(DialectRegistry &registry);

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
