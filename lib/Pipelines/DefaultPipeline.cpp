//===- DefaultPipeline.cpp - the pipeline of mxmoe-compile ----------------===//

#include "mxmoe/Pipelines/DefaultPipeline.h"

#include "mxmoe/Conversion/Passes.h"
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h"

#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {
enum class Until { model, kernels, ptx };
} // namespace

MXMOE_ENUM_OPTION_LISTS_VALUES(Until);

namespace {

struct DefaultPipelineCLOptions
    : public PassPipelineOptions<DefaultPipelineCLOptions> {
  Option<mlir::mxmoe::Chip> chip{*this, "chip", llvm::cl::desc("target chip"),
                                 llvm::cl::init(mlir::mxmoe::Chip::sm_90a),
                                 MXMOE_CHIP_OPTION_VALUES};
  Option<mlir::mxmoe::RecipeChoice> recipe{
      *this, "recipe",
      llvm::cl::desc("scale granularity of the MX recipes the policy assigns"),
      llvm::cl::init(mlir::mxmoe::RecipeChoice::mx32),
      MXMOE_RECIPE_OPTION_VALUES};
  Option<bool> quantizeWeightsOnce{
      *this, "quantize-weights-once",
      llvm::cl::desc("MX128 grouped GEMMs: quantize each weight once, in the "
                     "forward (mxmoe-expand-scaled-matmul's option)"),
      llvm::cl::init(false)};
  Option<mlir::mxmoe::RoundingMode> rounding{
      *this, "rounding",
      llvm::cl::desc("MX scale rounding (see mxmoe-precision-policy)"),
      llvm::cl::init(mlir::mxmoe::RoundingMode::rceil),
      MXMOE_ROUNDING_OPTION_VALUES};
  ListOption<std::string> exclude{
      *this, "exclude",
      llvm::cl::desc("extra precision-policy exclude patterns")};
  Option<int64_t> tokensPerShard{
      *this, "tokens-per-shard",
      llvm::cl::desc("tokens per shard of tiled MLPs with shards = auto"),
      llvm::cl::init(32768)};
  Option<mlir::mxmoe::ShardRule> tileRule{
      *this, "tile-rule",
      llvm::cl::desc("shard rule of tiled MLPs: tokens or square"),
      llvm::cl::init(mlir::mxmoe::ShardRule::tokens),
      MXMOE_SHARD_RULE_OPTION_VALUES};
  Option<int64_t> gemmTileN{
      *this, "gemm-tile-n",
      llvm::cl::desc("grouped-GEMM tile N (0: auto, see convert-mxmoe-to-gpu)"),
      llvm::cl::init(0)};
  Option<int64_t> gemmStages{*this, "gemm-stages",
                             llvm::cl::desc("grouped-GEMM stages (0: auto)"),
                             llvm::cl::init(0)};
  Option<int64_t> gemmCTAs{*this, "gemm-ctas",
                           llvm::cl::desc("persistent grouped-GEMM CTAs"),
                           llvm::cl::init(132)};
  Option<int64_t> gemmCluster{
      *this, "gemm-cluster",
      llvm::cl::desc("grouped-GEMM CTAs per cluster along M (0: auto, see "
                     "convert-mxmoe-to-gpu)"),
      llvm::cl::init(0)};
  Option<mlir::mxmoe::Sm90Mma> gemmSm90Mma{
      *this, "gemm-sm90-mma",
      llvm::cl::desc("sm_90a grouped-GEMM MMA strategy: auto, fp8 or bf16"),
      llvm::cl::init(mlir::mxmoe::Sm90Mma::automatic),
      MXMOE_SM90_MMA_OPTION_VALUES};
  Option<int64_t> llvmOptLevel{
      *this, "llvm-opt-level",
      llvm::cl::desc("LLVM IR optimization level of the kernels (0-3)"),
      llvm::cl::init(3)};
  Option<std::string> policyReport{
      *this, "policy-report",
      llvm::cl::desc("file for the precision policy's JSON report"),
      llvm::cl::init("")};
  Option<Until> until{
      *this, "until", llvm::cl::desc("last stage to run"),
      llvm::cl::init(Until::ptx),
      llvm::cl::values(
          clEnumValN(Until::model, "model", "model-level passes (MX level)"),
          clEnumValN(Until::kernels, "kernels",
                     "kernel generation (mxmoe-compile's model.mlir)"),
          clEnumValN(Until::ptx, "ptx",
                     "NVVM lowering and PTX in gpu.binary (kernels.ptx)"))};
};

/// The DefaultPipelineOptions of the named pipeline's options.
mlir::mxmoe::DefaultPipelineOptions
toOptions(const DefaultPipelineCLOptions &o) {
  mlir::mxmoe::DefaultPipelineOptions opts;
  opts.chips = {mlir::mxmoe::stringifyChip(o.chip).str()};
  opts.recipe = o.recipe;
  opts.quantizeWeightsOnce = o.quantizeWeightsOnce;
  opts.rounding = o.rounding;
  opts.excludes.assign(o.exclude.begin(), o.exclude.end());
  opts.tokensPerShard = o.tokensPerShard;
  opts.tileRule = o.tileRule;
  opts.gemmTileN = o.gemmTileN;
  opts.gemmStages = o.gemmStages;
  opts.gemmCTAs = o.gemmCTAs;
  opts.gemmCluster = o.gemmCluster;
  opts.gemmSm90Mma = o.gemmSm90Mma;
  opts.llvmOptLevel = o.llvmOptLevel;
  opts.policyReport = o.policyReport;
  return opts;
}
} // namespace

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
  MXMoEExpandScaledMatmulOptions expand;
  expand.quantizeWeightsOnce = opts.quantizeWeightsOnce;
  pm.addPass(createMXMoEExpandScaledMatmul(expand));
  MXMoETileMLPOptions tile;
  tile.tokensPerShard = opts.tokensPerShard;
  tile.rule = opts.tileRule;
  pm.addPass(createMXMoETileMLP(tile));
  // The shard loops' weight-gradient sums happen in the GEMMs' epilogues.
  pm.addPass(createMXMoEAccumulateInGemm());
  pm.addPass(createMXMoEPackScales());
  // The SwiGLU of an expanded mxmoe.swiglu_experts (and any elementwise
  // producer) computed inside the quantize kernels that read it.
  pm.addPass(createMXMoEFuseQuantizeProducers());
}

void mlir::mxmoe::buildKernelPipeline(OpPassManager &pm, Chip chip,
                                      const DefaultPipelineOptions &opts) {
  // The grouped-GEMM options (MXMoEGemmOptions) of both passes.
  auto setGemmOptions = [&](auto &o) {
    o.chip = chip;
    o.gemmTileN = opts.gemmTileN;
    o.gemmStages = opts.gemmStages;
    o.gemmCTAs = opts.gemmCTAs;
    o.gemmCluster = opts.gemmCluster;
    o.gemmSm90Mma = opts.gemmSm90Mma;
  };
  // Every grouped GEMM gets its kernel configuration (#mxmoe.gemm_config),
  // which convert-mxmoe-to-gpu builds.
  MXMoESelectGemmConfigOptions select;
  setGemmOptions(select);
  pm.addPass(createMXMoESelectGemmConfig(select));
  ConvertMXMoEToGPUOptions conv;
  conv.hostLaunch = false;
  // An op equal to an earlier one takes its kernel without generating a
  // copy (a model's layers need one layer's kernels)...
  conv.reuseKernels = true;
  setGemmOptions(conv);
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

void mlir::mxmoe::registerMXMoEDefaultPipeline() {
  PassPipelineRegistration<DefaultPipelineCLOptions>(
      "mxmoe-default-pipeline",
      "mxmoe-compile's passes for one chip: model-level passes, kernel "
      "generation, NVVM lowering and PTX (gpu-module-to-binary format=isa)",
      [](OpPassManager &pm, const DefaultPipelineCLOptions &o) {
        DefaultPipelineOptions opts = toOptions(o);
        buildModelPipeline(pm, opts);
        if (o.until == Until::model)
          return;
        buildKernelPipeline(pm, o.chip, opts);
        if (o.until == Until::ptx)
          buildPTXPipeline(pm, stringifyChip(o.chip), opts.llvmOptLevel);
      });
}
