//===- TileMLP.cpp - mxmoe-tile-mlp ---------------------------------------===//
//
// mxmoe.tiled_mlp -> scf.for over balanced token shards (forward).
// Semantics and shard-count rules: DeepSpeed TiledMLP
// (deepspeed/runtime/sequence_parallel/ulysses_sp.py) and Axolotl's
// 32K-token MoE rule (Axolotl PR #3666).
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

namespace mlir::mxmoe {
#define GEN_PASS_DEF_MXMOETILEMLP
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h.inc"
} // namespace mlir::mxmoe

using namespace mlir;
using namespace mlir::mxmoe;

using namespace mlir::mxmoe::tile_mlp;

namespace {

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

  /// Replaces the MX `mxmoe.linear`s and `mxmoe.scaled_grouped_matmul`s
  /// among `created` (cloned into a static shard loop of `run`) by calls of
  /// their expanded forward functions `@"<fqn><run suffix>.forward"`,
  /// created on first use and shared by the forward loop and the backward
  /// recompute. `created` is updated.
  LogicalResult expandLinears(SmallVector<Operation *> &created,
                              const ShardRun &run, TiledMLPOp owner,
                              Block &body, IRMapping &map,
                              SymbolTable &symbols) {
    for (Operation *&c : created) {
      FailureOr<func::FuncOp> fwd = expandedForward(c, run, owner, symbols);
      if (failed(fwd))
        return failure();
      if (!*fwd)
        continue;
      OpBuilder b(c);
      auto call = func::CallOp::create(b, c->getLoc(), *fwd, c->getOperands());
      c->getResult(0).replaceAllUsesWith(call.getResult(0));
      for (Operation &o : body)
        for (Value r : o.getResults())
          if (map.lookupOrNull(r) == c->getResult(0))
            map.map(r, call.getResult(0));
      c->erase();
      c = call;
    }
    return success();
  }

  /// The functions of the MX op `c` (a linear, grouped GEMM or experts
  /// block; no weights-once copies in shard loops), named `name`.
  FailureOr<LinearFunctions> expandOne(Operation *c, StringRef name,
                                       SymbolTable &symbols, Type dwElem) {
    if (auto lin = dyn_cast<LinearOp>(c))
      return createLinearFunctions(lin, name, symbols, backward, weightGradBF16,
                                   dwElem);
    if (auto gemm = dyn_cast<ScaledGroupedMatmulOp>(c))
      return createGroupedMatmulFunctions(
          gemm, name, symbols, backward, weightGradBF16,
          /*quantizeWeightsOnce=*/false, dwElem);
    // (The experts block's weight gradients take the weights' type: an f32
    // accumulator widens them.)
    return createSwiGLUExpertsFunctions(cast<SwiGLUExpertsOp>(c), name, symbols,
                                        backward, weightGradBF16,
                                        /*quantizeWeightsOnce=*/false);
  }

  /// The expanded forward function of `c` when it is an MX linear, grouped
  /// GEMM or experts block (null for any other op): created on first use,
  /// else the one created before, which must serve the same tiled MLP,
  /// precision, recipe and types.
  FailureOr<func::FuncOp> expandedForward(Operation *c, const ShardRun &run,
                                          TiledMLPOp owner,
                                          SymbolTable &symbols) {
    std::optional<ExpandedLinear::Kind> kind =
        llvm::TypeSwitch<Operation *, std::optional<ExpandedLinear::Kind>>(c)
            .Case([](LinearOp) { return ExpandedLinear::Linear; })
            .Case([](ScaledGroupedMatmulOp) { return ExpandedLinear::Grouped; })
            .Case([](SwiGLUExpertsOp) { return ExpandedLinear::Experts; })
            .Default([](Operation *) { return std::nullopt; });
    // As mxmoe-expand-scaled-matmul decides: a linear is MX when its
    // precision says so, a grouped GEMM or experts block unless it is bf16.
    auto precision = c->getAttrOfType<PrecisionAttr>("precision");
    bool bf16 = precision ? precision.getValue() == Precision::bf16
                          : kind == ExpandedLinear::Linear;
    if (!kind || bf16)
      return func::FuncOp();
    Attribute recipe = c->getAttr("recipe");
    StringRef fqn = c->getAttrOfType<StringAttr>("fqn").getValue();
    std::string name = (fqn + run.suffix).str();
    std::string fwdName = name + ".forward";
    llvm::StringMap<ExpandedLinear> &table = linears[symbols.getOp()];
    auto it = table.find(fwdName);
    if (it == table.end()) {
      // With an f32 gradient accumulator the weight gradient GEMMs write
      // f32 (not the weight's bf16, widened afterwards).
      Type dwElem;
      if (std::optional<Type> acc = owner.getGradAccumulator();
          acc && acc->isF32())
        dwElem = *acc;
      FailureOr<LinearFunctions> fns = expandOne(c, name, symbols, dwElem);
      if (failed(fns))
        return failure();
      ExpandedLinear e{*fns, owner.getOperation(), precision, recipe, *kind};
      it = table.try_emplace(fwdName, e).first;
    }
    const ExpandedLinear &e = it->second;
    func::FuncOp fwd = e.fns.forward;
    // (An experts block's forward also returns what its backward reads.)
    if (e.owner == owner.getOperation() && e.precision == precision &&
        e.recipe == recipe && e.kind == *kind &&
        llvm::equal(fwd.getFunctionType().getInputs(), c->getOperandTypes()) &&
        fwd.getFunctionType().getResult(0) == c->getResultTypes().front())
      return fwd;
    const char *what[] = {"linear", "grouped GEMM", "experts block"};
    InFlightDiagnostic d = c->emitOpError("fqn '")
                           << fqn << "' is not unique: @" << fwdName
                           << " already serves another " << what[*kind]
                           << " (another tiled MLP, precision, recipe or "
                              "shape); fqns name the expanded functions a "
                              "runtime looks up";
    d.attachNote(fwd.getLoc()) << "the existing function";
    return failure();
  }

  /// Tags a shard loop of `op` with its id (`mxmoe.tiled_mlp_id`) and, for
  /// a run-time loop of a tiled MLP with static token and shard counts, why
  /// its shapes stayed dynamic (`mxmoe.dynamic_shards`).
  void tagLoop(TiledMLPOp op, scf::ForOp loop) {
    // Which tiled MLP a loop belongs to (its forward and backward loops
    // share the id; unique in the module): drivers group loops by it.
    loop->setAttr(MXMoEDialect::TiledMlpIdAttrHelper::getNameStr(),
                  IntegerAttr::get(IntegerType::get(op.getContext(), 64),
                                   tiledId.lookup(op.getOperation())));
    auto it = dynamicReason.find(op.getOperation());
    if (it != dynamicReason.end() &&
        !loop->hasAttr(MXMoEDialect::ShardTokensAttrHelper::getNameStr()))
      loop->setAttr(MXMoEDialect::DynamicShardsAttrHelper::getNameStr(),
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
        loop->setAttr(MXMoEDialect::ShardTokensAttrHelper::getNameStr(),
                      b.getI64IntegerAttr(run->size));
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

  /// The function `@"<fqn>.backward"` of `type` in `symbols` (tagged with
  /// the pass and fqn): a declaration of that name (so that IR can call the
  /// backward before this pass runs) receives the body; any other function
  /// of that name is an error, or without an fqn a uniquified name.
  FailureOr<func::FuncOp> backwardFunction(TiledMLPOp op, SymbolTable &symbols,
                                           FunctionType type) {
    MLIRContext *ctx = &getContext();
    Location loc = op.getLoc();
    std::string name =
        (op.getFqn() ? op.getFqn()->str() : std::string("tiled_mlp")) +
        ".backward";
    // A declaration of the same name (so that IR can call the backward
    // before this pass runs) receives the body; anything else is an error.
    auto fn = symbols.lookup<func::FuncOp>(name);
    if (fn && fn.isDeclaration()) {
      if (fn.getFunctionType() != type) {
        fn.emitOpError("mxmoe-tile-mlp: the declaration of '")
            << name << "' must have type " << type;
        return failure();
      }
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
    fn->setAttr(MXMoEDialect::PassAttrHelper::getNameStr(),
                StringAttr::get(ctx, "backward"));
    if (op.getFqnAttr())
      fn->setAttr(MXMoEDialect::FqnAttrHelper::getNameStr(), op.getFqnAttr());
    return fn;
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
    SmallVector<Type> saved;
    SmallVector<SavedRouting> savedRouting;
    if (op.getSaveRouting()) {
      saved = savedRoutingTypes(op, shardCount(runs));
      savedRouting = savedRoutingOf(op, shardCount(runs));
    }
    llvm::append_range(ins, saved);
    for (Type t : op.getResultTypes())
      ins.push_back(t);
    FailureOr<func::FuncOp> made =
        backwardFunction(op, symbols, FunctionType::get(ctx, ins, outs));
    if (failed(made))
      return failure();
    func::FuncOp fn = *made;
    Block *entry = fn.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockBegin(entry);
    unsigned numParams = op.getParams().size();
    Value xArg = entry->getArgument(0);
    ValueRange paramArgs = entry->getArguments().slice(1, numParams);
    ValueRange savedArgs =
        entry->getArguments().slice(1 + numParams, saved.size());
    ValueRange dyArgs =
        entry->getArguments().drop_front(1 + numParams + saved.size());
    int64_t rank = op.getInput().getType().getRank();

    Value x = flattenTokens(b, loc, xArg);
    std::optional<Partition> p;
    if (runs.empty())
      p = makePartition(b, loc, op, x, rule, tokensPerShard);
    SmallVector<Value> dys;
    for (auto [i, dy] : llvm::enumerate(dyArgs)) {
      auto t = cast<RankedTensorType>(dy.getType());
      if (rank == 3 && !op.isSummedResult(i)) {
        SmallVector<ReassociationIndices> re{{0, 1}};
        for (int64_t d = 2; d < t.getRank(); ++d)
          re.push_back({d});
        dy = tensor::CollapseShapeOp::create(b, loc, dy, re);
      }
      dys.push_back(dy);
    }
    // Loop state: dx [T, H] (every row written by its shard: no fill) and
    // one accumulator per trainable parameter.
    SmallVector<Value> inits{tensor::EmptyOp::create(
        b, loc, tensor::getMixedSizes(b, loc, x),
        cast<RankedTensorType>(x.getType()).getElementType())};
    SmallVector<Type> accTypes;
    for (Value tp : trainable) {
      auto t = cast<RankedTensorType>(tp.getType());
      Type acc = op.getGradAccumulator().value_or(t.getElementType());
      accTypes.push_back(acc);
      unsigned idx = llvm::find(op.getParams(), tp) - op.getParams().begin();
      inits.push_back(zerosLike(b, loc, paramArgs[idx], acc));
    }
    auto tag = [&](scf::ForOp loop) {
      loop->setAttr(MXMoEDialect::TiledMlpBackwardAttrHelper::getNameStr(),
                    op.getFqnAttr() ? Attribute(op.getFqnAttr())
                                    : Attribute(b.getUnitAttr()));
      tagLoop(op, loop);
    };
    auto shardBody = [&](OpBuilder &b, Value offset, OpFoldResult size,
                         const ShardRun *run,
                         ValueRange iter) -> FailureOr<SmallVector<Value>> {
      Value shard = sliceRows(b, loc, x, offset, size);
      // (The saved routing's rows are sliced before the recompute reads
      // them.)
      SmallVector<Value> savedRows =
          sliceSavedRouting(b, loc, savedRouting, savedArgs, offset, size);
      // Recompute the shard.
      IRMapping map;
      FailureOr<SmallVector<Operation *>> cloned =
          cloneShard(b, op, shard, paramArgs, run, map, symbols);
      if (failed(cloned))
        return failure();
      // Seed with the shard's slice of each result's cotangent (a summed
      // result's whole cotangent: every shard's part adds to it).
      ShardVJP vjp{b,
                   loc,
                   llvm::DenseMap<Value, Value>(),
                   linears[symbols.getOp()],
                   llvm::DenseSet<Value>(paramArgs.begin(), paramArgs.end()),
                   llvm::DenseMap<Value, Value>(),
                   llvm::DenseMap<Operation *, Value>()};
      if (!saved.empty())
        useSavedRouting(savedRouting, map, savedRows, vjp);
      auto yield = cast<YieldOp>(op.getBody().front().getTerminator());
      for (auto [i, v, dy] : llvm::enumerate(yield.getValues(), dys))
        vjp.add(map.lookup(v), op.isSummedResult(i)
                                   ? dy
                                   : sliceRows(b, loc, dy, offset, size));
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
    auto ret = func::ReturnOp::create(
        b, loc, backwardResults(b, op, *final, trainable, accTypes));
    dropUnusedGradients(ret->getParentOfType<func::FuncOp>(),
                        linears[symbols.getOp()]);
    return success();
  }

  /// The backward's results from its loops' final values (`final`: dx
  /// [T, H], then one accumulator per trainable parameter): dx in the
  /// input's shape, each gradient in its parameter's type.
  static SmallVector<Value> backwardResults(OpBuilder &b, TiledMLPOp op,
                                            ArrayRef<Value> final,
                                            ArrayRef<Value> trainable,
                                            ArrayRef<Type> accTypes) {
    Location loc = op.getLoc();
    RankedTensorType xt = op.getInput().getType();
    Value dx = final[0];
    if (xt.getRank() == 3)
      dx = tensor::ExpandShapeOp::create(
          b, loc, xt, dx, SmallVector<ReassociationIndices>{{0, 1}, {2}});
    else if (dx.getType() != xt)
      dx = tensor::CastOp::create(b, loc, xt, dx);
    SmallVector<Value> results{dx};
    for (auto [j, tp] : llvm::enumerate(trainable)) {
      Value g = final[1 + j];
      auto t = cast<RankedTensorType>(tp.getType());
      if (accTypes[j] != t.getElementType())
        g = arith::TruncFOp::create(b, loc, t, g);
      results.push_back(g);
    }
    return results;
  }

  /// Drops from `fn` the gradient calls (input_grad / weight_grad /
  /// bias_grad of expanded functions) whose result nothing reads, e.g. the
  /// weight gradient of frozen (dequantized) weights, and the pure ops
  /// that only fed them.
  static void dropUnusedGradients(func::FuncOp fn,
                                  const llvm::StringMap<ExpandedLinear> &fns) {
    llvm::DenseSet<StringRef> grads;
    for (const auto &e : fns)
      for (func::FuncOp g : {e.second.fns.inputGrad, e.second.fns.weightGrad,
                             e.second.fns.biasGrad})
        if (g)
          grads.insert(g.getSymName());
    // (A post-order walk may erase the op it visits; a pass per level of
    // now-dead producers.)
    for (bool changed = true; changed;) {
      changed = false;
      fn.walk([&](Operation *o) {
        auto call = dyn_cast<func::CallOp>(o);
        if ((call && call->use_empty() && grads.contains(call.getCallee())) ||
            isOpTriviallyDead(o)) {
          o->erase();
          changed = true;
        }
      });
    }
  }

  /// The static shard count of `runs` (0: run-time loops).
  static int64_t shardCount(ArrayRef<ShardRun> runs) {
    return runs.empty() ? 0 : runs.back().end;
  }

  /// Replaces `op` by its forward shard loops or, with save_routing, by a
  /// call of `@"<fqn>.forward"`, which holds them and also returns the
  /// saved routing.
  LogicalResult lower(TiledMLPOp op, SymbolTable &symbols,
                      ArrayRef<ShardRun> runs) {
    unsigned n = op.getNumResults();
    if (!op.getSaveRouting()) {
      OpBuilder b(op);
      FailureOr<SmallVector<Value>> r = emitForward(
          b, op, op.getInput(), op.getParams(), symbols, runs, false);
      if (failed(r))
        return failure();
      op.replaceAllUsesWith(*r);
      op.erase();
      return success();
    }
    MLIRContext *ctx = &getContext();
    Location loc = op.getLoc();
    SmallVector<Type> outs(op.getResultTypes());
    llvm::append_range(outs, savedRoutingTypes(op, shardCount(runs)));
    std::string name = (op.getFqn()->str()) + ".forward";
    if (Operation *existing = symbols.lookup(name)) {
      InFlightDiagnostic d = op.emitOpError("mxmoe-tile-mlp: @")
                             << name
                             << " already exists; with save_routing the fqn "
                                "names the forward function a runtime calls";
      d.attachNote(existing->getLoc()) << "the existing function";
      return failure();
    }
    auto fn = func::FuncOp::create(
        loc, name, FunctionType::get(ctx, op->getOperandTypes(), outs));
    symbols.insert(fn);
    fn->setAttr(MXMoEDialect::FqnAttrHelper::getNameStr(), op.getFqnAttr());
    Block *entry = fn.addEntryBlock();
    OpBuilder fb = OpBuilder::atBlockBegin(entry);
    FailureOr<SmallVector<Value>> r =
        emitForward(fb, op, entry->getArgument(0),
                    entry->getArguments().drop_front(), symbols, runs, true);
    if (failed(r))
      return failure();
    func::ReturnOp::create(fb, loc, *r);
    OpBuilder b(op);
    auto call = func::CallOp::create(b, loc, fn, op->getOperands());
    op.replaceAllUsesWith(call.getResults().take_front(n));
    op.erase();
    return success();
  }

  /// The forward shard loops of `op` at `b` over `input` and `params`:
  /// the op's results, then with `save` each body router's weights and
  /// experts over all tokens ([T, top_k]).
  FailureOr<SmallVector<Value>>
  emitForward(OpBuilder &b, TiledMLPOp op, Value input, ValueRange params,
              SymbolTable &symbols, ArrayRef<ShardRun> runs, bool save) {
    Location loc = op.getLoc();
    int64_t rank = op.getInput().getType().getRank();
    // The same partition as the backward function.
    Value x = flattenTokens(b, loc, input);
    std::optional<Partition> p;
    if (runs.empty())
      p = makePartition(b, loc, op, x, rule, tokensPerShard);
    int64_t staticTokens = cast<RankedTensorType>(x.getType()).getDimSize(0);

    // Flattened result accumulators [T, ...], every row written once;
    // summed results start at zeros.
    SmallVector<Value> inits;
    SmallVector<Type> rowTypes(op.getResultTypes());
    SmallVector<SavedRouting> saved;
    if (save) {
      llvm::append_range(rowTypes, savedRoutingTypes(op, shardCount(runs)));
      saved = savedRoutingOf(op, shardCount(runs));
    }
    for (auto [j, t] : llvm::enumerate(rowTypes)) {
      auto rt = cast<RankedTensorType>(t);
      bool result = j < op.getNumResults();
      if ((result && op.isSummedResult(j)) || (!result && rt.getRank() == 1)) {
        // Summed results start at zeros; a saved sort's flat indices and
        // offsets (static loops) are written block by block.
        Value empty =
            tensor::EmptyOp::create(b, loc, rt.getShape(), rt.getElementType());
        inits.push_back(result ? zerosLike(b, loc, empty) : empty);
        continue;
      }
      SmallVector<int64_t> shape{staticTokens};
      llvm::append_range(shape, rt.getShape().drop_front(
                                    j < op.getNumResults() ? rank - 1 : 1));
      SmallVector<Value> dyn;
      if (ShapedType::isDynamic(staticTokens))
        dyn.push_back(p->tokens);
      inits.push_back(
          tensor::EmptyOp::create(b, loc, shape, rt.getElementType(), dyn));
    }
    auto tag = [&](scf::ForOp loop) {
      loop->setAttr(MXMoEDialect::TiledMlpAttrHelper::getNameStr(),
                    op.getFqnAttr() ? Attribute(op.getFqnAttr())
                                    : Attribute(b.getUnitAttr()));
      if (std::optional<int64_t> n = op.getNumShards())
        loop->setAttr(MXMoEDialect::NumShardsAttrHelper::getNameStr(),
                      b.getI64IntegerAttr(*n));
      if (std::optional<Type> acc = op.getGradAccumulator())
        loop->setAttr(MXMoEDialect::GradAccumulatorAttrHelper::getNameStr(),
                      TypeAttr::get(*acc));
      tagLoop(op, loop);
    };
    auto shardBody = [&](OpBuilder &b, Value offset, OpFoldResult size,
                         const ShardRun *run,
                         ValueRange iter) -> FailureOr<SmallVector<Value>> {
      IRMapping map;
      if (failed(cloneShard(b, op, sliceRows(b, loc, x, offset, size), params,
                            run, map, symbols)))
        return failure();
      auto yield = cast<YieldOp>(op.getBody().front().getTerminator());
      SmallVector<Value> updated;
      for (auto [j, v] : llvm::enumerate(yield.getValues()))
        updated.push_back(
            op.isSummedResult(j)
                ? arith::AddFOp::create(b, loc, iter[j], map.lookup(v))
                      .getResult()
                : insertRows(b, loc, map.lookup(v), iter[j], offset, size));
      Value shardIndex = cast<scf::ForOp>(b.getInsertionBlock()->getParentOp())
                             .getInductionVar();
      for (const SavedRouting &sr : saved)
        for (unsigned j = 0; j < sr.count(); ++j)
          updated.push_back(insertSaved(b, loc, sr, j, map.lookup(sr.value(j)),
                                        iter[updated.size()], offset, size,
                                        shardIndex));
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
      if (op.isSummedResult(j)) {
        results.push_back(v);
        continue;
      }
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
    // (The saved routing stays [T, top_k].)
    results.append(final->begin() + op.getNumResults(), final->end());
    return results;
  }
};

} // namespace
