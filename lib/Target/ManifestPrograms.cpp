//===- ManifestPrograms.cpp - launch programs of a compiled module -------===//
//
// The manifest's "programs" (docs/mxmoe-compile.md): per host function
// whose work is all kernels, the steps a runtime replays. A straight-line
// function (an expanded <fqn>.forward / .input_grad / .weight_grad) is a
// list of kernel steps over its arguments, intermediate buffers and
// constants. A function with a static shard loop (a tiled MLP's forward
// or `<fqn>.backward`, mxmoe-tile-mlp) is a program with loop steps: the
// loop's body steps run once per shard, their row views of the token-axis
// tensors advancing by one shard's bytes per iteration ("offset_bytes",
// "iteration_bytes"); calls to straight-line functions are inlined;
// loop-carried tensors are written in place (a shard's rows of the output
// by the kernel that computes them, a gradient sum by its elementwise
// kernel). What cannot be replayed this way is listed with the reason.
//
//===----------------------------------------------------------------------===//

#include "ManifestLoopSteps.h"
#include "ManifestUtils.h"
#include "mxmoe/Target/Manifest.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::target::detail;

namespace {

using Where = llvm::DenseMap<Value, llvm::json::Object>;

/// The bindings of a kernel step (`mxmoe.kernel_args` of `op`), each
/// argument, buffer or constant as `where` places it; the first operand
/// or result with no place, if any, in `missing`.
llvm::json::Array stepBindings(Operation &op, Where &where, Value &missing) {
  llvm::json::Array bind;
  for (Attribute a : op.getAttrOfType<ArrayAttr>(
           MXMoEDialect::KernelArgsAttrHelper::getNameStr())) {
    // (The dialect verified every entry: a kernel_arg naming one of op's
    // operands or results.)
    auto arg = cast<KernelArgAttr>(a);
    KernelArgKind kind = arg.getKind();
    llvm::json::Object b;
    if (kind == KernelArgKind::status) {
      b["status"] = true;
    } else if (kind == KernelArgKind::value) {
      b["value"] = arg.getIndex();
    } else {
      unsigned i = arg.getIndex();
      Value v =
          kind == KernelArgKind::result ? op.getResult(i) : op.getOperand(i);
      auto it = where.find(v);
      if (it == where.end()) {
        missing = missing ? missing : v;
        continue;
      }
      b = llvm::json::Object(it->second);
      if (kind == KernelArgKind::tensor_map) {
        // The bound tensor viewed as [rows, K] (K its last extent, in
        // elements; fp4 rows hold two elements per byte).
        auto tt = cast<RankedTensorType>(v.getType());
        int64_t k = tt.getShape().back();
        int64_t bits = tt.getElementType().getIntOrFloatBitWidth();
        b["tensor_map"] = llvm::json::Object{
            {"dims", llvm::json::Array{k, tt.getNumElements() / k}},
            {"row_stride_bytes", k * bits / 8}};
      }
    }
    bind.push_back(std::move(b));
  }
  return bind;
}

bool kernelOrFree(Operation &op) {
  return op.hasAttr(MXMoEDialect::KernelArgsAttrHelper::getNameStr()) ||
         isComputeFree(op);
}

/// The kernel ops of `fn` below its top level, in one walk: whether a
/// top-level static shard loop holds a kernel launch, and the top-level op
/// holding the first kernel (or compute-free) op below the top level.
struct NestedKernels {
  bool inShardLoop = false;
  Operation *firstAncestor = nullptr;
};
NestedKernels nestedKernels(func::FuncOp fn) {
  NestedKernels r;
  Block &top = fn.getBody().front();
  fn.walk([&](Operation *op) {
    if (op->getParentRegion() == &fn.getBody() || !kernelOrFree(*op))
      return;
    Operation *ancestor = top.findAncestorOpInBlock(*op);
    r.firstAncestor = r.firstAncestor ? r.firstAncestor : ancestor;
    r.inShardLoop |=
        isa<scf::ForOp>(ancestor) &&
        ancestor->hasAttr(MXMoEDialect::ShardTokensAttrHelper::getNameStr()) &&
        op->hasAttr(MXMoEDialect::KernelArgsAttrHelper::getNameStr());
  });
  return r;
}

/// Whether a top-level call of `fn` runs a function whose static shard
/// loops hold kernels (a tiled block with save_routing is a call of its
/// @"<fqn>.forward"): the loop describer inlines it.
bool callsShardLoops(func::FuncOp fn) {
  for (auto call : fn.getBody().front().getOps<func::CallOp>()) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (callee && !callee.isExternal() && nestedKernels(callee).inShardLoop)
      return true;
  }
  return false;
}

/// Whether `fn` has a straight-line launch program: kernel ops, ops with
/// nothing to compute, reshapes (the same bytes under another shape), i32
/// constants (the offsets of a plain linear) and the return. `loops` is set
/// where a top-level static shard loop holds kernels (a tiled MoE block's:
/// the loop describer decides; a dense tiled MLP's loop, which only calls
/// programs, is the "tiled_mlps" entry's). Functions that mix kernels with
/// host work, and expanded functions with host work only, are listed in
/// `withoutProgram` with the reason.
bool hasProgram(func::FuncOp fn, llvm::json::Array &withoutProgram,
                bool &loops) {
  NestedKernels nested = nestedKernels(fn);
  loops = nested.inShardLoop || callsShardLoops(fn);
  if (loops)
    return false;
  auto replayable = [&](Operation &op) {
    if (isa<func::ReturnOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
            op) ||
        kernelOrFree(op))
      return true;
    if (auto c = dyn_cast<arith::ConstantOp>(op))
      if (auto d = dyn_cast<DenseIntElementsAttr>(c.getValue()))
        return d.getElementType().isInteger(32);
    return false;
  };
  Operation *blocker = nullptr;
  for (Operation &op : fn.getBody().front())
    if (!blocker && !replayable(op))
      blocker = &op;
  bool hasKernel = llvm::any_of(fn.getBody().front(), kernelOrFree);
  auto unlisted = [&](const std::string &why) {
    withoutProgram.push_back(
        llvm::json::Object{{"function", fn.getName()}, {"reason", why}});
    return false;
  };
  if (blocker && hasKernel) // its kernels exist, a runtime cannot replay it
    return unlisted("host work: '" + blocker->getName().getStringRef().str() +
                    "' is not a kernel launch (e.g. a linear's bias add)");
  // Kernels inside other control flow (a shard loop with run-time bounds).
  if (blocker && nested.firstAncestor)
    return unlisted("host control flow: its kernels run inside '" +
                    nested.firstAncestor->getName().getStringRef().str() +
                    "', which is not a static shard loop (launch programs "
                    "replay only those)");
  auto pass =
      fn->getAttrOfType<StringAttr>(MXMoEDialect::PassAttrHelper::getNameStr());
  if (blocker && pass && pass.getValue() != "backward")
    // An expanded function without MX kernels (a linear's bias_grad).
    return unlisted("host work only, no MX kernels ('" +
                    blocker->getName().getStringRef().str() + "')");
  return !blocker && hasKernel;
}

/// The byte count `key` of a binding (0 where it has none).
int64_t viewBytes(const llvm::json::Object &o, llvm::StringRef key) {
  std::optional<int64_t> v = o.getInteger(key);
  return v ? *v : 0;
}

/// a * iv + b for an index value built from the loop's induction variable
/// `iv`, constants, arith.addi and arith.muli (by a constant); none
/// otherwise.
std::optional<std::pair<int64_t, int64_t>> affineInIv(Value v, Value iv) {
  if (iv && v == iv)
    return std::make_pair<int64_t, int64_t>(1, 0);
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return std::make_pair<int64_t, int64_t>(0, int64_t(*c));
  Operation *def = v.getDefiningOp();
  if (!def || !isa<arith::AddIOp, arith::MulIOp>(def))
    return std::nullopt;
  auto l = affineInIv(def->getOperand(0), iv);
  auto r = affineInIv(def->getOperand(1), iv);
  if (!l || !r)
    return std::nullopt;
  if (isa<arith::AddIOp>(def))
    return std::make_pair(l->first + r->first, l->second + r->second);
  if (l->first != 0 && r->first != 0)
    return std::nullopt; // iv * iv
  return std::make_pair(l->first * r->second + r->first * l->second,
                        l->second * r->second);
}

/// The accumulator of an accumulating grouped GEMM, else none.
Value accumulatorOf(Operation &op) {
  auto mm = dyn_cast<GroupedMatmulOp>(op);
  return mm ? mm.getAccumulator() : Value();
}

/// True when result `index` of `call` is returned by an accumulating
/// grouped GEMM of the callee whose accumulator is the callee argument
/// that `call` passes `arg` in: the callee updates `arg` in place.
bool accumulatesInto(func::CallOp call, unsigned index, Value arg) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  if (!callee || callee.isExternal() || !callee.getBody().hasOneBlock())
    return false;
  Operation *ret = callee.getBody().front().getTerminator();
  auto mm = ret->getOperand(index).getDefiningOp<GroupedMatmulOp>();
  auto acc = mm ? dyn_cast_or_null<BlockArgument>(mm.getAccumulator())
                : BlockArgument();
  return acc && acc.getOwner() == &callee.getBody().front() &&
         call.getOperand(acc.getArgNumber()) == arg && acc.hasOneUse();
}

/// Builds one program: where every value of the function (and of the
/// functions it calls) lives, and the steps.
class ProgramDescriber {
public:
  /// The program of `fn`, or none with `reason` set.
  std::optional<llvm::json::Object> describe(func::FuncOp fn);
  std::string reason;

private:
  llvm::json::Array buffers, constants;
  /// Dead-step removal and hoisting of loop bodies (over `buffers`).
  LoopBodySteps loopSteps{buffers};
  Where where;
  /// Storage chosen for a value before its producer is reached (a shard's
  /// rows of a loop-carried output, an in-place sum), and the ones whose
  /// producer wrote it there.
  Where placed;
  llvm::DenseSet<Value> written;
  /// The inserts of a shard's rows that `placeCarried` placed, and the
  /// buffers carried by loops (each by one loop value only).
  llvm::DenseSet<Operation *> placedInserts;
  llvm::DenseMap<int64_t, Value> carried; ///< buffer -> its latest value
  /// The loop being described: its induction variable and first value.
  Value iv;
  int64_t ivFirst = 0;
  /// Per step of the loop body being described, in order (hoistInvariant).
  std::vector<StepIO> bodyIO;
  unsigned callDepth = 0;

  bool fail(Operation *op, const llvm::Twine &why);
  /// Records that `v` will live in `storage` (fails when placed twice).
  bool place(Operation *op, Value v, const llvm::json::Object &storage);
  bool describeBlock(Block &block, llvm::json::Array &steps);
  bool describeOp(Operation &op, llvm::json::Array &steps);
  bool describeConstant(arith::ConstantOp c);
  bool kernelStep(Operation &op, llvm::json::Array &steps);
  bool accumulateInPlace(Operation &op, Value acc);
  bool loop(scf::ForOp loop, llvm::json::Array &steps);
  bool placeCarried(scf::ForOp loop, ArrayRef<llvm::json::Object> storage);
  StepIO stepIO(Operation &op);
  bool inlineCall(func::CallOp call, llvm::json::Array &steps);
  bool rowView(Operation *op, Value source, ArrayRef<OpFoldResult> offsets,
               ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
               llvm::json::Object &view);
  /// A new buffer for `v` (zero-filled by every run when `zero`), or the
  /// storage placed for it.
  void result(Value v, bool zero);
};

bool ProgramDescriber::fail(Operation *op, const llvm::Twine &why) {
  if (reason.empty())
    reason = ("'" + op->getName().getStringRef() + "': " + why).str();
  return false;
}

bool ProgramDescriber::place(Operation *op, Value v,
                             const llvm::json::Object &storage) {
  if (!placed.try_emplace(v, llvm::json::Object(storage)).second)
    return fail(op, "one value written in place into two loop-carried "
                    "outputs");
  return true;
}

void ProgramDescriber::result(Value v, bool zero) {
  if (auto it = placed.find(v); it != placed.end()) {
    where[v] = llvm::json::Object(it->second);
    written.insert(v);
    return;
  }
  llvm::json::Object info = tensorInfo(v.getType());
  info["id"] = static_cast<int64_t>(buffers.size());
  if (zero)
    info["zero"] = true; // the runtime zero-fills it
  where[v] =
      llvm::json::Object{{"buffer", static_cast<int64_t>(buffers.size())}};
  buffers.push_back(std::move(info));
}

bool ProgramDescriber::describeBlock(Block &block, llvm::json::Array &steps) {
  for (Operation &op : block)
    if (!describeOp(op, steps))
      return false;
  return true;
}

bool ProgramDescriber::describeConstant(arith::ConstantOp c) {
  auto d = dyn_cast<DenseIntElementsAttr>(c.getValue());
  if (!d)
    return true; // an index or scalar constant: no storage
  llvm::json::Array values;
  for (const APInt &v : d.getValues<APInt>())
    values.push_back(v.getSExtValue());
  llvm::json::Object info = tensorInfo(c.getType());
  info["values"] = std::move(values);
  where[c.getResult()] =
      llvm::json::Object{{"constant", static_cast<int64_t>(constants.size())}};
  constants.push_back(std::move(info));
  return true;
}

bool ProgramDescriber::kernelStep(Operation &op, llvm::json::Array &steps) {
  if (isComputeFree(op) &&
      llvm::any_of(op.getResults(), [&](Value r) { return placed.count(r); }))
    return fail(&op, "a result with nothing to compute (zero tokens or an "
                     "empty contraction) cannot be written in place");
  if (Value acc = accumulatorOf(op)) {
    if (!accumulateInPlace(op, acc))
      return false;
  } else {
    for (Value r : op.getResults())
      result(r, op.hasAttr(MXMoEDialect::ZeroResultAttrHelper::getNameStr()));
  }
  if (isComputeFree(op))
    return true; // no step
  Value missing;
  llvm::json::Array bindings = stepBindings(op, where, missing);
  if (missing)
    return fail(&op, "binds a value that has no storage in the program");
  llvm::json::Object step{
      {"op", op.getName().getStringRef()},
      {"kernel", cast<SymbolRefAttr>(
                     op.getAttr(MXMoEDialect::KernelAttrHelper::getNameStr()))
                     .getLeafReference()
                     .getValue()},
      {"bindings", std::move(bindings)}};
  // The launch grid of a kernel with run-time sizes.
  if (auto grid = op.getAttrOfType<DenseI64ArrayAttr>(
          MXMoEDialect::GridAttrHelper::getNameStr()))
    step["grid"] = llvm::json::Array{grid[0], grid[1], grid[2]};
  steps.push_back(std::move(step));
  if (iv)
    bodyIO.push_back(stepIO(op));
  return true;
}

/// An accumulating grouped GEMM updates its accumulator's storage: the
/// storage a loop placed for its result (a loop-carried gradient sum), or
/// the fresh buffer of a kernel's result in the same block that nothing
/// else reads (not an argument, a view, a reshape's or a value from
/// outside a loop: those would need a copy).
bool ProgramDescriber::accumulateInPlace(Operation &op, Value acc) {
  Value r = op.getResult(0);
  auto it = where.find(acc);
  if (it == where.end())
    return fail(&op, "accumulates into a value that has no storage");
  Operation *def = acc.getDefiningOp();
  bool fresh = def && def->getBlock() == op.getBlock() &&
               def->hasAttr(MXMoEDialect::KernelAttrHelper::getNameStr()) &&
               !placed.count(acc) && it->second.get("buffer") &&
               !it->second.get("view_bytes");
  if (auto p = placed.find(r); p != placed.end()) {
    if (p->second != it->second)
      return fail(&op, "its result is placed elsewhere than its accumulator");
  } else if (!acc.hasOneUse() || !fresh) {
    return fail(&op, "accumulates in place into a value that is read "
                     "afterwards or is not a kernel's fresh result in its "
                     "block (the program would need a copy)");
  }
  where[r] = llvm::json::Object(it->second);
  if (placed.count(r))
    written.insert(r);
  return true;
}

StepIO ProgramDescriber::stepIO(Operation &op) {
  StepIO io;
  if (Value acc = accumulatorOf(op)) // read where the result is written
    io.reads.push_back(storageOf(where[acc]));
  for (Attribute a : op.getAttrOfType<ArrayAttr>(
           MXMoEDialect::KernelArgsAttrHelper::getNameStr())) {
    auto arg = cast<KernelArgAttr>(a);
    KernelArgKind kind = arg.getKind();
    if (kind == KernelArgKind::status || kind == KernelArgKind::value)
      continue;
    bool out = kind == KernelArgKind::result;
    const llvm::json::Object &b = where[out ? op.getResult(arg.getIndex())
                                            : op.getOperand(arg.getIndex())];
    io.perIteration |= b.get("iteration_bytes") != nullptr;
    (out ? io.writes : io.reads).push_back(storageOf(b));
  }
  return io;
}

bool ProgramDescriber::describeOp(Operation &op, llvm::json::Array &steps) {
  if (isa<func::ReturnOp, scf::YieldOp>(op))
    return true; // (describe, loop and inlineCall read them)
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op)) {
    auto it = where.find(op.getOperand(0));
    if (it == where.end())
      return fail(&op, "reshapes a value that has no storage");
    where[op.getResult(0)] = llvm::json::Object(it->second);
    return true;
  }
  if (auto c = dyn_cast<arith::ConstantOp>(op); c && !isComputeFree(op))
    return describeConstant(c);
  if (isa<arith::AddIOp, arith::MulIOp>(op) &&
      op.getResult(0).getType().isIndex())
    return true; // shard offsets: read by the row views (affineInIv)
  if (op.hasAttr(MXMoEDialect::KernelArgsAttrHelper::getNameStr()) ||
      isComputeFree(op))
    return kernelStep(op, steps);
  if (isa<tensor::EmptyOp>(op))
    return true; // a buffer once something needs its storage (`loop`)
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    if (!matchPattern(fill.value(), m_AnyZeroFloat()) &&
        !matchPattern(fill.value(), m_Zero()))
      return fail(&op, "fills with a value other than zero");
    if (!fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
      return fail(&op, "fills a tensor other than a new one");
    result(fill.getResult(0), true);
    return true;
  }
  if (auto s = dyn_cast<tensor::ExtractSliceOp>(op)) {
    llvm::json::Object view;
    if (!rowView(&op, s.getSource(), s.getMixedOffsets(), s.getStaticSizes(),
                 s.getStaticStrides(), view))
      return false;
    where[s.getResult()] = std::move(view);
    return true;
  }
  if (auto s = dyn_cast<tensor::InsertSliceOp>(op)) {
    // The rows were placed by `loop` and written by their producer.
    if (!placedInserts.count(&op))
      return fail(&op, "an insert other than a shard's rows of a "
                       "loop-carried output");
    if (!written.count(s.getSource()))
      return fail(&op, "its rows are not computed in place (only a kernel's "
                       "or a called program's result can be)");
    where[s.getResult()] = llvm::json::Object(where[s.getDest()]);
    return true;
  }
  if (auto l = dyn_cast<scf::ForOp>(op))
    return loop(l, steps);
  if (auto call = dyn_cast<func::CallOp>(op))
    return inlineCall(call, steps);
  if (auto lin = dyn_cast<LinearOp>(op);
      lin && lin.getPrecision() == Precision::bf16)
    return fail(&op, "a bf16 linear without a kernel (LinearBf16.cpp lowers "
                     "2-D ones with an even N and a bf16 bias or none): it "
                     "runs on the host");
  return fail(&op, "host work, not a kernel launch");
}

bool ProgramDescriber::rowView(Operation *op, Value source,
                               ArrayRef<OpFoldResult> offsets,
                               ArrayRef<int64_t> sizes,
                               ArrayRef<int64_t> strides,
                               llvm::json::Object &view) {
  auto it = where.find(source);
  if (it == where.end())
    return fail(op, "slices a value that has no storage");
  auto st = cast<RankedTensorType>(source.getType());
  if (sizes.size() != static_cast<size_t>(st.getRank()))
    return fail(op, "a rank-reducing slice");
  int64_t rowElems = 1;
  for (int64_t d = 1; d < st.getRank(); ++d) {
    std::optional<int64_t> off = getConstantIntValue(offsets[d]);
    if (!off || *off != 0 || sizes[d] != st.getDimSize(d))
      return fail(op, "not a range of whole rows (a column slice)");
    rowElems *= st.getDimSize(d);
  }
  if (llvm::any_of(strides, [](int64_t s) { return s != 1; }))
    return fail(op, "a strided slice");
  auto first = getConstantIntValue(offsets[0]);
  auto off = first ? std::make_optional(
                         std::make_pair<int64_t, int64_t>(0, int64_t(*first)))
                   : affineInIv(cast<Value>(offsets[0]), iv);
  if (!off)
    return fail(op, "a row offset that is not a * shard + b");
  int64_t bits = st.getElementType().getIntOrFloatBitWidth();
  if ((rowElems * bits) % 8 != 0)
    return fail(op, "rows that are not whole bytes");
  int64_t rowBytes = rowElems * bits / 8;
  int64_t offset = viewBytes(it->second, "offset_bytes") +
                   (off->first * ivFirst + off->second) * rowBytes;
  int64_t step =
      viewBytes(it->second, "iteration_bytes") + off->first * rowBytes;
  if (offset % 16 != 0 || step % 16 != 0)
    return fail(op, "a row view at a byte offset that is not a multiple of "
                    "16 (kernels take 16-byte aligned pointers)");
  view = llvm::json::Object(it->second);
  view["view_bytes"] = sizes[0] * rowBytes;
  if (offset)
    view["offset_bytes"] = offset;
  if (step)
    view["iteration_bytes"] = step;
  return true;
}

bool ProgramDescriber::loop(scf::ForOp forOp, llvm::json::Array &steps) {
  if (iv)
    return fail(forOp, "a loop inside a loop");
  std::optional<int64_t> lb = getConstantIntValue(forOp.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(forOp.getUpperBound());
  std::optional<int64_t> st = getConstantIntValue(forOp.getStep());
  if (!lb || !ub || !st || *st != 1)
    return fail(forOp, "a loop with run-time bounds or a step other than 1");
  SmallVector<llvm::json::Object> storage;
  for (Value init : forOp.getInitArgs()) {
    if (init.getDefiningOp<tensor::EmptyOp>() && !where.count(init))
      result(init, false); // the loop writes every row of it
    auto it = where.find(init);
    if (it == where.end() || !it->second.get("buffer") ||
        it->second.get("view_bytes"))
      return fail(forOp, "a loop-carried value that does not start as a "
                         "whole buffer of the program");
    // Written in place: nothing else may read the initial value, and no
    // other loop value may share its buffer.
    // (A buffer already carried continues only from its latest value: the
    // previous loop's result, as a `.tail` loop's.)
    int64_t buf = *it->second.getInteger("buffer");
    auto owner = carried.find(buf);
    if (!init.hasOneUse() || (owner != carried.end() && owner->second != init))
      return fail(forOp, "a loop-carried value whose initial value has "
                         "other uses (it is updated in place)");
    buffers[*it->second.getInteger("buffer")].getAsObject()->try_emplace(
        "loop_carried", true);
    storage.push_back(llvm::json::Object(it->second));
  }
  iv = forOp.getInductionVar();
  ivFirst = *lb;
  bodyIO.clear();
  size_t firstBodyBuffer = buffers.size();
  llvm::json::Array body;
  bool ok =
      placeCarried(forOp, storage) && describeBlock(*forOp.getBody(), body);
  for (Value y : forOp.getBody()->getTerminator()->getOperands())
    if (ok && placed.count(y) && !written.count(y))
      ok = fail(forOp, "a loop-carried value that is not written in place");
  iv = Value();
  if (!ok)
    return false;
  for (auto [r, s] : llvm::zip(forOp.getResults(), storage)) {
    where[r] = llvm::json::Object(s);
    carried[*s.getInteger("buffer")] = r;
  }
  if (*ub <= *lb)
    return true; // no shard
  loopSteps.dropDead(body, bodyIO, firstBodyBuffer);
  BufferRenames renamed;
  loopSteps.hoistInvariant(body, bodyIO, steps, renamed);
  for (auto &entry : where)
    if (std::optional<int64_t> b = entry.second.getInteger("buffer"))
      if (auto it = renamed.find(*b); it != renamed.end())
        entry.second["buffer"] = it->second;
  llvm::json::Object l{
      {"first", *lb}, {"count", *ub - *lb}, {"steps", std::move(body)}};
  if (auto t = forOp->getAttrOfType<IntegerAttr>(
          MXMoEDialect::ShardTokensAttrHelper::getNameStr()))
    l["shard_tokens"] = t.getInt();
  steps.push_back(llvm::json::Object{{"loop", std::move(l)}});
  return true;
}

bool ProgramDescriber::placeCarried(scf::ForOp forOp,
                                    ArrayRef<llvm::json::Object> storage) {
  auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
  for (auto [i, arg] : llvm::enumerate(forOp.getRegionIterArgs())) {
    where[arg] = llvm::json::Object(storage[i]);
    Value y = yield.getOperand(i);
    if (y == arg)
      continue;
    Operation *def = y.getDefiningOp();
    auto ins = dyn_cast_or_null<tensor::InsertSliceOp>(def);
    if (ins && ins.getDest() == arg && arg.hasOneUse()) {
      // This shard's rows of the output, written by their producer.
      llvm::json::Object view;
      if (!rowView(ins, arg, ins.getMixedOffsets(), ins.getStaticSizes(),
                   ins.getStaticStrides(), view))
        return false;
      if (!place(ins, ins.getSource(), view))
        return false;
      placedInserts.insert(ins);
      continue;
    }
    // (Only the elementwise kernels of Elementwise.cpp may run in place:
    // their pointers carry no noalias.)
    if (def && def->getParentOp() == forOp &&
        isa<arith::ArithDialect, math::MathDialect>(def->getDialect()) &&
        def->hasAttr(MXMoEDialect::KernelArgsAttrHelper::getNameStr()) &&
        llvm::is_contained(def->getOperands(), arg) && arg.hasOneUse() &&
        def->getNumResults() == 1) {
      if (!place(def, y, storage[i])) // a sum, in place
        return false;
      continue;
    }
    // A called function's grouped GEMM that accumulates into it.
    auto call = dyn_cast_or_null<func::CallOp>(def);
    if (call && call->getParentOp() == forOp && arg.hasOneUse() &&
        accumulatesInto(call, cast<OpResult>(y).getResultNumber(), arg)) {
      if (!place(call, y, storage[i]))
        return false;
      continue;
    }
    return fail(forOp, "loop-carried value #" + llvm::Twine(i) +
                           " is neither a shard's rows of the result, an "
                           "elementwise kernel's sum in place nor a grouped "
                           "GEMM's accumulation");
  }
  return true;
}

bool ProgramDescriber::inlineCall(func::CallOp call, llvm::json::Array &steps) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  if (!callee || callee.isExternal() || !callee.getBody().hasOneBlock())
    return fail(call, "calls a function without a body");
  if (++callDepth > 8)
    return fail(call, "calls nested more than 8 deep");
  Block &body = callee.getBody().front();
  for (auto [a, v] : llvm::zip(body.getArguments(), call.getOperands())) {
    auto it = where.find(v);
    if (it == where.end())
      return fail(call, "passes a value that has no storage");
    where[a] = llvm::json::Object(it->second);
  }
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [r, v] : llvm::zip(call.getResults(), ret.getOperands()))
    if (auto it = placed.find(r); it != placed.end()) {
      if (isa<BlockArgument>(v))
        return fail(call, "its result in place is one of its arguments");
      if (!place(call, v, it->second))
        return false;
    }
  if (!describeBlock(body, steps))
    return false;
  --callDepth;
  for (auto [r, v] : llvm::zip(call.getResults(), ret.getOperands())) {
    auto it = where.find(v);
    if (it == where.end())
      return fail(call, "returns a value that has no storage");
    where[r] = llvm::json::Object(it->second);
    if (placed.count(r) && written.count(v))
      written.insert(r);
    // (The callee may be inlined again, its results placed elsewhere.)
    placed.erase(v);
    written.erase(v);
  }
  return true;
}

std::optional<llvm::json::Object> ProgramDescriber::describe(func::FuncOp fn) {
  llvm::json::Array args, steps, returns;
  for (BlockArgument a : fn.getArguments()) {
    args.push_back(tensorInfo(a.getType()));
    where[a] =
        llvm::json::Object{{"arg", static_cast<int64_t>(a.getArgNumber())}};
  }
  Block &body = fn.getBody().front();
  if (!describeBlock(body, steps))
    return std::nullopt;
  for (Value v : body.getTerminator()->getOperands()) {
    auto it = where.find(v);
    if (it == where.end()) {
      fail(body.getTerminator(), "returns a value that has no storage");
      return std::nullopt;
    }
    llvm::json::Object r(it->second);
    if (r.get("view_bytes")) {
      fail(body.getTerminator(), "returns a view of another value");
      return std::nullopt;
    }
    llvm::json::Object info = tensorInfo(v.getType());
    r["shape"] = std::move(info["shape"]);
    r["dtype"] = std::move(info["dtype"]);
    returns.push_back(std::move(r));
  }
  return llvm::json::Object{
      {"function", fn.getName()},      {"args", std::move(args)},
      {"buffers", std::move(buffers)}, {"constants", std::move(constants)},
      {"steps", std::move(steps)},     {"returns", std::move(returns)}};
}

} // namespace

llvm::json::Array
mlir::mxmoe::target::describePrograms(ModuleOp module,
                                      llvm::json::Array &withoutProgram) {
  llvm::json::Array programs;
  module.walk([&](func::FuncOp fn) {
    bool loops = false;
    // (A private function that is called is reached through its callers'
    // programs only, e.g. mxmoe-accumulate-in-gemm's clones: no program of
    // its own.)
    bool calledPrivate = fn.isPrivate() && !SymbolTable::symbolKnownUseEmpty(
                                               fn, module.getOperation());
    if (fn.isExternal() || calledPrivate ||
        (!hasProgram(fn, withoutProgram, loops) && !loops))
      return;
    ProgramDescriber d;
    std::optional<llvm::json::Object> prog = d.describe(fn);
    if (!prog) {
      withoutProgram.push_back(llvm::json::Object{
          {"function", fn.getName()},
          {"reason", "host control flow: a launch program replays static "
                     "shard loops of kernels and calls, but " +
                         d.reason}});
      return;
    }
    addFunctionTags(fn, *prog);
    programs.push_back(std::move(*prog));
  });
  return programs;
}
