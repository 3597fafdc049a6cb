//===- MXFormats.h - OCP MX element and scale formats -----------*- C++ -*-===//
//
// Pure C++ description of the OCP Microscaling (MX) v1.0 formats used by
// mxmoe, plus a scalar reference of the per-block scale computation. No MLIR
// dependency: shared by the compiler, the host runtime and the unit tests.
//
// Source of the math: OCP Microscaling Formats (MX) v1.0 spec, section 5
// (E8M0 scale, element formats) and section 6.3 (conversion); the RCEIL/EVEN
// bit-level forms follow pytorch/ao torchao/prototype/mx_formats/mx_tensor.py
// (to_mx; element maxima: torchao/prototype/mx_formats/constants.py).
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_DIALECT_MXMOE_UTILS_MXFORMATS_H
#define MXMOE_DIALECT_MXMOE_UTILS_MXFORMATS_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace mxmoe {

/// Number of elements sharing one E8M0 scale in every MX format (OCP MX v1.0,
/// Table 1: k = 32).
inline constexpr int64_t kMXBlockSize = 32;
/// Exponent bias of the E8M0 scale: byte b encodes 2^(b - 127).
inline constexpr int kE8M0Bias = 127;
/// The E8M0 NaN encoding (there is no Inf and no zero).
inline constexpr uint8_t kE8M0NaN = 0xFF;

/// MX element formats. The names match MLIR's builtin float types
/// (f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN, f4E2M1FN).
enum class MXElementKind { E4M3, E5M2, E2M3, E3M2, E2M1 };

/// Static properties of an MX element format (OCP MX v1.0, section 5.3).
struct MXElementFormat {
  MXElementKind kind;
  std::string_view mlirTypeName; ///< e.g. "f8E4M3FN"
  std::string_view mxName;       ///< e.g. "MXFP8 (E4M3)"
  unsigned bits;                 ///< storage bits per element: 8, 6 or 4
  unsigned exponentBits;
  unsigned mantissaBits;
  int exponentBias;
  double maxNormal;         ///< largest finite magnitude (448 for E4M3)
  int emaxElem;             ///< unbiased exponent of maxNormal (8 for E4M3)
  bool hasInf;              ///< only E5M2
  bool hasNaN;              ///< E4M3 (0x7F/0xFF) and E5M2
  unsigned tcgen05TypeCode; ///< kind::mxf8f6f4 A/B type field (PTX ISA
                            ///< 9.7.16.4.2): E4M3 0, E5M2 1, E2M3 3, E3M2 4,
                            ///< E2M1 5
};

/// Returns the format table entry of `kind`.
const MXElementFormat &getMXElementFormat(MXElementKind kind);

/// Looks up an element format by MLIR builtin type name ("f8E4M3FN", ...);
/// std::nullopt if the name is not an MX element type.
std::optional<MXElementKind> parseMXElementKind(std::string_view mlirTypeName);

/// How the shared E8M0 scale of a block is derived from its amax.
enum class ScaleRounding {
  Floor, ///< OCP MX spec: s = floor(log2 amax) - emax_elem
  RCeil, ///< torchao MoE default: s = ceil(log2(amax / max_pos))
  Ceil,  ///< s = ceil(log2 amax) - emax_elem
  Even,  ///< round amax to the element's mantissa width (RNE), then FLOOR
};

/// Scalar reference of the per-block scale byte for `amax` (the largest
/// magnitude of the block, computed in fp32 from the values actually being
/// quantized). Non-finite amax (any NaN or Inf in the block) gives 0xFF.
/// Results are E8M0 bytes in [0, 255]; byte 0 means 2^-127, not zero.
uint8_t computeScaleByte(float amax, MXElementKind kind, ScaleRounding mode);

/// RCEIL conversion of an fp32 descale d to E8M0 as PTX `cvt.rp.ue8m0x2.f32`
/// without .satfinite does it (round towards +Inf; non-finite -> 0xFF).
uint8_t f32ToE8M0RoundUp(float d);

/// fp32 value of an E8M0 byte: 2^(b - 127); byte 0 gives 2^-127 (an fp32
/// subnormal), 255 gives NaN.
float e8m0ToFloat(uint8_t byte);

/// The reciprocal scale 2^(127 - b) used to scale data before conversion,
/// with the special cases of torchao mx_tensor.py's
/// _e8m0_scale_to_reciprocal_fp32 (b = 254 -> 2^-127, b = 255 -> NaN).
float e8m0Reciprocal(uint8_t byte);

/// Round-to-nearest-even conversion of fp32 to an MX element format,
/// saturating to +-maxNormal (PTX cvt.rn.satfinite). NaN maps to the
/// format's NaN encoding (0x7F for E4M3, 0x7F for E5M2); for formats without
/// NaN it maps to 0 (the block's NaN is carried by its 0xFF scale).
/// Returns the element code in the low `bits` bits.
uint8_t floatToMXElement(float value, MXElementKind kind);

/// Decodes an element code (low `bits` bits) of `kind` to fp32 (exact).
float mxElementToFloat(uint8_t code, MXElementKind kind);

} // namespace mxmoe

#endif // MXMOE_DIALECT_MXMOE_UTILS_MXFORMATS_H
