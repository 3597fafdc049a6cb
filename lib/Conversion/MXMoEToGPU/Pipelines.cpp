//===- Pipelines.cpp - named mxmoe pass pipelines -------------------------===//

#include "mxmoe/Conversion/Chips.h"
#include "mxmoe/Conversion/Passes.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {
struct ToNVVMOptions : public PassPipelineOptions<ToNVVMOptions> {
  Option<mlir::mxmoe::Chip> chip{
      *this, "chip",
      llvm::cl::desc("target chip: sm_90a, sm_100a or sm_103a (another value "
                     "is rejected when the option is parsed)"),
      llvm::cl::init(mlir::mxmoe::Chip::sm_90a), MXMOE_CHIP_OPTION_VALUES};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("threads per CTA"),
                            llvm::cl::init(256)};
  Option<bool> hostLaunch{
      *this, "host-launch",
      llvm::cl::desc("replace the ops by gpu.launch_func on buffers (else "
                     "annotate them with their kernel, bindings and grid)"),
      llvm::cl::init(true)};
};
} // namespace

void mlir::mxmoe::buildNVVMKernelPipeline(OpPassManager &pm, StringRef chip,
                                          int64_t llvmOptLevel) {
  GpuNVVMAttachTargetOptions target;
  target.chip = nvvmTargetChipFor(chip).str();
  target.features = ptxFeaturesFor(chip).str();
  target.optLevel = llvmOptLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &gpuPm = pm.nest<gpu::GPUModuleOp>();
  gpuPm.addPass(createCanonicalizerPass());
  gpuPm.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.useBarePtrCallConv = true;
  gpuPm.addPass(createConvertGpuOpsToNVVMOps(toNVVM));
  gpuPm.addPass(createCanonicalizerPass());
  gpuPm.addPass(createCSEPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::mxmoe::registerMXMoEPipelines() {
  PassPipelineRegistration<ToNVVMOptions>(
      "mxmoe-to-nvvm",
      "Lower MX-level mxmoe ops to GPU kernels in NVVM/LLVM form for a chip "
      "(sm_90a: +ptx83, sm_100a and sm_103a: +ptx88), ready for "
      "gpu-module-to-binary",
      [](OpPassManager &pm, const ToNVVMOptions &opts) {
        ConvertMXMoEToGPUOptions convert;
        convert.blockSize = opts.blockSize;
        convert.chip = opts.chip;
        convert.hostLaunch = opts.hostLaunch;
        pm.addPass(createConvertMXMoEToGPU(convert));
        buildNVVMKernelPipeline(pm, mlir::mxmoe::stringifyChip(opts.chip));
      });
}
