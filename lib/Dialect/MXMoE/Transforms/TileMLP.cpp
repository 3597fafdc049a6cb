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
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/SymbolTable.h"
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


/// The token partition shared by the forward and the backward loop: the
/// flattened input [T, H], the shard count and T = q * N + r.
struct Partition {
  Value x, tokens, shards, q, r;
  int64_t staticTokens;
};

Partition makePartition(OpBuilder &b, Location loc, TiledMLPOp op, Value input,
                        StringRef rule, int64_t tokensPerShard) {
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto xt = cast<RankedTensorType>(input.getType());
  Partition p;
  p.x = input;
  if (xt.getRank() == 3)
    p.x = tensor::CollapseShapeOp::create(
        b, loc, input, SmallVector<ReassociationIndices>{{0, 1}, {2}});
  p.tokens = tensor::DimOp::create(b, loc, p.x, 0);
  p.staticTokens = cast<RankedTensorType>(p.x.getType()).getDimSize(0);
  if (std::optional<int64_t> n = op.getNumShards()) {
    p.shards = cst(*n);
  } else {
    int64_t per = rule == "square" ? xt.getShape().back() : tokensPerShard;
    Value count = arith::CeilDivUIOp::create(b, loc, p.tokens, cst(per));
    count = arith::MinUIOp::create(b, loc, count, p.tokens); // at most T
    p.shards = arith::MaxUIOp::create(b, loc, count, cst(1)); // at least 1
  }
  p.q = arith::DivUIOp::create(b, loc, p.tokens, p.shards);
  p.r = arith::RemUIOp::create(b, loc, p.tokens, p.shards);
  return p;
}

/// Shard i: offset i*q + min(i, r), size q + (i < r).
std::pair<Value, Value> shardBounds(OpBuilder &b, Location loc,
                                    const Partition &p, Value i) {
  Value offset = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, i, p.q),
      arith::MinUIOp::create(b, loc, i, p.r));
  Value extra = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      arith::ExtUIOp::create(
          b, loc, b.getI64Type(),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i, p.r)));
  return {offset, arith::AddIOp::create(b, loc, p.q, extra)};
}

/// Rows [offset, offset + size) of a [T, ...] tensor.
Value sliceRows(OpBuilder &b, Location loc, Value full, Value offset,
                Value size) {
  auto t = cast<RankedTensorType>(full.getType());
  SmallVector<OpFoldResult> o{offset}, sz{size}, st{b.getIndexAttr(1)};
  SmallVector<int64_t> shape{ShapedType::kDynamic};
  for (int64_t d : t.getShape().drop_front()) {
    o.push_back(b.getIndexAttr(0));
    sz.push_back(b.getIndexAttr(d));
    st.push_back(b.getIndexAttr(1));
    shape.push_back(d);
  }
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(shape, t.getElementType()), full, o, sz,
      st);
}

Value insertRows(OpBuilder &b, Location loc, Value part, Value full,
                 Value offset, Value size) {
  auto t = cast<RankedTensorType>(full.getType());
  SmallVector<OpFoldResult> o{offset}, sz{size}, st{b.getIndexAttr(1)};
  for (int64_t d : t.getShape().drop_front()) {
    o.push_back(b.getIndexAttr(0));
    sz.push_back(b.getIndexAttr(d));
    st.push_back(b.getIndexAttr(1));
  }
  return tensor::InsertSliceOp::create(b, loc, part, full, o, sz, st);
}

/// A zero tensor shaped like `like` (dynamic dims read from it).
Value zerosLike(OpBuilder &b, Location loc, Value like, Type elem = {}) {
  auto t = cast<RankedTensorType>(like.getType());
  if (!elem)
    elem = t.getElementType();
  SmallVector<Value> dyn;
  for (auto [i, d] : llvm::enumerate(t.getShape()))
    if (ShapedType::isDynamic(d))
      dyn.push_back(tensor::DimOp::create(b, loc, like, i));
  Value empty = tensor::EmptyOp::create(b, loc, t.getShape(), elem, dyn);
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elem));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

/// Transpose of a 2-D tensor.
Value transpose2d(OpBuilder &b, Location loc, Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<Value> dyn;
  SmallVector<int64_t> shape{t.getDimSize(1), t.getDimSize(0)};
  for (int64_t i : {1, 0})
    if (ShapedType::isDynamic(t.getDimSize(i)))
      dyn.push_back(tensor::DimOp::create(b, loc, v, i));
  Value init = tensor::EmptyOp::create(b, loc, shape, t.getElementType(), dyn);
  return linalg::TransposeOp::create(b, loc, v, init, ArrayRef<int64_t>{1, 0})
      .getResult()[0];
}

/// Reverse-mode gradients of one recomputed shard body. `grads` maps a
/// value of the cloned body to the gradient accumulated for it.
struct ShardVJP {
  OpBuilder &b;
  Location loc;
  llvm::DenseMap<Value, Value> grads;

  void add(Value v, Value g) {
    auto it = grads.find(v);
    if (it == grads.end())
      grads[v] = g;
    else
      it->second = arith::AddFOp::create(b, loc, it->second, g);
  }

  /// Applies the VJP of `op` given the gradients of its results.
  LogicalResult backprop(Operation *op) {
    SmallVector<Value> gs;
    bool any = false;
    for (Value r : op->getResults()) {
      auto it = grads.find(r);
      gs.push_back(it == grads.end() ? Value() : it->second);
      any |= it != grads.end();
    }
    if (!any)
      return success();
    Value g = gs.empty() ? Value() : gs[0];
    if (auto add = dyn_cast<arith::AddFOp>(op)) {
      this->add(add.getLhs(), g);
      this->add(add.getRhs(), g);
    } else if (auto sub = dyn_cast<arith::SubFOp>(op)) {
      this->add(sub.getLhs(), g);
      this->add(sub.getRhs(), arith::NegFOp::create(b, loc, g));
    } else if (auto mul = dyn_cast<arith::MulFOp>(op)) {
      this->add(mul.getLhs(), arith::MulFOp::create(b, loc, g, mul.getRhs()));
      this->add(mul.getRhs(), arith::MulFOp::create(b, loc, g, mul.getLhs()));
    } else if (auto div = dyn_cast<arith::DivFOp>(op)) {
      Value ga = arith::DivFOp::create(b, loc, g, div.getRhs());
      this->add(div.getLhs(), ga);
      Value q = arith::DivFOp::create(b, loc, ga, div.getRhs());
      this->add(div.getRhs(), arith::NegFOp::create(
                                  b, loc, arith::MulFOp::create(
                                              b, loc, q, div.getLhs())));
    } else if (auto neg = dyn_cast<arith::NegFOp>(op)) {
      this->add(neg.getOperand(), arith::NegFOp::create(b, loc, g));
    } else if (auto exp = dyn_cast<math::ExpOp>(op)) {
      this->add(exp.getOperand(),
                arith::MulFOp::create(b, loc, g, exp.getResult()));
    } else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
      Value zeros = zerosLike(b, loc, slice.getSource());
      this->add(slice.getSource(),
                tensor::InsertSliceOp::create(
                    b, loc, g, zeros, slice.getMixedOffsets(),
                    slice.getMixedSizes(), slice.getMixedStrides()));
    } else if (auto lin = dyn_cast<LinearOp>(op)) {
      if (lin.getInput().getType().getRank() != 2)
        return op->emitOpError("mxmoe-tile-mlp backward: a linear in the "
                               "shard body must take a 2-D [tokens, K] input");
      // dx = dy W: a linear with the transposed weight; dW = dy^T x: a
      // linear contracting over the shard's tokens. Both keep the op's
      // precision, so the MX expansion quantizes them along their own
      // contraction axes.
      auto grad = [&](StringRef suffix, Value in, Value w) -> Value {
        auto it = cast<RankedTensorType>(in.getType());
        auto wt = cast<RankedTensorType>(w.getType());
        auto rt = RankedTensorType::get({it.getDimSize(0), wt.getDimSize(0)},
                                        it.getElementType());
        auto l = LinearOp::create(
            b, loc, rt, in, w, Value(),
            b.getStringAttr(lin.getFqn() + suffix), lin.getPrecisionAttr(),
            lin.getRecipeAttr());
        return l.getResult();
      };
      this->add(lin.getInput(),
                grad(".input_grad", g, transpose2d(b, loc, lin.getWeight())));
      this->add(lin.getWeight(),
                grad(".weight_grad", transpose2d(b, loc, g),
                     transpose2d(b, loc, lin.getInput())));
      if (Value bias = lin.getBias()) {
        Value init = zerosLike(b, loc, bias);
        auto red = linalg::ReduceOp::create(
            b, loc, ValueRange{g}, ValueRange{init}, ArrayRef<int64_t>{0},
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              linalg::YieldOp::create(
                  nb, nl,
                  ValueRange{arith::AddFOp::create(nb, nl, args[0], args[1])});
            });
        this->add(bias, red.getResult(0));
      }
    } else if (isa<tensor::DimOp, tensor::EmptyOp, tensor::SplatOp,
                   arith::ConstantOp, DequantizeOp>(op)) {
      // Constants, shapes and dequantized (frozen) weights: no gradient.
    } else {
      return op->emitOpError("mxmoe-tile-mlp backward: no gradient rule for "
                             "this op in a tiled_mlp body (supported: "
                             "arith.addf/subf/mulf/divf/negf, math.exp, "
                             "tensor.extract_slice, mxmoe.linear)");
    }
    return success();
  }
};

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
    SymbolTable symbols(getOperation());
    if (backward)
      for (TiledMLPOp op : ops)
        if (failed(emitBackward(op, symbols)))
          return signalPassFailure();
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


  /// `@"<fqn>.backward"(x, params..., dys...) -> (dx, dparams...)`: per
  /// shard (the forward's partition), recompute the body, then propagate
  /// the shard's slice of dy back; dx slices are written in place and
  /// parameter gradients summed over shards (never averaged) in the
  /// accumulator type (the parameter's own type, or `grad_accumulator`),
  /// returned in the parameter's type. Gradients are returned for the
  /// bf16/f16/f32 tensor parameters, in order.
  LogicalResult emitBackward(TiledMLPOp op, SymbolTable &symbols) {
    MLIRContext *ctx = &getContext();
    Location loc = op.getLoc();
    SmallVector<Type> ins{op.getInput().getType()};
    SmallVector<Value> trainable;
    SmallVector<Type> outs{op.getInput().getType()};
    for (Value p : op.getParams()) {
      ins.push_back(p.getType());
      auto t = dyn_cast<RankedTensorType>(p.getType());
      if (t && isa<BFloat16Type, Float16Type, Float32Type>(t.getElementType())) {
        trainable.push_back(p);
        outs.push_back(t);
      }
    }
    for (Type t : op.getResultTypes())
      ins.push_back(t);
    std::string name =
        (op.getFqn() ? op.getFqn()->str() : std::string("tiled_mlp")) +
        ".backward";
    auto type = FunctionType::get(ctx, ins, outs);
    // A declaration of the same name (so that IR can call the backward
    // before this pass runs) receives the body; anything else is an error.
    auto fn = symbols.lookup<func::FuncOp>(name);
    if (fn && fn.isDeclaration()) {
      if (fn.getFunctionType() != type)
        return fn.emitOpError("mxmoe-tile-mlp: the declaration of '")
               << name << "' must have type " << type;
      fn.setPublic();
    } else {
      // New function; a name clash (two ops without fqn) is uniquified.
      fn = func::FuncOp::create(loc, name, type);
      symbols.insert(fn);
    }
    fn->setAttr("mxmoe.pass", StringAttr::get(ctx, "backward"));
    if (op.getFqnAttr())
      fn->setAttr("mxmoe.fqn", op.getFqnAttr());
    Block *entry = fn.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockBegin(entry);
    auto cst = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    unsigned numParams = op.getParams().size();
    Value xArg = entry->getArgument(0);
    ValueRange paramArgs = entry->getArguments().slice(1, numParams);
    ValueRange dyArgs = entry->getArguments().drop_front(1 + numParams);
    int64_t rank = op.getInput().getType().getRank();

    Partition p = makePartition(b, loc, op, xArg, rule, tokensPerShard);
    SmallVector<Value> dys;
    for (Value dy : dyArgs) {
      auto t = cast<RankedTensorType>(dy.getType());
      if (rank == 3) {
        SmallVector<ReassociationIndices> re{{0, 1}};
        for (int64_t d = 2; d < t.getRank(); ++d)
          re.push_back({d});
        dy = tensor::CollapseShapeOp::create(b, loc, dy, re);
      }
      dys.push_back(dy);
    }
    // Loop state: dx [T, H] and one accumulator per trainable parameter.
    SmallVector<Value> inits{zerosLike(b, loc, p.x)};
    SmallVector<Type> accTypes;
    for (Value tp : trainable) {
      auto t = cast<RankedTensorType>(tp.getType());
      Type acc = op.getGradAccumulator().value_or(t.getElementType());
      accTypes.push_back(acc);
      unsigned idx = llvm::find(op.getParams(), tp) - op.getParams().begin();
      inits.push_back(zerosLike(b, loc, paramArgs[idx], acc));
    }
    auto loop = scf::ForOp::create(b, loc, cst(0), p.shards, cst(1), inits);
    loop->setAttr("mxmoe.tiled_mlp_backward",
                  op.getFqnAttr() ? Attribute(op.getFqnAttr())
                                  : Attribute(b.getUnitAttr()));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      auto [offset, size] = shardBounds(b, loc, p, loop.getInductionVar());
      Value shard = sliceRows(b, loc, p.x, offset, size);
      // Recompute the shard.
      IRMapping map;
      Block &body = op.getBody().front();
      map.map(body.getArgument(0), shard);
      for (auto [arg, param] :
           llvm::zip(body.getArguments().drop_front(), paramArgs))
        map.map(arg, param);
      SmallVector<Operation *> cloned;
      for (Operation &inner : body.without_terminator())
        cloned.push_back(b.clone(inner, map));
      // Seed with the shard's slice of each result's cotangent.
      ShardVJP vjp{b, loc, llvm::DenseMap<Value, Value>()};
      auto yield = cast<YieldOp>(body.getTerminator());
      for (auto [v, dy] : llvm::zip(yield.getValues(), dys))
        vjp.add(map.lookup(v), sliceRows(b, loc, dy, offset, size));
      for (Operation *c : llvm::reverse(cloned))
        if (failed(vjp.backprop(c)))
          return failure();
      SmallVector<Value> next;
      Value gx = vjp.grads.lookup(shard);
      if (!gx)
        gx = zerosLike(b, loc, shard);
      next.push_back(insertRows(b, loc, gx, loop.getRegionIterArg(0), offset,
                                size));
      for (auto [j, tp] : llvm::enumerate(trainable)) {
        unsigned idx = llvm::find(op.getParams(), tp) - op.getParams().begin();
        Value acc = loop.getRegionIterArg(1 + j);
        Value g = vjp.grads.lookup(paramArgs[idx]);
        if (!g) {
          next.push_back(acc);
          continue;
        }
        auto gt = cast<RankedTensorType>(g.getType());
        if (gt.getElementType() != accTypes[j])
          g = arith::ExtFOp::create(
              b, loc, RankedTensorType::get(gt.getShape(), accTypes[j]), g);
        next.push_back(arith::AddFOp::create(b, loc, acc, g));
      }
      scf::YieldOp::create(b, loc, next);
    }
    moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
    SmallVector<Value> results;
    Value dx = loop.getResult(0);
    if (rank == 3)
      dx = tensor::ExpandShapeOp::create(
          b, loc, op.getInput().getType(), dx,
          SmallVector<ReassociationIndices>{{0, 1}, {2}});
    else if (dx.getType() != op.getInput().getType())
      dx = tensor::CastOp::create(b, loc, op.getInput().getType(), dx);
    results.push_back(dx);
    for (auto [j, tp] : llvm::enumerate(trainable)) {
      Value g = loop.getResult(1 + j);
      auto t = cast<RankedTensorType>(tp.getType());
      if (accTypes[j] != t.getElementType())
        g = arith::TruncFOp::create(b, loc, t, g);
      results.push_back(g);
    }
    func::ReturnOp::create(b, loc, results);
    return success();
  }

  void lower(TiledMLPOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    int64_t rank = op.getInput().getType().getRank();
    auto cst = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    // The same partition as the backward function (makePartition).
    Partition p = makePartition(b, loc, op, op.getInput(), rule,
                                tokensPerShard);

    // Flattened result accumulators [T, ...]; every row is written once.
    SmallVector<Value> inits;
    for (Type t : op.getResultTypes()) {
      auto rt = cast<RankedTensorType>(t);
      SmallVector<int64_t> shape{p.staticTokens};
      llvm::append_range(shape, rt.getShape().drop_front(rank - 1));
      SmallVector<Value> dyn;
      if (ShapedType::isDynamic(p.staticTokens))
        dyn.push_back(p.tokens);
      inits.push_back(
          tensor::EmptyOp::create(b, loc, shape, rt.getElementType(), dyn));
    }

    auto loop = scf::ForOp::create(b, loc, cst(0), p.shards, cst(1), inits);
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
      auto [offset, size] = shardBounds(b, loc, p, loop.getInductionVar());
      IRMapping map;
      Block &body = op.getBody().front();
      map.map(body.getArgument(0), sliceRows(b, loc, p.x, offset, size));
      for (auto [arg, param] :
           llvm::zip(body.getArguments().drop_front(), op.getParams()))
        map.map(arg, param);
      for (Operation &inner : body.without_terminator())
        b.clone(inner, map);
      auto yield = cast<YieldOp>(body.getTerminator());
      SmallVector<Value> updated;
      for (auto [j, v] : llvm::enumerate(yield.getValues()))
        updated.push_back(insertRows(b, loc, map.lookup(v),
                                     loop.getRegionIterArg(j), offset, size));
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
