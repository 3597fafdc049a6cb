//===- PackScales.cpp - mxmoe-pack-scales ---------------------------------===//
//
// Folds quantize -> swizzle_scales into one quantize that writes blocked
// scales (unlike torchao's mxfp8_quantize_2d_1x32_cutedsl, whose global
// layout needs groups of 128 rows, the fused quantizer writes the grouped
// layouts directly, so no group needs padding by the user).
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mxmoe {
#define GEN_PASS_DEF_MXMOEPACKSCALES
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h.inc"
} // namespace mlir::mxmoe

using namespace mlir;
using namespace mlir::mxmoe;

namespace {

struct FuseSwizzleIntoQuantize : OpRewritePattern<SwizzleScalesOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SwizzleScalesOp swizzle,
                                PatternRewriter &rewriter) const override {
    auto quantize = swizzle.getSource().getDefiningOp<QuantizeOp>();
    if (!quantize || swizzle.getSource() != quantize.getScales())
      return rewriter.notifyMatchFailure(swizzle, "source is not a quantize");
    if (!isBlockedScales(swizzle.getResult().getType()))
      return rewriter.notifyMatchFailure(swizzle, "not a row-major->blocked");
    if (!quantize.getScales().hasOneUse())
      return rewriter.notifyMatchFailure(swizzle, "row-major scales reused");
    Value qOffsets = quantize.getOffsets(), sOffsets = swizzle.getOffsets();
    bool jagged = qOffsets && quantize.getAxis() == 0;
    Value offsets;
    if (jagged) {
      // K-groups: the swizzle must regroup by the quantize's own offsets.
      if (sOffsets != qOffsets)
        return rewriter.notifyMatchFailure(swizzle, "different offsets");
      offsets = qOffsets;
    } else if (qOffsets) {
      return rewriter.notifyMatchFailure(
          swizzle, "rowwise quantize with offsets already writes blocked");
    } else {
      // Plain / per-expert, or M-groups taken from the swizzle.
      offsets = sOffsets;
    }
    auto fused = QuantizeOp::create(
        rewriter, quantize.getLoc(), quantize.getData().getType(),
        swizzle.getResult().getType(), quantize.getInput(), offsets,
        quantize.getAxisAttr(), quantize.getBlockSizeAttr(),
        quantize.getRoundingAttr(), quantize.getScaleTileAttr());
    rewriter.replaceAllUsesWith(quantize.getData(), fused.getData());
    rewriter.replaceOp(swizzle, fused.getScales());
    rewriter.eraseOp(quantize);
    return success();
  }
};

/// The same for either scales result of a quantize_weight (plain or
/// per-expert blocked scales: a weight has no token groups).
struct FuseSwizzleIntoQuantizeWeight : OpRewritePattern<SwizzleScalesOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SwizzleScalesOp swizzle,
                                PatternRewriter &rewriter) const override {
    auto quantize = swizzle.getSource().getDefiningOp<QuantizeWeightOp>();
    if (!quantize)
      return rewriter.notifyMatchFailure(swizzle, "not a quantize_weight");
    if (!isBlockedScales(swizzle.getResult().getType()) || swizzle.getOffsets())
      return rewriter.notifyMatchFailure(swizzle, "not a plain ->blocked");
    if (!swizzle.getSource().hasOneUse())
      return rewriter.notifyMatchFailure(swizzle, "row-major scales reused");
    SmallVector<Type> types(quantize->getResultTypes());
    unsigned which = cast<OpResult>(swizzle.getSource()).getResultNumber();
    types[which] = swizzle.getResult().getType();
    auto fused = QuantizeWeightOp::create(
        rewriter, quantize.getLoc(), types, quantize.getInput(),
        quantize.getScaleTileAttr(), quantize.getBlockSizeAttr(),
        quantize.getRoundingAttr());
    for (unsigned i = 0; i < 4; ++i)
      if (i != which)
        rewriter.replaceAllUsesWith(quantize->getResult(i),
                                    fused->getResult(i));
    rewriter.replaceOp(swizzle, fused->getResult(which));
    rewriter.eraseOp(quantize);
    return success();
  }
};

struct PackScalesPass
    : ::mlir::mxmoe::impl::MXMoEPackScalesBase<PackScalesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseSwizzleIntoQuantize, FuseSwizzleIntoQuantizeWeight>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
