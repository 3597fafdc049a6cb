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

namespace mlir::mxmoe {
#define GEN_PASS_DEF_MXMOEFUSEQUANTIZEPRODUCERS
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h.inc"
} // namespace mlir::mxmoe

using namespace mlir;
using namespace mlir::mxmoe;

namespace {

/// Why `g` is not an elementwise producer the fused op can hold ("" if it
/// is): rank 2, parallel, identity maps, a tensor.empty init, inputs that
/// are values from outside or column slices of them.
std::string whyNotProducer(linalg::GenericOp g) {
  if (g.getNumLoops() != 2 || g.getNumParallelLoops() != 2 ||
      g.getNumDpsInits() != 1 || g->getNumResults() != 1)
    return "not a rank-2 elementwise linalg.generic with one result";
  if (!llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return "its indexing maps are not all the identity";
  if (!g.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
    return "its init is not a tensor.empty";
  for (Operation &op : g.getRegion().front().without_terminator()) {
    StringRef ns = op.getDialect() ? op.getDialect()->getNamespace() : "";
    if ((ns != "arith" && ns != "math") || op.getNumRegions() != 0)
      return ("its body has '" + op.getName().getStringRef() +
              "' (only arith and math ops are fused)")
          .str();
  }
  bool captures = false;
  g.getRegion().walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (!g->isAncestor(v.getParentRegion()->getParentOp()) &&
          !v.getDefiningOp<arith::ConstantOp>())
        captures = true;
  });
  if (captures)
    return "its body uses a value from outside other than a constant";
  for (Value in : g.getDpsInputs())
    if (auto slice = in.getDefiningOp<tensor::ExtractSliceOp>()) {
      ArrayRef<int64_t> off = slice.getStaticOffsets(),
                        strides = slice.getStaticStrides();
      if (slice.getSourceType().getRank() != 2 || off[0] != 0 ||
          ShapedType::isDynamic(off[1]) || strides[0] != 1 || strides[1] != 1 ||
          slice.getStaticSizes()[0] != slice.getSourceType().getDimSize(0))
        return "an input is a slice other than all rows from a static "
               "column";
    }
  return "";
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
  for (Value in : g.getDpsInputs()) {
    auto slice = in.getDefiningOp<tensor::ExtractSliceOp>();
    operandOf(slice ? slice.getSource() : in);
  }
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
  SmallVector<Operation *> dead{g};
  for (Value in : g.getDpsInputs())
    if (Operation *def = in.getDefiningOp())
      dead.push_back(def);
  dead.push_back(g.getDpsInits()[0].getDefiningOp());
  g.erase();
  for (Operation *d : llvm::drop_begin(dead))
    if (d->use_empty())
      d->erase();
}

struct FuseQuantizeProducersPass
    : ::mlir::mxmoe::impl::MXMoEFuseQuantizeProducersBase<
          FuseQuantizeProducersPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> producers;
    getOperation().walk([&](linalg::GenericOp g) {
      if (!g->getParentOfType<FusedQuantizeOp>() &&
          llvm::any_of(g->getUsers(), llvm::IsaPred<QuantizeOp>))
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
      if (llvm::any_of(qs, [&](QuantizeOp q) {
            return q->getBlock() != g->getBlock();
          })) {
        g.emitRemark("mxmoe-fuse-quantize-producers: not fused: a "
                     "quantization is in another block");
        continue;
      }
      fuse(g, qs);
    }
  }
};

} // namespace
