//===- FuseQuantizeProducers.cpp - mxmoe-fuse-quantize-producers ----------===//
//
// Elementwise producer + its quantizations -> mxmoe.fused_quantize (the op's
// description in MXMoEOps.td says what is fused and what it means).
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::mxmoe {
#define GEN_PASS_DEF_MXMOEFUSEQUANTIZEPRODUCERS
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h.inc"
} // namespace mlir::mxmoe

using namespace mlir;
using namespace mlir::mxmoe;

namespace {

/// Why `g` cannot be moved into a fused op ("" when it can): the op's
/// producer rules (FusedQuantizeOp::whyNotProducer), and no value from
/// outside the body but constants (the fused op is isolated).
std::string whyNotProducer(linalg::GenericOp g) {
  FusedQuantizeOp::ProducerError e = FusedQuantizeOp::whyNotProducer(g);
  if (!e.why.empty())
    return e.at == g.getOperation()
               ? e.why
               : ("'" + e.at->getName().getStringRef() + "' " + e.why).str();
  bool captures = false;
  g.getRegion().walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (!g->isAncestor(v.getParentRegion()->getParentOp()) &&
          !v.getDefiningOp<arith::ConstantOp>())
        captures = true;
  });
  return captures ? "its body uses a value from outside other than a constant"
                  : "";
}

/// Builds the fused op of `g` and `qs` before the first quantization and
/// replaces their results.
void fuse(linalg::GenericOp g, ArrayRef<QuantizeOp> qs) {
  // Operands: the producer's sources (slices read their source), then
  // the quantizations' offsets; each value once.
  SmallVector<Value> operands;
  auto operandOf = [&](Value v) {
    if (!llvm::is_contained(operands, v))
      operands.push_back(v);
  };
  for (Value in : g.getDpsInputs())
    operandOf(FusedQuantizeOp::getColumnSlice(in).first);
  for (QuantizeOp q : qs)
    if (Value o = q.getOffsets())
      operandOf(o);
  SmallVector<Type> types;
  for (QuantizeOp q : qs)
    types.append({q.getData().getType(), q.getScales().getType()});
  OpBuilder b(qs.front());
  auto op = FusedQuantizeOp::create(b, g.getLoc(), types, operands);
  Block *body = b.createBlock(&op.getBody());
  IRMapping map;
  for (Value v : operands)
    map.map(v, body->addArgument(v.getType(), v.getLoc()));
  for (Value in : g.getDpsInputs())
    if (auto slice = in.getDefiningOp<tensor::ExtractSliceOp>())
      b.clone(*slice, map);
  // Constants the body captures (linalg-fuse-elementwise-ops leaves a
  // splat operand as a scalar constant outside): the op is isolated.
  g.getRegion().walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (auto c = v.getDefiningOp<arith::ConstantOp>();
          c && !g->isAncestor(c) && !map.contains(v))
        b.clone(*c, map);
  });
  b.clone(*g.getDpsInits()[0].getDefiningOp(), map);
  b.clone(*g, map);
  SmallVector<Value> yielded;
  for (QuantizeOp q : qs) {
    Operation *c = b.clone(*q, map);
    yielded.append(c->result_begin(), c->result_end());
  }
  YieldOp::create(b, g.getLoc(), yielded);
  for (auto [i, qi] : llvm::enumerate(qs)) {
    QuantizeOp q = qi;
    q.getData().replaceAllUsesWith(op.getResult(2 * i));
    q.getScales().replaceAllUsesWith(op.getResult(2 * i + 1));
    q.erase();
  }
  // The slices and the init the producer alone used (each once: two
  // inputs may be one slice).
  llvm::SetVector<Operation *> dead;
  for (Value in : g.getDpsInputs())
    if (Operation *def = in.getDefiningOp())
      dead.insert(def);
  dead.insert(g.getDpsInits()[0].getDefiningOp());
  g.erase();
  for (Operation *d : dead)
    if (d->use_empty())
      d->erase();
}

struct FuseQuantizeProducersPass
    : ::mlir::mxmoe::impl::MXMoEFuseQuantizeProducersBase<
          FuseQuantizeProducersPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> producers;
    getOperation().walk([&](linalg::GenericOp g) {
      // Candidates: generics whose result some quantization quantizes
      // (not merely takes as its offsets).
      auto quantizes = [&](Operation *user) {
        auto q = dyn_cast<QuantizeOp>(user);
        return q && g->getNumResults() == 1 && q.getInput() == g->getResult(0);
      };
      if (!g->getParentOfType<FusedQuantizeOp>() &&
          llvm::any_of(g->getUsers(), quantizes))
        producers.push_back(g);
    });
    for (linalg::GenericOp g : producers) {
      std::string why = whyNotProducer(g);
      SmallVector<QuantizeOp> qs;
      for (Operation *user : g->getUsers()) {
        auto q = dyn_cast<QuantizeOp>(user);
        if (!q || q.getInput() != g->getResult(0)) {
          why = why.empty() ? "its result has users other than quantizations"
                            : why;
          break;
        }
        if (why.empty())
          why = FusedQuantizeOp::whyNotLowered(q, g);
        qs.push_back(q);
      }
      if (!why.empty()) {
        g.emitRemark("mxmoe-fuse-quantize-producers: not fused: ") << why;
        continue;
      }
      // Quantizations in block order: the fused op goes before the first.
      llvm::sort(
          qs, [](QuantizeOp a, QuantizeOp c) { return a->isBeforeInBlock(c); });
      // The fused op replaces the first quantization: every operand must
      // be defined before it.
      auto before = [&](Value v) {
        Operation *def = v.getDefiningOp();
        return !def || def->getBlock() != g->getBlock() ||
               def->isBeforeInBlock(qs.front());
      };
      if (llvm::any_of(qs, [&](QuantizeOp q) {
            return q->getBlock() != g->getBlock() ||
                   (q.getOffsets() && !before(q.getOffsets()));
          })) {
        g.emitRemark("mxmoe-fuse-quantize-producers: not fused: a "
                     "quantization is in another block or takes offsets "
                     "defined after the first quantization");
        continue;
      }
      fuse(g, qs);
    }
  }
};

} // namespace
