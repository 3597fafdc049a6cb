//===- MXMoEOps.cpp - mxmoe operations: verifiers and custom syntax -------===//
//
// Every verifier states the rule that failed in words a user of the op
// understands; test/Dialect/MXMoE/*-invalid-*.mlir has one case per rule.
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"
#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::mxmoe;
using ::mxmoe::kBlockedCols;
using ::mxmoe::kBlockedRows;
using ::mxmoe::kMXBlockSize;
using ::mxmoe::roundUp;

#define GET_OP_CLASSES
#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

namespace {

/// Prints a shape as "[8192, 160]" with "?" for dynamic dims.
std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return s;
}

bool dimsCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

bool shapesCompatible(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip(a, b))
    if (!dimsCompatible(x, y))
      return false;
  return true;
}

/// `d / 32` keeping dynamic dims dynamic.
int64_t divBlock(int64_t d) {
  return ShapedType::isDynamic(d) ? d : d / kMXBlockSize;
}

/// How the groups of a grouped scale tensor run.
enum class ScaleGroups {
  None, ///< plain 2-D or per-expert 3-D
  M,    ///< groups of rows (each padded to 128 rows)
  K,    ///< groups of scale columns (per-K-group buffers)
};

LogicalResult verifyScaleElementType(Operation *op, RankedTensorType type,
                                     StringRef what) {
  if (!isa<Float8E8M0FNUType>(type.getElementType()))
    return op->emitOpError()
           << what << " element type must be f8E8M0FNU (E8M0 scales), got "
           << type.getElementType();
  if (!isScaleLayoutEncoding(type))
    return op->emitOpError()
           << what << " encoding must be a #mxmoe.scale_layout, got "
           << type.getEncoding();
  return success();
}

/// Scales reach a consumer as their producer wrote them: a tensor.cast that
/// changes their encoding (row-major relabeled as #mxmoe.scale_layout<
/// blocked_128x4> where the shapes coincide, or the reverse) would make the
/// consumer read the same bytes in another layout. A layout change is an
/// mxmoe.swizzle_scales; such a cast (anywhere in a chain of casts) is an
/// error.
LogicalResult verifyScalesNotRelabeled(Operation *op, Value scales,
                                       StringRef what) {
  auto encodingOf = [](Type t) -> Attribute {
    auto ranked = dyn_cast<RankedTensorType>(t);
    return ranked ? ranked.getEncoding() : Attribute();
  };
  for (auto cast = scales.getDefiningOp<tensor::CastOp>(); cast;
       cast = cast.getSource().getDefiningOp<tensor::CastOp>()) {
    Attribute from = encodingOf(cast.getSource().getType());
    Attribute to = encodingOf(cast.getType());
    if (from == to)
      continue;
    InFlightDiagnostic d = op->emitOpError()
                           << what
                           << " come from a tensor.cast that changes their "
                              "layout encoding from "
                           << (from ? from
                                    : StringAttr::get(op->getContext(), "none"))
                           << " to "
                           << (to ? to
                                  : StringAttr::get(op->getContext(), "none"))
                           << ": the bytes would be read in another layout; "
                              "change a scale layout with mxmoe.swizzle_scales";
    d.attachNote(cast.getLoc()) << "the cast";
    return d;
  }
  return success();
}

/// Offsets that are constants (an arith.constant or any constant-like op)
/// must be what the kernels accept at run time: non-negative,
/// non-decreasing and, when `total` (the grouped extent) is static, at
/// most `total`; otherwise the program would only fail when it runs.
LogicalResult verifyConstantOffsets(Operation *op, Value offsets,
                                    std::optional<int64_t> total) {
  DenseIntElementsAttr values;
  if (!matchPattern(offsets, m_Constant(&values)))
    return success();
  int64_t prev = 0, i = 0;
  for (const APInt &v : values.getValues<APInt>()) {
    int64_t end = v.getSExtValue();
    if (end < prev)
      return op->emitOpError()
             << "constant offsets must be non-decreasing group end offsets "
                ">= 0: entry "
             << i << " is " << end << ", after " << prev;
    if (total && !ShapedType::isDynamic(*total) && end > *total)
      return op->emitOpError()
             << "constant offsets must not pass the " << *total
             << " grouped rows: entry " << i << " is " << end;
    prev = end;
    ++i;
  }
  return success();
}

LogicalResult verifyOffsetsType(Operation *op, Value offsets,
                                std::optional<int64_t> numGroups,
                                StringRef groupsMeaning,
                                std::optional<int64_t> total = std::nullopt) {
  auto type = cast<RankedTensorType>(offsets.getType());
  if (type.getRank() != 1 || !type.getElementType().isSignlessInteger(32))
    return op->emitOpError()
           << "offsets must be a 1-D tensor of i32 group end offsets, got "
           << type;
  if (type.getDimSize(0) == 0)
    return op->emitOpError()
           << "offsets must have at least one entry (one end offset per "
              "group), got "
           << type;
  if (numGroups && !dimsCompatible(type.getDimSize(0), *numGroups))
    return op->emitOpError()
           << "offsets has " << type.getDimSize(0) << " entries but there are "
           << *numGroups << " groups (" << groupsMeaning << ")";
  return verifyConstantOffsets(op, offsets, total);
}

/// Checks that `scales` is a valid blocked layout of row-major scales of
/// shape `logical` ([R, C] or [E, R, C]) for the given grouping.
LogicalResult verifyBlockedScaleShape(Operation *op, StringRef what,
                                      ArrayRef<int64_t> logical,
                                      RankedTensorType scales,
                                      ScaleGroups groups) {
  bool perK = isPerKGroupScales(scales);
  if (groups == ScaleGroups::K && !perK)
    return op->emitOpError()
           << what
           << " with groups along the contraction (token) axis must use "
              "#mxmoe.scale_layout<blocked_128x4, per_k_group>";
  if (groups != ScaleGroups::K && perK)
    return op->emitOpError()
           << what
           << " cannot use the per_k_group layout here: per_k_group is for "
              "token groups along the contraction axis (mxmoe.quantize with "
              "offsets and axis = 0, or the 2D x 2D grouped matmul)";
  ArrayRef<int64_t> shape = scales.getShape();
  if (shape.size() != logical.size())
    return op->emitOpError() << what << " must have rank " << logical.size()
                             << ", got rank " << shape.size();
  if (logical.size() == 3 && !dimsCompatible(shape[0], logical[0]))
    return op->emitOpError() << what << " must have " << logical[0]
                             << " experts in dim 0, got " << shape[0];
  int64_t r = logical[logical.size() - 2], c = logical.back();
  constexpr int64_t kMaxDim = int64_t{1} << 48;
  for (int64_t d : {r, c})
    if (!ShapedType::isDynamic(d) && d > kMaxDim)
      return op->emitOpError()
             << "logical (row-major) scale dimension " << d << " of the "
             << what << " is too large (at most 2^48)";
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  bool known = !ShapedType::isDynamic(r) && !ShapedType::isDynamic(rows);
  if (known) {
    int64_t minRows = roundUp(r, kBlockedRows);
    if (groups == ScaleGroups::M) {
      if (rows % kBlockedRows != 0)
        return op->emitOpError()
               << what << " in the M-grouped blocked_128x4 layout must have a "
               << "multiple of 128 rows (every group is padded to 128 rows), "
                  "got "
               << rows;
      if (rows < minRows)
        return op->emitOpError()
               << what << " in the M-grouped blocked_128x4 layout need at "
               << "least roundUp(M, 128) = " << minRows << " rows for M = " << r
               << ", got " << rows;
    } else if (rows != minRows) {
      return op->emitOpError()
             << what << " in the blocked_128x4 layout must have roundUp(R, "
             << "128) = " << minRows << " rows for R = " << r
             << " (rows padded to multiples of 128), got " << rows;
    }
  }
  known = !ShapedType::isDynamic(c) && !ShapedType::isDynamic(cols);
  if (known) {
    int64_t minCols = roundUp(c, kBlockedCols);
    if (groups == ScaleGroups::K) {
      if (cols % kBlockedCols != 0)
        return op->emitOpError()
               << what << " in the per_k_group blocked_128x4 layout must have "
               << "a multiple of 4 columns (every group is padded to 4 scale "
                  "columns), got "
               << cols;
      if (cols < minCols)
        return op->emitOpError()
               << what << " in the per_k_group blocked_128x4 layout need at "
               << "least roundUp(C, 4) = " << minCols
               << " columns for C = " << c << " scale columns, got " << cols;
    } else if (cols != minCols) {
      return op->emitOpError()
             << what << " in the blocked_128x4 layout must have roundUp(C, "
             << "4) = " << minCols << " columns for C = " << c
             << " scale columns (columns padded to multiples of 4), got "
             << cols;
    }
  }
  return success();
}

/// Compact scales (one byte per scale tile) are written by mxmoe.quantize
/// and read by mxmoe.dequantize only.
LogicalResult verifyNotCompact(Operation *op, RankedTensorType scales,
                               StringRef what) {
  if (!isCompactScales(scales))
    return success();
  return op->emitOpError()
         << what
         << " cannot be in the compact layout here (one byte per "
            "scale tile: only mxmoe.quantize writes it and "
            "mxmoe.dequantize reads it); use row-major or blocked_128x4 "
            "scales, whose 1x32 slots hold the tile's scale";
}

/// Checks scales of row-major logical shape `logical` in either layout.
LogicalResult verifyScaleShape(Operation *op, StringRef what,
                               ArrayRef<int64_t> logical,
                               RankedTensorType scales, ScaleGroups groups) {
  if (failed(verifyScaleElementType(op, scales, what)) ||
      failed(verifyNotCompact(op, scales, what)))
    return failure();
  if (isBlockedScales(scales))
    return verifyBlockedScaleShape(op, what, logical, scales, groups);
  if (!shapesCompatible(scales.getShape(), logical))
    return op->emitOpError()
           << what << " must have shape " << formatShape(logical)
           << " (one row-major E8M0 scale per 32 elements along the "
              "contraction axis), got "
           << formatShape(scales.getShape());
  return success();
}

LogicalResult verifyBlockSize(Operation *op, int64_t blockSize) {
  if (blockSize != kMXBlockSize)
    return op->emitOpError()
           << "block_size must be 32 (OCP MX v1.0 shares one E8M0 scale per "
              "32 elements), got "
           << blockSize;
  return success();
}

/// `ceil(d / t)` keeping dynamic dims dynamic.
int64_t divTile(int64_t d, int64_t t) {
  return ShapedType::isDynamic(d) ? d : ::mxmoe::ceilDiv(d, t);
}

/// A scale tile [r, c]: r >= 1 rows, c a multiple of 32 along the
/// contraction axis; more than one row only without token groups.
LogicalResult verifyScaleTile(Operation *op, std::array<int64_t, 2> tile,
                              Value offsets) {
  auto [r, c] = tile;
  if (r < 1 || c < kMXBlockSize || c % kMXBlockSize != 0)
    return op->emitOpError()
           << "scale_tile must be [r, c] with r >= 1 rows and c a multiple "
              "of 32 along the quantized axis (one scale per r x c tile of "
              "the data), got ["
           << r << ", " << c << "]";
  if (r > 1 && offsets)
    return op->emitOpError()
           << "scale_tile [" << r << ", " << c
           << "] has more than one row, which token groups (offsets) do "
              "not allow: multi-row tiles are for weights; quantize "
              "activations and gradients with [1, c] tiles";
  return success();
}

/// Compact scales: one byte per tile of the data [.., R, L]:
/// [.., ceil(R/r), ceil(L/c)]; along a jagged token axis of `tokens`
/// tokens (`jagged`), [R, Wp] with per-group windows, Wp >= ceil(T/c).
LogicalResult verifyCompactScaleShape(Operation *op, RankedTensorType data,
                                      RankedTensorType scales,
                                      std::array<int64_t, 2> tile, bool jagged,
                                      int64_t tokens) {
  if (failed(verifyScaleElementType(op, scales, "scales")))
    return failure();
  ArrayRef<int64_t> encTile = getScaleLayout(scales).getTile();
  if (encTile[0] != tile[0] || encTile[1] != tile[1])
    return op->emitOpError()
           << "compact scales have tile = [" << encTile
           << "] but the quantization's scale_tile is [" << tile[0] << ", "
           << tile[1] << "]; they must be equal";
  if (jagged != getScaleLayout(scales).getPerKGroup())
    return op->emitOpError()
           << (jagged ? "compact scales along a jagged token axis must be "
                        "per_k_group (windows restart at every group)"
                      : "per_k_group compact scales need token groups along "
                        "the quantized axis (offsets with axis = 0)");
  SmallVector<int64_t> expected(data.getShape());
  expected[expected.size() - 2] =
      divTile(expected[expected.size() - 2], tile[0]);
  int64_t cols = scales.getShape().empty() ? 0 : scales.getShape().back();
  expected.back() = jagged ? cols : divTile(expected.back(), tile[1]);
  if (!shapesCompatible(scales.getShape(), expected))
    return op->emitOpError()
           << "compact scales must have shape " << formatShape(expected)
           << " (one E8M0 byte per [" << tile[0] << ", " << tile[1]
           << "] tile of the data " << formatShape(data.getShape()) << "), got "
           << formatShape(scales.getShape());
  int64_t minCols = divTile(tokens, tile[1]);
  if (jagged && !ShapedType::isDynamic(cols) &&
      !ShapedType::isDynamic(minCols) && cols < minCols)
    return op->emitOpError()
           << "per_k_group compact scales need at least ceil(T / " << tile[1]
           << ") = " << minCols << " window columns for T = " << tokens
           << " tokens, got " << cols;
  // Every window holds at least one 32-token block of the padded axis.
  int64_t maxCols = divBlock(data.getShape().back());
  if (jagged && !ShapedType::isDynamic(cols) &&
      !ShapedType::isDynamic(maxCols) && cols > maxCols)
    return op->emitOpError()
           << "per_k_group compact scales have " << cols
           << " window columns, more than the " << maxCols
           << " 32-token blocks of the padded token axis (every window "
              "holds at least one)";
  return success();
}

/// The shared rules of quantize and dequantize: `hp` is the high-precision
/// side (quantize input, dequantize result), named `hpName`.
LogicalResult verifyMXQuantization(Operation *op, RankedTensorType hp,
                                   StringRef hpName, RankedTensorType data,
                                   RankedTensorType scales, int64_t axis,
                                   int64_t blockSize, Value offsets,
                                   std::array<int64_t, 2> tile,
                                   StringRef dataName = "data",
                                   StringRef scalesName = "scales") {
  if (failed(verifyBlockSize(op, blockSize)))
    return failure();
  if (failed(verifyScaleTile(op, tile, offsets)))
    return failure();
  int64_t rank = hp.getRank();
  if (rank != 2 && rank != 3)
    return op->emitOpError() << "expects a 2-D [M, K] or 3-D [E, N, K] "
                             << hpName << ", got rank " << rank;
  if (axis < 0 || axis >= rank)
    return op->emitOpError() << "axis " << axis << " is out of range for a "
                             << "rank-" << rank << " " << hpName;
  if (data.getRank() != rank)
    return op->emitOpError() << "data must have the " << hpName << "'s rank "
                             << rank << ", got rank " << data.getRank();
  if (data.getEncoding() || hp.getEncoding())
    return op->emitOpError()
           << "only scale tensors carry an encoding (#mxmoe.scale_layout); "
              "the data and the "
           << hpName << " must have none";
  if (rank == 3 && axis == 0)
    return op->emitOpError() << "3-D [E, N, K] tensors are quantized along N "
                                "(axis 1) or K (axis 2), not across experts "
                                "(axis 0)";
  bool jagged = offsets && axis == 0;
  if (offsets) {
    if (rank != 2)
      return op->emitOpError() << "offsets are only supported for a 2-D "
                               << hpName << " (token groups along dim 0)";
    int64_t tokens = hp.getDimSize(0);
    if (failed(verifyOffsetsType(op, offsets, std::nullopt, "", tokens)))
      return failure();
    if (!jagged && !isBlockedScales(scales))
      return op->emitOpError()
             << "offsets have no effect on rowwise MX data with row-major "
                "or compact scales; remove them, or use blocked_128x4 "
                "scales for the M-grouped layout";
  }

  // The data is the high-precision tensor with `axis` moved last.
  SmallVector<int64_t> expected;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      expected.push_back(hp.getDimSize(d));
  int64_t quantized = hp.getDimSize(axis);
  int64_t dataLast = data.getShape().back();
  if (jagged) {
    expected.push_back(dataLast);
    if (!ShapedType::isDynamic(dataLast)) {
      if (dataLast % kMXBlockSize != 0)
        return op->emitOpError()
               << "the padded token axis of the data (" << dataLast
               << ") must be a multiple of 32 (every token group is padded "
                  "to whole 32-blocks)";
      if (!ShapedType::isDynamic(quantized) && dataLast < quantized)
        return op->emitOpError() << "the padded token axis of the data ("
                                 << dataLast << ") is shorter than the "
                                 << quantized << " tokens of the " << hpName;
    }
  } else {
    expected.push_back(quantized);
    if (!ShapedType::isDynamic(quantized) && quantized % blockSize != 0)
      return op->emitOpError()
             << "quantized axis " << axis << " has size " << quantized
             << ", which is not a multiple of the block size " << blockSize;
  }
  if (!shapesCompatible(data.getShape(), expected))
    return op->emitOpError()
           << dataName << " shape " << formatShape(data.getShape())
           << " must be the " << hpName << " shape "
           << formatShape(hp.getShape()) << " with axis " << axis
           << " moved last: expected " << formatShape(expected);

  if (isCompactScales(scales))
    return verifyCompactScaleShape(op, data, scales, tile, jagged,
                                   jagged ? hp.getDimSize(0)
                                          : ShapedType::kDynamic);
  SmallVector<int64_t> logicalScales(data.getShape());
  logicalScales.back() = divBlock(logicalScales.back());
  ScaleGroups groups = !offsets ? ScaleGroups::None
                       : jagged ? ScaleGroups::K
                                : ScaleGroups::M;
  return verifyScaleShape(op, scalesName, logicalScales, scales, groups);
}

/// Precision/recipe consistency and the divisibility an MX precision needs.
LogicalResult verifyPrecision(Operation *op, PrecisionAttr precision,
                              MXRecipeAttr recipe,
                              ArrayRef<std::pair<StringRef, int64_t>> axes) {
  if (!precision || precision.getValue() == Precision::bf16)
    return success();
  if (recipe) {
    Type elem = recipe.getElement();
    bool fp8 = isa<Float8E4M3FNType, Float8E5M2Type>(elem);
    bool fp4 = isa<Float4E2M1FNType>(elem);
    if (precision.getValue() == Precision::mxfp8 && !fp8)
      return op->emitOpError() << "precision mxfp8 needs a recipe element "
                                  "type f8E4M3FN or f8E5M2, got "
                               << elem;
    if (precision.getValue() == Precision::mxfp4 && !fp4)
      return op->emitOpError()
             << "precision mxfp4 needs a recipe element type f4E2M1FN, got "
             << elem;
  }
  for (auto [name, size] : axes)
    if (!ShapedType::isDynamic(size) && size % kMXBlockSize != 0)
      return op->emitOpError()
             << "precision " << stringifyPrecision(precision.getValue())
             << " quantizes every GEMM along its contraction axis in blocks "
                "of 32, but "
             << name << " = " << size << " is not a multiple of 32";
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::verify() {
  RankedTensorType x = getInput().getType(), w = getWeight().getType(),
                   y = getResult().getType();
  if (x.getRank() < 2)
    return emitOpError() << "input must be [..., K] with rank >= 2, got rank "
                         << x.getRank();
  if (w.getRank() != 2)
    return emitOpError() << "weight must be 2-D [N, K], got rank "
                         << w.getRank();
  if (x.getElementType() != w.getElementType())
    return emitOpError() << "input and weight element types differ: "
                         << x.getElementType() << " vs " << w.getElementType();
  int64_t k = x.getShape().back(), n = w.getDimSize(0);
  if (!dimsCompatible(k, w.getDimSize(1)))
    return emitOpError() << "contraction sizes differ: input has K = " << k
                         << " but weight [N, K] has K = " << w.getDimSize(1);
  if (Value bias = getBias()) {
    auto b = cast<RankedTensorType>(bias.getType());
    if (b.getRank() != 1 || !dimsCompatible(b.getDimSize(0), n))
      return emitOpError() << "bias must be 1-D [N] = " << formatShape({n})
                           << ", got " << formatShape(b.getShape());
    if (b.getElementType() != x.getElementType())
      return emitOpError() << "bias element type " << b.getElementType()
                           << " differs from the input's "
                           << x.getElementType();
  }
  SmallVector<int64_t> expected(x.getShape());
  expected.back() = n;
  if (!shapesCompatible(y.getShape(), expected))
    return emitOpError() << "result shape " << formatShape(y.getShape())
                         << " must be the input's leading dims followed by N:"
                         << " expected " << formatShape(expected);
  if (getFqn().empty())
    return emitOpError() << "fqn must name the layer (e.g. "
                            "\"layers.0.attention.wq\"); it is what the "
                            "precision policy matches";
  return verifyPrecision(
      *this, getPrecisionAttr(), getRecipeAttr(),
      {{"K (forward contraction)", k}, {"N (input-gradient contraction)", n}});
}

//===----------------------------------------------------------------------===//
// ScaledGroupedMatmulOp
//===----------------------------------------------------------------------===//

MXRecipeAttr ScaledGroupedMatmulOp::getRecipeOrDefault() {
  if (MXRecipeAttr recipe = getRecipeAttr())
    return recipe;
  MLIRContext *ctx = getContext();
  return MXRecipeAttr::get(ctx, Float8E4M3FNType::get(ctx), kMXBlockSize,
                           RoundingMode::rceil);
}

LogicalResult ScaledGroupedMatmulOp::verify() {
  RankedTensorType x = getInput().getType(), w = getWeight().getType(),
                   y = getResult().getType();
  if (x.getRank() != 2)
    return emitOpError() << "input must be 2-D [M, K] (routed token rows "
                            "sorted by expert), got rank "
                         << x.getRank();
  if (w.getRank() != 3)
    return emitOpError() << "weight must be 3-D [G, N, K] (one [N, K] matrix "
                            "per expert), got rank "
                         << w.getRank();
  if (x.getElementType() != w.getElementType())
    return emitOpError() << "input and weight element types differ: "
                         << x.getElementType() << " vs " << w.getElementType();
  int64_t m = x.getDimSize(0), k = x.getDimSize(1);
  int64_t g = w.getDimSize(0), n = w.getDimSize(1);
  if (!dimsCompatible(k, w.getDimSize(2)))
    return emitOpError() << "contraction sizes differ: input has K = " << k
                         << " but weight [G, N, K] has K = " << w.getDimSize(2);
  if (failed(verifyOffsetsType(*this, getOffsets(), g,
                               "weight dim 0 is the number of experts", m)))
    return failure();
  if (!shapesCompatible(y.getShape(), {m, n}))
    return emitOpError() << "result must be [M, N] = " << formatShape({m, n})
                         << ", got " << formatShape(y.getShape());
  if (!isa<BFloat16Type, Float32Type>(y.getElementType()))
    return emitOpError() << "result element type must be bf16 or f32 (the "
                            "grouped GEMM accumulates in f32), got "
                         << y.getElementType();
  if (getFqn().empty())
    return emitOpError() << "fqn must name the layer (e.g. "
                            "\"layers.0.feed_forward.experts.w1\")";
  return verifyPrecision(
      *this, getPrecisionAttr(), getRecipeAttr(),
      {{"K (forward contraction)", k}, {"N (input-gradient contraction)", n}});
}

//===----------------------------------------------------------------------===//
// TiledMLPOp
//===----------------------------------------------------------------------===//

// mxmoe.tiled_mlp shards = (auto | N) (%input, %params...) attr-dict
//     : (input-type, param-types...) -> (result-types) region
ParseResult TiledMLPOp::parse(OpAsmParser &parser, OperationState &result) {
  MLIRContext *ctx = parser.getContext();
  if (parser.parseKeyword("shards") || parser.parseEqual())
    return failure();
  if (failed(parser.parseOptionalKeyword("auto"))) {
    int64_t shards = 0; // (set by parseInteger; GCC -Wmaybe-uninitialized)
    llvm::SMLoc loc = parser.getCurrentLocation();
    if (parser.parseInteger(shards))
      return parser.emitError(loc, "expected a shard count or 'auto'");
    result.addAttribute(getNumShardsAttrName(result.name),
                        IntegerAttr::get(IntegerType::get(ctx, 64), shards));
  }
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  llvm::SMLoc operandsLoc = parser.getCurrentLocation();
  FunctionType fnType;
  if (parser.parseOperandList(operands, OpAsmParser::Delimiter::Paren))
    return failure();
  llvm::SMLoc attrLoc = parser.getCurrentLocation();
  bool hasShards =
      result.attributes.get(getNumShardsAttrName(result.name)) != nullptr;
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  // The properties conversion would silently drop mistyped inherent
  // attributes: check them here.
  for (NamedAttribute attr : result.attributes) {
    StringRef name = attr.getName().getValue();
    if (name == "num_shards" && !hasShards)
      return parser.emitError(attrLoc)
             << "give the shard count as `shards = N` (or `shards = auto`), "
                "not as num_shards in the attribute dictionary";
    if (name == "grad_accumulator" && !isa<TypeAttr>(attr.getValue()))
      return parser.emitError(attrLoc)
             << "grad_accumulator must be a type (e.g. grad_accumulator = "
                "f32), got "
             << attr.getValue();
    if (name == "fqn" && !isa<StringAttr>(attr.getValue()))
      return parser.emitError(attrLoc)
             << "fqn must be a string, got " << attr.getValue();
  }
  if (parser.parseColon() || parser.parseType(fnType))
    return failure();
  if (operands.empty())
    return parser.emitError(operandsLoc,
                            "expected at least the token input operand");
  if (parser.resolveOperands(operands, fnType.getInputs(), operandsLoc,
                             result.operands))
    return failure();
  result.addTypes(fnType.getResults());
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, /*arguments=*/{},
                         /*enableNameShadowing=*/false))
    return failure();
  return success();
}

void TiledMLPOp::print(OpAsmPrinter &p) {
  p << " shards = ";
  if (std::optional<int64_t> n = getNumShards())
    p << *n;
  else
    p << "auto";
  p << " (" << getOperands() << ")";
  p.printOptionalAttrDict((*this)->getAttrs(),
                          /*elidedAttrs=*/{getNumShardsAttrName()});
  p << " : ";
  p.printFunctionalType(getOperandTypes(), getResultTypes());
  p << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/true,
                /*printBlockTerminators=*/true);
}

void TiledMLPOp::getAsmBlockArgumentNames(Region &region,
                                          OpAsmSetValueNameFn setNameFn) {
  if (region.empty() || region.front().getNumArguments() == 0)
    return;
  setNameFn(region.front().getArgument(0), "shard");
}

LogicalResult TiledMLPOp::verify() {
  if (std::optional<int64_t> n = getNumShards(); n && *n < 1)
    return emitOpError() << "shard count must be >= 1 or auto, got " << *n;
  if (std::optional<Type> acc = getGradAccumulator();
      acc && !isa<Float32Type, BFloat16Type, Float16Type>(*acc))
    return emitOpError() << "grad_accumulator must be f32, bf16 or f16 (the "
                            "parameter type is the default), got "
                         << *acc;
  // Parameter gradients are widened into the accumulator and narrowed back:
  // it must be f32 or the parameter's own type (bf16 <-> f16 and f32 ->
  // bf16/f16 are not widenings).
  if (std::optional<Type> acc = getGradAccumulator(); acc && !acc->isF32())
    for (auto [i, param] : llvm::enumerate(getParams())) {
      auto t = dyn_cast<RankedTensorType>(param.getType());
      if (t &&
          isa<Float32Type, BFloat16Type, Float16Type>(t.getElementType()) &&
          t.getElementType() != *acc)
        return emitOpError()
               << "grad_accumulator " << *acc
               << " cannot accumulate the gradient of parameter #" << i << " ("
               << t << "): it must be f32 or the parameter's element "
               << "type";
    }
  RankedTensorType x = getInput().getType();
  if (x.getRank() != 2 && x.getRank() != 3)
    return emitOpError() << "input must be [T, H] or [B, S, H], got rank "
                         << x.getRank();
  if (llvm::is_contained(x.getShape().drop_back(), 0))
    return emitOpError() << "has no tokens: input " << x;
  // Parameters are passed whole to every shard: token-dependent data (e.g.
  // the group offsets of a routed GEMM) would be wrong for every shard.
  for (auto [i, param] : llvm::enumerate(getParams()))
    if (auto t = dyn_cast<ShapedType>(param.getType());
        t && t.getElementType().isIntOrIndex())
      return emitOpError()
             << "parameter #" << i << " (" << t
             << ") has an integer element type: parameters are "
                "shard-invariant (weights and their scales); token-dependent "
                "data such as group offsets must be computed in the body from "
                "the shard";
  if (getNumResults() == 0)
    return emitOpError() << "must have at least one result";
  ArrayRef<int64_t> tokenDims = x.getShape().drop_back();
  for (auto [i, type] : llvm::enumerate(getResultTypes())) {
    auto r = cast<RankedTensorType>(type);
    if (r.getRank() < x.getRank())
      return emitOpError() << "result #" << i
                           << " must have rank >= " << x.getRank()
                           << " (the input's token dims "
                           << formatShape(tokenDims)
                           << " followed by feature dims), got "
                           << formatShape(r.getShape());
    if (!shapesCompatible(r.getShape().take_front(tokenDims.size()), tokenDims))
      return emitOpError() << "result #" << i << " must start with the "
                           << "input's token dims " << formatShape(tokenDims)
                           << ", got " << formatShape(r.getShape());
  }
  return success();
}

LogicalResult TiledMLPOp::verifyRegions() {
  Block &body = getBody().front();
  RankedTensorType x = getInput().getType();
  unsigned expectedArgs = 1 + getParams().size();
  if (body.getNumArguments() != expectedArgs)
    return emitOpError() << "body must take " << expectedArgs
                         << " arguments (the token shard, then one per "
                            "parameter), got "
                         << body.getNumArguments();
  auto shardType = RankedTensorType::get(
      {ShapedType::kDynamic, x.getShape().back()}, x.getElementType());
  if (body.getArgument(0).getType() != shardType)
    return emitOpError() << "body argument #0 (the token shard) must be "
                         << shardType << ", got "
                         << body.getArgument(0).getType();
  for (auto [i, param] : llvm::enumerate(getParams()))
    if (body.getArgument(i + 1).getType() != param.getType())
      return emitOpError() << "body argument #" << (i + 1)
                           << " must have the type of parameter #" << i << " ("
                           << param.getType() << "), got "
                           << body.getArgument(i + 1).getType();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError() << "body must end with mxmoe.yield";
  if (yield.getValues().size() != getNumResults())
    return yield.emitOpError()
           << "yields " << yield.getValues().size() << " values but the "
           << "enclosing mxmoe.tiled_mlp has " << getNumResults() << " results";
  size_t numTokenDims = x.getRank() - 1;
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(yield.getValues(), getResultTypes()))) {
    auto [value, resultType] = pair;
    auto r = cast<RankedTensorType>(resultType);
    SmallVector<int64_t> shape{ShapedType::kDynamic};
    llvm::append_range(shape, r.getShape().drop_front(numTokenDims));
    auto expected = RankedTensorType::get(shape, r.getElementType());
    if (value.getType() != expected)
      return yield.emitOpError()
             << "value #" << i << " must be " << expected
             << " (a shard of result #" << i << "), got " << value.getType();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// QuantizeOp / DequantizeOp
//===----------------------------------------------------------------------===//

/// Row-major and blocked scales may record the tile their 1x32 slots
/// share; it must be the quantization's.
static LogicalResult verifyRecordedTile(Operation *op, RankedTensorType scales,
                                        std::array<int64_t, 2> tile) {
  ScaleLayoutAttr layout = getScaleLayout(scales);
  if (!layout || layout.isCompact() || layout.getTile().empty())
    return success();
  if (layout.getTile()[0] != tile[0] || layout.getTile()[1] != tile[1])
    return op->emitOpError()
           << "scales record tile = [" << layout.getTile()
           << "] but the quantization's scale_tile is [" << tile[0] << ", "
           << tile[1] << "]; they must be equal (or drop the scales' tile)";
  return success();
}

LogicalResult QuantizeOp::verify() {
  if (std::optional<ArrayRef<int64_t>> t = getScaleTile(); t && t->size() != 2)
    return emitOpError() << "scale_tile must have two entries [r, c], got "
                         << t->size();
  if (failed(verifyMXQuantization(*this, getInput().getType(), "input",
                                  getData().getType(), getScales().getType(),
                                  getAxis(), getBlockSize(), getOffsets(),
                                  getScaleTileOrDefault())))
    return failure();
  return verifyRecordedTile(*this, getScales().getType(),
                            getScaleTileOrDefault());
}

LogicalResult QuantizeWeightOp::verify() {
  ArrayRef<int64_t> t = getScaleTile();
  if (t.size() != 2 || t[0] != t[1])
    return emitOpError()
           << "scale_tile must be a square [t, t] (a tile is then the same "
              "block of the weight along K and along N, so one quantization "
              "serves both orientations), got ["
           << t << "]";
  std::array<int64_t, 2> tile = {t[0], t[1]};
  RankedTensorType in = getInput().getType();
  int64_t rank = in.getRank();
  // The forward orientation (along K), then the input gradient's (along N).
  if (failed(verifyMXQuantization(*this, in, "input", getData().getType(),
                                  getScales().getType(), rank - 1,
                                  getBlockSize(), Value(), tile)) ||
      failed(verifyRecordedTile(*this, getScales().getType(), tile)))
    return failure();
  if (failed(verifyMXQuantization(
          *this, in, "input", getTransposedData().getType(),
          getTransposedScales().getType(), rank - 2, getBlockSize(), Value(),
          tile, "transposed_data", "transposed_scales")) ||
      failed(verifyRecordedTile(*this, getTransposedScales().getType(), tile)))
    return failure();
  if (getData().getType().getElementType() !=
      getTransposedData().getType().getElementType())
    return emitOpError() << "data and transposed_data must have the same "
                            "element type, got "
                         << getData().getType().getElementType() << " and "
                         << getTransposedData().getType().getElementType();
  return success();
}

LogicalResult RequantizeOp::verify() {
  ArrayRef<int64_t> t = getScaleTile();
  if (t.size() != 2)
    return emitOpError() << "scale_tile must have two entries [r, c], got "
                         << t.size();
  std::array<int64_t, 2> tile = {t[0], t[1]};
  if (failed(verifyScaleTile(*this, tile, Value())))
    return failure();
  RankedTensorType data = getData().getType(), out = getTiledData().getType();
  Type elem = data.getElementType();
  if (!isa<Float8E4M3FNType, Float8E5M2Type>(elem))
    return emitOpError() << "requantize supports FP8 data (f8E4M3FN, "
                            "f8E5M2), got "
                         << elem;
  if (out != data)
    return emitOpError() << "tiled_data must have the data's type " << data
                         << ", got " << out;
  if (data.getRank() != 2 && data.getRank() != 3)
    return emitOpError() << "expects 2-D [M, K] or 3-D [E, N, K] data, got "
                            "rank "
                         << data.getRank();
  if (data.getEncoding())
    return emitOpError() << "data must have no encoding";
  RankedTensorType scales = getScales().getType();
  if (failed(verifyScaleElementType(*this, scales, "scales")))
    return failure();
  if (ScaleLayoutAttr l = getScaleLayout(scales);
      l && (!l.getTile().empty() || l.getKind() != ScaleLayoutKind::row_major))
    return emitOpError() << "scales must be row-major 1x32 MX scales (no "
                            "layout or tile), got "
                         << scales;
  SmallVector<int64_t> logical(data.getShape());
  int64_t last = logical.back();
  if (!ShapedType::isDynamic(last) && last % kMXBlockSize != 0)
    return emitOpError() << "the scaled axis of the data has size " << last
                         << ", which is not a multiple of 32";
  logical.back() = divBlock(last);
  if (!shapesCompatible(scales.getShape(), logical))
    return emitOpError() << "scales must have shape " << formatShape(logical)
                         << " (one per 1x32 block of the data), got "
                         << formatShape(scales.getShape());
  RankedTensorType tiled = getTiledScales().getType();
  if (isBlockedScales(tiled))
    return emitOpError() << "tiled_scales are row-major or compact; convert "
                            "row-major ones with mxmoe.swizzle_scales";
  if (isCompactScales(tiled))
    return verifyCompactScaleShape(*this, data, tiled, tile, false,
                                   ShapedType::kDynamic);
  if (failed(verifyScaleElementType(*this, tiled, "tiled_scales")))
    return failure();
  if (!shapesCompatible(tiled.getShape(), logical))
    return emitOpError() << "tiled_scales must have shape "
                         << formatShape(logical) << ", got "
                         << formatShape(tiled.getShape());
  return verifyRecordedTile(*this, tiled, tile);
}

LogicalResult DequantizeOp::verify() {
  // Compact scales carry their tile; the other layouts hold one scale per
  // 1x32 block whatever tile produced them.
  std::array<int64_t, 2> tile = {1, kMXBlockSize};
  if (ScaleLayoutAttr layout = getScaleLayout(getScales().getType());
      layout && layout.isCompact())
    tile = {layout.getTile()[0], layout.getTile()[1]};
  if (failed(verifyScalesNotRelabeled(*this, getScales(), "scales")))
    return failure();
  return verifyMXQuantization(*this, getResult().getType(), "result",
                              getData().getType(), getScales().getType(),
                              getAxis(), getBlockSize(), getOffsets(), tile);
}

//===----------------------------------------------------------------------===//
// SwizzleScalesOp
//===----------------------------------------------------------------------===//

LogicalResult SwizzleScalesOp::verify() {
  RankedTensorType src = getSource().getType(), dst = getResult().getType();
  if (failed(verifyScalesNotRelabeled(*this, getSource(), "source scales")))
    return failure();
  if (failed(verifyScaleElementType(*this, src, "source")) ||
      failed(verifyScaleElementType(*this, dst, "result")) ||
      failed(verifyNotCompact(*this, src, "source")) ||
      failed(verifyNotCompact(*this, dst, "result")))
    return failure();
  // A tile on the result (its 1x32 slots share one scale per tile) must be
  // one the source records.
  ArrayRef<int64_t> srcTile, dstTile;
  if (ScaleLayoutAttr l = getScaleLayout(src))
    srcTile = l.getTile();
  if (ScaleLayoutAttr l = getScaleLayout(dst))
    dstTile = l.getTile();
  if (!dstTile.empty() && srcTile != dstTile)
    return emitOpError() << "result scales record tile = [" << dstTile
                         << "] but the source scales "
                         << (srcTile.empty() ? "record none" : "record another")
                         << "; a swizzle keeps the source's tile";
  bool srcBlocked = isBlockedScales(src), dstBlocked = isBlockedScales(dst);
  if (srcBlocked == dstBlocked)
    return emitOpError() << "exactly one of source and result must be in the "
                            "blocked_128x4 layout (this op converts between "
                            "row-major and blocked), got "
                         << (srcBlocked ? "both" : "neither");
  RankedTensorType rowMajor = srcBlocked ? dst : src;
  RankedTensorType blocked = srcBlocked ? src : dst;
  if (rowMajor.getRank() != 2 && rowMajor.getRank() != 3)
    return emitOpError() << "scales must be 2-D [R, C] or 3-D [E, R, C], got "
                            "rank "
                         << rowMajor.getRank();
  ScaleGroups groups = ScaleGroups::None;
  if (Value offsets = getOffsets()) {
    if (rowMajor.getRank() != 2)
      return emitOpError() << "offsets are only supported for 2-D scales; "
                              "3-D scales are blocked per expert";
    if (failed(verifyOffsetsType(*this, offsets, std::nullopt, "")))
      return failure();
    groups = isPerKGroupScales(blocked) ? ScaleGroups::K : ScaleGroups::M;
  }
  return verifyBlockedScaleShape(*this,
                                 srcBlocked ? "source scales" : "result scales",
                                 rowMajor.getShape(), blocked, groups);
}

//===----------------------------------------------------------------------===//
// GroupedMatmulOp
//===----------------------------------------------------------------------===//

LogicalResult GroupedMatmulOp::verify() {
  RankedTensorType lhs = getLhs().getType(), rhs = getRhs().getType(),
                   out = getResult().getType();
  if (lhs.getRank() != 2)
    return emitOpError() << "lhs must be 2-D ([M, K] or [M', T]), got rank "
                         << lhs.getRank();
  if (rhs.getRank() != 2 && rhs.getRank() != 3)
    return emitOpError() << "rhs must be 3-D [G, N, K] (2D x 3D -> 2D) or 2-D "
                            "[N', T] (2D x 2D -> 3D), got rank "
                         << rhs.getRank();
  bool kGrouped = rhs.getRank() == 2;
  Type lhsElem = lhs.getElementType(), rhsElem = rhs.getElementType();
  bool lhsMX = isMXElementType(lhsElem), rhsMX = isMXElementType(rhsElem);
  if (lhsMX != rhsMX)
    return emitOpError() << "lhs and rhs must both be MX or both high "
                            "precision, got "
                         << lhsElem << " and " << rhsElem;
  if (!lhsMX && lhsElem != rhsElem)
    return emitOpError() << "high-precision lhs and rhs element types differ: "
                         << lhsElem << " vs " << rhsElem;
  if (lhsMX && (!getLhsScales() || !getRhsScales()))
    return emitOpError() << "MX operands need their f8E8M0FNU scales ("
                         << (getLhsScales() ? "rhs" : "lhs")
                         << " has none; write `%x scales %s`)";
  if (!lhsMX && (getLhsScales() || getRhsScales()))
    return emitOpError() << "scales are only allowed with MX operands, but "
                            "the operands are "
                         << lhsElem;

  int64_t k = lhs.getDimSize(1), rk = rhs.getShape().back();
  if (!dimsCompatible(k, rk))
    return emitOpError() << "contraction sizes differ: lhs has "
                         << (kGrouped ? "T = " : "K = ") << k << " but rhs has "
                         << rk;
  if (lhsMX && !ShapedType::isDynamic(k) && k % kMXBlockSize != 0)
    return emitOpError() << "contraction size " << k
                         << " is not a multiple of the MX block size 32";

  int64_t numGroups;
  SmallVector<int64_t> expectedOut;
  if (kGrouped) {
    if (out.getRank() != 3)
      return emitOpError() << "2D x 2D grouped matmul must produce a 3-D "
                              "[G, M', N'] result, got rank "
                           << out.getRank();
    numGroups = out.getDimSize(0);
    expectedOut = {numGroups, lhs.getDimSize(0), rhs.getDimSize(0)};
  } else {
    numGroups = rhs.getDimSize(0);
    expectedOut = {lhs.getDimSize(0), rhs.getDimSize(1)};
  }
  if (!shapesCompatible(out.getShape(), expectedOut))
    return emitOpError() << "result must be " << formatShape(expectedOut)
                         << (kGrouped ? " ([G, M', N'])" : " ([M, N])")
                         << ", got " << formatShape(out.getShape());
  // Grouped extent: M (2D x 3D), the (padded) token axis (2D x 2D).
  int64_t grouped = lhs.getDimSize(kGrouped ? 1 : 0);
  if (failed(verifyOffsetsType(*this, getOffsets(), numGroups,
                               kGrouped ? "result dim 0 is the number of "
                                          "groups"
                                        : "rhs dim 0 is the number of "
                                          "experts",
                               grouped)))
    return failure();
  if (!lhsMX)
    return success();

  if (failed(verifyScalesNotRelabeled(*this, getLhsScales(), "lhs scales")) ||
      failed(verifyScalesNotRelabeled(*this, getRhsScales(), "rhs scales")))
    return failure();
  auto lhsScales = cast<RankedTensorType>(getLhsScales().getType());
  auto rhsScales = cast<RankedTensorType>(getRhsScales().getType());
  SmallVector<int64_t> lhsLogical{lhs.getDimSize(0), divBlock(k)};
  SmallVector<int64_t> rhsLogical(rhs.getShape());
  rhsLogical.back() = divBlock(rk);
  if (failed(verifyScaleShape(*this, "lhs scales", lhsLogical, lhsScales,
                              kGrouped ? ScaleGroups::K : ScaleGroups::M)))
    return failure();
  return verifyScaleShape(*this, "rhs scales", rhsLogical, rhsScales,
                          kGrouped ? ScaleGroups::K : ScaleGroups::None);
}
