//===- MXMoEVerifiers.h - rules shared by the mxmoe op verifiers -*- C++
//-*-===//
//
// Private to lib/Dialect/MXMoE/IR: the shape, scale-layout, offsets and
// precision rules that more than one op verifier checks
// (MXMoEVerifiers.cpp). Each emits its diagnostic on `op` and returns
// failure.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_LIB_DIALECT_MXMOE_IR_MXMOEVERIFIERS_H
#define MXMOE_LIB_DIALECT_MXMOE_IR_MXMOEVERIFIERS_H

#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"
#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

#include <array>
#include <optional>
#include <string>

namespace mlir::mxmoe::verifiers {

/// How the groups of a grouped scale tensor run.
enum class ScaleGroups {
  None, ///< plain 2-D or per-expert 3-D
  M,    ///< groups of rows (each padded to 128 rows)
  K,    ///< groups of scale columns (per-K-group buffers)
};

/// Prints a shape as "[8192, 160]" with "?" for dynamic dims.
std::string formatShape(ArrayRef<int64_t> shape);

bool dimsCompatible(int64_t a, int64_t b);

bool shapesCompatible(ArrayRef<int64_t> a, ArrayRef<int64_t> b);

/// `d / 32` keeping dynamic dims dynamic.
int64_t divBlock(int64_t d);

LogicalResult verifyScaleElementType(Operation *op, RankedTensorType type,
                                     StringRef what);

/// Scales reach a consumer as their producer wrote them: a tensor.cast that
/// changes their encoding (row-major relabeled as #mxmoe.scale_layout<
/// blocked_128x4> where the shapes coincide, or the reverse) would make the
/// consumer read the same bytes in another layout. A layout change is an
/// mxmoe.swizzle_scales; such a cast (anywhere in a chain of casts) is an
/// error.
LogicalResult verifyScalesNotRelabeled(Operation *op, Value scales,
                                       StringRef what);

/// Offsets that are constants (an arith.constant or any constant-like op)
/// must be what the kernels accept at run time: non-negative,
/// non-decreasing and, when `total` (the grouped extent) is static, at
/// most `total`; otherwise the program would only fail when it runs.
LogicalResult verifyConstantOffsets(Operation *op, Value offsets,
                                    std::optional<int64_t> total);

LogicalResult verifyOffsetsType(Operation *op, Value offsets,
                                std::optional<int64_t> numGroups,
                                StringRef groupsMeaning,
                                std::optional<int64_t> total = std::nullopt);

/// Checks that `scales` is a valid blocked layout of row-major scales of
/// shape `logical` ([R, C] or [E, R, C]) for the given grouping.
LogicalResult verifyBlockedScaleShape(Operation *op, StringRef what,
                                      ArrayRef<int64_t> logical,
                                      RankedTensorType scales,
                                      ScaleGroups groups);

/// Compact scales (one byte per scale tile) are written by mxmoe.quantize
/// and read by mxmoe.dequantize only.
LogicalResult verifyNotCompact(Operation *op, RankedTensorType scales,
                               StringRef what);

/// Checks scales of row-major logical shape `logical` in either layout.
LogicalResult verifyScaleShape(Operation *op, StringRef what,
                               ArrayRef<int64_t> logical,
                               RankedTensorType scales, ScaleGroups groups);

LogicalResult verifyBlockSize(Operation *op, int64_t blockSize);

/// `ceil(d / t)` keeping dynamic dims dynamic.
int64_t divTile(int64_t d, int64_t t);

/// A scale tile [r, c]: r >= 1 rows, c a multiple of 32 along the
/// contraction axis; more than one row only without token groups.
LogicalResult verifyScaleTile(Operation *op, std::array<int64_t, 2> tile,
                              Value offsets);

/// Compact scales: one byte per tile of the data [.., R, L]:
/// [.., ceil(R/r), ceil(L/c)]; along a jagged token axis of `tokens`
/// tokens (`jagged`), [R, Wp] with per-group windows, Wp >= ceil(T/c).
LogicalResult verifyCompactScaleShape(Operation *op, RankedTensorType data,
                                      RankedTensorType scales,
                                      std::array<int64_t, 2> tile, bool jagged,
                                      int64_t tokens);

/// The shared rules of quantize and dequantize: `hp` is the high-precision
/// side (quantize input, dequantize result), named `hpName`.
LogicalResult verifyMXQuantization(Operation *op, RankedTensorType hp,
                                   StringRef hpName, RankedTensorType data,
                                   RankedTensorType scales, int64_t axis,
                                   int64_t blockSize, Value offsets,
                                   std::array<int64_t, 2> tile,
                                   StringRef dataName = "data",
                                   StringRef scalesName = "scales");

/// Precision/recipe consistency and the divisibility an MX precision needs.
LogicalResult verifyPrecision(Operation *op, PrecisionAttr precision,
                              MXRecipeAttr recipe,
                              ArrayRef<std::pair<StringRef, int64_t>> axes);

} // namespace mlir::mxmoe::verifiers

#endif // MXMOE_LIB_DIALECT_MXMOE_IR_MXMOEVERIFIERS_H
