//===- TileMLPShards.cpp - token partition and shard bodies of mxmoe-tile-mlp
//===//
//
// The run-time and static token partitions of mxmoe.tiled_mlp, row slices
// of the shards, and the clone of a tiled MLP's body per shard (with static
// types where the shard size is known). Semantics and shard-count rules:
// docs/passes-and-lowering.md (mxmoe-tile-mlp), DeepSpeed TiledMLP.
//
//===----------------------------------------------------------------------===//

#include "TileMLP.h"

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
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::mxmoe;

namespace mlir::mxmoe::tile_mlp {

/// [B, S, H] -> [T = B*S, H]; a 2-D input is returned as it is.
Value flattenTokens(OpBuilder &b, Location loc, Value input) {
  if (cast<RankedTensorType>(input.getType()).getRank() != 3)
    return input;
  return tensor::CollapseShapeOp::create(
      b, loc, input, SmallVector<ReassociationIndices>{{0, 1}, {2}});
}

Partition makePartition(OpBuilder &b, Location loc, TiledMLPOp op, Value x,
                        ShardRule rule, int64_t tokensPerShard) {
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
    int64_t per =
        rule == ShardRule::square ? xt.getShape().back() : tokensPerShard;
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
Value zerosLike(OpBuilder &b, Location loc, Value like, Type elem) {
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

Value SavedRouting::value(unsigned j) const {
  // (ODS accessors are not const.)
  RouterTopKOp r = router;
  SortByExpertOp s = sort;
  Value vs[] = {r.getWeights(), r.getExperts(), s ? s.getIndices() : Value(),
                s ? s.getOffsets() : Value()};
  return vs[j];
}

SmallVector<SavedRouting> savedRoutingOf(TiledMLPOp op, int64_t shards) {
  SmallVector<SavedRouting> saved;
  Block &body = op.getBody().front();
  for (RouterTopKOp r : body.getOps<RouterTopKOp>()) {
    SortByExpertOp sort;
    for (SortByExpertOp s : body.getOps<SortByExpertOp>())
      if (!sort && shards > 0 && s.getExperts() == r.getExperts())
        sort = s;
    saved.push_back({r, sort});
  }
  return saved;
}

SmallVector<Type> savedRoutingTypes(TiledMLPOp op, int64_t shards) {
  RankedTensorType x = op.getInput().getType();
  int64_t t = x.getDimSize(0);
  if (x.getRank() == 3)
    t = x.isDynamicDim(0) || x.isDynamicDim(1)
            ? ShapedType::kDynamic
            : x.getDimSize(0) * x.getDimSize(1);
  MLIRContext *ctx = op.getContext();
  Type f32 = Float32Type::get(ctx), i32 = IntegerType::get(ctx, 32);
  SmallVector<Type> types;
  for (const SavedRouting &s : savedRoutingOf(op, shards)) {
    RouterTopKOp r = s.router;
    SortByExpertOp sort = s.sort;
    int64_t k = static_cast<int64_t>(r.getTopK());
    types.push_back(RankedTensorType::get({t, k}, f32));
    types.push_back(RankedTensorType::get({t, k}, i32));
    if (!s.sort)
      continue;
    int64_t e = sort.getOffsets().getType().getDimSize(0);
    types.push_back(RankedTensorType::get({t * k}, i32));
    types.push_back(RankedTensorType::get({shards * e}, i32));
  }
  return types;
}

namespace {

/// The 1-D span of saved value `j` (2: indices, 3: offsets) for a shard.
std::pair<OpFoldResult, OpFoldResult>
savedSpan(OpBuilder &b, Location loc, const SavedRouting &s, unsigned j,
          Value offset, OpFoldResult size, Value shard) {
  auto mul = [&](Value v, int64_t c) -> Value {
    return arith::MulIOp::create(b, loc, v,
                                 arith::ConstantIndexOp::create(b, loc, c));
  };
  RouterTopKOp r = s.router;
  SortByExpertOp sort = s.sort;
  if (j == 3) {
    int64_t e = sort.getOffsets().getType().getDimSize(0);
    return {mul(shard, e), b.getIndexAttr(e)};
  }
  int64_t k = static_cast<int64_t>(r.getTopK());
  OpFoldResult n;
  if (std::optional<int64_t> c = getConstantIntValue(size))
    n = b.getIndexAttr(*c * k);
  else
    n = mul(cast<Value>(size), k);
  return {mul(offset, k), n};
}

} // namespace

Value sliceSaved(OpBuilder &b, Location loc, const SavedRouting &s, unsigned j,
                 Value full, Value offset, OpFoldResult size, Value shard) {
  if (j < 2)
    return sliceRows(b, loc, full, offset, size);
  auto [at, n] = savedSpan(b, loc, s, j, offset, size, shard);
  return tensor::ExtractSliceOp::create(
      b, loc, full, ArrayRef{at}, ArrayRef{n},
      ArrayRef{OpFoldResult(b.getIndexAttr(1))});
}

Value insertSaved(OpBuilder &b, Location loc, const SavedRouting &s, unsigned j,
                  Value part, Value full, Value offset, OpFoldResult size,
                  Value shard) {
  if (j < 2)
    return insertRows(b, loc, part, full, offset, size);
  auto [at, n] = savedSpan(b, loc, s, j, offset, size, shard);
  return tensor::InsertSliceOp::create(
      b, loc, part, full, ArrayRef{at}, ArrayRef{n},
      ArrayRef{OpFoldResult(b.getIndexAttr(1))});
}

/// The static runs of `op` over `tokens` tokens, or {} when the shard
/// count is only known at run time.
SmallVector<ShardRun> staticRuns(TiledMLPOp op, int64_t tokens, int64_t hidden,
                                 ShardRule rule, int64_t tokensPerShard) {
  if (ShapedType::isDynamic(tokens) || tokens < 1)
    return {};
  int64_t n;
  if (std::optional<int64_t> explicitN = op.getNumShards()) {
    n = *explicitN;
  } else {
    int64_t per = rule == ShardRule::square ? hidden : tokensPerShard;
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

namespace {

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
/// The result types of a routing op or grouped GEMM given its operands'
/// (token rows follow the input's; empty for any other op): router_topk
/// [T, k] from logits [T, E], sort_by_expert [T * k] from experts [T, k],
/// gather_rows and invert_permutation [R, ...] from indices [R],
/// combine_rows [R / k, H], scaled_grouped_matmul [M, N] from input [M, K],
/// swiglu_experts the input's rows.
SmallVector<Type> routedResultTypes(Operation *c) {
  auto rows = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getDimSize(0);
  };
  auto withRows = [](Value r, int64_t n) -> Type {
    auto rt = cast<RankedTensorType>(r.getType());
    SmallVector<int64_t> shape(rt.getShape());
    shape[0] = n;
    return RankedTensorType::get(shape, rt.getElementType(), rt.getEncoding());
  };
  auto perSlot = [](int64_t n, uint64_t k) {
    return ShapedType::isDynamic(n) ? n : n / static_cast<int64_t>(k);
  };
  return llvm::TypeSwitch<Operation *, SmallVector<Type>>(c)
      .Case([&](RouterTopKOp op) -> SmallVector<Type> {
        int64_t t = rows(op.getLogits());
        SmallVector<Type> types{withRows(op.getWeights(), t),
                                withRows(op.getExperts(), t)};
        if (Value scores = op.getScores())
          types.push_back(withRows(scores, t));
        return types;
      })
      .Case([&](SortByExpertOp op) -> SmallVector<Type> {
        auto e = cast<RankedTensorType>(op.getExperts().getType());
        int64_t n =
            e.hasStaticShape() ? e.getNumElements() : ShapedType::kDynamic;
        return {withRows(op.getIndices(), n), op.getOffsets().getType()};
      })
      .Case([&](GatherRowsOp op) -> SmallVector<Type> {
        return {withRows(op.getResult(), rows(op.getIndices()))};
      })
      .Case([&](InvertPermutationOp op) -> SmallVector<Type> {
        return {withRows(op.getResult(), rows(op.getIndices()))};
      })
      .Case([&](CombineRowsOp op) -> SmallVector<Type> {
        return {withRows(op.getResult(),
                         perSlot(rows(op.getIndices()), op.getTopK()))};
      })
      .Case([&](ScaledGroupedMatmulOp op) -> SmallVector<Type> {
        return {withRows(op.getResult(), rows(op.getInput()))};
      })
      .Case([&](SwiGLUExpertsOp op) -> SmallVector<Type> {
        return {withRows(op.getResult(), rows(op.getInput()))};
      })
      .Default([](Operation *) { return SmallVector<Type>(); });
}

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
      !(isa<LinearOp, ScaledGroupedMatmulOp, SwiGLUExpertsOp, RouterTopKOp,
            SortByExpertOp, GatherRowsOp, InvertPermutationOp, CombineRowsOp,
            tensor::ExtractSliceOp, tensor::InsertSliceOp, tensor::ExtractOp,
            DestinationStyleOpInterface>(c) ||
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
  SmallVector<Type> types = routedResultTypes(c);
  if (!types.empty()) {
    // (routing ops and grouped GEMMs: their rows follow their operands')
  } else if (auto lin = dyn_cast<LinearOp>(c)) {
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

} // namespace

/// Clones `body`'s ops at `b` with `map` (the body's arguments mapped to
/// the shard and the parameters). With `refine`, every cloned result type
/// is made static (refineStatic); fails, leaving the cloned ops, when one
/// cannot be (naming the body op in `*failedOp` when given). Returns the
/// ops created, in order.
FailureOr<SmallVector<Operation *>> cloneBody(OpBuilder &b, Block &body,
                                              IRMapping &map, bool refine,
                                              Operation **failedOp) {
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

SmallVector<Value> sliceSavedRouting(OpBuilder &b, Location loc,
                                     ArrayRef<SavedRouting> saved,
                                     ValueRange savedArgs, Value offset,
                                     OpFoldResult size) {
  // (Called in the shard loop's body: shard i is its induction variable.)
  Value shard =
      cast<scf::ForOp>(b.getInsertionBlock()->getParentOp()).getInductionVar();
  SmallVector<Value> rows;
  for (const SavedRouting &sr : saved)
    for (unsigned j = 0; j < sr.count(); ++j)
      rows.push_back(sliceSaved(b, loc, sr, j, savedArgs[rows.size()], offset,
                                size, shard));
  return rows;
}

/// save_routing: the recomputed shard reads each router's saved weights
/// and experts, and its sort's indices and offsets when they were saved
/// (`savedRows`: the shard's parts of them), instead of recomputing them;
/// `vjp` takes the weights' gradient for the router and gives
/// router_topk_grad the saved experts, so the cloned router_topk (unless
/// its scores are read) and sort are left without uses (dropped).
void useSavedRouting(ArrayRef<SavedRouting> saved, IRMapping &map,
                     ArrayRef<Value> savedRows, ShardVJP &vjp) {
  unsigned at = 0;
  for (const SavedRouting &sr : saved) {
    Value w = savedRows[at], e = savedRows[at + 1];
    if (sr.sort)
      for (unsigned j : {2u, 3u})
        map.lookup(sr.value(j)).replaceAllUsesWith(savedRows[at + j]);
    at += sr.count();
    auto clone = map.lookup(sr.value(0)).getDefiningOp<RouterTopKOp>();
    clone.getWeights().replaceAllUsesWith(w);
    clone.getExperts().replaceAllUsesWith(e);
    vjp.alias[w] = clone.getWeights();
    vjp.savedExperts[clone] = e;
  }
}

} // namespace mlir::mxmoe::tile_mlp
