//===- FuseQuantizeProducers.cpp - mxmoe-fuse-quantize-producers ----------===//
//
// Elementwise or gather producer + its quantizations -> mxmoe.fused_quantize
// (the op's description in MXMoEOps.td says what is fused and what it
// means).
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

/// A producer the pass fuses: one generic, generics whose results a
/// tensor.concat along dim 1 joins (each read by it alone), or a
/// mxmoe.gather_rows (the routed rows of a token tensor); `value` is what
/// the quantizations read.
struct Producer {
  SmallVector<linalg::GenericOp> parts;
  tensor::ConcatOp concat;
  Value value;
  GatherRowsOp gather;
};

/// Builds the fused op of `p` and `qs` before the first quantization and
/// replaces their results.
void fuse(const Producer &p, ArrayRef<QuantizeOp> qs) {
  // Operands: the producer's sources (slices read their source), then
  // the quantizations' offsets; each value once.
  SmallVector<Value> operands;
  auto operandOf = [&](Value v) {
    if (!llvm::is_contained(operands, v))
      operands.push_back(v);
  };
  for (linalg::GenericOp g : p.parts)
    for (Value in : g.getDpsInputs())
      operandOf(FusedQuantizeOp::getColumnSlice(in).first);
  if (p.gather)
    for (Value v : p.gather->getOperands())
      operandOf(v);
  for (QuantizeOp q : qs)
    if (Value o = q.getOffsets())
      operandOf(o);
  SmallVector<Type> types;
  for (QuantizeOp q : qs)
    types.append({q.getData().getType(), q.getScales().getType()});
  OpBuilder b(qs.front());
  auto op = FusedQuantizeOp::create(b, p.value.getLoc(), types, operands);
  Block *body = b.createBlock(&op.getBody());
  IRMapping map;
  for (Value v : operands)
    map.map(v, body->addArgument(v.getType(), v.getLoc()));
  for (linalg::GenericOp g : p.parts)
    for (Value in : g.getDpsInputs())
      if (auto slice = in.getDefiningOp<tensor::ExtractSliceOp>();
          slice && !map.contains(slice.getResult()))
        b.clone(*slice, map);
  // Constants the bodies capture (linalg-fuse-elementwise-ops leaves a
  // splat operand as a scalar constant outside): the op is isolated.
  llvm::SetVector<Operation *> dead;
  for (linalg::GenericOp g : p.parts)
    g.getRegion().walk([&](Operation *op) {
      for (Value v : op->getOperands())
        if (auto c = v.getDefiningOp<arith::ConstantOp>();
            c && !g->isAncestor(c) && !map.contains(v)) {
          b.clone(*c, map);
          dead.insert(c); // erased below if the producer was its only user
        }
    });
  for (linalg::GenericOp g : p.parts) {
    b.clone(*g.getDpsInits()[0].getDefiningOp(), map);
    b.clone(*g, map);
  }
  if (p.concat)
    b.clone(*p.concat, map);
  if (p.gather)
    b.clone(*p.gather, map);
  SmallVector<Value> yielded;
  for (QuantizeOp q : qs) {
    Operation *c = b.clone(*q, map);
    yielded.append(c->result_begin(), c->result_end());
  }
  YieldOp::create(b, p.value.getLoc(), yielded);
  for (auto [i, qi] : llvm::enumerate(qs)) {
    QuantizeOp q = qi;
    q.getData().replaceAllUsesWith(op.getResult(2 * i));
    q.getScales().replaceAllUsesWith(op.getResult(2 * i + 1));
    q.erase();
  }
  // The slices and the inits the producer alone used (each once: two
  // inputs may be one slice).
  for (linalg::GenericOp g : p.parts) {
    for (Value in : g.getDpsInputs())
      if (Operation *def = in.getDefiningOp())
        dead.insert(def);
    dead.insert(g.getDpsInits()[0].getDefiningOp());
  }
  if (tensor::ConcatOp concat = p.concat)
    concat.erase();
  if (GatherRowsOp gather = p.gather)
    gather.erase();
  for (linalg::GenericOp g : p.parts)
    g.erase();
  for (Operation *d : dead)
    if (d->use_empty())
      d->erase();
}

/// The producers whose result some quantization quantizes (not merely
/// takes as its offsets): generics not joined by a concat, and concats
/// along dim 1 of generics each read by the concat alone.
SmallVector<Producer> findProducers(Operation *root) {
  auto quantized = [](Value v) {
    return llvm::any_of(v.getUsers(), [&](Operation *user) {
      auto q = dyn_cast<QuantizeOp>(user);
      return q && q.getInput() == v;
    });
  };
  SmallVector<Producer> producers;
  root->walk([&](Operation *op) {
    if (op->getParentOfType<FusedQuantizeOp>() || op->getNumResults() != 1 ||
        !quantized(op->getResult(0)))
      return;
    if (auto g = dyn_cast<linalg::GenericOp>(op)) {
      producers.push_back({{g}, {}, g->getResult(0), {}});
      return;
    }
    if (auto g = dyn_cast<GatherRowsOp>(op)) {
      producers.push_back({{}, {}, g.getResult(), g});
      return;
    }
    auto concat = dyn_cast<tensor::ConcatOp>(op);
    if (!concat || concat.getDim() != 1)
      return;
    Producer p{{}, concat, concat.getResult(), {}};
    for (Value in : concat.getInputs()) {
      auto g = in.getDefiningOp<linalg::GenericOp>();
      if (!g || !in.hasOneUse() || g->getNumResults() != 1)
        return;
      p.parts.push_back(g);
    }
    producers.push_back(p);
  });
  return producers;
}

/// Why `p` with the quantizations `qs` of its result is not fused ("" when
/// it is); fills `qs` in block order.
std::string whyNotFused(const Producer &p, SmallVectorImpl<QuantizeOp> &qs) {
  std::string why;
  for (linalg::GenericOp g : p.parts)
    if (why.empty())
      why = whyNotProducer(g);
  for (Operation *user : p.value.getUsers()) {
    auto q = dyn_cast<QuantizeOp>(user);
    if (!q || q.getInput() != p.value)
      return why.empty() ? "its result has users other than quantizations"
                         : why;
    if (why.empty())
      why = p.gather ? FusedQuantizeOp::whyNotLowered(q, p.gather)
                     : FusedQuantizeOp::whyNotLowered(q, p.parts);
    qs.push_back(q);
  }
  if (!why.empty())
    return why;
  // Quantizations in block order: the fused op goes before the first.
  llvm::sort(qs,
             [](QuantizeOp a, QuantizeOp c) { return a->isBeforeInBlock(c); });
  // The fused op replaces the first quantization: every operand must be
  // defined before it.
  Operation *def = p.value.getDefiningOp();
  auto before = [&](Value v) {
    Operation *d = v.getDefiningOp();
    return !d || d->getBlock() != def->getBlock() ||
           d->isBeforeInBlock(qs.front());
  };
  if (llvm::any_of(qs, [&](QuantizeOp q) {
        return q->getBlock() != def->getBlock() ||
               (q.getOffsets() && !before(q.getOffsets()));
      }))
    return "a quantization is in another block or takes offsets defined "
           "after the first quantization";
  return "";
}

struct FuseQuantizeProducersPass
    : ::mlir::mxmoe::impl::MXMoEFuseQuantizeProducersBase<
          FuseQuantizeProducersPass> {
  void runOnOperation() override {
    for (const Producer &p : findProducers(getOperation())) {
      SmallVector<QuantizeOp> qs;
      std::string why = whyNotFused(p, qs);
      if (!why.empty()) {
        p.value.getDefiningOp()->emitRemark(
            "mxmoe-fuse-quantize-producers: not fused: ")
            << why;
        continue;
      }
      fuse(p, qs);
    }
  }
};

} // namespace
