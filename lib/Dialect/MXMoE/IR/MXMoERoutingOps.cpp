//===- MXMoERoutingOps.cpp - verifiers of the routing ops -----------------===//
//
// mxmoe.router_topk, sort_by_expert, gather_rows, invert_permutation,
// combine_rows and combine_scores_grad (MXMoEOps.td): the shapes that tie
// routed rows ([M, ...], M = T * top_k) to token rows ([T, ...]). Index values
// are checked by the kernels at run time (status 3); the verifiers check what
// the types say. test/Dialect/MXMoE/routing-invalid.mlir has one case per
// rule.
//
//===----------------------------------------------------------------------===//

#include "MXMoEVerifiers.h"

#include <cmath>

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

namespace {

/// router_topk's group-limited routing: G (num_groups) divides E, 1 <= g
/// (topk_groups) <= G, top_k <= g * E / G; both attributes or neither.
LogicalResult checkGroups(RouterTopKOp op, int64_t e, int64_t topK) {
  std::optional<int64_t> groups = op.getNumGroups();
  std::optional<int64_t> kept = op.getTopkGroups();
  if (!groups && !kept)
    return success();
  if (!groups || !kept)
    return op.emitOpError("num_groups and topk_groups come together "
                          "(group-limited routing)");
  if (*groups < 1 || (!ShapedType::isDynamic(e) && e % *groups != 0))
    return op.emitOpError() << "num_groups = " << *groups
                            << " must be >= 1 and divide the experts E = " << e;
  if (*kept < 1 || *kept > *groups)
    return op.emitOpError()
           << "topk_groups must be in [1, num_groups = " << *groups << "], got "
           << *kept;
  if (!ShapedType::isDynamic(e) && topK > *kept * (e / *groups))
    return op.emitOpError()
           << "top_k = " << topK << " exceeds the experts of the kept groups ("
           << *kept << " x " << e / *groups << ")";
  return success();
}

} // namespace

/// A [T, cols] operand or result of the router ops: rank 2, dim 0 the
/// tokens T, dim 1 `cols` (`colMeaning`, e.g. "dim 1 = top_k").
LogicalResult checkTokenRows(Operation *op, StringRef what,
                             RankedTensorType type, StringRef form, int64_t t,
                             int64_t cols, StringRef colMeaning) {
  if (failed(checkRank(op, what, type, 2, form)) ||
      failed(checkDim(op, what, type.getDimSize(0), t, "dim 0 = the tokens T")))
    return failure();
  return checkDim(op, what, type.getDimSize(1), cols, colMeaning);
}

/// top_k <= E (both static) and a finite, positive scaling factor: the
/// router op and its gradient.
LogicalResult checkTopKAndScaling(Operation *op, int64_t topK, int64_t e,
                                  double scaling) {
  if (!ShapedType::isDynamic(topK) && !ShapedType::isDynamic(e) && topK > e)
    return op->emitOpError()
           << "top_k = " << topK << " exceeds the experts E = " << e;
  if (!std::isfinite(scaling) || scaling <= 0)
    return op->emitOpError()
           << "scaling_factor must be finite and > 0, got " << scaling;
  return success();
}

LogicalResult RouterTopKOp::verify() {
  RankedTensorType logits = getLogits().getType();
  int64_t topK = getTopK();
  if (failed(checkTopK(*this, topK)) ||
      failed(checkRank(*this, "logits", logits, 2, "[T, E]")))
    return failure();
  int64_t t = logits.getDimSize(0), e = logits.getDimSize(1);
  if (Value bias = getBias()) {
    auto b = cast<RankedTensorType>(bias.getType());
    if (failed(checkRank(*this, "bias", b, 1, "[E]")) ||
        failed(checkDim(*this, "bias", b.getDimSize(0), e,
                        "dim 0 = the experts E")))
      return failure();
  }
  if (failed(checkTopKAndScaling(*this, topK, e,
                                 getScalingFactor().convertToDouble())) ||
      failed(checkGroups(*this, e, topK)))
    return failure();
  for (auto [what, v] : {std::pair<StringRef, Value>{"weights", getWeights()},
                         {"experts", getExperts()}})
    if (failed(checkTokenRows(*this, what, cast<RankedTensorType>(v.getType()),
                              "[T, top_k]", t, topK, "dim 1 = top_k")))
      return failure();
  if (Value scores = getScores())
    return checkTokenRows(*this, "scores",
                          cast<RankedTensorType>(scores.getType()), "[T, E]", t,
                          e, "dim 1 = the experts E");
  return success();
}

LogicalResult RouterTopKGradOp::verify() {
  RankedTensorType logits = getLogits().getType();
  if (failed(checkRank(*this, "logits", logits, 2, "[T, E]")))
    return failure();
  int64_t t = logits.getDimSize(0), e = logits.getDimSize(1);
  auto experts = getExperts().getType();
  int64_t k = experts.getRank() == 2 ? experts.getDimSize(1) : 0;
  if (failed(checkTokenRows(*this, "experts", experts, "[T, top_k]", t, k,
                            "dim 1 = top_k")) ||
      (!ShapedType::isDynamic(k) && failed(checkTopK(*this, k))) ||
      failed(checkTopKAndScaling(*this, k, e,
                                 getScalingFactor().convertToDouble())) ||
      failed(checkTokenRows(*this, "weights_grad", getWeightsGrad().getType(),
                            "[T, top_k]", t, k, "dim 1 = top_k")) ||
      failed(checkTokenRows(*this, "result", getResult().getType(), "[T, E]", t,
                            e, "dim 1 = the experts E")))
    return failure();
  if (Value sg = getScoresGrad()) {
    // [T, E], or [E]: one gradient row for every token.
    auto type = cast<RankedTensorType>(sg.getType());
    if (type.getRank() == 1)
      return checkDim(*this, "scores_grad", type.getDimSize(0), e,
                      "dim 0 = the experts E (one row for every token)");
    return checkTokenRows(*this, "scores_grad", type, "[T, E] or [E]", t, e,
                          "dim 1 = the experts E");
  }
  return success();
}

LogicalResult SortByExpertOp::verify() {
  RankedTensorType experts = getExperts().getType();
  if (failed(checkRank(*this, "experts", experts, 2, "[T, top_k]")))
    return failure();
  if (getNumExperts() < 1)
    return emitOpError() << "num_experts must be >= 1, got " << getNumExperts();
  int64_t t = experts.getDimSize(0), k = experts.getDimSize(1);
  int64_t m = ShapedType::isDynamic(t) || ShapedType::isDynamic(k)
                  ? ShapedType::kDynamic
                  : t * k;
  auto offsets = getOffsets().getType();
  if (failed(checkIndices(*this, "indices", getIndices(), m)) ||
      failed(checkRank(*this, "offsets", offsets, 1, "[num_experts]")))
    return failure();
  return checkDim(*this, "offsets", offsets.getDimSize(0), getNumExperts(),
                  "dim 0 = num_experts");
}
