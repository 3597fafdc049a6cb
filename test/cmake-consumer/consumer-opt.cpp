//===- consumer-opt.cpp - an opt tool built on the installed mxmoe --------===//
//
// What a project embedding mxmoe writes: its own opt-like driver that
// registers the upstream dialects it needs plus the mxmoe dialect, its
// passes, the conversion passes and the default pipeline, all from the
// installed libraries (find_package(MXMoE), MXMoE::MLIRMXMoE* targets).
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Conversion/Passes.h"
#include "mxmoe/Dialect/MXMoE/IR/MXMoEDialect.h"
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h"
#include "mxmoe/Pipelines/DefaultPipeline.h"
#include "mxmoe/Version.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  llvm::cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) { ::mxmoe::printVersion(os, "consumer-opt"); });
  mlir::mxmoe::registerMXMoEConversionPasses(); // convert-mxmoe-to-gpu, ...
  mlir::mxmoe::registerMXMoETransformsPasses(); // policy, expansion, ...
  mlir::mxmoe::registerMXMoEPipelines();        // mxmoe-to-nvvm
  mlir::mxmoe::registerMXMoEDefaultPipeline();  // mxmoe-default-pipeline
  mlir::registerGPUPasses();                    // gpu-module-to-binary (PTX)

  // The dialects of the input and of every stage's output (a test may
  // start at any stage). The extensions give the lowering's convert-to-llvm
  // interfaces, the translations and the NVVM target the PTX emission.
  mlir::DialectRegistry registry;
  registry.insert<mlir::mxmoe::MXMoEDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::memref::MemRefDialect, mlir::scf::SCFDialect,
                  mlir::cf::ControlFlowDialect, mlir::gpu::GPUDialect,
                  mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect>();
  mlir::registerAllExtensions(registry);
  // The nvgpu dialect of the kernels' TMA-map parameters and their
  // conversion in convert-gpu-to-nvvm; mxmoe ops' bufferization models.
  mlir::mxmoe::registerMXMoEToGPUInterfaces(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "an opt tool built on the installed mxmoe\n", registry));
}
