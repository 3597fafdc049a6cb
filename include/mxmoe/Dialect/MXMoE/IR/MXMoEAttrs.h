//===- MXMoEAttrs.h - mxmoe attributes --------------------------*- C++ -*-===//
//
// Rounding mode, precision, scale layout and MX recipe attributes.
// Definitions: MXMoEAttrs.td.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_DIALECT_MXMOE_IR_MXMOEATTRS_H
#define MXMOE_DIALECT_MXMOE_IR_MXMOEATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"

#include "mxmoe/Dialect/MXMoE/IR/MXMoEEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "mxmoe/Dialect/MXMoE/IR/MXMoEAttrs.h.inc"

#include "mxmoe/Dialect/MXMoE/Utils/MXFormats.h"
#include <optional>

namespace mlir::mxmoe {

/// The scale layout of a scale tensor type: its encoding if it is a
/// ScaleLayoutAttr, nullptr for no encoding (row-major). Any other encoding
/// is not a scale layout; `isScaleLayoutEncoding` tells them apart.
ScaleLayoutAttr getScaleLayout(RankedTensorType type);
/// True when `type` has no encoding or a ScaleLayoutAttr encoding.
bool isScaleLayoutEncoding(RankedTensorType type);
/// True when the scale tensor is in one of the blocked layouts.
bool isBlockedScales(RankedTensorType type);
/// True when the scale tensor is in the compact layout (one byte per scale
/// tile, `#mxmoe.scale_layout<compact, tile = [r, c]>`).
bool isCompactScales(RankedTensorType type);
/// True when the scale tensor is in a per-K-group (blocked or compact)
/// layout.
bool isPerKGroupScales(RankedTensorType type);

/// True for the builtin MX element types (f8E4M3FN, f8E5M2, f6E2M3FN,
/// f6E3M2FN, f4E2M1FN).
bool isMXElementType(Type type);
/// The MX element kind of an MX element type; std::nullopt otherwise.
std::optional<::mxmoe::MXElementKind> getMXElementKind(Type type);
/// Inverse of getMXElementKind: the builtin element type of `kind`.
Type getMXElementType(MLIRContext *ctx, ::mxmoe::MXElementKind kind);

/// The scalar-reference rounding enum matching an attribute rounding mode.
::mxmoe::ScaleRounding toScaleRounding(RoundingMode mode);

} // namespace mlir::mxmoe

#endif // MXMOE_DIALECT_MXMOE_IR_MXMOEATTRS_H
