//===- MXFormatsTest.cpp - scalar MX reference vs the golden cases --------===//
//
// Expected bytes: torchao torchao/testing/_mxfp8_test_utils.py golden cases
// (ao PR #4725; re-derived from the OCP MX v1.0 formulas) and its RCEIL
// fp32 -> E8M0 table (make_f32_to_e8m0_rceil_cases).
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Dialect/MXMoE/Utils/MXFormats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace mxmoe;

namespace {
float f32(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
/// Rounds fp32 to bf16 (RNE), as a bf16 input tensor would hold it.
float toBF16(float f) {
  uint32_t u = bits(f);
  u += 0x7FFF + ((u >> 16) & 1);
  return f32(u & 0xFFFF0000u);
}

struct Quantized {
  uint8_t scale;
  std::vector<uint8_t> data;
};

/// Quantizes one block with the scalar reference (E4M3).
Quantized quantizeBlock(const std::vector<float> &x, ScaleRounding mode) {
  float amax = 0.0f;
  bool nonFinite = false;
  for (float v : x) {
    if (!std::isfinite(v))
      nonFinite = true;
    amax = std::fmax(amax, std::fabs(v));
  }
  if (nonFinite)
    amax = std::numeric_limits<float>::infinity();
  Quantized q;
  q.scale = computeScaleByte(amax, MXElementKind::E4M3, mode);
  float inv = e8m0Reciprocal(q.scale);
  for (float v : x) {
    uint8_t code = floatToMXElement(v * inv, MXElementKind::E4M3);
    q.data.push_back(code == 0xFF ? 0x7F : code); // NaN sign not meaningful
  }
  return q;
}

std::vector<float> block(float fill) { return std::vector<float>(32, fill); }
} // namespace

TEST(MXFormats, FormatTable) {
  const MXElementFormat &e4m3 = getMXElementFormat(MXElementKind::E4M3);
  EXPECT_EQ(e4m3.maxNormal, 448.0);
  EXPECT_EQ(e4m3.emaxElem, 8);
  EXPECT_EQ(getMXElementFormat(MXElementKind::E5M2).maxNormal, 57344.0);
  EXPECT_EQ(getMXElementFormat(MXElementKind::E2M1).maxNormal, 6.0);
  EXPECT_EQ(getMXElementFormat(MXElementKind::E2M3).maxNormal, 7.5);
  EXPECT_EQ(getMXElementFormat(MXElementKind::E3M2).maxNormal, 28.0);
  EXPECT_EQ(parseMXElementKind("f4E2M1FN"), MXElementKind::E2M1);
  EXPECT_FALSE(parseMXElementKind("bf16").has_value());
}

TEST(MXFormats, E4M3ReferenceBytes) {
  EXPECT_EQ(floatToMXElement(1.0f, MXElementKind::E4M3), 0x38);
  EXPECT_EQ(floatToMXElement(2.0f, MXElementKind::E4M3), 0x40);
  EXPECT_EQ(floatToMXElement(224.0f, MXElementKind::E4M3), 0x76);
  EXPECT_EQ(floatToMXElement(240.0f, MXElementKind::E4M3), 0x77);
  EXPECT_EQ(floatToMXElement(256.0f, MXElementKind::E4M3), 0x78);
  EXPECT_EQ(floatToMXElement(448.0f, MXElementKind::E4M3), 0x7E);
  EXPECT_EQ(floatToMXElement(480.0f, MXElementKind::E4M3), 0x7E); // sat
  EXPECT_EQ(floatToMXElement(-480.0f, MXElementKind::E4M3), 0xFE);
  EXPECT_EQ(floatToMXElement(std::ldexp(1.0f, -9), MXElementKind::E4M3),
            0x01); // min subnormal
  EXPECT_EQ(floatToMXElement(-0.0f, MXElementKind::E4M3), 0x80);
}

TEST(MXFormats, E2M1Codes) {
  const float mags[] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(floatToMXElement(mags[c], MXElementKind::E2M1), c);
    EXPECT_EQ(floatToMXElement(-mags[c], MXElementKind::E2M1),
              c == 0 ? 0x8 : 0x8 | c);
    EXPECT_EQ(mxElementToFloat(c, MXElementKind::E2M1), mags[c]);
  }
  EXPECT_EQ(floatToMXElement(7.0f, MXElementKind::E2M1), 7);  // sat to 6
  EXPECT_EQ(floatToMXElement(2.5f, MXElementKind::E2M1), 4);  // tie -> even 2
  EXPECT_EQ(floatToMXElement(0.25f, MXElementKind::E2M1), 0); // tie -> 0
}

TEST(MXFormats, RoundTripEveryCode) {
  for (MXElementKind kind :
       {MXElementKind::E4M3, MXElementKind::E5M2, MXElementKind::E2M3,
        MXElementKind::E3M2, MXElementKind::E2M1}) {
    unsigned nbits = getMXElementFormat(kind).bits;
    for (unsigned code = 0; code < (1u << nbits); ++code) {
      float v = mxElementToFloat(code, kind);
      if (std::isnan(v) || std::isinf(v))
        continue;
      uint8_t back = floatToMXElement(v, kind);
      if (v == 0.0f) // +-0 keep their sign bit
        EXPECT_EQ(back, code);
      else
        EXPECT_EQ(back, code) << "kind " << static_cast<int>(kind) << " code "
                              << code << " value " << v;
    }
  }
}

TEST(MXFormats, RCeilConversionTable) {
  struct Case {
    uint32_t d;
    uint8_t byte;
  } cases[] = {{0x00000000, 0},   {0x00000001, 0},   {0x00400000, 0},
               {0x00400001, 1},   {0x007FFFFF, 1},   {0x00800000, 1},
               {0x1F800000, 63},  {0x1F800001, 64},  {0x3F7FFFFF, 127},
               {0x3F800000, 127}, {0x3F800001, 128}, {0x5F800000, 191},
               {0x5F800001, 192}, {0x7F000000, 254}, {0x7F000001, 255},
               {0x7F7FFFFF, 255}, {0x7F800000, 255}, {0x7FC00000, 255}};
  for (const Case &c : cases)
    EXPECT_EQ(f32ToE8M0RoundUp(f32(c.d)), c.byte) << std::hex << c.d;
  // Sanity values of the round-up: 1.125, 1.25, 1.5 -> 2; 5 -> 8.
  for (float d : {1.125f, 1.25f, 1.5f})
    EXPECT_EQ(f32ToE8M0RoundUp(d), 128);
  EXPECT_EQ(f32ToE8M0RoundUp(5.0f), 130);
}

TEST(MXFormats, E8M0Decode) {
  EXPECT_EQ(bits(e8m0ToFloat(0)), 0x00400000u); // 2^-127, not zero
  EXPECT_EQ(e8m0ToFloat(127), 1.0f);
  EXPECT_TRUE(std::isnan(e8m0ToFloat(255)));
  EXPECT_EQ(bits(e8m0Reciprocal(254)), 0x00400000u);
  EXPECT_EQ(bits(e8m0Reciprocal(0)), 0x7F000000u);
  EXPECT_TRUE(std::isnan(e8m0Reciprocal(255)));
}

// Golden cases (torchao _mxfp8_test_utils.py), FLOOR and RCEIL.
TEST(MXFormats, GoldenZero) {
  for (auto mode : {ScaleRounding::Floor, ScaleRounding::RCeil}) {
    Quantized q = quantizeBlock(block(0.0f), mode);
    EXPECT_EQ(q.scale, 0);
    EXPECT_EQ(q.data[0], 0x00);
  }
}

TEST(MXFormats, GoldenSmallestNormal) {
  for (auto mode : {ScaleRounding::Floor, ScaleRounding::RCeil}) {
    Quantized q = quantizeBlock(block(std::ldexp(1.0f, -126)), mode);
    EXPECT_EQ(q.scale, 0);
    EXPECT_EQ(q.data[0], 0x40);
  }
}

TEST(MXFormats, GoldenNonFinite) {
  for (auto mode : {ScaleRounding::Floor, ScaleRounding::RCeil}) {
    auto inf = block(1.0f);
    inf[7] = std::numeric_limits<float>::infinity();
    auto nan = block(1.0f);
    nan[3] = std::numeric_limits<float>::quiet_NaN();
    for (const auto &x : {inf, nan, block(std::nanf(""))}) {
      Quantized q = quantizeBlock(x, mode);
      EXPECT_EQ(q.scale, 255);
      for (uint8_t d : q.data)
        EXPECT_EQ(d, 0x7F);
    }
  }
}

TEST(MXFormats, GoldenFP8Max) {
  auto x = block(448.0f);
  x[1] = -448.0f;
  for (auto mode : {ScaleRounding::Floor, ScaleRounding::RCeil}) {
    Quantized q = quantizeBlock(x, mode);
    EXPECT_EQ(q.scale, 127);
    EXPECT_EQ(q.data[0], 0x7E);
    EXPECT_EQ(q.data[1], 0xFE);
  }
}

TEST(MXFormats, GoldenDtypeMax) {
  float fmax = std::numeric_limits<float>::max();
  Quantized floor = quantizeBlock(block(fmax), ScaleRounding::Floor);
  EXPECT_EQ(floor.scale, 246);
  EXPECT_EQ(floor.data[0], 0x7E);
  Quantized rceil = quantizeBlock(block(fmax), ScaleRounding::RCeil);
  EXPECT_EQ(rceil.scale, 247);
  EXPECT_EQ(rceil.data[0], 0x78);
}

TEST(MXFormats, GoldenSmallestSubnormal) {
  // bf16 2^-133 -> 0 / 0x08; fp32 2^-149 -> 0 / 0x00.
  for (auto mode : {ScaleRounding::Floor, ScaleRounding::RCeil}) {
    Quantized q = quantizeBlock(block(std::ldexp(1.0f, -133)), mode);
    EXPECT_EQ(q.scale, 0);
    EXPECT_EQ(q.data[0], 0x08);
    Quantized q2 = quantizeBlock(block(std::ldexp(1.0f, -149)), mode);
    EXPECT_EQ(q2.scale, 0);
    EXPECT_EQ(q2.data[0], 0x00);
  }
}

TEST(MXFormats, GoldenMixedUnderflow) {
  auto x = block(1.0f);
  x[4] = std::ldexp(1.0f, -149);
  x[5] = -std::ldexp(1.0f, -149);
  for (auto mode : {ScaleRounding::Floor, ScaleRounding::RCeil}) {
    Quantized q = quantizeBlock(x, mode);
    EXPECT_EQ(q.scale, 119);
    EXPECT_EQ(q.data[0], 0x78);
    EXPECT_EQ(q.data[4], 0x00);
    EXPECT_EQ(q.data[5], 0x80);
  }
}

TEST(MXFormats, GoldenSaturationAndUnderflow) {
  auto x = block(1.0f);
  x[0] = std::numeric_limits<float>::max();
  Quantized floor = quantizeBlock(x, ScaleRounding::Floor);
  EXPECT_EQ(floor.scale, 246);
  EXPECT_EQ(floor.data[0], 0x7E);
  EXPECT_EQ(floor.data[1], 0x00);
  Quantized rceil = quantizeBlock(x, ScaleRounding::RCeil);
  EXPECT_EQ(rceil.scale, 247);
  EXPECT_EQ(rceil.data[0], 0x78);
  EXPECT_EQ(rceil.data[1], 0x00);
}

TEST(MXFormats, GoldenPrematureBF16) {
  // rceil_premature_bf16: fp32 0x40600001 (3.5 + 1 ulp).
  float x = f32(0x40600001);
  EXPECT_EQ(quantizeBlock(block(x), ScaleRounding::Floor).scale, 120);
  EXPECT_EQ(quantizeBlock(block(x), ScaleRounding::Floor).data[0], 0x7E);
  Quantized r32 = quantizeBlock(block(x), ScaleRounding::RCeil);
  EXPECT_EQ(r32.scale, 121);
  EXPECT_EQ(r32.data[0], 0x76);
  Quantized r16 = quantizeBlock(block(toBF16(x)), ScaleRounding::RCeil);
  EXPECT_EQ(r16.scale, 120);
  EXPECT_EQ(r16.data[0], 0x7E);
  // floor_premature_bf16: fp32 0x43FFFFFF (just below 512).
  float y = f32(0x43FFFFFF);
  Quantized f32q = quantizeBlock(block(y), ScaleRounding::Floor);
  EXPECT_EQ(f32q.scale, 127);
  EXPECT_EQ(f32q.data[0], 0x7E);
  Quantized f16q = quantizeBlock(block(toBF16(y)), ScaleRounding::Floor);
  EXPECT_EQ(f16q.scale, 128);
  EXPECT_EQ(f16q.data[0], 0x78);
  EXPECT_EQ(quantizeBlock(block(y), ScaleRounding::RCeil).scale, 128);
  EXPECT_EQ(quantizeBlock(block(y), ScaleRounding::RCeil).data[0], 0x78);
}

TEST(MXFormats, GoldenSatfinite) {
  auto x = block(480.0f);
  x[1] = -480.0f;
  Quantized floor = quantizeBlock(x, ScaleRounding::Floor);
  EXPECT_EQ(floor.scale, 127);
  EXPECT_EQ(floor.data[0], 0x7E);
  EXPECT_EQ(floor.data[1], 0xFE);
  Quantized rceil = quantizeBlock(x, ScaleRounding::RCeil);
  EXPECT_EQ(rceil.scale, 128);
  EXPECT_EQ(rceil.data[0], 0x77);
  EXPECT_EQ(rceil.data[1], 0xF7);
}

TEST(MXFormats, CeilAndEven) {
  // CEIL: s = ceil(log2 amax) - 8. amax = 1.0 -> -8 (119); 1.5 -> -7 (120).
  EXPECT_EQ(computeScaleByte(1.0f, MXElementKind::E4M3, ScaleRounding::Ceil),
            119);
  EXPECT_EQ(computeScaleByte(1.5f, MXElementKind::E4M3, ScaleRounding::Ceil),
            120);
  // EVEN rounds amax to 3 mantissa bits first: 1.9375 -> 2.0 -> s = -7;
  // 1.875 stays -> s = -8.
  EXPECT_EQ(computeScaleByte(1.9375f, MXElementKind::E4M3, ScaleRounding::Even),
            120);
  EXPECT_EQ(computeScaleByte(1.875f, MXElementKind::E4M3, ScaleRounding::Even),
            119);
  // MXFP4 (E2M1): FLOOR emax 2, RCEIL max_pos 6: amax 6 -> 0 / 2^0.
  EXPECT_EQ(computeScaleByte(6.0f, MXElementKind::E2M1, ScaleRounding::Floor),
            127);
  EXPECT_EQ(computeScaleByte(6.0f, MXElementKind::E2M1, ScaleRounding::RCeil),
            127);
  EXPECT_EQ(computeScaleByte(7.0f, MXElementKind::E2M1, ScaleRounding::RCeil),
            128);
}
