//===- MXFormats.cpp - OCP MX element and scale formats -------------------===//
//
// Scalar reference of OCP MX v1.0 quantization. Formulas and special cases:
// OCP Microscaling Formats (MX) v1.0 specification, section 5; pytorch/ao
// torchao/prototype/mx_formats/mx_tensor.py (to_mx) and custom_fp_utils.py.
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Dialect/MXMoE/Utils/MXFormats.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace mxmoe {

namespace {
constexpr MXElementFormat kFormats[] = {
    {MXElementKind::E4M3, "f8E4M3FN", "MXFP8 (E4M3)", 8, 4, 3, 7, 448.0, 8,
     /*hasInf=*/false, /*hasNaN=*/true, 0},
    {MXElementKind::E5M2, "f8E5M2", "MXFP8 (E5M2)", 8, 5, 2, 15, 57344.0, 15,
     /*hasInf=*/true, /*hasNaN=*/true, 1},
    {MXElementKind::E2M3, "f6E2M3FN", "MXFP6 (E2M3)", 6, 2, 3, 1, 7.5, 2,
     /*hasInf=*/false, /*hasNaN=*/false, 3},
    {MXElementKind::E3M2, "f6E3M2FN", "MXFP6 (E3M2)", 6, 3, 2, 3, 28.0, 4,
     /*hasInf=*/false, /*hasNaN=*/false, 4},
    {MXElementKind::E2M1, "f4E2M1FN", "MXFP4 (E2M1)", 4, 2, 1, 1, 6.0, 2,
     /*hasInf=*/false, /*hasNaN=*/false, 5},
};

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

uint8_t clampToByte(int s) {
  // Unbiased scale exponents are clamped to [-127, 128] (torchao to_mx);
  // finite inputs never reach 128, which would encode NaN.
  if (s < -127)
    s = -127;
  if (s > 128)
    s = 128;
  return static_cast<uint8_t>(s + kE8M0Bias);
}
} // namespace

const MXElementFormat &getMXElementFormat(MXElementKind kind) {
  return kFormats[static_cast<int>(kind)];
}

std::optional<MXElementKind> parseMXElementKind(std::string_view name) {
  for (const MXElementFormat &f : kFormats)
    if (f.mlirTypeName == name)
      return f.kind;
  return std::nullopt;
}

uint8_t f32ToE8M0RoundUp(float d) {
  if (!std::isfinite(d))
    return kE8M0NaN;
  uint32_t u = bitsOf(d) & 0x7FFFFFFFu;
  uint32_t exp = u >> 23;
  uint32_t mant = u & 0x7FFFFFu;
  if (exp == 0)
    return mant > 0x400000u ? 1 : 0;
  uint32_t byte = exp + (mant != 0 ? 1 : 0);
  return static_cast<uint8_t>(byte > 255 ? 255 : byte);
}

uint8_t computeScaleByte(float amax, MXElementKind kind, ScaleRounding mode) {
  if (!std::isfinite(amax))
    return kE8M0NaN;
  const MXElementFormat &fmt = getMXElementFormat(kind);
  amax = std::fabs(amax);
  uint32_t u = bitsOf(amax);
  int exp = static_cast<int>(u >> 23);
  uint32_t mant = u & 0x7FFFFFu;
  switch (mode) {
  case ScaleRounding::Floor:
    return clampToByte(exp - kE8M0Bias - fmt.emaxElem);
  case ScaleRounding::Ceil:
    return clampToByte(exp - kE8M0Bias + (mant != 0 ? 1 : 0) - fmt.emaxElem);
  case ScaleRounding::Even: {
    uint32_t add = 1u << (23 - fmt.mantissaBits - 1);
    uint32_t rounded = (u + add) & 0x7F800000u;
    return clampToByte(static_cast<int>(rounded >> 23) - kE8M0Bias -
                       fmt.emaxElem);
  }
  case ScaleRounding::RCeil: {
    // Multiply by the fp32 reciprocal, as every torchao kernel does.
    float inv = 1.0f / static_cast<float>(fmt.maxNormal);
    return f32ToE8M0RoundUp(amax * inv);
  }
  }
  return kE8M0NaN;
}

float e8m0ToFloat(uint8_t byte) {
  if (byte == kE8M0NaN)
    return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(byte) - kE8M0Bias);
}

float e8m0Reciprocal(uint8_t byte) {
  if (byte == kE8M0NaN)
    return std::numeric_limits<float>::quiet_NaN();
  if (byte == 254)
    return floatOf(0x00400000u); // 2^-127
  return floatOf(static_cast<uint32_t>(254 - byte) << 23);
}

uint8_t floatToMXElement(float value, MXElementKind kind) {
  const MXElementFormat &fmt = getMXElementFormat(kind);
  const unsigned signShift = fmt.bits - 1;
  if (std::isnan(value)) {
    if (kind == MXElementKind::E4M3 || kind == MXElementKind::E5M2)
      return 0x7F;
    return 0;
  }
  uint8_t sign = std::signbit(value) ? 1 : 0;
  double mag = std::fabs(static_cast<double>(value));
  const int minNormalExp = 1 - fmt.exponentBias;
  const int M = static_cast<int>(fmt.mantissaBits);
  double q;
  if (std::isinf(mag)) {
    q = fmt.maxNormal;
  } else if (mag == 0.0) {
    q = 0.0;
  } else {
    int e;
    std::frexp(mag, &e); // mag = f * 2^e, f in [0.5, 1)
    e -= 1;              // floor(log2 mag)
    if (e < minNormalExp)
      e = minNormalExp;
    double quantum = std::ldexp(1.0, e - M);
    q = std::nearbyint(mag / quantum) * quantum; // default mode: RNE
    if (q > fmt.maxNormal)
      q = fmt.maxNormal; // satfinite
  }
  uint32_t code;
  if (q == 0.0) {
    code = 0;
  } else if (q < std::ldexp(1.0, minNormalExp)) {
    code = static_cast<uint32_t>(q / std::ldexp(1.0, minNormalExp - M));
  } else {
    int e;
    double f = std::frexp(q, &e);
    e -= 1;
    uint32_t mantField =
        static_cast<uint32_t>((f * 2.0 - 1.0) * std::ldexp(1.0, M));
    code = (static_cast<uint32_t>(e + fmt.exponentBias) << M) | mantField;
  }
  return static_cast<uint8_t>((sign << signShift) | code);
}

float mxElementToFloat(uint8_t code, MXElementKind kind) {
  const MXElementFormat &fmt = getMXElementFormat(kind);
  const unsigned M = fmt.mantissaBits;
  const unsigned E = fmt.exponentBits;
  bool neg = (code >> (fmt.bits - 1)) & 1;
  uint32_t expField = (code >> M) & ((1u << E) - 1);
  uint32_t mantField = code & ((1u << M) - 1);
  float sign = neg ? -1.0f : 1.0f;
  if (kind == MXElementKind::E4M3 && expField == 15 && mantField == 7)
    return std::numeric_limits<float>::quiet_NaN();
  if (kind == MXElementKind::E5M2 && expField == 31)
    return mantField == 0 ? sign * std::numeric_limits<float>::infinity()
                          : std::numeric_limits<float>::quiet_NaN();
  if (expField == 0)
    return sign * std::ldexp(static_cast<float>(mantField),
                             1 - fmt.exponentBias - static_cast<int>(M));
  return sign * std::ldexp(1.0f + std::ldexp(static_cast<float>(mantField),
                                             -static_cast<int>(M)),
                           static_cast<int>(expField) - fmt.exponentBias);
}

} // namespace mxmoe
