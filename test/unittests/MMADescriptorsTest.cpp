//===- MMADescriptorsTest.cpp - tcgen05 / wgmma descriptor encoders -------===//
//
// Expected values are hexadecimal constants written by hand from the bit
// tables of PTX ISA 9.7.16.4.1 / 9.7.16.4.2 / 9.7.15.5.1 (as CUTLASS
// cute/arch/mma_sm100_desc.hpp and mma_sm90_desc.hpp encode them), not
// computed with the functions under test. Field values used below:
//   block-scaled idesc: sfbId k -> k<<4; A type code c -> c<<7 (E5M2 0x80,
//   E2M3 0x180, E3M2 0x200, E2M1 0x280); B type c -> c<<10 (E5M2 0x400, E2M3
//   0xC00, E3M2 0x1000, E2M1 0x1400); negate A/B 0x2000/0x4000; MN-major A/B
//   0x8000/0x10000; N>>3 at 17 (N16 0x40000, N32 0x80000, N64 0x100000, N96
//   0x180000, N128 0x200000, N192 0x300000, N240 0x3C0000, N256 0x400000);
//   UE8M0 0x800000; M128 0x08000000, M64 0x04000000; sfaId k -> k<<29.
//   smem desc: addr field (addr>>4); LBO>>4 at 16; SBO>>4 at 32; tcgen05
//   version 0x0000400000000000; base offset b<<49; tcgen05 swizzle code<<61
//   (128B 0x4000..., 128B_base32B 0x2000..., 64B 0x8000..., 32B 0xC000...);
//   wgmma swizzle code<<62 (128B 0x4000..., 64B 0x8000..., 32B 0xC000...).
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Conversion/MMADescriptors.h"

#include <gtest/gtest.h>

#include <vector>

using namespace mxmoe;

namespace {

using K = Tcgen05TypeCode;

Tcgen05BlockScaledConfig bs(K a, K b, unsigned n, unsigned sfa = 0,
                            unsigned sfb = 0) {
  Tcgen05BlockScaledConfig c;
  c.aType = a;
  c.bType = b;
  c.n = n;
  c.sfaId = sfa;
  c.sfbId = sfb;
  return c;
}

bool sameConfig(const Tcgen05BlockScaledConfig &x,
                const Tcgen05BlockScaledConfig &y) {
  return x.aType == y.aType && x.bType == y.bType && x.m == y.m && x.n == y.n &&
         x.sfaId == y.sfaId && x.sfbId == y.sfbId && x.negateA == y.negateA &&
         x.negateB == y.negateB && x.aMajor == y.aMajor && x.bMajor == y.bMajor;
}

bool sameConfig(const Tcgen05F8F6F4Config &x, const Tcgen05F8F6F4Config &y) {
  return x.dType == y.dType && x.aType == y.aType && x.bType == y.bType &&
         x.m == y.m && x.n == y.n && x.negateA == y.negateA &&
         x.negateB == y.negateB && x.aMajor == y.aMajor && x.bMajor == y.bMajor;
}

bool contains(const std::string &s, const std::string &sub) {
  return s.find(sub) != std::string::npos;
}

// Compile-time use: the encoders are constexpr.
static_assert(encodeTcgen05BlockScaledInstrDesc(Tcgen05BlockScaledConfig{}) ==
                  0x08A00000u,
              "default block-scaled descriptor");
static_assert(kTcgen05ScaleFactorSrcDescConstant == 0x0000400800000000ull,
              "scale-factor source descriptor");
static_assert(wgmmaSmemDescConstantPart(16, 1024, WgmmaSwizzle::Swizzle128B) ==
                  ((1ull << 62) | (64ull << 32) | (1ull << 16)),
              "Hopper SW128 constant part");

} // namespace

//===----------------------------------------------------------------------===//
// Element kinds
//===----------------------------------------------------------------------===//

TEST(MMADescriptors, Tcgen05TypeCodes) {
  EXPECT_EQ(static_cast<uint32_t>(K::E4M3), 0u);
  EXPECT_EQ(static_cast<uint32_t>(K::E5M2), 1u);
  EXPECT_EQ(static_cast<uint32_t>(K::E2M3), 3u);
  EXPECT_EQ(static_cast<uint32_t>(K::E3M2), 4u);
  EXPECT_EQ(static_cast<uint32_t>(K::E2M1), 5u);
  for (uint32_t c : {2u, 6u, 7u, 8u})
    EXPECT_FALSE(isValidTcgen05TypeCode(c)) << c;
  EXPECT_TRUE(isTcgen05TypeCode8Bit(K::E4M3));
  EXPECT_TRUE(isTcgen05TypeCode8Bit(K::E5M2));
  EXPECT_FALSE(isTcgen05TypeCode8Bit(K::E2M3));
  EXPECT_FALSE(isTcgen05TypeCode8Bit(K::E3M2));
  EXPECT_FALSE(isTcgen05TypeCode8Bit(K::E2M1));
}

TEST(MMADescriptors, Tcgen05TypeCodeAgreesWithFormatTable) {
  // MXFormats.cpp carries its own copy of the PTX type codes.
  for (MXElementKind k :
       {MXElementKind::E4M3, MXElementKind::E5M2, MXElementKind::E2M3,
        MXElementKind::E3M2, MXElementKind::E2M1})
    EXPECT_EQ(static_cast<uint32_t>(toTcgen05TypeCode(k)),
              getMXElementFormat(k).tcgen05TypeCode)
        << getMXElementFormat(k).mxName;
}

//===----------------------------------------------------------------------===//
// Block-scaled instruction descriptor
//===----------------------------------------------------------------------===//

TEST(MMADescriptors, BlockScaledInstrDescGolden) {
  struct Case {
    Tcgen05BlockScaledConfig cfg;
    uint32_t expected;
  };
  std::vector<Case> cases = {
      {bs(K::E4M3, K::E4M3, 128), 0x08A00000u},
      {bs(K::E4M3, K::E4M3, 64), 0x08900000u},
      {bs(K::E4M3, K::E4M3, 256), 0x08C00000u},
      {bs(K::E4M3, K::E4M3, 16), 0x08840000u},
      {bs(K::E4M3, K::E4M3, 128, 3, 3), 0x68A00030u},
      {bs(K::E5M2, K::E4M3, 128), 0x08A00080u},
      {bs(K::E4M3, K::E5M2, 128), 0x08A00400u},
      {bs(K::E2M1, K::E2M1, 128), 0x08A01680u},
      {bs(K::E2M3, K::E3M2, 192), 0x08B01180u},
      {bs(K::E3M2, K::E2M1, 96), 0x08981600u},
      {bs(K::E4M3, K::E4M3, 32, 1, 2), 0x28880020u},
      {bs(K::E5M2, K::E5M2, 240, 2, 1), 0x48BC0490u},
  };
  Tcgen05BlockScaledConfig mn = bs(K::E4M3, K::E4M3, 128);
  mn.aMajor = MMAMajor::MN;
  mn.bMajor = MMAMajor::MN;
  cases.push_back({mn, 0x08A18000u});
  Tcgen05BlockScaledConfig neg = bs(K::E4M3, K::E4M3, 64);
  neg.negateA = true;
  neg.negateB = true;
  cases.push_back({neg, 0x08906000u});

  for (const Case &c : cases) {
    EXPECT_EQ(checkTcgen05BlockScaledConfig(c.cfg), "");
    EXPECT_EQ(encodeTcgen05BlockScaledInstrDesc(c.cfg), c.expected)
        << std::hex << "expected 0x" << c.expected;
  }
  // The same value in decimal (0x08A00000: e4m3 x e4m3, UE8M0, M/N 128).
  EXPECT_EQ(encodeTcgen05BlockScaledInstrDesc(bs(K::E4M3, K::E4M3, 128)),
            144703488u);
}

TEST(MMADescriptors, BlockScaledInstrDescRejects) {
  struct Case {
    Tcgen05BlockScaledConfig cfg;
    const char *rule;
  };
  std::vector<Case> cases;
  auto add = [&](Tcgen05BlockScaledConfig c, const char *rule) {
    cases.push_back({c, rule});
  };
  Tcgen05BlockScaledConfig c;
  c = bs(K::E4M3, K::E4M3, 128);
  c.m = 64;
  add(c, "requires M = 128");
  c.m = 256;
  add(c, "M = 256 needs cta_group::2");
  c.m = 0;
  add(c, "requires M = 128");
  add(bs(K::E4M3, K::E4M3, 8), "N % 16 == 0");
  add(bs(K::E4M3, K::E4M3, 0), "16 <= N <= 256");
  add(bs(K::E4M3, K::E4M3, 200), "N = 200");
  add(bs(K::E4M3, K::E4M3, 24), "N % 16 == 0");
  add(bs(K::E4M3, K::E4M3, 272), "16 <= N <= 256");
  add(bs(K::E4M3, K::E4M3, 128, 4, 0), "sfaId = 4");
  add(bs(K::E4M3, K::E4M3, 128, 0, 4), "sfbId = 4");
  add(bs(static_cast<K>(2), K::E4M3, 128), "aType = code 2");
  add(bs(K::E4M3, static_cast<K>(6), 128), "bType = code 6");
  add(bs(K::E4M3, static_cast<K>(7), 128), "not a kind::mxf8f6f4 element");
  for (K sub : {K::E2M3, K::E3M2, K::E2M1}) {
    c = bs(sub, K::E4M3, 128);
    c.aMajor = MMAMajor::MN;
    add(c, "MN-major operands are only supported for 8-bit types");
    c = bs(K::E4M3, sub, 128);
    c.bMajor = MMAMajor::MN;
    add(c, "bMajor = MN with bType");
  }
  c = bs(K::E4M3, K::E4M3, 128);
  c.aMajor = static_cast<MMAMajor>(2);
  add(c, "MMAMajor::K (0) or MMAMajor::MN (1)");

  for (const Case &k : cases) {
    std::string err = checkTcgen05BlockScaledConfig(k.cfg);
    EXPECT_TRUE(contains(err, k.rule))
        << "error: '" << err << "', expected rule: " << k.rule;
  }
  // Boundary values that are accepted.
  EXPECT_EQ(checkTcgen05BlockScaledConfig(bs(K::E4M3, K::E4M3, 16, 3, 3)), "");
  EXPECT_EQ(checkTcgen05BlockScaledConfig(bs(K::E2M1, K::E2M1, 256)), "");
}

TEST(MMADescriptors, BlockScaledRoundTrip) {
  int count = 0;
  for (K a : {K::E4M3, K::E5M2, K::E2M3, K::E3M2, K::E2M1})
    for (K b : {K::E4M3, K::E5M2, K::E2M3, K::E3M2, K::E2M1})
      for (unsigned n = 16; n <= 256; n += 16)
        for (unsigned id = 0; id < 4; ++id)
          for (int flags = 0; flags < 16; ++flags) {
            Tcgen05BlockScaledConfig c = bs(a, b, n, id, 3 - id);
            c.negateA = flags & 1;
            c.negateB = flags & 2;
            c.aMajor = (flags & 4) ? MMAMajor::MN : MMAMajor::K;
            c.bMajor = (flags & 8) ? MMAMajor::MN : MMAMajor::K;
            if (!checkTcgen05BlockScaledConfig(c).empty())
              continue;
            uint32_t d = encodeTcgen05BlockScaledInstrDesc(c);
            auto back = decodeTcgen05BlockScaledInstrDesc(d);
            ASSERT_TRUE(back.has_value()) << std::hex << d;
            EXPECT_TRUE(sameConfig(*back, c)) << std::hex << d;
            ++count;
          }
  EXPECT_GT(count, 1000);
}

TEST(MMADescriptors, BlockScaledDecodeGoldenAndRejects) {
  auto d = decodeTcgen05BlockScaledInstrDesc(0x68A00030u);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->m, 128u);
  EXPECT_EQ(d->n, 128u);
  EXPECT_EQ(d->sfaId, 3u);
  EXPECT_EQ(d->sfbId, 3u);
  EXPECT_EQ(d->aType, K::E4M3);
  EXPECT_EQ(d->bType, K::E4M3);
  d = decodeTcgen05BlockScaledInstrDesc(0x08B01180u);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->aType, K::E2M3);
  EXPECT_EQ(d->bType, K::E3M2);
  EXPECT_EQ(d->n, 192u);

  // Words the encoder cannot produce.
  EXPECT_FALSE(decodeTcgen05BlockScaledInstrDesc(0x08200000u)); // no UE8M0
  EXPECT_FALSE(decodeTcgen05BlockScaledInstrDesc(0x08200010u)); // dense idesc
  EXPECT_FALSE(decodeTcgen05BlockScaledInstrDesc(0x08A00001u)); // bit 0
  EXPECT_FALSE(decodeTcgen05BlockScaledInstrDesc(0x08A00004u)); // sparsity
  EXPECT_FALSE(decodeTcgen05BlockScaledInstrDesc(0x08A00008u)); // bit 3
  EXPECT_FALSE(decodeTcgen05BlockScaledInstrDesc(0x08A00040u)); // bit 6
  EXPECT_FALSE(decodeTcgen05BlockScaledInstrDesc(0x88A00000u)); // bit 31
  EXPECT_FALSE(decodeTcgen05BlockScaledInstrDesc(0x08A00100u)); // A code 2
  EXPECT_FALSE(decodeTcgen05BlockScaledInstrDesc(0x08A01800u)); // B code 6
  EXPECT_FALSE(decodeTcgen05BlockScaledInstrDesc(0x08A00380u)); // A code 7
}

TEST(MMADescriptors, BlockScaledFieldIsolation) {
  // Changing one field changes only that field's bits (hand-written masks).
  const Tcgen05BlockScaledConfig base = bs(K::E4M3, K::E4M3, 128);
  const uint32_t b = encodeTcgen05BlockScaledInstrDesc(base);
  struct Case {
    const char *field;
    Tcgen05BlockScaledConfig cfg;
    uint32_t mask;
  };
  std::vector<Case> cases;
  Tcgen05BlockScaledConfig c;
  c = base;
  c.sfbId = 2;
  cases.push_back({"sfbId", c, 0x00000030u});
  c = base;
  c.sfaId = 1;
  cases.push_back({"sfaId", c, 0x60000000u});
  c = base;
  c.aType = K::E2M1;
  cases.push_back({"aType", c, 0x00000380u});
  c = base;
  c.bType = K::E3M2;
  cases.push_back({"bType", c, 0x00001C00u});
  c = base;
  c.negateA = true;
  cases.push_back({"negateA", c, 0x00002000u});
  c = base;
  c.negateB = true;
  cases.push_back({"negateB", c, 0x00004000u});
  c = base;
  c.aMajor = MMAMajor::MN;
  cases.push_back({"aMajor", c, 0x00008000u});
  c = base;
  c.bMajor = MMAMajor::MN;
  cases.push_back({"bMajor", c, 0x00010000u});
  c = base;
  c.n = 48;
  cases.push_back({"n", c, 0x007E0000u});
  c = base;
  c.n = 256;
  cases.push_back({"n", c, 0x007E0000u});
  for (const Case &k : cases) {
    ASSERT_EQ(checkTcgen05BlockScaledConfig(k.cfg), "") << k.field;
    uint32_t diff = encodeTcgen05BlockScaledInstrDesc(k.cfg) ^ b;
    EXPECT_NE(diff, 0u) << k.field;
    EXPECT_EQ(diff & ~k.mask, 0u) << k.field << std::hex << " diff 0x" << diff;
  }
  // M is only checkable through the encoder (M must be 128): M 256 -> bits
  // 24-28 only.
  c = base;
  c.m = 256;
  EXPECT_EQ(encodeTcgen05BlockScaledInstrDesc(c) ^ b, 0x18000000u);
  // Out-of-range inputs are masked to their field, never spill over.
  c = base;
  c.sfaId = 7; // masked to 3
  EXPECT_EQ(encodeTcgen05BlockScaledInstrDesc(c) & 0x80000000u, 0u);
  c = base;
  c.n = 1024; // N>>3 = 128 masked to 6 bits = 0
  EXPECT_EQ(encodeTcgen05BlockScaledInstrDesc(c) & 0x00800000u, 0x00800000u);
  EXPECT_EQ(encodeTcgen05BlockScaledInstrDesc(c) & 0x007E0000u, 0u);
}

TEST(MMADescriptors, WithScaleIds) {
  const uint32_t base = 0x08A00000u;
  EXPECT_EQ(tcgen05InstrDescWithScaleIds(base, 0, 0), 0x08A00000u);
  EXPECT_EQ(tcgen05InstrDescWithScaleIds(base, 1, 1), 0x28A00010u);
  EXPECT_EQ(tcgen05InstrDescWithScaleIds(base, 2, 2), 0x48A00020u);
  EXPECT_EQ(tcgen05InstrDescWithScaleIds(base, 3, 3), 0x68A00030u);
  EXPECT_EQ(tcgen05InstrDescWithScaleIds(base, 3, 0), 0x68A00000u);
  EXPECT_EQ(tcgen05InstrDescWithScaleIds(base, 0, 3), 0x08A00030u);
  // Replaces existing ids rather than OR-ing them.
  EXPECT_EQ(tcgen05InstrDescWithScaleIds(0x68A00030u, 1, 2), 0x28A00020u);
  EXPECT_EQ(tcgen05InstrDescWithScaleIds(0x68A00030u, 0, 0), 0x08A00000u);
  // Keeps every other field (e5m2 x e5m2, N 240, negate A).
  EXPECT_EQ(tcgen05InstrDescWithScaleIds(0x48BC2490u, 0, 3), 0x08BC24B0u);
  EXPECT_EQ(checkTcgen05ScaleIds(3, 3), "");
  EXPECT_TRUE(contains(checkTcgen05ScaleIds(4, 0), "must be in 0..3"));
  EXPECT_TRUE(contains(checkTcgen05ScaleIds(0, 9), "sfbId = 9"));
}

//===----------------------------------------------------------------------===//
// Non-scaled kind::f8f6f4 instruction descriptor
//===----------------------------------------------------------------------===//

namespace {
Tcgen05F8F6F4Config dense(K a, K b, unsigned m, unsigned n,
                          Tcgen05DType d = Tcgen05DType::F32) {
  Tcgen05F8F6F4Config c;
  c.aType = a;
  c.bType = b;
  c.m = m;
  c.n = n;
  c.dType = d;
  return c;
}
} // namespace

TEST(MMADescriptors, DenseInstrDescGolden) {
  struct Case {
    Tcgen05F8F6F4Config cfg;
    uint32_t expected;
  };
  std::vector<Case> cases = {
      {dense(K::E4M3, K::E4M3, 128, 128), 0x08200010u},
      {dense(K::E4M3, K::E4M3, 128, 128, Tcgen05DType::F16), 0x08200000u},
      {dense(K::E4M3, K::E4M3, 64, 8), 0x04020010u},
      {dense(K::E4M3, K::E4M3, 64, 256), 0x04400010u},
      {dense(K::E5M2, K::E4M3, 128, 16), 0x08040090u},
      {dense(K::E2M1, K::E2M1, 128, 64), 0x08101690u},
      {dense(K::E3M2, K::E2M3, 64, 24, Tcgen05DType::F16), 0x04060E00u},
      {dense(K::E5M2, K::E5M2, 128, 192), 0x08300490u},
  };
  Tcgen05F8F6F4Config c = dense(K::E4M3, K::E4M3, 128, 128);
  c.aMajor = MMAMajor::MN;
  c.bMajor = MMAMajor::MN;
  cases.push_back({c, 0x08218010u});
  c = dense(K::E4M3, K::E4M3, 128, 128);
  c.negateA = true;
  c.negateB = true;
  cases.push_back({c, 0x08206010u});
  for (const Case &k : cases) {
    EXPECT_EQ(checkTcgen05F8F6F4Config(k.cfg), "");
    EXPECT_EQ(encodeTcgen05F8F6F4InstrDesc(k.cfg), k.expected)
        << std::hex << "expected 0x" << k.expected;
    auto back = decodeTcgen05F8F6F4InstrDesc(k.expected);
    ASSERT_TRUE(back.has_value());
    EXPECT_TRUE(sameConfig(*back, k.cfg)) << std::hex << k.expected;
  }
}

TEST(MMADescriptors, DenseAndBlockScaledDescriptorsDiffer) {
  // Same shape and types: the dense descriptor has dtype F32 = 1 at bit 4
  // (which the scaled table reads as SFB_ID = 1) and no UE8M0 bit 23.
  uint32_t scaled =
      encodeTcgen05BlockScaledInstrDesc(bs(K::E4M3, K::E4M3, 128));
  uint32_t plain =
      encodeTcgen05F8F6F4InstrDesc(dense(K::E4M3, K::E4M3, 128, 128));
  EXPECT_EQ(scaled, 0x08A00000u);
  EXPECT_EQ(plain, 0x08200010u);
  EXPECT_EQ(scaled ^ plain, 0x00800010u);
  // Read as a block-scaled word, the dense one is rejected (no UE8M0 bit).
  EXPECT_FALSE(decodeTcgen05BlockScaledInstrDesc(plain).has_value());
  // And the scaled one is rejected as a dense word (bit 23 is reserved).
  EXPECT_FALSE(decodeTcgen05F8F6F4InstrDesc(scaled).has_value());
  // Same ids trap: the scaled word with sfbId 1 differs from the dense word
  // only by bit 23.
  EXPECT_EQ(tcgen05InstrDescWithScaleIds(scaled, 0, 1) ^ plain, 0x00800000u);
}

TEST(MMADescriptors, DenseInstrDescRejects) {
  struct Case {
    Tcgen05F8F6F4Config cfg;
    const char *rule;
  } cases[] = {
      {dense(K::E4M3, K::E4M3, 256, 128), "requires M = 64 or M = 128"},
      {dense(K::E4M3, K::E4M3, 32, 128), "requires M = 64 or M = 128"},
      {dense(K::E4M3, K::E4M3, 128, 8), "multiple of 16 in [16, 256]"},
      {dense(K::E4M3, K::E4M3, 128, 264), "multiple of 16 in [16, 256]"},
      {dense(K::E4M3, K::E4M3, 64, 12), "multiple of 8 in [8, 256]"},
      {dense(K::E4M3, K::E4M3, 64, 0), "multiple of 8 in [8, 256]"},
      {dense(K::E4M3, K::E4M3, 64, 264), "multiple of 8 in [8, 256]"},
      {dense(static_cast<K>(2), K::E4M3, 128, 128), "aType = code 2"},
      {dense(K::E4M3, static_cast<K>(7), 128, 128), "bType = code 7"},
      {dense(K::E4M3, K::E4M3, 128, 128, static_cast<Tcgen05DType>(2)),
       "F16 (0) or F32 (1)"},
  };
  for (const Case &k : cases) {
    std::string err = checkTcgen05F8F6F4Config(k.cfg);
    EXPECT_TRUE(contains(err, k.rule))
        << "error: '" << err << "', expected rule: " << k.rule;
  }
  Tcgen05F8F6F4Config c = dense(K::E2M1, K::E4M3, 128, 128);
  c.aMajor = MMAMajor::MN;
  EXPECT_TRUE(
      contains(checkTcgen05F8F6F4Config(c), "only supported for 8-bit"));
  c = dense(K::E4M3, K::E2M3, 128, 128);
  c.bMajor = MMAMajor::MN;
  EXPECT_TRUE(contains(checkTcgen05F8F6F4Config(c), "bMajor = MN"));
  // Dense decode rejects: saturate bit 3, dtype 2, max shift bits 30-31.
  EXPECT_FALSE(decodeTcgen05F8F6F4InstrDesc(0x08200018u).has_value());
  EXPECT_FALSE(decodeTcgen05F8F6F4InstrDesc(0x08200020u).has_value());
  EXPECT_FALSE(decodeTcgen05F8F6F4InstrDesc(0x48200010u).has_value());
}

//===----------------------------------------------------------------------===//
// tcgen05 shared-memory descriptor
//===----------------------------------------------------------------------===//

namespace {
struct SmemCase {
  uint32_t addr, lbo, sbo;
  unsigned swizzle; // raw code
  unsigned base;
  uint64_t expected;
};
} // namespace

TEST(MMADescriptors, Tcgen05SmemDescGolden) {
  const SmemCase cases[] = {
      {0, 16, 1024, 2, 0, 0x4000404000010000ull},     // SW128 K-major e4m3
      {0x400, 16, 1024, 2, 0, 0x4000404000010040ull}, // next 1024-B tile
      {0x420, 16, 1024, 2, 0, 0x4000404000010042ull}, // +32 B (K step 1)
      {0, 0, 128, 0, 0, 0x0000400800000000ull},       // SF source desc
      {0x1200, 0, 128, 0, 0, 0x0000400800000120ull},  // SF atom at 0x1200
      {0x800, 16, 512, 4, 0, 0x8000402000010080ull},  // SW64
      {0x100, 16, 256, 6, 0, 0xC000401000010010ull},  // SW32
      {0, 16, 1024, 1, 0, 0x2000404000010000ull},     // SW128 base32B
      {0x280, 16, 1024, 2, 5, 0x400A404000010028ull}, // base offset 5
      {0x3FFF0, 262128, 262128, 0, 7, 0x000E7FFF3FFF3FFFull}, // all maxima
      {0x10, 128, 256, 0, 0, 0x0000401000080001ull},          // no swizzle
      {0x3FFF0, 0, 0, 0, 0, 0x0000400000003FFFull},
  };
  for (const SmemCase &c : cases) {
    auto swz = static_cast<Tcgen05Swizzle>(c.swizzle);
    EXPECT_EQ(checkTcgen05SmemDesc(c.addr, c.lbo, c.sbo, swz, c.base), "");
    EXPECT_EQ(encodeTcgen05SmemDesc(c.addr, c.lbo, c.sbo, swz, c.base),
              c.expected)
        << std::hex << "expected 0x" << c.expected;
    auto f = decodeTcgen05SmemDesc(c.expected);
    ASSERT_TRUE(f.has_value()) << std::hex << c.expected;
    EXPECT_EQ(f->startAddrBytes, c.addr);
    EXPECT_EQ(f->lboBytes, c.lbo);
    EXPECT_EQ(f->sboBytes, c.sbo);
    EXPECT_EQ(f->swizzleCode, c.swizzle);
    EXPECT_EQ(f->baseOffset, c.base);
  }
}

TEST(MMADescriptors, Tcgen05ConstantParts) {
  EXPECT_EQ(tcgen05SmemDescConstantPart(16, 1024, Tcgen05Swizzle::Swizzle128B),
            0x4000404000010000ull);
  EXPECT_EQ(kTcgen05ScaleFactorSrcDescConstant, 0x0000400800000000ull);
  EXPECT_EQ(tcgen05ScaleFactorSrcDesc(0x1200), 0x0000400800000120ull);
  EXPECT_EQ(tcgen05ScaleFactorSrcDesc(0x3FFF0), 0x0000400800003FFFull);
  // Kernel-side composition: constant | (addr & 0x3FFFF) >> 4.
  EXPECT_EQ(smemDescStartAddressField(0x400), 0x40ull);
  EXPECT_EQ(smemDescStartAddressField(0x3FFF0), 0x3FFFull);
  EXPECT_EQ(smemDescStartAddressField(0x40400), 0x40ull); // window wraps
  EXPECT_EQ(tcgen05SmemDescConstantPart(16, 1024, Tcgen05Swizzle::Swizzle128B) |
                smemDescStartAddressField(0x420),
            0x4000404000010042ull);
}

TEST(MMADescriptors, Tcgen05SmemDescRejects) {
  struct Case {
    uint32_t addr, lbo, sbo;
    unsigned swizzle, base;
    const char *rule;
  } cases[] = {
      {0x408, 16, 1024, 2, 0, "is not 16-byte aligned"},
      {0x1, 16, 1024, 2, 0, "is not 16-byte aligned"},
      {0x40000, 16, 1024, 2, 0, "outside the 18-bit shared-memory window"},
      {0x100000, 16, 1024, 2, 0, "outside the 18-bit shared-memory window"},
      {0, 24, 1024, 2, 0, "LBO = 24 bytes is not a multiple of 16"},
      {0, 262144, 1024, 2, 0, "LBO >> 4 = 16384 does not fit in 14 bits"},
      {0, 16, 1000, 2, 0, "SBO = 1000 bytes is not a multiple of 16"},
      {0, 16, 262144, 2, 0, "SBO >> 4 = 16384 does not fit in 14 bits"},
      {0, 16, 1024, 2, 8, "base offset 8 is out of range"},
      {0, 16, 1024, 3, 0, "swizzle code 3 is not a tcgen05 swizzle mode"},
      {0, 16, 1024, 5, 0, "swizzle code 5 is not a tcgen05 swizzle mode"},
      {0, 16, 1024, 7, 0, "swizzle code 7 is not a tcgen05 swizzle mode"},
  };
  for (const Case &c : cases) {
    std::string err = checkTcgen05SmemDesc(
        c.addr, c.lbo, c.sbo, static_cast<Tcgen05Swizzle>(c.swizzle), c.base);
    EXPECT_TRUE(contains(err, c.rule))
        << "error: '" << err << "', expected rule: " << c.rule;
  }
  // Decode rejects words the encoder never produces.
  EXPECT_FALSE(decodeTcgen05SmemDesc(0x4000004000010000ull)); // no version
  EXPECT_FALSE(decodeTcgen05SmemDesc(0x4000C04000010000ull)); // 0b011
  EXPECT_FALSE(decodeTcgen05SmemDesc(0x4010404000010000ull)); // LBO mode 52
  EXPECT_FALSE(decodeTcgen05SmemDesc(0x4020404000010000ull)); // bit 53
  EXPECT_FALSE(decodeTcgen05SmemDesc(0x6000404000010000ull)); // swizzle 3
  EXPECT_FALSE(decodeTcgen05SmemDesc(0x4000404000014000ull)); // bit 14
  EXPECT_FALSE(decodeTcgen05SmemDesc(0x4000404040010000ull)); // bit 30
}

TEST(MMADescriptors, Tcgen05SmemDescFieldIsolation) {
  const uint64_t b =
      encodeTcgen05SmemDesc(0x400, 16, 1024, Tcgen05Swizzle::Swizzle128B, 0);
  struct Case {
    const char *field;
    uint64_t desc, mask;
  } cases[] = {
      {"addr",
       encodeTcgen05SmemDesc(0x3FF0, 16, 1024, Tcgen05Swizzle::Swizzle128B, 0),
       0x0000000000003FFFull},
      {"lbo",
       encodeTcgen05SmemDesc(0x400, 4096, 1024, Tcgen05Swizzle::Swizzle128B, 0),
       0x000000003FFF0000ull},
      {"sbo",
       encodeTcgen05SmemDesc(0x400, 16, 2048, Tcgen05Swizzle::Swizzle128B, 0),
       0x00003FFF00000000ull},
      {"base",
       encodeTcgen05SmemDesc(0x400, 16, 1024, Tcgen05Swizzle::Swizzle128B, 3),
       0x000E000000000000ull},
      {"swizzle",
       encodeTcgen05SmemDesc(0x400, 16, 1024, Tcgen05Swizzle::Swizzle32B, 0),
       0xE000000000000000ull},
      {"swizzle none",
       encodeTcgen05SmemDesc(0x400, 16, 1024, Tcgen05Swizzle::None, 0),
       0xE000000000000000ull},
  };
  for (const Case &c : cases) {
    uint64_t diff = c.desc ^ b;
    EXPECT_NE(diff, 0u) << c.field;
    EXPECT_EQ(diff & ~c.mask, 0u) << c.field << std::hex << " diff 0x" << diff;
  }
  // Out-of-range inputs are masked and never touch the version bits 46-48.
  uint64_t bad = encodeTcgen05SmemDesc(0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF,
                                       static_cast<Tcgen05Swizzle>(0xFF), 0xFF);
  EXPECT_EQ(bad & (0x7ull << 46), 1ull << 46);
  EXPECT_EQ(bad & ((0x3ull << 14) | (0x3ull << 30) | (0x1FFull << 52)), 0u);
}

TEST(MMADescriptors, Tcgen05SmemRoundTrip) {
  int count = 0;
  for (uint32_t addr : {0u, 0x10u, 0x400u, 0x1230u, 0x20000u, 0x3FFF0u})
    for (uint32_t lbo : {0u, 16u, 128u, 4096u, 262128u})
      for (uint32_t sbo : {0u, 128u, 1024u, 65536u, 262128u})
        for (unsigned swz : {0u, 1u, 2u, 4u, 6u})
          for (unsigned base : {0u, 1u, 7u}) {
            auto s = static_cast<Tcgen05Swizzle>(swz);
            ASSERT_EQ(checkTcgen05SmemDesc(addr, lbo, sbo, s, base), "");
            uint64_t d = encodeTcgen05SmemDesc(addr, lbo, sbo, s, base);
            auto f = decodeTcgen05SmemDesc(d);
            ASSERT_TRUE(f.has_value()) << std::hex << d;
            EXPECT_EQ(f->startAddrBytes, addr);
            EXPECT_EQ(f->lboBytes, lbo);
            EXPECT_EQ(f->sboBytes, sbo);
            EXPECT_EQ(f->swizzleCode, swz);
            EXPECT_EQ(f->baseOffset, base);
            ++count;
          }
  EXPECT_EQ(count, 6 * 5 * 5 * 5 * 3);
}

//===----------------------------------------------------------------------===//
// wgmma shared-memory descriptor
//===----------------------------------------------------------------------===//

TEST(MMADescriptors, WgmmaSmemDescGolden) {
  const SmemCase cases[] = {
      {0, 16, 1024, 1, 0, 0x4000004000010000ull},
      {0x400, 16, 1024, 1, 0, 0x4000004000010040ull},
      {0x800, 16, 512, 2, 0, 0x8000002000010080ull},
      {0x100, 16, 256, 3, 0, 0xC000001000010010ull},
      {0x10, 128, 256, 0, 0, 0x0000001000080001ull},
      {0x280, 16, 1024, 1, 5, 0x400A004000010028ull},
      {0x3FFF0, 262128, 262128, 0, 7, 0x000E3FFF3FFF3FFFull},
      {0x2020, 16, 1024, 1, 0, 0x4000004000010202ull},
      {0, 0, 1024, 1, 0, 0x4000004000000000ull},
      {0xC000, 4096, 2048, 2, 0, 0x8000008001000C00ull},
  };
  for (const SmemCase &c : cases) {
    auto swz = static_cast<WgmmaSwizzle>(c.swizzle);
    EXPECT_EQ(checkWgmmaSmemDesc(c.addr, c.lbo, c.sbo, swz, c.base), "");
    EXPECT_EQ(encodeWgmmaSmemDesc(c.addr, c.lbo, c.sbo, swz, c.base),
              c.expected)
        << std::hex << "expected 0x" << c.expected;
    auto f = decodeWgmmaSmemDesc(c.expected);
    ASSERT_TRUE(f.has_value()) << std::hex << c.expected;
    EXPECT_EQ(f->startAddrBytes, c.addr);
    EXPECT_EQ(f->lboBytes, c.lbo);
    EXPECT_EQ(f->sboBytes, c.sbo);
    EXPECT_EQ(f->swizzleCode, c.swizzle);
    EXPECT_EQ(f->baseOffset, c.base);
  }
  EXPECT_EQ(wgmmaSmemDescConstantPart(16, 1024, WgmmaSwizzle::Swizzle128B),
            (1ull << 62) | (64ull << 32) | (1ull << 16));
  EXPECT_EQ(wgmmaSmemDescConstantPart(16, 1024, WgmmaSwizzle::Swizzle128B) |
                smemDescStartAddressField(0x2020),
            0x4000004000010202ull);
}

// What the sm_90a kernel's scale-product wgmma ORs together at run time
// (GroupedMatmul smemDescriptor): the no-swizzle table constant (SBO 128 B),
// the start-address field and a run-time LBO at kSmemDescLboShift.
TEST(MMADescriptors, WgmmaRunTimeLboComposition) {
  constexpr uint64_t table =
      wgmmaSmemDescConstantPart(0, 128, WgmmaSwizzle::None);
  EXPECT_EQ(table, 0x0000000800000000ull);
  EXPECT_EQ(kSmemDescLboShift, 16u);
  for (uint32_t addr : {0x0u, 0x400u, 0x2030u, 0x3FFF0u})
    for (uint32_t lbo : {0u, 16u, 1024u, 0x3FFF0u})
      EXPECT_EQ(table | smemDescStartAddressField(addr) |
                    (uint64_t{lbo >> 4} << kSmemDescLboShift),
                encodeWgmmaSmemDesc(addr, lbo, 128, WgmmaSwizzle::None, 0))
          << std::hex << addr << " " << lbo;
  EXPECT_EQ(smemDescStartAddressField(kSmemDescAddressMask + 1), 0ull);
}

TEST(MMADescriptors, WgmmaVersusTcgen05Swizzle) {
  // Same geometry: the two formats differ only by the tcgen05 version bit 46
  // (the 2-bit wgmma code at 62 equals the 3-bit tcgen05 code at 61).
  struct Pair {
    WgmmaSwizzle w;
    Tcgen05Swizzle t;
  } pairs[] = {{WgmmaSwizzle::None, Tcgen05Swizzle::None},
               {WgmmaSwizzle::Swizzle128B, Tcgen05Swizzle::Swizzle128B},
               {WgmmaSwizzle::Swizzle64B, Tcgen05Swizzle::Swizzle64B},
               {WgmmaSwizzle::Swizzle32B, Tcgen05Swizzle::Swizzle32B}};
  for (const Pair &p : pairs)
    EXPECT_EQ(encodeWgmmaSmemDesc(0x1230, 16, 1024, p.w, 2) ^
                  encodeTcgen05SmemDesc(0x1230, 16, 1024, p.t, 2),
              0x0000400000000000ull);
}

TEST(MMADescriptors, WgmmaSmemDescRejects) {
  struct Case {
    uint32_t addr, lbo, sbo;
    unsigned swizzle, base;
    const char *rule;
  } cases[] = {
      {0x408, 16, 1024, 1, 0, "is not 16-byte aligned"},
      {0x40000, 16, 1024, 1, 0, "outside the 18-bit shared-memory window"},
      {0, 8, 1024, 1, 0, "LBO = 8 bytes is not a multiple of 16"},
      {0, 262144, 1024, 1, 0, "LBO >> 4 = 16384 does not fit in 14 bits"},
      {0, 16, 1032 + 4, 1, 0, "SBO = 1036 bytes is not a multiple of 16"},
      {0, 16, 1u << 20, 1, 0, "SBO >> 4 = 65536 does not fit in 14 bits"},
      {0, 16, 1024, 1, 9, "base offset 9 is out of range"},
      {0, 16, 1024, 4, 0, "swizzle code 4 is not a wgmma swizzle mode"},
      {0, 16, 1024, 6, 0, "swizzle code 6 is not a wgmma swizzle mode"},
  };
  for (const Case &c : cases) {
    std::string err = checkWgmmaSmemDesc(
        c.addr, c.lbo, c.sbo, static_cast<WgmmaSwizzle>(c.swizzle), c.base);
    EXPECT_TRUE(contains(err, c.rule))
        << "error: '" << err << "', expected rule: " << c.rule;
  }
  // A tcgen05 word (version bit 46) is not a wgmma word, and vice versa.
  EXPECT_FALSE(decodeWgmmaSmemDesc(0x4000404000010000ull));
  EXPECT_FALSE(decodeTcgen05SmemDesc(0x4000004000010000ull));
  EXPECT_FALSE(decodeWgmmaSmemDesc(0x4010004000010000ull)); // bit 52
  EXPECT_FALSE(decodeWgmmaSmemDesc(0x2000004000010000ull)); // bit 61
  EXPECT_FALSE(decodeWgmmaSmemDesc(0x4000004000018000ull)); // bit 15
}

TEST(MMADescriptors, WgmmaSmemDescFieldIsolation) {
  const uint64_t b =
      encodeWgmmaSmemDesc(0x400, 16, 1024, WgmmaSwizzle::Swizzle128B, 0);
  struct Case {
    const char *field;
    uint64_t desc, mask;
  } cases[] = {
      {"addr",
       encodeWgmmaSmemDesc(0x10, 16, 1024, WgmmaSwizzle::Swizzle128B, 0),
       0x0000000000003FFFull},
      {"lbo",
       encodeWgmmaSmemDesc(0x400, 262128, 1024, WgmmaSwizzle::Swizzle128B, 0),
       0x000000003FFF0000ull},
      {"sbo", encodeWgmmaSmemDesc(0x400, 16, 16, WgmmaSwizzle::Swizzle128B, 0),
       0x00003FFF00000000ull},
      {"base",
       encodeWgmmaSmemDesc(0x400, 16, 1024, WgmmaSwizzle::Swizzle128B, 7),
       0x000E000000000000ull},
      {"swizzle",
       encodeWgmmaSmemDesc(0x400, 16, 1024, WgmmaSwizzle::Swizzle32B, 0),
       0xC000000000000000ull},
  };
  for (const Case &c : cases) {
    uint64_t diff = c.desc ^ b;
    EXPECT_NE(diff, 0u) << c.field;
    EXPECT_EQ(diff & ~c.mask, 0u) << c.field << std::hex << " diff 0x" << diff;
  }
  uint64_t bad = encodeWgmmaSmemDesc(0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF,
                                     static_cast<WgmmaSwizzle>(0xFF), 0xFF);
  EXPECT_EQ(bad & ((0x3ull << 14) | (0x3ull << 30) | (0x7ull << 46) |
                   (0x3FFull << 52)),
            0u);
}

TEST(MMADescriptors, WgmmaSmemRoundTrip) {
  int count = 0;
  for (uint32_t addr : {0u, 0x10u, 0x400u, 0x1230u, 0x20000u, 0x3FFF0u})
    for (uint32_t lbo : {0u, 16u, 128u, 4096u, 262128u})
      for (uint32_t sbo : {0u, 128u, 1024u, 65536u, 262128u})
        for (unsigned swz : {0u, 1u, 2u, 3u})
          for (unsigned base : {0u, 1u, 7u}) {
            auto s = static_cast<WgmmaSwizzle>(swz);
            ASSERT_EQ(checkWgmmaSmemDesc(addr, lbo, sbo, s, base), "");
            uint64_t d = encodeWgmmaSmemDesc(addr, lbo, sbo, s, base);
            auto f = decodeWgmmaSmemDesc(d);
            ASSERT_TRUE(f.has_value()) << std::hex << d;
            EXPECT_EQ(f->startAddrBytes, addr);
            EXPECT_EQ(f->lboBytes, lbo);
            EXPECT_EQ(f->sboBytes, sbo);
            EXPECT_EQ(f->swizzleCode, swz);
            EXPECT_EQ(f->baseOffset, base);
            ++count;
          }
  EXPECT_EQ(count, 6 * 5 * 5 * 4 * 3);
}
