//===- MXMoERoutingOps.cpp - verifiers of the routing ops -----------------===//
//
// mxmoe.gather_rows, invert_permutation, combine_rows and
// combine_scores_grad (MXMoEOps.td): the shapes that tie routed rows
// ([M, ...], M = T * top_k) to token rows ([T, ...]). Index values are
// checked by the kernels at run time (status 3); the verifiers check what
// the types say. test/Dialect/MXMoE/routing-invalid.mlir has one case per
// rule.
//
//===----------------------------------------------------------------------===//

#include "MXMoEVerifiers.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::verifiers;

namespace {

/// `t` has rank `rank`, else an error naming `what` and `form`.
LogicalResult checkRank(Operation *op, StringRef what, RankedTensorType t,
                        int64_t rank, StringRef form) {
  if (t.getRank() == rank)
    return success();
  return op->emitOpError() << what << " must be " << form << ", got rank "
                           << t.getRank();
}

/// Dimension `got` of `what` must equal `want` (either may be dynamic).
LogicalResult checkDim(Operation *op, StringRef what, int64_t got, int64_t want,
                       StringRef meaning) {
  if (dimsCompatible(got, want))
    return success();
  return op->emitOpError() << what << " must have " << meaning << " = " << want
                           << ", got " << got;
}

LogicalResult checkTopK(Operation *op, int64_t topK) {
  if (topK >= 1)
    return success();
  return op->emitOpError() << "top_k must be >= 1, got " << topK;
}

/// M = T * top_k where both are static (every token keeps its top_k
/// routed rows).
LogicalResult checkRoutedRows(Operation *op, int64_t m, int64_t t,
                              int64_t topK) {
  if (ShapedType::isDynamic(m) || ShapedType::isDynamic(t) || m == t * topK)
    return success();
  return op->emitOpError() << "routed rows M = " << m
                           << " must be tokens x top_k = " << t << " x " << topK
                           << " = " << t * topK
                           << " (no routing choice is dropped)";
}

/// `scores` is [T, top_k].
LogicalResult checkScores(Operation *op, Value scores, int64_t t,
                          int64_t topK) {
  if (!scores)
    return success();
  auto s = cast<RankedTensorType>(scores.getType());
  if (failed(checkRank(op, "scores", s, 2, "[T, top_k]")))
    return failure();
  if (failed(
          checkDim(op, "scores", s.getDimSize(0), t, "dim 0 = the tokens T")) ||
      failed(checkDim(op, "scores", s.getDimSize(1), topK, "dim 1 = top_k")))
    return failure();
  return success();
}

/// `indices` (and `inverse`) are [M] for M routed rows.
LogicalResult checkIndices(Operation *op, StringRef what, Value v, int64_t m) {
  auto t = cast<RankedTensorType>(v.getType());
  if (failed(checkRank(op, what, t, 1, "[M] (one per routed row)")))
    return failure();
  return checkDim(op, what, t.getDimSize(0), m, "dim 0 = the routed rows M");
}

} // namespace

LogicalResult GatherRowsOp::verify() {
  RankedTensorType src = getSource().getType(), res = getResult().getType();
  int64_t topK = getTopK();
  if (failed(checkTopK(*this, topK)) ||
      failed(checkRank(*this, "source", src, 2, "[T, H]")) ||
      failed(checkRank(*this, "result", res, 2, "[M, H]")))
    return failure();
  if (res.getElementType() != src.getElementType())
    return emitOpError() << "result element type must be the source's ("
                         << src.getElementType() << "), got "
                         << res.getElementType();
  int64_t m = res.getDimSize(0), t = src.getDimSize(0);
  if (failed(checkIndices(*this, "indices", getIndices(), m)) ||
      failed(checkDim(*this, "result", res.getDimSize(1), src.getDimSize(1),
                      "dim 1 = the source's row length H")) ||
      failed(checkScores(*this, getScores(), t, topK)))
    return failure();
  if (!ShapedType::isDynamic(m) && !ShapedType::isDynamic(t) && m > t * topK)
    return emitOpError() << "routed rows M = " << m
                         << " exceed tokens x top_k = " << t * topK;
  return success();
}

LogicalResult InvertPermutationOp::verify() {
  if (failed(checkIndices(*this, "indices", getIndices(),
                          getIndices().getType().getDimSize(0))))
    return failure();
  return checkIndices(*this, "result", getResult(),
                      getIndices().getType().getDimSize(0));
}

LogicalResult CombineRowsOp::verify() {
  RankedTensorType rows = getRows().getType(), res = getResult().getType();
  int64_t topK = getTopK();
  if (failed(checkTopK(*this, topK)) ||
      failed(checkRank(*this, "rows", rows, 2, "[M, H]")) ||
      failed(checkRank(*this, "result", res, 2, "[T, H]")))
    return failure();
  if (res.getElementType() != rows.getElementType())
    return emitOpError() << "result element type must be the rows' ("
                         << rows.getElementType() << "), got "
                         << res.getElementType();
  int64_t m = rows.getDimSize(0), t = res.getDimSize(0);
  if (failed(checkIndices(*this, "indices", getIndices(), m)) ||
      failed(checkIndices(*this, "inverse", getInverse(), m)) ||
      failed(checkDim(*this, "result", res.getDimSize(1), rows.getDimSize(1),
                      "dim 1 = the rows' length H")) ||
      failed(checkScores(*this, getScores(), t, topK)))
    return failure();
  return checkRoutedRows(*this, m, t, topK);
}

LogicalResult CombineScoresGradOp::verify() {
  RankedTensorType grad = getGrad().getType(), rows = getRows().getType(),
                   res = getResult().getType();
  int64_t topK = getTopK();
  if (failed(checkTopK(*this, topK)) ||
      failed(checkRank(*this, "grad", grad, 2, "[T, H]")) ||
      failed(checkRank(*this, "rows", rows, 2, "[M, H]")) ||
      failed(checkRank(*this, "result", res, 2, "[T, top_k]")))
    return failure();
  int64_t m = rows.getDimSize(0), t = grad.getDimSize(0);
  if (failed(checkIndices(*this, "indices", getIndices(), m)) ||
      failed(checkIndices(*this, "inverse", getInverse(), m)) ||
      failed(checkDim(*this, "rows", rows.getDimSize(1), grad.getDimSize(1),
                      "dim 1 = grad's row length H")) ||
      failed(checkDim(*this, "result", res.getDimSize(0), t,
                      "dim 0 = the tokens T")) ||
      failed(
          checkDim(*this, "result", res.getDimSize(1), topK, "dim 1 = top_k")))
    return failure();
  return checkRoutedRows(*this, m, t, topK);
}
