//===- DefaultPipeline.h - the pipeline of mxmoe-compile --------*- C++ -*-===//
//
// The default compilation pipeline, shared by the mxmoe-compile driver and
// the pipeline fuzzer (tools/mxmoe-fuzz-pipeline):
//
//   1. model level: mxmoe-precision-policy, mxmoe-expand-scaled-matmul,
//      mxmoe-pack-scales, mxmoe-tile-mlp;
//   2. kernels: mxmoe-select-gemm-config (every grouped GEMM gets its
//      #mxmoe.gemm_config), convert-mxmoe-to-gpu{host-launch=false
//      reuse-kernels} (every MX op is annotated with its kernel in
//      gpu.module @mxmoe_kernels), mxmoe-dedupe-kernels;
//   3. lowering per chip: buildNVVMKernelPipeline + gpu-module-to-binary
//      (format=isa: PTX text; ptxas is run by the driver, not here).
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_PIPELINES_DEFAULTPIPELINE_H
#define MXMOE_PIPELINES_DEFAULTPIPELINE_H

#include "mxmoe/Conversion/Chips.h"
#include "mxmoe/Dialect/MXMoE/Transforms/OptionEnums.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::mxmoe {

struct DefaultPipelineOptions {
  /// Extra precision-policy exclude patterns (checked before the defaults).
  std::vector<std::string> excludes;
  /// Target chips, in order (sm_90a, sm_100a, sm_103a); the policy's
  /// recipe=auto decides for them.
  std::vector<std::string> chips = {"sm_90a", "sm_100a"};
  /// MX scale rounding of the recipes the policy assigns.
  RoundingMode rounding = RoundingMode::rceil;
  /// Scale granularity of the recipes the policy assigns: mx32, mx128 or
  /// auto (mx128 when `chips` includes sm_90a; see
  /// mxmoe-precision-policy). mx32 stays the default until the sm_90a
  /// MX128 grouped GEMM exists: on the exact MX kernels mx128 is coarser
  /// without being faster.
  RecipeChoice recipe = RecipeChoice::mx32;
  /// mxmoe-expand-scaled-matmul's quantize-weights-once: MX128 grouped
  /// GEMMs quantize each weight once, in the forward (both orientations),
  /// which returns the transposed copy for input_grad.
  bool quantizeWeightsOnce = false;
  /// Tokens per shard of mxmoe-tile-mlp's `auto` rule.
  int64_t tokensPerShard = 32768;
  /// mxmoe-tile-mlp's `auto` rule: "tokens" (ceil(T / tokensPerShard)) or
  /// "square" (ceil(T / hidden), DeepSpeed/ALST).
  ShardRule tileRule = ShardRule::tokens;
  /// Where mxmoe-precision-policy writes its JSON report ("" = nowhere).
  std::string policyReport;
  /// Grouped-GEMM tile N (64/128; 256 on sm_100a), pipeline stages and
  /// persistent CTAs (convert-mxmoe-to-gpu's gemm-* options).
  int64_t gemmTileN = 0;
  int64_t gemmStages = 0; ///< 0: auto (4; 2 for sm_90a bf16-upcast kernels)
  int64_t gemmCTAs = 132;
  /// CTAs per thread-block cluster along M (gemm-cluster: 0 auto = 1; 2
  /// for sm_90a MX128 2D x 3D bf16-output kernels).
  int64_t gemmCluster = 0;
  /// sm_90a grouped-GEMM MMA strategy: "fp8" or "bf16" (gemm-sm90-mma).
  Sm90Mma gemmSm90Mma = Sm90Mma::automatic;
  /// LLVM IR optimization level (0-3) of the kernels' NVVM target
  /// (`#nvvm.target<O = N>`) before NVPTX code generation; ptxas then
  /// optimizes the PTX at its own -O3 either way.
  int64_t llvmOptLevel = 3;
};

/// Stage 1: the model-level passes (policy, expansion, scale packing,
/// tiled-MLP lowering) on a builtin.module.
void buildModelPipeline(OpPassManager &pm, const DefaultPipelineOptions &opts);

/// Stage 2: mxmoe-select-gemm-config (the grouped GEMMs' kernel
/// configurations), convert-mxmoe-to-gpu with host-launch=false and
/// reuse-kernels (an op equal to an earlier one shares its kernel, none is
/// generated for it) for `chip` (the grouped-GEMM kernels are chip
/// specific; a name becomes a Chip through symbolizeChip,
/// mxmoe/Conversion/Chips.h), then mxmoe-dedupe-kernels (one kernel per set
/// of identical kernels; the ops' `mxmoe.kernel` references are
/// redirected).
void buildKernelPipeline(OpPassManager &pm, Chip chip,
                         const DefaultPipelineOptions &opts = {});

/// Stage 3: lowers the gpu.modules to NVVM for `chip` (sm_90a or sm_100a)
/// and serializes them to PTX text (gpu-module-to-binary format=isa).
void buildPTXPipeline(OpPassManager &pm, llvm::StringRef chip,
                      int64_t llvmOptLevel = 3);

/// Registers the named pipeline `mxmoe-default-pipeline{chip=sm_90a
/// recipe=mx32|mx128|auto rounding=rceil exclude=... tokens-per-shard=N
/// tile-rule=tokens gemm-tile-n=128 gemm-stages=0 gemm-ctas=132 gemm-cluster=0
/// gemm-sm90-mma=auto llvm-opt-level=3 policy-report=FILE
/// until=model|kernels|ptx}`: stages 1, 2 and 3 above for one chip, the
/// passes mxmoe-compile runs (so `mxmoe-opt --mxmoe-default-pipeline`
/// prints the IR mxmoe-compile writes to model.mlir with until=kernels, and
/// the PTX of its kernels.ptx inside the gpu.binary with until=ptx, the
/// default; test/Tools/mxmoe-compile/default-pipeline-equivalence.mlir).
/// sm_103a PTX is sm_100a's until mxmoe-compile retargets it (Chips.h).
/// chip, recipe, rounding, tile-rule, gemm-sm90-mma and until are enum
/// options: another value is rejected when the options are parsed, with
/// the valid ones.
void registerMXMoEDefaultPipeline();

} // namespace mlir::mxmoe

#endif // MXMOE_PIPELINES_DEFAULTPIPELINE_H
