//===- TileMLP.cpp - mxmoe-tile-mlp ---------------------------------------===//
//
// mxmoe.tiled_mlp -> scf.for over balanced token shards (forward).
// Semantics and shard-count rules: shared/reference/tiled-mlp.md sections
// 1, 3 and 7 (DeepSpeed TiledMLP, Axolotl's 32K-token MoE rule).
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::mxmoe {
#define GEN_PASS_DEF_MXMOETILEMLP
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h.inc"
} // namespace mlir::mxmoe

using namespace mlir;
using namespace mlir::mxmoe;

namespace {

struct TileMLPPass : ::mlir::mxmoe::impl::MXMoETileMLPBase<TileMLPPass> {
  using Base::Base;

  void runOnOperation() override {
    if (rule != "tokens" && rule != "square") {
      getOperation().emitError()
          << "mxmoe-tile-mlp: rule must be tokens or square, got '" << rule
          << "'";
      return signalPassFailure();
    }
    if (tokensPerShard < 1) {
      getOperation().emitError()
          << "mxmoe-tile-mlp: tokens-per-shard must be >= 1, got "
          << static_cast<int64_t>(tokensPerShard);
      return signalPassFailure();
    }
    SmallVector<TiledMLPOp> ops;
    getOperation().walk([&](TiledMLPOp op) { ops.push_back(op); });
    for (TiledMLPOp op : ops) {
      for (Type t : op.getResultTypes())
        if (!cast<RankedTensorType>(t)
                 .getShape()
                 .drop_front(op.getInput().getType().getRank() - 1)
                 .empty() &&
            !cast<RankedTensorType>(t).hasStaticShape() &&
            llvm::any_of(cast<RankedTensorType>(t).getShape().drop_front(
                             op.getInput().getType().getRank() - 1),
                         ShapedType::isDynamic)) {
          op.emitOpError("mxmoe-tile-mlp needs static feature dims in the "
                         "results (the token dims may be dynamic)");
          return signalPassFailure();
        }
      lower(op);
    }
  }

  void lower(TiledMLPOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    RankedTensorType xt = op.getInput().getType();
    int64_t rank = xt.getRank();
    int64_t hidden = xt.getShape().back();
    auto cst = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };

    // Flatten [B, S, H] -> [T, H].
    SmallVector<ReassociationIndices> flat;
    Value x = op.getInput();
    if (rank == 3) {
      flat = {{0, 1}, {2}};
      x = tensor::CollapseShapeOp::create(b, loc, x, flat);
    }
    Value tokens = tensor::DimOp::create(b, loc, x, 0);
    int64_t staticTokens = cast<RankedTensorType>(x.getType()).getDimSize(0);

    // Shard count.
    Value shards;
    if (std::optional<int64_t> n = op.getNumShards()) {
      shards = cst(*n);
    } else {
      int64_t per = rule == "square" ? hidden : int64_t(tokensPerShard);
      Value count = arith::CeilDivUIOp::create(b, loc, tokens, cst(per));
      count = arith::MinUIOp::create(b, loc, count, tokens); // at most T
      shards = arith::MaxUIOp::create(b, loc, count, cst(1)); // at least 1
    }
    Value q = arith::DivUIOp::create(b, loc, tokens, shards);
    Value r = arith::RemUIOp::create(b, loc, tokens, shards);

    // Flattened result accumulators [T, ...].
    SmallVector<Value> inits;
    SmallVector<RankedTensorType> flatResults;
    for (Type t : op.getResultTypes()) {
      auto rt = cast<RankedTensorType>(t);
      SmallVector<int64_t> shape{staticTokens};
      llvm::append_range(shape, rt.getShape().drop_front(rank - 1));
      auto ft = RankedTensorType::get(shape, rt.getElementType());
      flatResults.push_back(ft);
      SmallVector<Value> dyn;
      if (ShapedType::isDynamic(staticTokens))
        dyn.push_back(tokens);
      inits.push_back(tensor::EmptyOp::create(b, loc, ft.getShape(),
                                              ft.getElementType(), dyn));
    }

    auto loop = scf::ForOp::create(b, loc, cst(0), shards, cst(1), inits);
    loop->setAttr("mxmoe.tiled_mlp",
                  op.getFqnAttr() ? Attribute(op.getFqnAttr())
                                  : Attribute(b.getUnitAttr()));
    if (std::optional<int64_t> n = op.getNumShards())
      loop->setAttr("mxmoe.num_shards", b.getI64IntegerAttr(*n));
    if (std::optional<Type> acc = op.getGradAccumulator())
      loop->setAttr("mxmoe.grad_accumulator", TypeAttr::get(*acc));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value i = loop.getInductionVar();
      // offset = i*q + min(i, r); size = q + (i < r)
      Value offset = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, i, q),
          arith::MinUIOp::create(b, loc, i, r));
      Value extra = arith::IndexCastOp::create(
          b, loc, b.getIndexType(),
          arith::ExtUIOp::create(
              b, loc, b.getI64Type(),
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i, r)));
      Value size = arith::AddIOp::create(b, loc, q, extra);
      SmallVector<OpFoldResult> offs{offset, b.getIndexAttr(0)};
      SmallVector<OpFoldResult> sizes{size, b.getIndexAttr(hidden)};
      SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
      Value shard = tensor::ExtractSliceOp::create(
          b, loc,
          RankedTensorType::get({ShapedType::kDynamic, hidden},
                                xt.getElementType()),
          x, offs, sizes, strides);
      IRMapping map;
      Block &body = op.getBody().front();
      map.map(body.getArgument(0), shard);
      for (auto [arg, param] :
           llvm::zip(body.getArguments().drop_front(), op.getParams()))
        map.map(arg, param);
      for (Operation &inner : body.without_terminator())
        b.clone(inner, map);
      auto yield = cast<YieldOp>(body.getTerminator());
      SmallVector<Value> updated;
      for (auto [j, v] : llvm::enumerate(yield.getValues())) {
        auto ft = flatResults[j];
        SmallVector<OpFoldResult> o{offset}, sz{size}, st{b.getIndexAttr(1)};
        for (int64_t d : ft.getShape().drop_front()) {
          o.push_back(b.getIndexAttr(0));
          sz.push_back(b.getIndexAttr(d));
          st.push_back(b.getIndexAttr(1));
        }
        updated.push_back(tensor::InsertSliceOp::create(
            b, loc, map.lookup(v), loop.getRegionIterArg(j), o, sz, st));
      }
      scf::YieldOp::create(b, loc, updated);
    }

    // Work that does not depend on the shard (e.g. dequantizing MXFP4
    // expert weights) is computed once, before the loop, and its buffer is
    // shared by every shard.
    moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));

    SmallVector<Value> results;
    for (auto [j, t] : llvm::enumerate(op.getResultTypes())) {
      Value v = loop.getResult(j);
      auto rt = cast<RankedTensorType>(t);
      if (rank == 3) {
        SmallVector<ReassociationIndices> re{{0, 1}};
        for (int64_t d = 2; d < rt.getRank(); ++d)
          re.push_back({d});
        v = tensor::ExpandShapeOp::create(b, loc, rt, v, re);
      } else if (v.getType() != rt) {
        v = tensor::CastOp::create(b, loc, rt, v);
      }
      results.push_back(v);
    }
    op.replaceAllUsesWith(results);
    op.erase();
  }
};

} // namespace
