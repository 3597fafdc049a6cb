//===- DefaultPipeline.cpp - the pipeline of mxmoe-compile ----------------===//

#include "mxmoe/Pipelines/DefaultPipeline.h"

#include "mxmoe/Conversion/Passes.h"
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h"

#include "mlir/Dialect/GPU/Transforms/Passes.h"

using namespace mlir;

void mlir::mxmoe::buildModelPipeline(OpPassManager &pm,
                                     const DefaultPipelineOptions &opts) {
  MXMoEPrecisionPolicyOptions policy;
  policy.report = opts.policyReport;
  policy.rounding = opts.rounding;
  if (!opts.excludes.empty())
    policy.exclude =
        SmallVector<std::string>(opts.excludes.begin(), opts.excludes.end());
  pm.addPass(createMXMoEPrecisionPolicy(policy));
  // Expansion runs before tiling: ops inside a tiled MLP body (dynamic
  // shard token counts) are not expanded yet and produce no kernels.
  pm.addPass(createMXMoEExpandScaledMatmul());
  pm.addPass(createMXMoEPackScales());
  MXMoETileMLPOptions tile;
  tile.tokensPerShard = opts.tokensPerShard;
  pm.addPass(createMXMoETileMLP(tile));
}

void mlir::mxmoe::buildKernelPipeline(OpPassManager &pm, llvm::StringRef chip,
                                      const DefaultPipelineOptions &opts) {
  ConvertMXMoEToGPUOptions conv;
  conv.hostLaunch = false;
  conv.chip = chip.str();
  conv.gemmTileN = opts.gemmTileN;
  conv.gemmStages = opts.gemmStages;
  conv.gemmCTAs = opts.gemmCTAs;
  conv.gemmSm90Mma = opts.gemmSm90Mma;
  pm.addPass(createConvertMXMoEToGPU(conv));
  // Ops of equal shapes and types get identical kernels: compile each once.
  pm.addPass(createMXMoEDedupeKernels());
}

void mlir::mxmoe::buildPTXPipeline(OpPassManager &pm, llvm::StringRef chip,
                                   int64_t llvmOptLevel) {
  buildNVVMKernelPipeline(pm, chip, llvmOptLevel);
  GpuModuleToBinaryPassOptions bin;
  bin.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(bin));
}
