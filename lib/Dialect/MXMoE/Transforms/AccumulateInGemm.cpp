//===- AccumulateInGemm.cpp - mxmoe-accumulate-in-gemm --------------------===//
//
// Folds a shard loop's gradient sums `addf(%acc, [extf] call#j)` into the
// callee's weight-gradient grouped GEMM (`accumulate %acc`); see
// Passes.td for the conditions and mxmoe.grouped_matmul for the semantics
// (BLAS GEMM's beta = 1 form, C + A * B).
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::mxmoe {
#define GEN_PASS_DEF_MXMOEACCUMULATEINGEMM
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h.inc"
} // namespace mlir::mxmoe

using namespace mlir;
using namespace mlir::mxmoe;

namespace {

/// One sum to fold: loop-carried `acc` += result `index` of `call`.
struct Sum {
  Value acc;
  unsigned index;
  arith::AddFOp add;
  arith::ExtFOp ext; ///< the widening of an f32 accumulator, or none
};

/// The weight-gradient GEMM that returns result `index` of `callee`, when
/// only the return uses it; else none.
GroupedMatmulOp returnedGemm(func::FuncOp callee, unsigned index) {
  if (!callee || callee.isExternal() || !callee.getBody().hasOneBlock())
    return {};
  Value v = callee.getBody().front().getTerminator()->getOperand(index);
  auto mm = v.getDefiningOp<GroupedMatmulOp>();
  if (!mm || !mm.isKGrouped() || mm.getAccumulator() || !v.hasOneUse())
    return {};
  return mm;
}

/// The sum that yield operand `i` of `loop` is, if it can be folded.
std::optional<std::pair<func::CallOp, Sum>> matchSum(scf::ForOp loop,
                                                     unsigned i) {
  Value acc = loop.getRegionIterArgs()[i];
  Value y = loop.getBody()->getTerminator()->getOperand(i);
  auto add = y.getDefiningOp<arith::AddFOp>();
  if (!add || !add->hasOneUse() || !acc.hasOneUse() ||
      add->getParentOp() != loop)
    return std::nullopt;
  Value g = add.getLhs() == acc ? add.getRhs() : add.getLhs();
  if (g == acc || (add.getLhs() != acc && add.getRhs() != acc))
    return std::nullopt;
  auto ext = g.getDefiningOp<arith::ExtFOp>();
  if (ext && ext->hasOneUse())
    g = ext.getIn();
  else
    ext = {};
  auto call = g.getDefiningOp<func::CallOp>();
  if (!call || !g.hasOneUse() || call->getParentOp() != loop)
    return std::nullopt;
  unsigned index = cast<OpResult>(g).getResultNumber();
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  GroupedMatmulOp mm = returnedGemm(callee, index);
  // (The accumulator is the new GEMM's result: bf16 or f32, its shape.)
  auto accTy = dyn_cast<RankedTensorType>(acc.getType());
  if (!mm || !accTy ||
      !isa<BFloat16Type, Float32Type>(accTy.getElementType()) ||
      accTy.getShape() != mm.getResult().getType().getShape())
    return std::nullopt;
  return std::make_pair(call, Sum{acc, index, add, ext});
}

/// A private clone `<callee>.accumulate` of `callee` next to it (the
/// callee keeps its signature and launch program; the clone is reached
/// through the loop's call only).
func::FuncOp cloneCallee(func::FuncOp callee, SymbolTableCollection &tables) {
  auto module = callee->getParentOfType<ModuleOp>();
  OpBuilder b(callee);
  b.setInsertionPointAfter(callee);
  auto clone = cast<func::FuncOp>(b.clone(*callee));
  clone.setSymName((callee.getSymName() + ".accumulate").str());
  clone.setPrivate();
  tables.getSymbolTable(module).insert(clone);
  return clone;
}

/// Makes `fn` take one accumulator per sum (appended) and its GEMMs
/// accumulate into them.
LogicalResult addAccumulators(func::FuncOp fn, ArrayRef<Sum> sums) {
  Block &body = fn.getBody().front();
  Operation *ret = body.getTerminator();
  for (const Sum &s : sums) {
    auto mm = ret->getOperand(s.index).getDefiningOp<GroupedMatmulOp>();
    // (insertArgument keeps the argument attributes in step.)
    unsigned n = fn.getNumArguments();
    if (failed(fn.insertArgument(n, s.acc.getType(), {}, mm.getLoc())))
      return failure();
    BlockArgument acc = body.getArgument(n);
    OpBuilder b(mm);
    auto next = GroupedMatmulOp::create(
        b, mm.getLoc(), s.acc.getType(), mm.getLhs(), mm.getLhsScales(),
        mm.getRhs(), mm.getRhsScales(), mm.getOffsets(), acc);
    next->setDiscardableAttrs(mm->getDiscardableAttrDictionary());
    mm.getResult().replaceAllUsesWith(next.getResult());
    mm.erase();
  }
  fn.setFunctionType(FunctionType::get(fn.getContext(), body.getArgumentTypes(),
                                       ret->getOperandTypes()));
  return success();
}

/// Replaces `call` by a call of `fn` that passes the sums' accumulators;
/// the loop yields the accumulated results.
void rewriteCall(func::CallOp call, func::FuncOp fn,
                 MutableArrayRef<Sum> sums) {
  SmallVector<Value> operands(call.getOperands());
  for (const Sum &s : sums)
    operands.push_back(s.acc);
  OpBuilder b(call);
  auto next = func::CallOp::create(b, call.getLoc(), fn, operands);
  next->setDiscardableAttrs(call->getDiscardableAttrDictionary());
  for (Sum &s : sums) {
    s.add.getResult().replaceAllUsesWith(next.getResult(s.index));
    s.add.erase();
    if (s.ext)
      s.ext.erase();
  }
  call.replaceAllUsesWith(next.getResults());
  call.erase();
}

struct AccumulateInGemm
    : public mlir::mxmoe::impl::MXMoEAccumulateInGemmBase<AccumulateInGemm> {
  void runOnOperation() override {
    SymbolTableCollection tables;
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      llvm::MapVector<Operation *, SmallVector<Sum>> byCall;
      for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i)
        if (auto m = matchSum(loop, i))
          byCall[m->first].push_back(m->second);
      for (auto &[op, sums] : byCall) {
        auto call = cast<func::CallOp>(op);
        auto callee = tables.lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr());
        func::FuncOp fn = cloneCallee(callee, tables);
        if (failed(addAccumulators(fn, sums))) {
          fn.emitOpError("could not add the accumulator arguments");
          return signalPassFailure();
        }
        rewriteCall(call, fn, sums);
      }
    }
  }
};

} // namespace
