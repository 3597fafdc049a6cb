//===- MXMoEToGPU.cpp - convert-mxmoe-to-gpu ------------------------------===//
//
// The pass: checks its options, then lowers every mxmoe.quantize,
// dequantize, swizzle_scales and grouped_matmul not yet implemented by a
// kernel, in program order, into the `mxmoe_kernels` gpu.module (the
// generators are declared in KernelGen.h: one file per op family).
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"

#include "mxmoe/Conversion/Chips.h"
#include "mxmoe/Conversion/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::mxmoe {
#define GEN_PASS_DEF_CONVERTMXMOETOGPU
#include "mxmoe/Conversion/Passes.h.inc"
} // namespace mlir::mxmoe

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;

namespace {

constexpr StringLiteral kKernelModuleName = "mxmoe_kernels";

struct ConvertMXMoEToGPUPass
    : ::mlir::mxmoe::impl::ConvertMXMoEToGPUBase<ConvertMXMoEToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (blockSize < 32 || blockSize > 1024 || blockSize % 32 != 0) {
      module.emitError() << "convert-mxmoe-to-gpu: block-size must be a "
                            "multiple of 32 in [32, 1024], got "
                         << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    if (!isSupportedChip(chip)) {
      module.emitError() << "convert-mxmoe-to-gpu: unsupported chip '" << chip
                         << "' (supported: " << kSupportedChips << ")";
      return signalPassFailure();
    }
    bool sm100 = isTcgen05Chip(chip);
    if (gemmTileN != 64 && gemmTileN != 128 && !(sm100 && gemmTileN == 256)) {
      module.emitError()
          << "convert-mxmoe-to-gpu: gemm-tile-n must be 64 or "
             "128 (sm_90a) or 64, 128 or 256 (sm_100a, sm_103a), got "
          << static_cast<int64_t>(gemmTileN);
      return signalPassFailure();
    }
    if (gemmStages != 0 && (gemmStages < 2 || gemmStages > 8)) {
      module.emitError() << "convert-mxmoe-to-gpu: gemm-stages must be 0 "
                            "(auto) or in [2, 8], got "
                         << static_cast<int64_t>(gemmStages);
      return signalPassFailure();
    }
    // A 1-D grid has at most 2^31 - 1 CTAs (CUDA gridDim.x).
    if (gemmCTAs < 1 || gemmCTAs > 2147483647) {
      module.emitError() << "convert-mxmoe-to-gpu: gemm-ctas must be in [1, "
                            "2147483647] (the GPU's SM count, e.g. 132), got "
                         << static_cast<int64_t>(gemmCTAs);
      return signalPassFailure();
    }
    if (gemmSm90Mma != "fp8" && gemmSm90Mma != "bf16" &&
        gemmSm90Mma != "auto") {
      module.emitError() << "convert-mxmoe-to-gpu: gemm-sm90-mma must be fp8, "
                            "bf16 or auto, got '"
                         << gemmSm90Mma << "'";
      return signalPassFailure();
    }
    // The fp8 configuration (every sm_100a kernel; sm_90a kernels with the
    // fp8 strategy) and the bf16-upcast one (sm_90a); each generated kernel
    // checks its own shared-memory budget.
    GemmConfig gemm{gemmTileN, gemmStages ? gemmStages : 4, gemmCTAs, false};
    GemmConfig upcast{gemmTileN, gemmStages ? gemmStages : 2, gemmCTAs, true};
    if (sm100 && getSm100GemmSharedBytes(gemm) > kMaxDynamicSmem) {
      module.emitError() << "convert-mxmoe-to-gpu: the grouped-GEMM "
                            "configuration needs "
                         << getSm100GemmSharedBytes(gemm)
                         << " bytes of shared memory, over the 232448 of "
                         << chip << "; lower gemm-stages";
      return signalPassFailure();
    }
    if (sm100 && getSm100GemmTmemColumns(gemm) > 512) {
      module.emitError() << "convert-mxmoe-to-gpu: the grouped-GEMM "
                            "configuration needs "
                         << getSm100GemmTmemColumns(gemm)
                         << " TMEM columns (accumulator + per-stage scales), "
                            "over the 512 of "
                         << chip
                         << "; lower gemm-stages or "
                            "gemm-tile-n";
      return signalPassFailure();
    }
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<QuantizeOp, DequantizeOp, SwizzleScalesOp, GroupedMatmulOp>(op) &&
          !op->hasAttr("mxmoe.kernel"))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(&getContext()));
    auto kernels = dyn_cast_or_null<gpu::GPUModuleOp>(
        SymbolTable::lookupSymbolIn(module, kKernelModuleName));
    if (!kernels) {
      OpBuilder b(module.getBodyRegion());
      b.setInsertionPointToEnd(module.getBody());
      kernels = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName);
    }
    KernelGen gen{kernels,     blockSize, hostLaunch, gemm, upcast,
                  gemmSm90Mma, sm100,     chip,       {},   {}};
    for (Operation *op : ops) {
      // The generators size grids, group tables and padding from static
      // shapes, the number of token groups (offsets) included: this is the
      // only check of them.
      for (Type t : llvm::concat<const Type>(op->getOperandTypes(),
                                             op->getResultTypes()))
        if (auto shaped = dyn_cast<ShapedType>(t);
            shaped && !shaped.hasStaticShape()) {
          op->emitOpError("GPU lowering needs static shapes, got ") << t;
          return signalPassFailure();
        }
      LogicalResult r =
          llvm::TypeSwitch<Operation *, LogicalResult>(op)
              .Case<QuantizeOp>([&](auto q) { return gen.genQuantize(q); })
              .Case<DequantizeOp>([&](auto d) { return gen.genDequantize(d); })
              .Case<SwizzleScalesOp>([&](auto s) { return gen.genSwizzle(s); })
              .Case<GroupedMatmulOp>(
                  [&](auto m) { return gen.genGroupedMatmul(m); });
      if (failed(r))
        return signalPassFailure();
    }
  }
};

} // namespace
