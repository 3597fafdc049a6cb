//===- MXMoEToGPU.cpp - convert-mxmoe-to-gpu ------------------------------===//
//
// The pass: checks its options, then lowers every mxmoe.quantize,
// dequantize, swizzle_scales and grouped_matmul not yet implemented by a
// kernel, in program order, into the `mxmoe_kernels` gpu.module (the
// generators are declared in KernelGen.h: one file per op family). With
// reuse-kernels, an op equal to an earlier one takes its annotation instead
// (KernelReuse).
//
//===----------------------------------------------------------------------===//

#include "GemmConfigSelection.h"
#include "KernelGen.h"

#include "mxmoe/Conversion/Chips.h"
#include "mxmoe/Conversion/Passes.h"
#include "mxmoe/Dialect/MXMoE/Utils/CheckedPassOptions.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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

/// Which operand each operand first is (operand i is operand first[i]):
/// bindings name an operand by its first position.
SmallVector<unsigned> firstOperands(Operation *op) {
  SmallVector<unsigned> first;
  for (OpOperand &o : op->getOpOperands())
    first.push_back(llvm::find(op->getOperands(), o.get()) -
                    op->operand_begin());
  return first;
}

/// The generators build an op's kernel and its annotation from the op's
/// name, attributes, operand and result types and repeated operands
/// alone (and the pass options): ops equal in these get identical kernels
/// and equal annotations. With reuse-kernels, a later op takes the
/// annotation of the first op equal to it instead of generating a kernel
/// that mxmoe-dedupe-kernels would erase.
class KernelReuse {
public:
  /// The first op of a kind, as its lowering left it.
  struct Entry {
    Operation *op;
    DictionaryAttr attrs;                   ///< before its lowering
    SmallVector<NamedAttribute> annotation; ///< what its lowering set
    unsigned names;                         ///< kernel names it took
  };

  /// The recorded op equal to `op` (`op` not lowered yet), or null.
  const Entry *find(Operation *op) const {
    auto it = buckets.find(hash(op, op->getAttrDictionary()));
    if (it == buckets.end())
      return nullptr;
    for (const Entry &e : it->second)
      if (e.op->getName() == op->getName() &&
          e.attrs == op->getAttrDictionary() &&
          llvm::equal(e.op->getOperandTypes(), op->getOperandTypes()) &&
          llvm::equal(e.op->getResultTypes(), op->getResultTypes()) &&
          firstOperands(e.op) == firstOperands(op))
        return &e;
    return nullptr;
  }

  /// Records `op`, just lowered: `before` are its attributes before, its
  /// lowering took `names` kernel names (KernelGen::counters).
  void record(Operation *op, DictionaryAttr before, unsigned names) {
    Entry e{op, before, {}, names};
    for (NamedAttribute a : op->getAttrs())
      if (before.get(a.getName()) != a.getValue())
        e.annotation.push_back(a);
    buckets[hash(op, before)].push_back(std::move(e));
  }

private:
  static llvm::hash_code hash(Operation *op, DictionaryAttr attrs) {
    auto ptrs = [](auto range) {
      return llvm::hash_combine_range(llvm::map_range(
          range, [](Type t) { return t.getAsOpaquePointer(); }));
    };
    SmallVector<unsigned> first = firstOperands(op);
    return llvm::hash_combine(
        op->getName().getAsOpaquePointer(), attrs.getAsOpaquePointer(),
        ptrs(op->getOperandTypes()), ptrs(op->getResultTypes()),
        llvm::hash_combine_range(first));
  }

  llvm::DenseMap<llvm::hash_code, SmallVector<Entry, 1>> buckets;
};

struct ConvertMXMoEToGPUPass
    : CheckedPassOptions<
          ConvertMXMoEToGPUPass,
          ::mlir::mxmoe::impl::ConvertMXMoEToGPUBase<ConvertMXMoEToGPUPass>> {
  using CheckedPassOptions::CheckedPassOptions;

  void getDependentDialects(DialectRegistry &registry) const override {
    CheckedPassOptions::getDependentDialects(registry);
    registerMXMoEToGPUInterfaces(registry);
  }

  GemmOptions gemmOptions() const {
    return {chip, gemmTileN, gemmStages, gemmCTAs, gemmSm90Mma, gemmCluster};
  }

  /// CheckedPassOptions' check (CheckedPassOptions.h): "" when the options
  /// are valid, else the error, which names the option and its value.
  std::string optionError() {
    std::string error;
    llvm::raw_string_ostream os(error);
    if (blockSize < 32 || blockSize > 1024 || blockSize % 32 != 0) {
      os << "convert-mxmoe-to-gpu: block-size must be a "
            "multiple of 32 in [32, 1024], got "
         << static_cast<int64_t>(blockSize);
      return error;
    }
    // (`chip` is a typed option: llvm::cl rejected any other value.)
    std::string gemm = checkGemmOptions(getArgument(), gemmOptions());
    if (!gemm.empty())
      return gemm;
    if (reuseKernels && hostLaunch)
      os << "convert-mxmoe-to-gpu: reuse-kernels needs "
            "host-launch=false (a launch replaces its op)";
    return error;
  }

  /// The first op of `module` that `counts`, and how many do (nullptr, 0
  /// when none): the ops a warning below names once, at the first.
  static std::pair<Operation *, unsigned>
  firstAndCount(ModuleOp module, function_ref<bool(Operation *)> counts) {
    Operation *first = nullptr;
    unsigned count = 0;
    module.walk([&](Operation *op) {
      if (!counts(op))
        return;
      first = first ? first : op;
      ++count;
    });
    return {first, count};
  }

  /// A model-level op the model passes would turn into MX-level ones
  /// (linears and scaled grouped matmuls with no precision yet or an MX
  /// one, tiled MLPs), outside a tiled MLP's run-time shard loop
  /// (mxmoe-compile lists those as uncompiled, with its own warning).
  static bool isUnexpandedModelOp(Operation *op) {
    std::optional<Precision> precision;
    if (auto lin = dyn_cast<LinearOp>(op))
      precision = lin.getPrecision();
    else if (auto sgm = dyn_cast<ScaledGroupedMatmulOp>(op))
      precision = sgm.getPrecision();
    else if (!isa<TiledMLPOp>(op))
      return false;
    if (precision == Precision::bf16)
      return false;
    auto loop = op->getParentOfType<scf::ForOp>();
    return !loop ||
           (!loop->hasAttr(MXMoEDialect::TiledMlpAttrHelper::getNameStr()) &&
            !loop->hasAttr(
                MXMoEDialect::TiledMlpBackwardAttrHelper::getNameStr()));
  }

  /// This pass lowers MX-level ops only: a module given to it before the
  /// model passes would otherwise lower nothing, and say nothing. One
  /// warning, at the first such op.
  static void warnOpsLeftAsTheyAre(ModuleOp module) {
    auto [model, models] = firstAndCount(module, isUnexpandedModelOp);
    if (model)
      emitWarning(model->getLoc())
          << "convert-mxmoe-to-gpu lowers MX-level ops (mxmoe.quantize, "
             "dequantize, swizzle_scales, grouped_matmul); "
          << models << " model-level op(s) such as this '" << model->getName()
          << "' stay as they are: run the model-level passes first "
             "(--mxmoe-default-pipeline, or mxmoe-precision-policy, "
             "mxmoe-expand-scaled-matmul, mxmoe-tile-mlp, mxmoe-pack-scales)";
  }

  /// The values an op with nothing to compute stands for, built before
  /// it, or none when it has work: every result empty (zero elements: a
  /// GEMM, quantization or swizzle over zero tokens) gives a `tensor.empty`
  /// marked `mxmoe.empty_result` per result (a zero-byte buffer of the
  /// launch program); a grouped GEMM with contraction extent 0 (e.g. the
  /// weight gradient of one expert over zero tokens) gives its zeros, an
  /// `arith.constant` marked `mxmoe.zero_result` (a zero-filled buffer);
  /// an accumulating one gives its accumulator.
  static SmallVector<Value> computeFreeValues(Operation *op) {
    OpBuilder b(op);
    auto isEmpty = [](Type t) {
      auto shaped = dyn_cast<ShapedType>(t);
      return shaped && shaped.hasStaticShape() && shaped.getNumElements() == 0;
    };
    // An accumulating grouped GEMM with nothing to add is its accumulator.
    if (auto mm = dyn_cast<GroupedMatmulOp>(op); mm && mm.getAccumulator()) {
      if (mm.getLhs().getType().getDimSize(1) == 0 ||
          isEmpty(mm.getResult().getType()))
        return {mm.getAccumulator()};
      return {};
    }
    SmallVector<Value> values;
    if (llvm::all_of(op->getResultTypes(), isEmpty)) {
      for (Type t : op->getResultTypes()) {
        auto tt = cast<RankedTensorType>(t);
        auto e = tensor::EmptyOp::create(b, op->getLoc(), tt.getShape(),
                                         tt.getElementType(), tt.getEncoding());
        e->setAttr(MXMoEDialect::EmptyResultAttrHelper::getNameStr(),
                   b.getUnitAttr());
        values.push_back(e);
      }
      return values;
    }
    // A contraction over nothing (a grouped GEMM's K = 0, a linear's K =
    // 0: e.g. a weight gradient over an empty shard): zeros.
    auto mm = dyn_cast<GroupedMatmulOp>(op);
    auto lin = dyn_cast<LinearOp>(op);
    bool emptyK = mm ? mm.getLhs().getType().getDimSize(1) == 0
                     : lin && cast<RankedTensorType>(lin.getInput().getType())
                                      .getShape()
                                      .back() == 0;
    if (!emptyK)
      return values;
    auto tt = cast<RankedTensorType>(op->getResult(0).getType());
    auto zeros = DenseElementsAttr::get(tt, b.getZeroAttr(tt.getElementType()));
    auto c = arith::ConstantOp::create(b, op->getLoc(), zeros);
    c->setAttr(MXMoEDialect::ZeroResultAttrHelper::getNameStr(),
               b.getUnitAttr());
    values.push_back(c);
    return values;
  }

  /// Replaces the ops with nothing to compute (computeFreeValues) and drops
  /// the MX-level ops that fed only them (the quantizations of an empty
  /// GEMM's operands). (A token-group quantization over zero tokens still
  /// writes its groups' padding: its results are not empty.) `ops` in IR
  /// order; the ops left to lower go to `kept`.
  static void dropComputeFreeOps(ArrayRef<Operation *> ops,
                                 SmallVectorImpl<Operation *> &kept) {
    // The ops not erased (erased ones leave this set at once, so that an
    // op created later at a reused address is never taken for one).
    llvm::SmallPtrSet<Operation *, 8> live(ops.begin(), ops.end());
    SmallVector<Operation *> producers;
    auto erase = [&](Operation *op) {
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp(); def && live.count(def))
          producers.push_back(def);
      live.erase(op);
      op->erase();
    };
    for (Operation *op : ops) {
      SmallVector<Value> values = computeFreeValues(op);
      if (values.empty())
        continue;
      op->replaceAllUsesWith(values);
      erase(op);
    }
    while (!producers.empty()) {
      Operation *op = producers.pop_back_val();
      if (live.count(op) && op->use_empty())
        erase(op);
    }
    for (Operation *op : ops)
      if (live.count(op))
        kept.push_back(op);
  }

  /// Lowers `op` (static shapes checked) with its family's generator.
  static LogicalResult lower(KernelGen &gen, Operation *op) {
    for (Type t :
         llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes()))
      if (auto shaped = dyn_cast<ShapedType>(t);
          shaped && !shaped.hasStaticShape())
        return op->emitOpError("GPU lowering needs static shapes, got ") << t;
    return llvm::TypeSwitch<Operation *, LogicalResult>(op)
        .Case<QuantizeOp>([&](auto q) { return gen.genQuantize(q); })
        .Case<FusedQuantizeOp>([&](auto q) { return gen.genFusedQuantize(q); })
        .Case<QuantizeWeightOp>(
            [&](auto q) { return gen.genQuantizeWeight(q); })
        .Case<DequantizeOp>([&](auto d) { return gen.genDequantize(d); })
        .Case<RequantizeOp>([&](auto r) { return gen.genRequantize(r); })
        .Case<SwizzleScalesOp>([&](auto s) { return gen.genSwizzle(s); })
        .Case<GroupedMatmulOp>([&](auto m) { return gen.genGroupedMatmul(m); })
        .Case<GatherRowsOp>([&](auto g) { return gen.genGatherRows(g); })
        .Case<InvertPermutationOp>(
            [&](auto i) { return gen.genInvertPermutation(i); })
        .Case<CombineRowsOp>([&](auto c) { return gen.genCombineRows(c); })
        .Case<CombineScoresGradOp>(
            [&](auto c) { return gen.genCombineScoresGrad(c); })
        .Case<RouterTopKOp>([&](auto r) { return gen.genRouterTopK(r); })
        .Case<RouterTopKGradOp>(
            [&](auto r) { return gen.genRouterTopKGrad(r); })
        .Case<SortByExpertOp>([&](auto s) { return gen.genSortByExpert(s); })
        .Case<LinearOp>([&](auto l) { return gen.genBf16Linear(l); })
        .Case<linalg::TransposeOp>([&](auto t) { return gen.genTranspose(t); })
        .Case<linalg::ReduceOp>([&](auto r) { return gen.genRowSum(r); })
        .Default([&](Operation *o) { return gen.genElementwise(o); });
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!optionsValid(module))
      return signalPassFailure();
    warnOpsLeftAsTheyAre(module);
    // A quantize_weight that the one-kernel form does not cover is lowered
    // as its two quantizations.
    SmallVector<QuantizeWeightOp> split;
    module.walk([&](QuantizeWeightOp q) {
      if (!q->hasAttr(MXMoEDialect::KernelAttrHelper::getNameStr()) &&
          !KernelGen::canFuseQuantizeWeight(q, blockSize))
        split.push_back(q);
    });
    for (QuantizeWeightOp q : split)
      KernelGen::splitQuantizeWeight(q);
    // One fused op per quantization (each is one kernel).
    SmallVector<FusedQuantizeOp> fused;
    module.walk([&](FusedQuantizeOp q) { fused.push_back(q); });
    for (FusedQuantizeOp q : fused)
      KernelGen::splitFusedQuantize(q);
    SmallVector<Operation *> found, ops;
    module.walk([&](Operation *op) {
      // (The quantizations inside a fused op are its kernel's, not ops of
      // their own.)
      if (isa<QuantizeOp, FusedQuantizeOp, QuantizeWeightOp, DequantizeOp,
              RequantizeOp, SwizzleScalesOp, GroupedMatmulOp, GatherRowsOp,
              InvertPermutationOp, CombineRowsOp, CombineScoresGradOp,
              RouterTopKOp, RouterTopKGradOp, SortByExpertOp>(op) &&
          !op->getParentOfType<FusedQuantizeOp>() &&
          !op->hasAttr(MXMoEDialect::KernelAttrHelper::getNameStr()))
        found.push_back(op);
      else if ((KernelGen::isShardLoopElementwise(op) ||
                KernelGen::isShardLoopBf16Linear(op) ||
                KernelGen::isShardLoopTranspose(op) ||
                KernelGen::isShardLoopRowSum(op)) &&
               !op->getParentOfType<FusedQuantizeOp>() &&
               !op->hasAttr(MXMoEDialect::KernelAttrHelper::getNameStr()))
        found.push_back(op);
    });
    dropComputeFreeOps(found, ops);
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
    StringRef chip = stringifyChip(this->chip);
    bool sm100 = isTcgen05Chip(chip);
    KernelGen gen{kernels, blockSize, hostLaunch, gemmOptions(), sm100, chip};
    KernelReuse reuse;
    for (Operation *op : ops) {
      // (StringMap values stay where they are while others are added.)
      unsigned &names = gen.counters[KernelGen::functionPart(op)];
      // (Fused ops differ by their bodies, which the reuse key does not
      // see: mxmoe-dedupe-kernels merges their equal kernels.)
      bool reusable = reuseKernels && !isa<FusedQuantizeOp>(op);
      if (const KernelReuse::Entry *e = reusable ? reuse.find(op) : nullptr) {
        for (NamedAttribute a : e->annotation)
          op->setAttr(a.getName(), a.getValue());
        names += e->names;
        continue;
      }
      // The generators size grids, group tables and padding from static
      // shapes, the number of token groups (offsets) included: `lower`
      // checks them.
      DictionaryAttr before = op->getAttrDictionary();
      unsigned namesBefore = names;
      if (failed(lower(gen, op)))
        return signalPassFailure();
      if (reusable)
        reuse.record(op, before, names - namesBefore);
    }
  }
};

} // namespace
