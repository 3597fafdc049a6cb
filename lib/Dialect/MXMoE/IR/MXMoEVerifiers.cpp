//===- MXMoEVerifiers.cpp - rules shared by the mxmoe op verifiers --------===//
//
// Every rule states what failed in words a user of the op understands;
// test/Dialect/MXMoE/*-invalid-*.mlir has one case per rule.
//
//===----------------------------------------------------------------------===//

#include "MXMoEVerifiers.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::mxmoe;
using ::mxmoe::kBlockedCols;
using ::mxmoe::kBlockedRows;
using ::mxmoe::kMXBlockSize;
using ::mxmoe::roundUp;

namespace mlir::mxmoe::verifiers {

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
                                std::optional<int64_t> total) {
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
                                   StringRef dataName, StringRef scalesName) {
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

} // namespace mlir::mxmoe::verifiers
