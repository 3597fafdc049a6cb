//===- TileMLP.h - shard helpers and reverse mode of mxmoe-tile-mlp -*- C++
//-*-===//
//
// Private to lib/Dialect/MXMoE/Transforms: the token partition, row slices
// and static shard runs of mxmoe-tile-mlp (TileMLPShards.cpp), and the
// reverse-mode gradients of a recomputed shard body (TileMLPVJP.cpp); the
// pass itself is TileMLP.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_LIB_DIALECT_MXMOE_TRANSFORMS_TILEMLP_H
#define MXMOE_LIB_DIALECT_MXMOE_TRANSFORMS_TILEMLP_H

#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <utility>

namespace mlir::mxmoe::tile_mlp {

/// The run-time token partition shared by the forward and the backward
/// loop (when the token or shard count is dynamic): the flattened input
/// [T, H], the shard count and T = q * N + r.
struct Partition {
  Value x, tokens, shards, q, r;
};

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

/// [B, S, H] -> [T = B*S, H]; a 2-D input is returned as it is.
Value flattenTokens(OpBuilder &b, Location loc, Value input);

/// The partition of the flattened input `x` of `op` into its shard count
/// (the op's, or for shards = auto the pass's `rule` over
/// `tokensPerShard`), computed at run time.
Partition makePartition(OpBuilder &b, Location loc, TiledMLPOp op, Value x,
                        ShardRule rule, int64_t tokensPerShard);

/// Shard i: offset i*q + min(i, r), size q + (i < r).
std::pair<Value, Value> shardBounds(OpBuilder &b, Location loc,
                                    const Partition &p, Value i);

/// Rows [offset, offset + size) of a [T, ...] tensor (a static row count
/// when `size` is an attribute).
Value sliceRows(OpBuilder &b, Location loc, Value full, Value offset,
                OpFoldResult size);

/// `full` with rows [offset, offset + size) replaced by `part`.
Value insertRows(OpBuilder &b, Location loc, Value part, Value full,
                 Value offset, OpFoldResult size);

/// A zero tensor shaped like `like` (dynamic dims read from it).
Value zerosLike(OpBuilder &b, Location loc, Value like, Type elem = {});

/// The static runs of `op` over `tokens` tokens, or {} when the shard
/// count is only known at run time.
SmallVector<ShardRun> staticRuns(TiledMLPOp op, int64_t tokens, int64_t hidden,
                                 ShardRule rule, int64_t tokensPerShard);

/// Clones `body`'s ops at `b` with `map` (the body's arguments mapped to
/// the shard and the parameters). With `refine`, every cloned result type
/// is made static (refineStatic); fails, leaving the cloned ops, when one
/// cannot be (naming the body op in `*failedOp` when given). Returns the
/// ops created, in order.
FailureOr<SmallVector<Operation *>> cloneBody(OpBuilder &b, Block &body,
                                              IRMapping &map, bool refine,
                                              Operation **failedOp = nullptr);

/// Why the body of `op` cannot be cloned with static types for a shard of
/// `size` tokens ("" when it can; tried on a scratch function that is then
/// erased).
std::string staticBodyFailure(TiledMLPOp op, int64_t size);

/// One routing decision that `save_routing` keeps: a body router and, in
/// static shard loops, the body's sort_by_expert of its experts (null
/// otherwise, or without one).
struct SavedRouting {
  RouterTopKOp router;
  SortByExpertOp sort;
  /// Its saved values: weights [T, k] f32 and experts [T, k] i32, then with
  /// the sort its indices [T * k] i32 (each shard's block of shard-local
  /// row ids) and end offsets [shards * E] i32 (shard i's at i * E).
  unsigned count() const { return sort ? 4 : 2; }
  /// Value `j` of the body (the router's or the sort's result).
  Value value(unsigned j) const;
};

/// The body's routing decisions (save_routing), in body order; `shards`
/// is the static shard count (0: run-time loops, whose sorts are not
/// saved).
SmallVector<SavedRouting> savedRoutingOf(TiledMLPOp op, int64_t shards);

/// The types of the saved values of `op` (T the flattened token count).
SmallVector<Type> savedRoutingTypes(TiledMLPOp op, int64_t shards);

/// A shard's part of saved value `j` of `s` in `full`: rows [offset,
/// offset + size) of the weights / experts, the block [offset k, (offset +
/// size) k) of the indices, [i E, (i + 1) E) of the offsets (i = `shard`).
Value sliceSaved(OpBuilder &b, Location loc, const SavedRouting &s, unsigned j,
                 Value full, Value offset, OpFoldResult size, Value shard);

/// The shard's parts of every saved value (`savedArgs`, in
/// savedRoutingTypes' order), built in the shard loop's body.
SmallVector<Value> sliceSavedRouting(OpBuilder &b, Location loc,
                                     ArrayRef<SavedRouting> saved,
                                     ValueRange savedArgs, Value offset,
                                     OpFoldResult size);

struct ShardVJP;
/// save_routing: the recomputed shard (`map`: the body's values to the
/// clones) reads the saved routing (`savedRows`) instead of recomputing
/// it; see TileMLPShards.cpp.
void useSavedRouting(ArrayRef<SavedRouting> saved, IRMapping &map,
                     ArrayRef<Value> savedRows, ShardVJP &vjp);

/// `full` with that part replaced by `part`.
Value insertSaved(OpBuilder &b, Location loc, const SavedRouting &s, unsigned j,
                  Value part, Value full, Value offset, OpFoldResult size,
                  Value shard);

/// Transpose of a 2-D tensor.
Value transpose2d(OpBuilder &b, Location loc, Value v);
/// The MX functions expanded for one linear, grouped GEMM or experts block
/// of a static shard loop, with what makes a later use of the same name
/// legal: the same tiled MLP (its forward loop and its backward recompute
/// share them), precision and recipe. `kind`: a scaled_grouped_matmul's
/// input_grad and weight_grad also take the offsets; a swiglu_experts'
/// gradients are one backward function.
struct ExpandedLinear {
  enum Kind { Linear, Grouped, Experts };
  LinearFunctions fns;
  Operation *owner;
  Attribute precision, recipe;
  Kind kind = Linear;
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
  /// Saved routing (save_routing): a saved weights slice stands for the
  /// recomputed router's weights (its gradient goes to the router), and
  /// the router's gradient reads the saved experts.
  llvm::DenseMap<Value, Value> alias;
  llvm::DenseMap<Operation *, Value> savedExperts;

  /// `v` in element type `elem` (extf / truncf; the same shape).
  Value convert(Value v, Type elem);

  void add(Value v, Value g);

  /// Applies the VJP of `op` given the gradients of its results.
  LogicalResult backprop(Operation *op);
  LogicalResult backpropGather(GatherRowsOp op, Value g);
  /// A call of an expanded MX linear, grouped GEMM or experts block.
  LogicalResult backpropCall(func::CallOp call, Value g);
  void backpropCombine(CombineRowsOp op, Value g);
  void backpropRouter(RouterTopKOp router, Value gw, Value gs);
  LogicalResult backpropReduce(linalg::ReduceOp red, Value g);
};

} // namespace mlir::mxmoe::tile_mlp

#endif // MXMOE_LIB_DIALECT_MXMOE_TRANSFORMS_TILEMLP_H
