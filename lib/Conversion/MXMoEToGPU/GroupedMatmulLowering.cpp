//===- GroupedMatmulLowering.cpp - mxmoe.grouped_matmul to a kernel -------===//
//
// grouped_matmul on sm_90a (wgmma) and sm_100a / sm_103a (tcgen05): checks
// the op against what the kernels of GroupedMatmul.h implement, takes its
// kernel configuration (#mxmoe.gemm_config, GemmConfigSelection.h), and
// reuses one kernel per kind and configuration (the sizes are launch
// parameters).
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"

#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

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
  p.accumulate = op.getAccumulator() != nullptr;
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
  // The kernel configuration: the op's (mxmoe-select-gemm-config's or a
  // user's), else the same selection from the pass options.
  auto pinned = op->getAttrOfType<GemmConfigAttr>(
      MXMoEDialect::GemmConfigAttrHelper::getNameStr());
  FailureOr<GemmConfigAttr> selected =
      pinned ? FailureOr<GemmConfigAttr>(pinned) : selectGemmConfig(op, gemm);
  if (failed(selected))
    return failure();
  GemmConfigAttr config = *selected;
  p.mx128 = config.getStrategy() == GemmStrategy::wgmma_fp8_promote_k128;
  if (pinned && failed(checkGemmConfig(op, pinned, p, chip)))
    return failure();
  GemmConfig cfg = toGemmConfig(config);
  std::string kernelName = name("grouped_matmul", op);
  GemmKernelKey key{config,   p.kGrouped,       p.aType,     p.bType,
                    p.outF32, p.kMultipleOf128, p.accumulate};
  gpu::GPUFuncOp &kernel = gemmKernels[key];
  if (kernel) {
    annotateGemm(op, kernel,
                 {sz.m, sz.n, sz.k, sz.groups, sz.aScaleRows, sz.aScaleCols,
                  sz.bScaleRows, sz.bScaleCols});
    return success();
  }
  kernel = sm100 ? buildGroupedMatmulSm100(module, kernelName, p, cfg)
                 : buildGroupedMatmulSm90(module, kernelName, p, cfg);
  // The strategy's name is the kernel's mxmoe.mma.
  kernel->setAttr(MXMoEDialect::MmaAttrHelper::getNameStr(),
                  StringAttr::get(op.getContext(),
                                  stringifyGemmStrategy(config.getStrategy())));
  annotateGemm(op, kernel,
               {sz.m, sz.n, sz.k, sz.groups, sz.aScaleRows, sz.aScaleCols,
                sz.bScaleRows, sz.bScaleCols});
  return success();
}
