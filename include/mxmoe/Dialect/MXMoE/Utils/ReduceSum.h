//===- ReduceSum.h - a linalg.reduce that sums over rows --------*- C++ -*-===//
//
// The one shape of linalg.reduce that mxmoe differentiates
// (mxmoe-tile-mlp's gradient rule) and compiles to a kernel inside a shard
// loop (the row-sum kernel of LinearBf16.cpp): one input summed over dim 0.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_DIALECT_MXMOE_UTILS_REDUCESUM_H
#define MXMOE_DIALECT_MXMOE_UTILS_REDUCESUM_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::mxmoe {

/// True when `red` sums its one input over dim 0: `out = init + sum_t
/// in[t, ...]`, i.e. dimensions = [0] and a combiner that is one
/// arith.addf of its two block arguments (and its yield).
inline bool isSumOverDim0(linalg::ReduceOp red) {
  if (red.getNumDpsInputs() != 1 || red.getDimensions() != ArrayRef<int64_t>{0})
    return false;
  Block &body = red.getCombiner().front();
  auto add = dyn_cast<arith::AddFOp>(&body.front());
  return add && body.getOperations().size() == 2 &&
         llvm::is_contained(add->getOperands(), body.getArgument(0)) &&
         llvm::is_contained(add->getOperands(), body.getArgument(1));
}

} // namespace mlir::mxmoe

#endif // MXMOE_DIALECT_MXMOE_UTILS_REDUCESUM_H
