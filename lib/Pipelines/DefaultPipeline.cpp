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
  policy.recipe = opts.recipe;
  policy.chips = SmallVector<std::string>(opts.chips.begin(), opts.chips.end());
  if (!opts.excludes.empty())
    policy.exclude =
        SmallVector<std::string>(opts.excludes.begin(), opts.excludes.end());
  pm.addPass(createMXMoEPrecisionPolicy(policy));
  // Ops outside tiled MLPs are expanded first; mxmoe-tile-mlp expands the
  // MX linears of its static shard loops itself (per shard size). Scale
  // packing then sees every quantize + swizzle pair.
  pm.addPass(createMXMoEExpandScaledMatmul());
  MXMoETileMLPOptions tile;
  tile.tokensPerShard = opts.tokensPerShard;
  tile.rule = opts.tileRule;
  pm.addPass(createMXMoETileMLP(tile));
  pm.addPass(createMXMoEPackScales());
}

void mlir::mxmoe::buildKernelPipeline(OpPassManager &pm, Chip chip,
                                      const DefaultPipelineOptions &opts) {
  ConvertMXMoEToGPUOptions conv;
  conv.hostLaunch = false;
  // An op equal to an earlier one takes its kernel without generating a
  // copy (a model's layers need one layer's kernels)...
  conv.reuseKernels = true;
  conv.chip = chip;
  conv.gemmTileN = opts.gemmTileN;
  conv.gemmStages = opts.gemmStages;
  conv.gemmCTAs = opts.gemmCTAs;
  conv.gemmSm90Mma = opts.gemmSm90Mma;
  pm.addPass(createConvertMXMoEToGPU(conv));
  // ...and ops of other shapes whose kernels are equal (run-time sizes)
  // share one: compile each distinct kernel once.
  pm.addPass(createMXMoEDedupeKernels());
}

void mlir::mxmoe::buildPTXPipeline(OpPassManager &pm, llvm::StringRef chip,
                                   int64_t llvmOptLevel) {
  buildNVVMKernelPipeline(pm, chip, llvmOptLevel);
  GpuModuleToBinaryPassOptions bin;
  bin.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(bin));
}
