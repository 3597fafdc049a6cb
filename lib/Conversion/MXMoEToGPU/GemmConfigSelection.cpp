//===- GemmConfigSelection.cpp - mxmoe-select-gemm-config -----------------===//
//
// The grouped-GEMM kernel configuration: the gemm-* options' check, the
// selection of #mxmoe.gemm_config for an op, the check of a configuration
// an op carries, and the pass that attaches the selection to every grouped
// GEMM (GemmConfigSelection.h).
//
//===----------------------------------------------------------------------===//

#include "GemmConfigSelection.h"
#include "KernelGen.h"

#include "mxmoe/Conversion/Passes.h"
#include "mxmoe/Dialect/MXMoE/Utils/CheckedPassOptions.h"

namespace mlir::mxmoe {
#define GEN_PASS_DEF_MXMOESELECTGEMMCONFIG
#include "mxmoe/Conversion/Passes.h.inc"
} // namespace mlir::mxmoe

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;

namespace {

/// Rows of every grouped-GEMM tile (GroupedMatmul.h).
constexpr int64_t kTileM = 128;
/// TMEM columns of one SM (tcgen05.alloc).
constexpr int64_t kTmemColumns = 512;

/// The budget of `chip` that the kernel of kind `p` under `cfg` exceeds,
/// as "needs N bytes of shared memory, over the 232448 of <chip>" (or
/// "needs N TMEM columns (...), over the 512 of <chip>", `tmem` set), or ""
/// when it fits.
std::string overBudget(const GemmKind &p, const GemmConfig &cfg, StringRef chip,
                       bool &tmem) {
  bool tcgen05 = isTcgen05Chip(chip);
  int64_t bytes =
      tcgen05 ? getSm100GemmSharedBytes(cfg) : getSm90GemmSharedBytes(p, cfg);
  std::string error;
  llvm::raw_string_ostream os(error);
  tmem = false;
  if (bytes > kMaxDynamicSmem) {
    os << "needs " << bytes << " bytes of shared memory, over the "
       << kMaxDynamicSmem << " of " << chip;
    return error;
  }
  if (tcgen05 && getSm100GemmTmemColumns(cfg) > kTmemColumns) {
    tmem = true;
    os << "needs " << getSm100GemmTmemColumns(cfg)
       << " TMEM columns (accumulator + per-stage scales), over the "
       << kTmemColumns << " of " << chip;
  }
  return error;
}

/// True when both scale operands of `op` record a tile whose c is a
/// multiple of 128 (MX128: one scale per 128 K on both operands; without a
/// tile a scale covers one 1x32 block).
bool hasMX128Scales(GroupedMatmulOp op) {
  auto tileCols = [](Value scales) -> int64_t {
    ScaleLayoutAttr l =
        getScaleLayout(cast<RankedTensorType>(scales.getType()));
    return l && !l.getTile().empty() ? l.getTile()[1] : ::mxmoe::kMXBlockSize;
  };
  return tileCols(op.getLhsScales()) % 128 == 0 &&
         tileCols(op.getRhsScales()) % 128 == 0;
}

} // namespace

std::string mlir::mxmoe::kernels::checkGemmOptions(StringRef pass,
                                                   const GemmOptions &o) {
  std::string error;
  llvm::raw_string_ostream os(error);
  bool sm100 = o.tcgen05();
  if (o.tileN != 0 && o.tileN != 64 && o.tileN != 128 &&
      !(sm100 && o.tileN == 256) && !(!sm100 && o.tileN == 192)) {
    os << pass
       << ": gemm-tile-n must be 0 (auto), 64, 128 or 192 (sm_90a) or 0, "
          "64, 128 or 256 (sm_100a, sm_103a), got "
       << o.tileN;
    return error;
  }
  if (o.stages != 0 && (o.stages < 2 || o.stages > 8)) {
    os << pass << ": gemm-stages must be 0 (auto) or in [2, 8], got "
       << o.stages;
    return error;
  }
  // A 1-D grid has at most 2^31 - 1 CTAs (CUDA gridDim.x).
  if (o.ctas < 1 || o.ctas > 2147483647) {
    os << pass
       << ": gemm-ctas must be in [1, 2147483647] (the GPU's SM count, "
          "e.g. 132), got "
       << o.ctas;
    return error;
  }
  if (o.cluster != 0 && o.cluster != 1 && !(!sm100 && o.cluster == 2)) {
    os << pass
       << ": gemm-cluster must be 0 (auto), 1 or 2 (sm_90a) or 0 or 1 "
          "(sm_100a, sm_103a), got "
       << o.cluster;
    return error;
  }
  if (o.cluster == 2 && o.ctas % 2 != 0) {
    os << pass
       << ": gemm-cluster=2 needs an even gemm-ctas (whole clusters), got "
       << o.ctas;
    return error;
  }
  // The tcgen05 configuration is the same for every op (sm_90a kernels
  // depend on the op's strategy, output and scales: selectGemmConfig).
  if (!sm100)
    return "";
  bool tmem = false;
  GemmConfig cfg{o.tileN ? o.tileN : 128, o.stages ? o.stages : 4, o.ctas,
                 false};
  std::string over = overBudget(GemmKind{}, cfg, o.chipName(), tmem);
  if (!over.empty())
    os << pass << ": the grouped-GEMM configuration " << over
       << (tmem ? "; lower gemm-stages or gemm-tile-n" : "; lower gemm-stages");
  return error;
}

GemmConfig mlir::mxmoe::kernels::toGemmConfig(GemmConfigAttr attr) {
  GemmConfig cfg{attr.getTileN(), attr.getStages(), attr.getCtas(),
                 attr.getStrategy() == GemmStrategy::wgmma_bf16_upcast};
  cfg.clusterM = attr.getCluster();
  return cfg;
}

FailureOr<GemmConfigAttr>
mlir::mxmoe::kernels::selectGemmConfig(GroupedMatmulOp op,
                                       const GemmOptions &o) {
  // sm_90a strategy: fp8 wgmma with per-block promotion is the faster one
  // at bf16 output; the exact bf16 upcast keeps f32 outputs within fp32
  // accumulation error (the fp8 MMA's internal accumulation of a 32-term
  // block does not).
  // (MX128 too: the fp8 wgmma's limited internal accumulation precision
  // gives f32 outputs a normwise error of about 2e-4, measured on the H200
  // by test/Integration/gemm_gpu.py, where the upcast stays near 1e-7.)
  bool sm100 = o.tcgen05();
  bool outF32 = op.getResult().getType().getElementType().isF32();
  bool useUpcast = !sm100 && (o.sm90Mma == Sm90Mma::bf16 ||
                              (o.sm90Mma == Sm90Mma::automatic && outF32));
  // MX128 scales: sm_90a promotes once per 128-wide stage. tcgen05
  // consumes the same blocked bytes per 1x32 block (each 128-run holds
  // equal scales).
  bool mx128 = !sm100 && !useUpcast && hasMX128Scales(op);
  GemmStrategy strategy = sm100       ? GemmStrategy::tcgen05_mxf8f6f4
                          : useUpcast ? GemmStrategy::wgmma_bf16_upcast
                          : mx128     ? GemmStrategy::wgmma_fp8_promote_k128
                                      : GemmStrategy::wgmma_fp8_promote;
  int64_t stages = o.stages ? o.stages : useUpcast ? 2 : 4;
  // Tile N 0 (auto) is 192 where it fits, else 128. 192 (two math
  // warpgroups of m64n192: 1.5x the MMA work per stage's fixed cost,
  // DeepGEMM's tile at these shapes; bench/RESULTS.md) fits only the MX128
  // 2D x 3D bf16-output kernels (f32 rows exceed the staged epilogue's
  // shared memory, the 2D x 2D column scales the registers); it was 2-12 %
  // faster than 128 at four model shapes (bench/RESULTS.md).
  bool wide = mx128 && !op.isKGrouped() && !outF32;
  int64_t tileN = o.tileN ? o.tileN : wide ? 192 : 128;
  if (tileN == 192 && !wide)
    return op.emitOpError("gemm-tile-n=192 is the tile of the sm_90a MX128 "
                          "2D x 3D kernels with bf16 output (fp8 strategy); "
                          "this grouped matmul needs 64 or 128 (or 0, auto)");
  // Cluster 0 (auto) is 1; 2 (TMA multicast of the weight tile to two
  // CTAs, DeepGEMM's configuration) is opt-in: its first run (H100,
  // bench/RESULTS.md) was correct but 2-2.6x slower than 1.
  int64_t cluster = o.cluster ? o.cluster : 1;
  if (cluster == 2 && !wide)
    return op.emitOpError("gemm-cluster=2 is for the sm_90a MX128 2D x 3D "
                          "kernels with bf16 output (fp8 strategy); this "
                          "grouped matmul needs 1 (or 0, auto)");
  auto attr = GemmConfigAttr::get(op.getContext(), strategy, kTileM, tileN,
                                  stages, o.ctas, cluster);
  if (sm100) // (budgets checked with the options: checkGemmOptions)
    return attr;
  // The sm_90a shared memory depends on the output type and mx128 only.
  GemmKind p;
  p.outF32 = outF32;
  p.mx128 = mx128;
  bool tmem = false;
  std::string over = overBudget(p, toGemmConfig(attr), o.chipName(), tmem);
  if (over.empty())
    return attr;
  return op.emitOpError("the grouped-GEMM configuration ")
         << over << " ("
         << (!useUpcast ? "fp8 kernel"
             : o.sm90Mma == Sm90Mma::automatic
                 ? "bf16 upcast kernel, chosen by "
                   "gemm-sm90-mma=auto for the f32 output"
                 : "bf16 upcast kernel")
         << "); lower gemm-stages"
         << (useUpcast ? " or choose gemm-sm90-mma=fp8" : "");
}

LogicalResult mlir::mxmoe::kernels::checkGemmConfig(GroupedMatmulOp op,
                                                    GemmConfigAttr attr,
                                                    const GemmKind &p,
                                                    StringRef chip) {
  StringRef strategy = stringifyGemmStrategy(attr.getStrategy());
  if (attr.isTcgen05() != isTcgen05Chip(chip))
    return op.emitOpError("mxmoe.gemm_config strategy ")
           << strategy << " is for " << attr.getChips()
           << ", not for the target chip " << chip;
  if (attr.getTileN() == 192 && (p.kGrouped || p.outF32))
    return op.emitOpError("mxmoe.gemm_config tile_n 192 is the tile of the "
                          "sm_90a MX128 2D x 3D kernels with bf16 output");
  if (attr.getCluster() == 2 && (p.kGrouped || p.outF32))
    return op.emitOpError("mxmoe.gemm_config cluster 2 is for the sm_90a "
                          "MX128 2D x 3D kernels with bf16 output");
  if (p.mx128 && !hasMX128Scales(op))
    return op.emitOpError("mxmoe.gemm_config strategy ")
           << strategy
           << " needs MX128 scales (both scale layouts with tile = [r, c], c "
              "a multiple of 128)";
  bool tmem = false;
  std::string over = overBudget(p, toGemmConfig(attr), chip, tmem);
  if (over.empty())
    return success();
  return op.emitOpError("the grouped-GEMM configuration ")
         << attr << " " << over
         << (tmem ? "; lower its stages or tile_n" : "; lower its stages");
}

namespace {

/// mxmoe-select-gemm-config (Passes.td).
struct MXMoESelectGemmConfigPass
    : CheckedPassOptions<MXMoESelectGemmConfigPass,
                         ::mlir::mxmoe::impl::MXMoESelectGemmConfigBase<
                             MXMoESelectGemmConfigPass>> {
  using CheckedPassOptions::CheckedPassOptions;

  GemmOptions gemmOptions() const {
    return {chip, gemmTileN, gemmStages, gemmCTAs, gemmSm90Mma, gemmCluster};
  }

  /// CheckedPassOptions' check.
  std::string optionError() {
    return checkGemmOptions(getArgument(), gemmOptions());
  }

  /// The ops convert-mxmoe-to-gpu builds a grouped-GEMM kernel for: MX
  /// operands, static shapes, not lowered yet, something to compute (an
  /// empty result or K = 0 gives no kernel: dropComputeFreeOps).
  static bool getsKernel(GroupedMatmulOp op) {
    if (!op.isMX() || op->hasAttr(MXMoEDialect::KernelAttrHelper::getNameStr()))
      return false;
    for (Type t :
         llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes()))
      if (auto shaped = dyn_cast<ShapedType>(t);
          shaped && !shaped.hasStaticShape())
        return false;
    return op.getResult().getType().getNumElements() != 0 &&
           op.getLhs().getType().getDimSize(1) != 0;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!optionsValid(module))
      return signalPassFailure();
    GemmOptions options = gemmOptions();
    StringRef name = MXMoEDialect::GemmConfigAttrHelper::getNameStr();
    WalkResult result = module.walk([&](GroupedMatmulOp op) {
      // A configuration the op carries (a user's, a test's) stays.
      if (op->hasAttr(name) || !getsKernel(op))
        return WalkResult::advance();
      FailureOr<GemmConfigAttr> config = selectGemmConfig(op, options);
      if (failed(config))
        return WalkResult::interrupt();
      op->setAttr(name, *config);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
