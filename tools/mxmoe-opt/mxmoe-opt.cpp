//===- mxmoe-opt.cpp - mlir-opt with the mxmoe dialect and passes ---------===//
//
// Registers every upstream dialect, extension and pass (func, arith, tensor,
// memref, scf, linalg, bufferization, gpu, nvvm, nvgpu, llvm, ...) plus the
// mxmoe dialect, so that users can run and test any stage of the pipeline.
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Conversion/Passes.h"
#include "mxmoe/Dialect/MXMoE/IR/MXMoEDialect.h"
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h"
#include "mxmoe/Pipelines/DefaultPipeline.h"
#include "mxmoe/Version.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  llvm::cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) { ::mxmoe::printVersion(os, "mxmoe-opt"); });
  mlir::registerAllPasses();
  mlir::mxmoe::registerMXMoEConversionPasses();
  mlir::mxmoe::registerMXMoETransformsPasses();
  mlir::mxmoe::registerMXMoEPipelines();
  mlir::mxmoe::registerMXMoEDefaultPipeline();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates gpu.modules to LLVM IR / PTX in-process.
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<mlir::mxmoe::MXMoEDialect>();
  mlir::mxmoe::registerMXMoEToGPUInterfaces(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "mxmoe optimizer driver\n", registry));
}
