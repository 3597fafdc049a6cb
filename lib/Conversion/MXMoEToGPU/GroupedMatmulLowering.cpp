//===- GroupedMatmulLowering.cpp - mxmoe.grouped_matmul to a kernel -------===//
//
// grouped_matmul on sm_90a (wgmma) and sm_100a / sm_103a (tcgen05): checks
// the op against what the kernels of GroupedMatmul.h implement, picks the
// MMA strategy and configuration, and reuses one kernel per kind and
// configuration (the sizes are launch parameters).
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"

#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;

LogicalResult KernelGen::genGroupedMatmul(GroupedMatmulOp op) {
  RankedTensorType lhs = op.getLhs().getType(), rhs = op.getRhs().getType(),
                   res = op.getResult().getType();
  StringRef chipName = chip;
  if (!op.isMX())
    return op.emitOpError(chipName)
           << (" lowering needs MX operands (bf16 grouped GEMMs are left to "
               "torch._grouped_mm / cuBLAS)");
  auto elemOk = [&](Type t) {
    return isa<Float8E4M3FNType, Float8E5M2Type>(t) ||
           (sm100 && isa<Float4E2M1FNType>(t));
  };
  if (!elemOk(lhs.getElementType()) || !elemOk(rhs.getElementType()))
    return op.emitOpError(chipName)
           << (sm100 ? " lowering supports f8E4M3FN, f8E5M2 and f4E2M1FN "
                       "operands (FP6 is not implemented), got "
                     : " lowering supports f8E4M3FN and f8E5M2 operands "
                       "(wgmma has no FP6/FP4 inputs), got ")
           << lhs.getElementType() << " x " << rhs.getElementType();
  RankedTensorType as = op.getLhsScales().getType(),
                   bs = op.getRhsScales().getType();
  if (!isBlockedScales(as) || !isBlockedScales(bs))
    return op.emitOpError(chipName)
           << " lowering reads blocked_128x4 scales (one 512-byte atom per "
              "128 rows x 128 K); run mxmoe-pack-scales or swizzle the "
              "scales first";
  // The kernel is specialized on the kind only; these sizes become the
  // launch's scalar parameters (kGemmScalarParams order).
  struct {
    int64_t m, n, k, groups, aScaleRows, aScaleCols, bScaleRows, bScaleCols;
  } sz;
  GemmKind p;
  p.kGrouped = op.isKGrouped();
  sz.m = lhs.getDimSize(0);
  sz.k = lhs.getDimSize(1);
  sz.n = p.kGrouped ? rhs.getDimSize(0) : rhs.getDimSize(1);
  sz.groups = cast<RankedTensorType>(op.getOffsets().getType()).getDimSize(0);
  sz.aScaleRows = as.getDimSize(0);
  sz.aScaleCols = as.getDimSize(1);
  sz.bScaleRows = bs.getDimSize(bs.getRank() - 2);
  sz.bScaleCols = bs.getDimSize(bs.getRank() - 1);
  p.kMultipleOf128 = !p.kGrouped && sz.k % 128 == 0;
  p.aType = *getMXElementKind(lhs.getElementType());
  p.bType = *getMXElementKind(rhs.getElementType());
  p.outF32 = res.getElementType().isF32();
  // MX128 scales (tiles of 128 or a multiple along K on both operands):
  // sm_90a promotes once per 128-wide stage. tcgen05 consumes the same
  // blocked bytes per 1x32 block (each 128-run holds equal scales).
  auto tileCols = [](RankedTensorType t) -> int64_t {
    ScaleLayoutAttr l = getScaleLayout(t);
    return l && !l.getTile().empty() ? l.getTile()[1] : ::mxmoe::kMXBlockSize;
  };
  bool mx128Tiles = tileCols(as) % 128 == 0 && tileCols(bs) % 128 == 0;
  if (sz.groups < 1)
    return op.emitOpError("needs at least one group");
  // GEMMs with an empty output or contraction extent 0 never get here:
  // convert-mxmoe-to-gpu replaces them by their (empty or zero) values
  // first (dropComputeFreeOps).
  if (sz.m == 0 || sz.n == 0 || sz.k == 0)
    return op.emitOpError("has an extent 0 (M, N or K): internal error, "
                          "convert-mxmoe-to-gpu lowers it without a kernel");
  if (sz.k % 32)
    return op.emitOpError("contraction extent must be a multiple of 32");
  // The unpacking copy of 4-bit data (CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B)
  // needs rows of a multiple of 128 elements (CUDA driver API,
  // cuTensorMapEncodeTiled).
  if (p.hasE2M1() && p.kGrouped)
    return op.emitOpError("f4E2M1FN operands are lowered for 2D x 3D grouped "
                          "matmuls only (a 2D x 2D weight gradient's K groups "
                          "start at multiples of 32 tokens; the unpacking "
                          "16U4_ALIGN16B copy is used at multiples of 128)");
  if (p.hasE2M1() && sz.k % 128)
    return op.emitOpError("f4E2M1FN operands need a contraction extent that "
                          "is a multiple of 128 (TMA 16U4_ALIGN16B rows), got ")
           << sz.k;
  if (p.kGrouped && as.getDimSize(1) != bs.getDimSize(1))
    return op.emitOpError("2D x 2D lowering needs both per_k_group scale "
                          "tensors to have the same number of columns");
  // 32-bit TMA coordinates and in-kernel element offsets are 64-bit.
  int64_t rows =
      p.kGrouped ? std::max(sz.m, sz.n) : std::max(sz.m, sz.groups * sz.n);
  if (rows >= (int64_t{1} << 31) || sz.k >= (int64_t{1} << 31))
    return op.emitOpError("TMA coordinates exceed 2^31");
  // sm_90a strategy: fp8 wgmma with per-block promotion is the faster one
  // at bf16 output; the exact bf16 upcast keeps f32 outputs within fp32
  // accumulation error (the fp8 MMA's internal accumulation of a 32-term
  // block does not).
  // (MX128 too: the fp8 wgmma's limited internal accumulation precision
  // gives f32 outputs a normwise error of about 2e-4, measured on the H200
  // by test/Integration/gemm_gpu.py, where the upcast stays near 1e-7.)
  bool useUpcast = !sm100 && (sm90Mma == Sm90Mma::bf16 ||
                              (sm90Mma == Sm90Mma::automatic && p.outF32));
  p.mx128 = !sm100 && !useUpcast && mx128Tiles;
  const GemmConfig &cfg = useUpcast ? upcast : gemm;
  if (!sm100 && getSm90GemmSharedBytes(p, cfg) > kMaxDynamicSmem)
    return op.emitOpError("the grouped-GEMM configuration needs ")
           << getSm90GemmSharedBytes(p, cfg)
           << " bytes of shared memory, over the 232448 of sm_90a ("
           << (!useUpcast ? "fp8 kernel"
               : sm90Mma == Sm90Mma::automatic
                   ? "bf16 upcast kernel, chosen by "
                     "gemm-sm90-mma=auto for the f32 output"
                   : "bf16 upcast kernel")
           << "); lower gemm-stages"
           << (useUpcast ? " or choose gemm-sm90-mma=fp8" : "");
  std::string kernelName = name("grouped_matmul", op);
  std::string key =
      llvm::formatv("{0}{1}{2}{3}{4}{5}{9}/{6}/{7}/{8}", p.kGrouped,
                    static_cast<int>(p.aType), static_cast<int>(p.bType),
                    p.outF32, p.kMultipleOf128, useUpcast, cfg.tileN,
                    cfg.stages, cfg.numCTAs, p.mx128 ? "x" : "");
  gpu::GPUFuncOp &kernel = gemmKernels[key];
  if (kernel) {
    annotateGemm(op, kernel,
                 {sz.m, sz.n, sz.k, sz.groups, sz.aScaleRows, sz.aScaleCols,
                  sz.bScaleRows, sz.bScaleCols});
    return success();
  }
  kernel = sm100 ? buildGroupedMatmulSm100(module, kernelName, p, cfg)
                 : buildGroupedMatmulSm90(module, kernelName, p, cfg);
  kernel->setAttr(
      MXMoEDialect::MmaAttrHelper::getNameStr(),
      StringAttr::get(op.getContext(), sm100       ? "tcgen05_mxf8f6f4"
                                       : useUpcast ? "wgmma_bf16_upcast"
                                       : p.mx128   ? "wgmma_fp8_promote_k128"
                                                   : "wgmma_fp8_promote"));
  annotateGemm(op, kernel,
               {sz.m, sz.n, sz.k, sz.groups, sz.aScaleRows, sz.aScaleCols,
                sz.bScaleRows, sz.bScaleCols});
  return success();
}
