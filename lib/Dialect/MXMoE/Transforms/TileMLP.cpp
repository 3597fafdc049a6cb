//===- TileMLP.cpp - mxmoe-tile-mlp ---------------------------------------===//
//
// mxmoe.tiled_mlp -> scf.for over balanced token shards (forward).
// Semantics and shard-count rules: shared/reference/tiled-mlp.md sections
// 1, 3 and 7 (DeepSpeed TiledMLP, Axolotl's 32K-token MoE rule).
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h"
#include "mxmoe/Dialect/MXMoE/Utils/CheckedPassOptions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::mxmoe {
#define GEN_PASS_DEF_MXMOETILEMLP
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h.inc"
} // namespace mlir::mxmoe

using namespace mlir;
using namespace mlir::mxmoe;

namespace {

/// [B, S, H] -> [T = B*S, H]; a 2-D input is returned as it is.
Value flattenTokens(OpBuilder &b, Location loc, Value input) {
  if (cast<RankedTensorType>(input.getType()).getRank() != 3)
    return input;
  return tensor::CollapseShapeOp::create(
      b, loc, input, SmallVector<ReassociationIndices>{{0, 1}, {2}});
}

/// The run-time token partition shared by the forward and the backward
/// loop (when the token or shard count is dynamic): the flattened input
/// [T, H], the shard count and T = q * N + r.
struct Partition {
  Value x, tokens, shards, q, r;
};

Partition makePartition(OpBuilder &b, Location loc, TiledMLPOp op, Value x,
                        StringRef rule, int64_t tokensPerShard) {
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto xt = cast<RankedTensorType>(op.getInput().getType());
  Partition p;
  p.x = x;
  p.tokens = tensor::DimOp::create(b, loc, p.x, 0);
  if (std::optional<int64_t> n = op.getNumShards()) {
    p.shards = cst(*n);
  } else {
    int64_t per = rule == "square" ? xt.getShape().back() : tokensPerShard;
    Value count = arith::CeilDivUIOp::create(b, loc, p.tokens, cst(per));
    count = arith::MinUIOp::create(b, loc, count, p.tokens);  // at most T
    p.shards = arith::MaxUIOp::create(b, loc, count, cst(1)); // at least 1
  }
  p.q = arith::DivUIOp::create(b, loc, p.tokens, p.shards);
  p.r = arith::RemUIOp::create(b, loc, p.tokens, p.shards);
  return p;
}

/// Shard i: offset i*q + min(i, r), size q + (i < r).
std::pair<Value, Value> shardBounds(OpBuilder &b, Location loc,
                                    const Partition &p, Value i) {
  Value full = arith::MulIOp::create(b, loc, i, p.q);
  Value offset = arith::AddIOp::create(b, loc, full,
                                       arith::MinUIOp::create(b, loc, i, p.r));
  Value extra = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      arith::ExtUIOp::create(
          b, loc, b.getI64Type(),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i, p.r)));
  return {offset, arith::AddIOp::create(b, loc, p.q, extra)};
}

/// Rows [offset, offset + size) of a [T, ...] tensor (a static row count
/// when `size` is an attribute).
Value sliceRows(OpBuilder &b, Location loc, Value full, Value offset,
                OpFoldResult size) {
  auto t = cast<RankedTensorType>(full.getType());
  SmallVector<OpFoldResult> o{offset}, sz{size}, st{b.getIndexAttr(1)};
  SmallVector<int64_t> shape{
      getConstantIntValue(size).value_or(ShapedType::kDynamic)};
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
                 Value offset, OpFoldResult size) {
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

/// One loop of a static partition: shards [begin, end), each `size` tokens
/// (shard i starts at i * size + bias). A balanced split of T tokens into
/// N shards has at most two: r = T % N shards of q + 1 tokens, then N - r
/// of q = T / N (empty shards, when T < N, are not looped over).
struct ShardRun {
  int64_t begin, end, size, bias;
  /// Name of this run's expanded MX linears: the fqn (first run) or
  /// `<fqn>.tail` (the second run's smaller shards).
  StringRef suffix;
};

/// The static runs of `op` over `tokens` tokens, or {} when the shard
/// count is only known at run time.
SmallVector<ShardRun> staticRuns(TiledMLPOp op, int64_t tokens, int64_t hidden,
                                 StringRef rule, int64_t tokensPerShard) {
  if (ShapedType::isDynamic(tokens) || tokens < 1)
    return {};
  int64_t n;
  if (std::optional<int64_t> explicitN = op.getNumShards()) {
    n = *explicitN;
  } else {
    int64_t per = rule == "square" ? hidden : tokensPerShard;
    n = std::max<int64_t>(
        1, std::min<int64_t>(llvm::divideCeil(tokens, per), tokens));
  }
  int64_t q = tokens / n, r = tokens % n;
  SmallVector<ShardRun> runs;
  if (r > 0)
    runs.push_back({0, r, q + 1, 0, ""});
  if (q > 0)
    runs.push_back({r, n, q, r, runs.empty() ? "" : ".tail"});
  return runs;
}

bool isStaticType(Type t) {
  auto st = dyn_cast<ShapedType>(t);
  return !st || st.hasStaticShape();
}

/// Gives the cloned body op `c` (a clone of `orig`), whose operands are
/// already static, static result types. Returns the values that replace
/// `c`'s results (`c` itself or a static rebuild of it; tensor.dim of a
/// static dim and scalar arithmetic on constants fold to constants), or
/// failure when a result cannot be made static or `c` does not accept its
/// refined operand types (e.g. a call typed for `tensor<?x...>`); the shard
/// loop then keeps run-time bounds.
FailureOr<SmallVector<Value>> refineStatic(OpBuilder &b, Operation *c,
                                           Operation *orig) {
  Location loc = c->getLoc();
  auto constSizes = [&](SmallVector<OpFoldResult> v) {
    for (OpFoldResult &f : v)
      if (std::optional<int64_t> k = getConstantIntValue(f))
        f = b.getIndexAttr(*k);
    return v;
  };
  auto replaceWith = [&](Operation *n) -> SmallVector<Value> {
    c->erase();
    return SmallVector<Value>(n->getResults());
  };
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(c);
  if (auto dim = dyn_cast<tensor::DimOp>(c)) {
    std::optional<int64_t> i = dim.getConstantIndex();
    auto st = dyn_cast<RankedTensorType>(dim.getSource().getType());
    if (!i || !st || *i < 0 || *i >= st.getRank() || st.isDynamicDim(*i))
      return failure();
    return replaceWith(
        arith::ConstantIndexOp::create(b, loc, st.getDimSize(*i)));
  }
  // Scalar arithmetic on constants (e.g. 2 * tokens for a size) folds.
  if (c->getNumRegions() == 0 && c->getNumResults() > 0 &&
      llvm::none_of(c->getResultTypes(),
                    [](Type t) { return isa<ShapedType>(t); })) {
    SmallVector<Value> folded;
    if (succeeded(b.tryFold(c, folded)) && !folded.empty()) {
      c->erase();
      return folded;
    }
  }
  if (auto cast = dyn_cast<tensor::CastOp>(c)) {
    // A cast to a dynamic type: the static source stands for it.
    auto src = dyn_cast<RankedTensorType>(cast.getSource().getType());
    auto dst = dyn_cast<RankedTensorType>(cast.getType());
    if (!src || !dst || !src.hasStaticShape() || src.getRank() != dst.getRank())
      return failure();
    if (dst.hasStaticShape())
      return SmallVector<Value>(c->getResults());
    Value source = cast.getSource();
    c->erase();
    return SmallVector<Value>{source};
  }
  // An op whose operands were refined must accept them: the ops refined
  // below and those whose operand types are free (elementwise,
  // destination-style, slicing, scalar reads).
  bool operandsRefined = llvm::any_of(
      llvm::zip(c->getOperandTypes(), orig->getOperandTypes()),
      [](auto pair) { return std::get<0>(pair) != std::get<1>(pair); });
  if (operandsRefined &&
      !(isa<LinearOp, tensor::ExtractSliceOp, tensor::InsertSliceOp,
            tensor::ExtractOp, DestinationStyleOpInterface>(c) ||
        c->hasTrait<OpTrait::Elementwise>()))
    return failure();
  if (llvm::all_of(c->getResultTypes(), isStaticType))
    return SmallVector<Value>(c->getResults());
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(c)) {
    SmallVector<OpFoldResult> sizes = constSizes(slice.getMixedSizes());
    auto rt = tensor::ExtractSliceOp::inferCanonicalRankReducedResultType(
        slice.getType().getRank(), slice.getSourceType(), sizes);
    if (!rt.hasStaticShape())
      return failure();
    return replaceWith(tensor::ExtractSliceOp::create(
        b, loc, rt, slice.getSource(), constSizes(slice.getMixedOffsets()),
        sizes, constSizes(slice.getMixedStrides())));
  }
  if (auto splat = dyn_cast<tensor::SplatOp>(c)) {
    SmallVector<OpFoldResult> sizes = constSizes(
        getMixedValues(splat.getType().getShape(), splat.getDynamicSizes(), b));
    if (llvm::any_of(sizes, [](OpFoldResult f) { return isa<Value>(f); }))
      return failure();
    return replaceWith(
        tensor::SplatOp::create(b, loc, splat.getInput(), sizes));
  }
  if (auto empty = dyn_cast<tensor::EmptyOp>(c)) {
    SmallVector<OpFoldResult> sizes = constSizes(empty.getMixedSizes());
    if (llvm::any_of(sizes, [](OpFoldResult f) { return isa<Value>(f); }))
      return failure();
    return replaceWith(tensor::EmptyOp::create(
        b, loc, sizes, empty.getType().getElementType()));
  }
  SmallVector<Type> types;
  if (auto lin = dyn_cast<LinearOp>(c)) {
    SmallVector<int64_t> shape(lin.getInput().getType().getShape().drop_back());
    shape.push_back(lin.getWeight().getType().getDimSize(0));
    types.push_back(RankedTensorType::get(
        shape, lin.getResult().getType().getElementType()));
  } else if (auto dps = dyn_cast<DestinationStyleOpInterface>(c)) {
    for (OpOperand &init : dps.getDpsInitsMutable())
      types.push_back(init.get().getType());
  } else if (c->hasTrait<OpTrait::Elementwise>()) {
    auto it = llvm::find_if(c->getOperandTypes(),
                            [](Type t) { return isa<RankedTensorType>(t); });
    if (it == c->getOperandTypes().end())
      return failure();
    ArrayRef<int64_t> shape = cast<RankedTensorType>(*it).getShape();
    for (Type t : c->getResultTypes()) {
      auto rt = dyn_cast<RankedTensorType>(t);
      if (!rt)
        return failure();
      types.push_back(RankedTensorType::get(shape, rt.getElementType()));
    }
  } else {
    return failure();
  }
  if (types.size() != c->getNumResults() || !llvm::all_of(types, isStaticType))
    return failure();
  for (auto [r, t] : llvm::zip(c->getResults(), types))
    r.setType(t);
  return SmallVector<Value>(c->getResults());
}

/// Clones `body`'s ops at `b` with `map` (the body's arguments mapped to
/// the shard and the parameters). With `refine`, every cloned result type
/// is made static (refineStatic); fails, leaving the cloned ops, when one
/// cannot be (naming the body op in `*failedOp` when given). Returns the
/// ops created, in order.
FailureOr<SmallVector<Operation *>> cloneBody(OpBuilder &b, Block &body,
                                              IRMapping &map, bool refine,
                                              Operation **failedOp = nullptr) {
  Block *block = b.getInsertionBlock();
  Block::iterator end = b.getInsertionPoint();
  Operation *before = end == block->begin() ? nullptr : &*std::prev(end);
  for (Operation &inner : body.without_terminator()) {
    Operation *c = b.clone(inner, map);
    if (!refine)
      continue;
    FailureOr<SmallVector<Value>> rs = refineStatic(b, c, &inner);
    if (failed(rs)) {
      if (failedOp)
        *failedOp = &inner;
      return failure();
    }
    map.map(inner.getResults(), *rs);
  }
  SmallVector<Operation *> created;
  for (Block::iterator it = before ? std::next(before->getIterator())
                                   : block->begin();
       it != end; ++it)
    created.push_back(&*it);
  return created;
}

/// Why the body of `op` cannot be cloned with static types for a shard of
/// `size` tokens ("" when it can; tried on a scratch function that is then
/// erased).
std::string staticBodyFailure(TiledMLPOp op, int64_t size) {
  Block &body = op.getBody().front();
  auto xt = cast<RankedTensorType>(body.getArgument(0).getType());
  SmallVector<int64_t> shape(xt.getShape());
  shape[0] = size;
  // A detached function holds the trial clone: the shard and the
  // parameters are its arguments, so that it verifies on its own.
  SmallVector<Type> argTypes{RankedTensorType::get(shape, xt.getElementType())};
  for (BlockArgument a : body.getArguments().drop_front())
    argTypes.push_back(a.getType());
  auto scratchFn =
      func::FuncOp::create(op.getLoc(), "mxmoe.tile_mlp.scratch",
                           FunctionType::get(op.getContext(), argTypes, {}));
  Block *scratch = scratchFn.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(scratch);
  IRMapping map;
  map.map(body.getArguments(), scratch->getArguments());
  Operation *failedOp = nullptr;
  std::string reason;
  if (failed(cloneBody(b, body, map, /*refine=*/true, &failedOp)))
    reason = "'" + failedOp->getName().getStringRef().str() +
             "' cannot take static shard shapes";
  if (reason.empty())
    for (Value v : cast<YieldOp>(body.getTerminator()).getValues())
      if (!isStaticType(map.lookupOrDefault(v).getType()))
        reason = "a result cannot take static shard shapes";
  if (reason.empty()) {
    // Ops refined in place must still verify (silently: a failure only
    // means the loop keeps run-time bounds).
    func::ReturnOp::create(b, op.getLoc());
    ScopedDiagnosticHandler quiet(op.getContext(),
                                  [](Diagnostic &) { return success(); });
    if (failed(verify(scratchFn)))
      reason = "the body does not verify with static shard shapes";
  }
  scratchFn.erase();
  return reason;
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

/// The MX functions expanded for one linear of a static shard loop, with
/// what makes a later use of the same name legal: the same tiled MLP (its
/// forward loop and its backward recompute share them), precision and
/// recipe.
struct ExpandedLinear {
  LinearFunctions fns;
  Operation *owner;
  Attribute precision, recipe;
};

/// Reverse-mode gradients of one recomputed shard body. `grads` maps a
/// value of the cloned body to the gradient accumulated for it.
struct ShardVJP {
  OpBuilder &b;
  Location loc;
  llvm::DenseMap<Value, Value> grads;
  /// The MX functions of the linears expanded in static shard loops (of
  /// this op's symbol table), by the name of their forward function.
  const llvm::StringMap<ExpandedLinear> &linears;
  /// The body's parameter values: the only ones whose gradient may stay
  /// in a wider type than their own (an f32 weight gradient summed into an
  /// f32 accumulator); any other value's gradient takes its type.
  llvm::DenseSet<Value> params;

  /// `v` in element type `elem` (extf / truncf; the same shape).
  Value convert(Value v, Type elem) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getElementType() == elem)
      return v;
    auto to = RankedTensorType::get(t.getShape(), elem);
    if (t.getElementTypeBitWidth() < to.getElementTypeBitWidth())
      return arith::ExtFOp::create(b, loc, to, v);
    return arith::TruncFOp::create(b, loc, to, v);
  }

  void add(Value v, Value g) {
    // A gradient takes v's element type, except a parameter's, which may be
    // wider (f32 weight gradients); sums of two widen the narrower one.
    auto vt = dyn_cast<RankedTensorType>(v.getType());
    auto gt = dyn_cast<RankedTensorType>(g.getType());
    if (vt && gt && vt.getElementType() != gt.getElementType() &&
        !params.contains(v))
      g = convert(g, vt.getElementType());
    auto it = grads.find(v);
    if (it == grads.end()) {
      grads[v] = g;
      return;
    }
    Value prev = it->second;
    Type pe = cast<RankedTensorType>(prev.getType()).getElementType();
    Type ge = cast<RankedTensorType>(g.getType()).getElementType();
    if (pe != ge) {
      Type wide =
          pe.getIntOrFloatBitWidth() >= ge.getIntOrFloatBitWidth() ? pe : ge;
      prev = convert(prev, wide);
      g = convert(g, wide);
    }
    it->second = arith::AddFOp::create(b, loc, prev, g);
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
      this->add(div.getRhs(),
                arith::NegFOp::create(
                    b, loc, arith::MulFOp::create(b, loc, q, div.getLhs())));
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
        auto l = LinearOp::create(b, loc, rt, in, w, Value(),
                                  b.getStringAttr(lin.getFqn() + suffix),
                                  lin.getPrecisionAttr(), lin.getRecipeAttr());
        return l.getResult();
      };
      this->add(lin.getInput(),
                grad(".input_grad", g, transpose2d(b, loc, lin.getWeight())));
      Value gT = transpose2d(b, loc, g);
      this->add(lin.getWeight(),
                grad(".weight_grad", gT, transpose2d(b, loc, lin.getInput())));
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
    } else if (auto call = dyn_cast<func::CallOp>(op)) {
      // An MX linear of a static shard loop: its expanded input_grad,
      // weight_grad (and bias_grad) functions.
      auto it = linears.find(call.getCallee());
      if (it == linears.end() || !it->second.fns.inputGrad)
        return op->emitOpError("mxmoe-tile-mlp backward: no gradient rule "
                               "for a call in a tiled_mlp body");
      const LinearFunctions &f = it->second.fns;
      // The gradient functions take dy in the input's element type (a
      // linear may produce f32 from bf16 inputs).
      auto asArg = [&](func::FuncOp fn, Value v) {
        return convert(
            v,
            cast<RankedTensorType>(fn.getArgumentTypes()[0]).getElementType());
      };
      Value x = call.getOperand(0), w = call.getOperand(1);
      this->add(x, func::CallOp::create(b, loc, f.inputGrad,
                                        ValueRange{asArg(f.inputGrad, g), w})
                       .getResult(0));
      this->add(w, func::CallOp::create(b, loc, f.weightGrad,
                                        ValueRange{asArg(f.weightGrad, g), x})
                       .getResult(0));
      if (f.biasGrad)
        this->add(call.getOperand(2),
                  func::CallOp::create(b, loc, f.biasGrad,
                                       ValueRange{asArg(f.biasGrad, g)})
                      .getResult(0));
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

struct TileMLPPass
    : CheckedPassOptions<TileMLPPass,
                         ::mlir::mxmoe::impl::MXMoETileMLPBase<TileMLPPass>> {
  using CheckedPassOptions::CheckedPassOptions;

  /// The position of each tiled MLP in the module (mxmoe.tiled_mlp_id).
  llvm::DenseMap<Operation *, int64_t> tiledId;

  /// Tiled MLPs with a static token and shard count whose body cannot take
  /// static shapes, and why (recorded on their loops for the driver).
  llvm::DenseMap<Operation *, std::string> dynamicReason;

  /// Expanded MX linears of static shard loops: per symbol table (the
  /// nearest of the tiled MLP), by forward function name.
  llvm::DenseMap<Operation *, llvm::StringMap<ExpandedLinear>> linears;

  /// "" when the options are valid, else the error naming the option.
  std::string optionError() {
    if (rule != "tokens" && rule != "square")
      return "mxmoe-tile-mlp: rule must be tokens or square, got '" + rule +
             "'";
    if (tokensPerShard < 1)
      return "mxmoe-tile-mlp: tokens-per-shard must be >= 1, got " +
             std::to_string(static_cast<int64_t>(tokensPerShard));
    return "";
  }

  void runOnOperation() override {
    if (!optionsValid(getOperation()))
      return signalPassFailure();
    SmallVector<TiledMLPOp> ops;
    getOperation().walk([&](TiledMLPOp op) { ops.push_back(op); });
    // Functions go into the tiled MLP's nearest symbol table (a nested
    // module keeps its calls and callees together).
    linears.clear();
    dynamicReason.clear();
    tiledId.clear();
    for (auto [i, op] : llvm::enumerate(ops))
      tiledId[op.getOperation()] = static_cast<int64_t>(i);
    SymbolTableCollection tables;
    auto symbolsOf = [&](Operation *op) -> SymbolTable & {
      return tables.getSymbolTable(
          op->getParentWithTrait<OpTrait::SymbolTable>());
    };
    // An fqn names the op's backward and expanded functions: one op each
    // (per symbol table).
    llvm::DenseMap<std::pair<Operation *, StringAttr>, TiledMLPOp> byFqn;
    for (TiledMLPOp op : ops) {
      if (!op.getFqnAttr())
        continue;
      auto [it, fresh] = byFqn.try_emplace(
          {op->getParentWithTrait<OpTrait::SymbolTable>(), op.getFqnAttr()},
          op);
      if (!fresh) {
        InFlightDiagnostic d = op.emitOpError("fqn '")
                               << op.getFqnAttr().getValue()
                               << "' is not unique: another mxmoe.tiled_mlp "
                                  "has it (it names the backward function a "
                                  "runtime looks up)";
        d.attachNote(it->second.getLoc()) << "the other tiled MLP";
        return signalPassFailure();
      }
    }
    llvm::DenseMap<Operation *, SmallVector<ShardRun>> runsOf;
    for (TiledMLPOp op : ops) {
      int64_t lead = op.getInput().getType().getRank() - 1;
      for (Type t : op.getResultTypes())
        if (llvm::any_of(cast<RankedTensorType>(t).getShape().drop_front(lead),
                         ShapedType::isDynamic)) {
          op.emitOpError("mxmoe-tile-mlp needs static feature dims in the "
                         "results (the token dims may be dynamic)");
          return signalPassFailure();
        }
      if (staticShards)
        runsOf[op] = decideRuns(op);
    }
    if (backward)
      for (TiledMLPOp op : ops)
        if (failed(emitBackward(op, symbolsOf(op), runsOf.lookup(op))))
          return signalPassFailure();
    for (TiledMLPOp op : ops)
      if (failed(lower(op, symbolsOf(op), runsOf.lookup(op))))
        return signalPassFailure();
  }

  /// The static shard loops of `op`, or {} (one loop over run-time shard
  /// bounds) when the token or shard count is dynamic or an op of the body
  /// cannot take static shapes (a remark names the reason).
  SmallVector<ShardRun> decideRuns(TiledMLPOp op) {
    auto x = cast<RankedTensorType>(op.getInput().getType());
    int64_t tokens =
        x.getRank() == 3 && !ShapedType::isDynamic(x.getDimSize(0)) &&
                !ShapedType::isDynamic(x.getDimSize(1))
            ? x.getDimSize(0) * x.getDimSize(1)
            : (x.getRank() == 3 ? ShapedType::kDynamic : x.getDimSize(0));
    SmallVector<ShardRun> runs =
        staticRuns(op, tokens, x.getShape().back(), rule, tokensPerShard);
    for (const ShardRun &run : runs) {
      std::string why = staticBodyFailure(op, run.size);
      if (!why.empty()) {
        op.emitRemark("mxmoe-tile-mlp: the shard loop keeps a run-time token "
                      "count: ")
            << why << " (its MX linears are not expanded)";
        dynamicReason[op] = why;
        return {};
      }
    }
    return runs;
  }

  /// Replaces the MX `mxmoe.linear`s among `created` (cloned into a static
  /// shard loop of `run`) by calls of their expanded forward functions
  /// `@"<fqn><run suffix>.forward"`, created on first use and shared by the
  /// forward loop and the backward recompute. `created` is updated.
  LogicalResult expandLinears(SmallVector<Operation *> &created,
                              const ShardRun &run, TiledMLPOp owner,
                              Block &body, IRMapping &map,
                              SymbolTable &symbols) {
    llvm::StringMap<ExpandedLinear> &table = linears[symbols.getOp()];
    for (Operation *&c : created) {
      auto lin = dyn_cast<LinearOp>(c);
      if (!lin || !lin.getPrecisionAttr() ||
          lin.getPrecision() == Precision::bf16)
        continue;
      std::string name = (lin.getFqn() + run.suffix).str();
      std::string fwdName = name + ".forward";
      auto it = table.find(fwdName);
      if (it == table.end()) {
        // With an f32 gradient accumulator the weight gradient GEMMs write
        // f32 (not the weight's bf16, widened afterwards).
        Type dwElem;
        if (std::optional<Type> acc = owner.getGradAccumulator();
            acc && acc->isF32())
          dwElem = *acc;
        FailureOr<LinearFunctions> fns = createLinearFunctions(
            lin, name, symbols, backward, weightGradBF16, dwElem);
        if (failed(fns))
          return failure();
        it =
            table
                .try_emplace(fwdName, ExpandedLinear{*fns, owner.getOperation(),
                                                     lin.getPrecisionAttr(),
                                                     lin.getRecipeAttr()})
                .first;
      }
      const ExpandedLinear &e = it->second;
      func::FuncOp fwd = e.fns.forward;
      if (e.owner != owner.getOperation() ||
          e.precision != lin.getPrecisionAttr() ||
          e.recipe != lin.getRecipeAttr() ||
          !llvm::equal(fwd.getFunctionType().getInputs(),
                       lin->getOperandTypes()) ||
          !llvm::equal(fwd.getFunctionType().getResults(),
                       lin->getResultTypes())) {
        InFlightDiagnostic d = lin.emitOpError("fqn '")
                               << lin.getFqn() << "' is not unique: @"
                               << fwdName
                               << " already serves another linear (another "
                                  "tiled MLP, precision, recipe or shape); "
                                  "fqns name the expanded functions a "
                                  "runtime looks up";
        d.attachNote(fwd.getLoc()) << "the existing function";
        return failure();
      }
      OpBuilder b(lin);
      auto call =
          func::CallOp::create(b, lin.getLoc(), fwd, lin->getOperands());
      lin.getResult().replaceAllUsesWith(call.getResult(0));
      for (Operation &o : body)
        for (Value r : o.getResults())
          if (map.lookupOrNull(r) == lin.getResult())
            map.map(r, call.getResult(0));
      lin.erase();
      c = call;
    }
    return success();
  }

  /// Tags a shard loop of `op` with its id (`mxmoe.tiled_mlp_id`) and, for
  /// a run-time loop of a tiled MLP with static token and shard counts, why
  /// its shapes stayed dynamic (`mxmoe.dynamic_shards`).
  void tagLoop(TiledMLPOp op, scf::ForOp loop) {
    // Which tiled MLP a loop belongs to (its forward and backward loops
    // share the id; unique in the module): drivers group loops by it.
    loop->setAttr("mxmoe.tiled_mlp_id",
                  IntegerAttr::get(IntegerType::get(op.getContext(), 64),
                                   tiledId.lookup(op.getOperation())));
    auto it = dynamicReason.find(op.getOperation());
    if (it != dynamicReason.end() && !loop->hasAttr("mxmoe.shard_tokens"))
      loop->setAttr("mxmoe.dynamic_shards",
                    StringAttr::get(op.getContext(), it->second));
  }

  /// Emits the shard loop(s) carrying `inits`: one scf.for over run-time
  /// shard bounds (`p`, when `runs` is empty) or one per static run.
  /// `body(b, offset, size, run, iterArgs)` builds one shard and returns
  /// the next iteration values. Loop-invariant work is hoisted; work
  /// hoisted from a second run's loop that the first already computes is
  /// reused (one buffer for all shards). Returns the final values.
  FailureOr<SmallVector<Value>> emitShardLoops(
      OpBuilder &b, Location loc, const Partition *p, ArrayRef<ShardRun> runs,
      ValueRange inits, function_ref<void(scf::ForOp)> tag,
      function_ref<FailureOr<SmallVector<Value>>(
          OpBuilder &, Value, OpFoldResult, const ShardRun *, ValueRange)>
          body) {
    auto cst = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    SmallVector<Value> state(inits);
    SmallVector<Operation *> hoistedBefore;
    auto one = [&](Value lb, Value ub, const ShardRun *run) -> LogicalResult {
      auto loop = scf::ForOp::create(b, loc, lb, ub, cst(1), state);
      tag(loop);
      if (run)
        loop->setAttr("mxmoe.shard_tokens", b.getI64IntegerAttr(run->size));
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(loop.getBody());
        Value i = loop.getInductionVar();
        Value offset;
        OpFoldResult size;
        if (run) {
          offset = arith::MulIOp::create(b, loc, i, cst(run->size));
          if (run->bias)
            offset = arith::AddIOp::create(b, loc, offset, cst(run->bias));
          size = b.getIndexAttr(run->size);
        } else {
          std::tie(offset, size) = shardBounds(b, loc, *p, i);
        }
        FailureOr<SmallVector<Value>> next =
            body(b, offset, size, run, loop.getRegionIterArgs());
        if (failed(next))
          return failure();
        scf::YieldOp::create(b, loc, *next);
      }
      Operation *prev = loop->getPrevNode();
      moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
      // The ops hoisted just now sit between `prev` and the loop.
      SmallVector<Operation *> hoisted;
      for (Operation *o = prev ? prev->getNextNode()
                               : &loop->getBlock()->front();
           o != loop.getOperation(); o = o->getNextNode())
        hoisted.push_back(o);
      for (Operation *h : hoisted) {
        auto same = llvm::find_if(hoistedBefore, [&](Operation *e) {
          return OperationEquivalence::isEquivalentTo(
              e, h, OperationEquivalence::IgnoreLocations);
        });
        if (same != hoistedBefore.end() && h->getNumRegions() == 0) {
          h->replaceAllUsesWith(*same);
          h->erase();
        } else {
          hoistedBefore.push_back(h);
        }
      }
      state.assign(loop.getResults().begin(), loop.getResults().end());
      return success();
    };
    if (runs.empty()) {
      if (failed(one(cst(0), p->shards, nullptr)))
        return failure();
    } else {
      for (const ShardRun &r : runs) {
        Value lb = cst(r.begin);
        if (failed(one(lb, cst(r.end), &r)))
          return failure();
      }
    }
    return state;
  }

  /// Clones the body of `op` for one shard: the token argument bound to
  /// `shard`, the parameters to `params`; in a static run the types are
  /// made static and the MX linears expanded. Returns the created ops.
  FailureOr<SmallVector<Operation *>>
  cloneShard(OpBuilder &b, TiledMLPOp op, Value shard, ValueRange params,
             const ShardRun *run, IRMapping &map, SymbolTable &symbols) {
    Block &body = op.getBody().front();
    map.map(body.getArgument(0), shard);
    for (auto [arg, param] :
         llvm::zip(body.getArguments().drop_front(), params))
      map.map(arg, param);
    FailureOr<SmallVector<Operation *>> created =
        cloneBody(b, body, map, /*refine=*/run != nullptr);
    if (failed(created))
      return op.emitOpError("mxmoe-tile-mlp: the body cannot take static "
                            "shard shapes");
    if (run && failed(expandLinears(*created, *run, op, body, map, symbols)))
      return failure();
    return created;
  }

  /// `@"<fqn>.backward"(x, params..., dys...) -> (dx, dparams...)`: per
  /// shard (the forward's partition), recompute the body, then propagate
  /// the shard's slice of dy back; dx slices are written in place and
  /// parameter gradients summed over shards (never averaged) in the
  /// accumulator type (the parameter's own type, or `grad_accumulator`),
  /// returned in the parameter's type. Gradients are returned for the
  /// bf16/f16/f32 tensor parameters, in order.
  LogicalResult emitBackward(TiledMLPOp op, SymbolTable &symbols,
                             ArrayRef<ShardRun> runs) {
    MLIRContext *ctx = &getContext();
    Location loc = op.getLoc();
    SmallVector<Type> ins{op.getInput().getType()};
    SmallVector<Value> trainable;
    SmallVector<Type> outs{op.getInput().getType()};
    for (Value p : op.getParams()) {
      ins.push_back(p.getType());
      auto t = dyn_cast<RankedTensorType>(p.getType());
      if (t &&
          isa<BFloat16Type, Float16Type, Float32Type>(t.getElementType())) {
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
      // A runtime finds the backward by the op's fqn: an existing function
      // of that name is an error; without an fqn the name is uniquified.
      if (fn && op.getFqnAttr()) {
        InFlightDiagnostic d = op.emitOpError("mxmoe-tile-mlp: @")
                               << name
                               << " already exists; the fqn names the "
                                  "backward function a runtime looks up";
        d.attachNote(fn.getLoc()) << "the existing function";
        return failure();
      }
      fn = func::FuncOp::create(loc, name, type);
      symbols.insert(fn);
    }
    fn->setAttr("mxmoe.pass", StringAttr::get(ctx, "backward"));
    if (op.getFqnAttr())
      fn->setAttr("mxmoe.fqn", op.getFqnAttr());
    Block *entry = fn.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockBegin(entry);
    unsigned numParams = op.getParams().size();
    Value xArg = entry->getArgument(0);
    ValueRange paramArgs = entry->getArguments().slice(1, numParams);
    ValueRange dyArgs = entry->getArguments().drop_front(1 + numParams);
    int64_t rank = op.getInput().getType().getRank();

    Value x = flattenTokens(b, loc, xArg);
    std::optional<Partition> p;
    if (runs.empty())
      p = makePartition(b, loc, op, x, rule, tokensPerShard);
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
    SmallVector<Value> inits{zerosLike(b, loc, x)};
    SmallVector<Type> accTypes;
    for (Value tp : trainable) {
      auto t = cast<RankedTensorType>(tp.getType());
      Type acc = op.getGradAccumulator().value_or(t.getElementType());
      accTypes.push_back(acc);
      unsigned idx = llvm::find(op.getParams(), tp) - op.getParams().begin();
      inits.push_back(zerosLike(b, loc, paramArgs[idx], acc));
    }
    auto tag = [&](scf::ForOp loop) {
      loop->setAttr("mxmoe.tiled_mlp_backward",
                    op.getFqnAttr() ? Attribute(op.getFqnAttr())
                                    : Attribute(b.getUnitAttr()));
      tagLoop(op, loop);
    };
    auto shardBody = [&](OpBuilder &b, Value offset, OpFoldResult size,
                         const ShardRun *run,
                         ValueRange iter) -> FailureOr<SmallVector<Value>> {
      Value shard = sliceRows(b, loc, x, offset, size);
      // Recompute the shard.
      IRMapping map;
      FailureOr<SmallVector<Operation *>> cloned =
          cloneShard(b, op, shard, paramArgs, run, map, symbols);
      if (failed(cloned))
        return failure();
      // Seed with the shard's slice of each result's cotangent.
      ShardVJP vjp{b, loc, llvm::DenseMap<Value, Value>(),
                   linears[symbols.getOp()],
                   llvm::DenseSet<Value>(paramArgs.begin(), paramArgs.end())};
      auto yield = cast<YieldOp>(op.getBody().front().getTerminator());
      for (auto [v, dy] : llvm::zip(yield.getValues(), dys))
        vjp.add(map.lookup(v), sliceRows(b, loc, dy, offset, size));
      for (Operation *c : llvm::reverse(*cloned))
        if (failed(vjp.backprop(c)))
          return failure();
      // The recompute keeps what the gradients use: a forward call whose
      // result nothing reads (the last linear's: its gradients need only
      // its input) is dropped, with the pure ops that only fed it.
      for (Operation *c : llvm::reverse(*cloned)) {
        auto call = dyn_cast<func::CallOp>(c);
        bool deadForward =
            call && call->use_empty() && vjp.linears.count(call.getCallee());
        if (deadForward || isOpTriviallyDead(c))
          c->erase();
      }
      SmallVector<Value> next;
      Value gx = vjp.grads.lookup(shard);
      if (!gx)
        gx = zerosLike(b, loc, shard);
      next.push_back(insertRows(b, loc, gx, iter[0], offset, size));
      for (auto [j, tp] : llvm::enumerate(trainable)) {
        unsigned idx = llvm::find(op.getParams(), tp) - op.getParams().begin();
        Value acc = iter[1 + j];
        Value g = vjp.grads.lookup(paramArgs[idx]);
        if (!g) {
          next.push_back(acc);
          continue;
        }
        next.push_back(
            arith::AddFOp::create(b, loc, acc, vjp.convert(g, accTypes[j])));
      }
      return next;
    };
    FailureOr<SmallVector<Value>> final =
        emitShardLoops(b, loc, p ? &*p : nullptr, runs, inits, tag, shardBody);
    if (failed(final))
      return failure();
    SmallVector<Value> results;
    Value dx = (*final)[0];
    if (rank == 3)
      dx = tensor::ExpandShapeOp::create(
          b, loc, op.getInput().getType(), dx,
          SmallVector<ReassociationIndices>{{0, 1}, {2}});
    else if (dx.getType() != op.getInput().getType())
      dx = tensor::CastOp::create(b, loc, op.getInput().getType(), dx);
    results.push_back(dx);
    for (auto [j, tp] : llvm::enumerate(trainable)) {
      Value g = (*final)[1 + j];
      auto t = cast<RankedTensorType>(tp.getType());
      if (accTypes[j] != t.getElementType())
        g = arith::TruncFOp::create(b, loc, t, g);
      results.push_back(g);
    }
    func::ReturnOp::create(b, loc, results);
    return success();
  }

  LogicalResult lower(TiledMLPOp op, SymbolTable &symbols,
                      ArrayRef<ShardRun> runs) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    int64_t rank = op.getInput().getType().getRank();
    // The same partition as the backward function.
    Value x = flattenTokens(b, loc, op.getInput());
    std::optional<Partition> p;
    if (runs.empty())
      p = makePartition(b, loc, op, x, rule, tokensPerShard);
    int64_t staticTokens = cast<RankedTensorType>(x.getType()).getDimSize(0);

    // Flattened result accumulators [T, ...]; every row is written once.
    SmallVector<Value> inits;
    for (Type t : op.getResultTypes()) {
      auto rt = cast<RankedTensorType>(t);
      SmallVector<int64_t> shape{staticTokens};
      llvm::append_range(shape, rt.getShape().drop_front(rank - 1));
      SmallVector<Value> dyn;
      if (ShapedType::isDynamic(staticTokens))
        dyn.push_back(p->tokens);
      inits.push_back(
          tensor::EmptyOp::create(b, loc, shape, rt.getElementType(), dyn));
    }
    auto tag = [&](scf::ForOp loop) {
      loop->setAttr("mxmoe.tiled_mlp", op.getFqnAttr()
                                           ? Attribute(op.getFqnAttr())
                                           : Attribute(b.getUnitAttr()));
      if (std::optional<int64_t> n = op.getNumShards())
        loop->setAttr("mxmoe.num_shards", b.getI64IntegerAttr(*n));
      if (std::optional<Type> acc = op.getGradAccumulator())
        loop->setAttr("mxmoe.grad_accumulator", TypeAttr::get(*acc));
      tagLoop(op, loop);
    };
    auto shardBody = [&](OpBuilder &b, Value offset, OpFoldResult size,
                         const ShardRun *run,
                         ValueRange iter) -> FailureOr<SmallVector<Value>> {
      IRMapping map;
      if (failed(cloneShard(b, op, sliceRows(b, loc, x, offset, size),
                            op.getParams(), run, map, symbols)))
        return failure();
      auto yield = cast<YieldOp>(op.getBody().front().getTerminator());
      SmallVector<Value> updated;
      for (auto [j, v] : llvm::enumerate(yield.getValues()))
        updated.push_back(
            insertRows(b, loc, map.lookup(v), iter[j], offset, size));
      return updated;
    };
    // Work that does not depend on the shard (e.g. dequantizing MXFP4
    // expert weights) is computed once, before the loop, and its buffer is
    // shared by every shard.
    FailureOr<SmallVector<Value>> final =
        emitShardLoops(b, loc, p ? &*p : nullptr, runs, inits, tag, shardBody);
    if (failed(final))
      return failure();

    SmallVector<Value> results;
    for (auto [j, t] : llvm::enumerate(op.getResultTypes())) {
      Value v = (*final)[j];
      auto rt = cast<RankedTensorType>(t);
      if (rank == 3) {
        SmallVector<ReassociationIndices> re{{0, 1}};
        for (int64_t d = 2; d < rt.getRank(); ++d)
          re.push_back({d});
        // The token dims come from the input ([B, S]; a result type may
        // leave them dynamic), then a cast to the declared type.
        auto xt = op.getInput().getType();
        SmallVector<int64_t> shape{xt.getDimSize(0), xt.getDimSize(1)};
        llvm::append_range(shape, rt.getShape().drop_front(2));
        v = tensor::ExpandShapeOp::create(
            b, loc, RankedTensorType::get(shape, rt.getElementType()), v, re);
        if (v.getType() != rt)
          v = tensor::CastOp::create(b, loc, rt, v);
      } else if (v.getType() != rt) {
        v = tensor::CastOp::create(b, loc, rt, v);
      }
      results.push_back(v);
    }
    op.replaceAllUsesWith(results);
    op.erase();
    return success();
  }
};

} // namespace
