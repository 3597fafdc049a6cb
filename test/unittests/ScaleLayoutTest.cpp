//===- ScaleLayoutTest.cpp - blocked 128x4 scale layout index math --------===//
//
// Expected values: worked examples of torchao's to_blocked and the
// M-groups / K-groups rearrangements (torch_to_blocked_2d_M_groups,
// torch_to_blocked_2d_K_groups).
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

using namespace mxmoe;

TEST(ScaleLayout, BlockedDims) {
  EXPECT_EQ(getBlockedDims(3, 2).rows, 128);
  EXPECT_EQ(getBlockedDims(3, 2).cols, 4);
  EXPECT_EQ(getBlockedDims(200, 10).rows, 256);
  EXPECT_EQ(getBlockedDims(200, 10).cols, 12);
  EXPECT_EQ(getBlockedDims(128, 4).rows, 128);
  EXPECT_EQ(getBlockedDims(128, 4).cols, 4);
  // gpt-oss K = 2880 -> 90 scale columns -> padded to 92.
  EXPECT_EQ(getBlockedDims(5760, 90).cols, 92);
}

TEST(ScaleLayout, SmallMatrixOffsets) {
  // R, C = 3, 2 -> 128 x 4 (512 B).
  EXPECT_EQ(getBlockedOffset(0, 0, 4), 0);
  EXPECT_EQ(getBlockedOffset(0, 1, 4), 1);
  EXPECT_EQ(getBlockedOffset(1, 0, 4), 16);
  EXPECT_EQ(getBlockedOffset(2, 1, 4), 33);
}

TEST(ScaleLayout, WorkedExample200x10) {
  // R, C = 200, 10 -> 256 x 12 (3072 B), ncb = 3.
  const int64_t cp = 12;
  struct Case {
    int64_t r, c, offset;
  } cases[] = {{0, 3, 3},      {0, 4, 512},   {31, 0, 496},  {32, 0, 4},
               {33, 2, 22},    {70, 9, 1129}, {127, 3, 511}, {128, 0, 1536},
               {130, 5, 2081}, {199, 9, 2681}};
  for (const Case &c : cases) {
    EXPECT_EQ(getBlockedOffset(c.r, c.c, cp), c.offset)
        << "(" << c.r << ", " << c.c << ")";
    ScaleCoord back = getBlockedCoord(c.offset, cp);
    EXPECT_EQ(back.row, c.r);
    EXPECT_EQ(back.col, c.c);
  }
}

TEST(ScaleLayout, BlockedIsABijection) {
  // Every padded (r, c) maps to a distinct byte in [0, Rp*Cp) and back.
  for (auto [rp, cp] :
       {std::pair<int64_t, int64_t>{128, 4}, {256, 12}, {384, 8}, {128, 92}}) {
    std::vector<bool> seen(rp * cp, false);
    for (int64_t r = 0; r < rp; ++r)
      for (int64_t c = 0; c < cp; ++c) {
        int64_t o = getBlockedOffset(r, c, cp);
        ASSERT_GE(o, 0);
        ASSERT_LT(o, rp * cp);
        ASSERT_FALSE(seen[o]) << "collision at " << o;
        seen[o] = true;
        ScaleCoord back = getBlockedCoord(o, cp);
        ASSERT_EQ(back.row, r);
        ASSERT_EQ(back.col, c);
      }
  }
}

TEST(ScaleLayout, AtomRowHoldsFourQuarters) {
  // Atom row i = S[i][0..3], S[i+32][0..3], S[i+64][0..3], S[i+96][0..3]
  // (CUTLASS "M0SF0..M0SF3, M32SF0..": one tcgen05.cp 32x128b lane each).
  for (int64_t i = 0; i < 32; ++i)
    for (int64_t q = 0; q < 4; ++q)
      for (int64_t j = 0; j < 4; ++j)
        EXPECT_EQ(getBlockedOffset(i + 32 * q, j, 4), i * 16 + q * 4 + j);
}

TEST(ScaleLayout, GroupPaddedExtent) {
  EXPECT_EQ(getGroupPaddedExtent(352, 3, 128), 640); // (352+381)/128*128
  EXPECT_EQ(getGroupPaddedExtent(1, 1, 128), 128);
  EXPECT_EQ(getGroupPaddedExtent(0, 1, 128), 0);
  EXPECT_EQ(getGroupPaddedExtent(100, 4, 32), 224); // (100+124)/32*32
  // The bound holds for every split of T into G groups (exhaustive small).
  for (int64_t t = 0; t <= 40; ++t)
    for (int64_t a = 0; a <= t; ++a)
      for (int64_t b = a; b <= t; ++b) {
        int32_t offs[3] = {static_cast<int32_t>(a), static_cast<int32_t>(b),
                           static_cast<int32_t>(t)};
        auto starts = getPaddedGroupStarts(offs, 3, 32);
        EXPECT_LE(starts.back(), getGroupPaddedExtent(t, 3, 32));
      }
}

TEST(ScaleLayout, MGroupsWorkedExample) {
  // K = 256 (C = 8), offs = [96, 96, 352] -> P = [0, 128, 128].
  const int32_t offs[] = {96, 96, 352};
  auto p = getPaddedGroupStarts(offs, 3, 128);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[1], 128);
  EXPECT_EQ(p[2], 128);
  EXPECT_EQ(p[3], 384);
  // S[100][5]: group 2, r = 4 -> 1601; S[95][7] -> 1019; S[351][7] -> 3071.
  EXPECT_EQ(getMGroupedBlockedOffset(100 - 96, 5, p[2], 8), 1601);
  EXPECT_EQ(getMGroupedBlockedOffset(95, 7, p[0], 8), 1019);
  EXPECT_EQ(getMGroupedBlockedOffset(351 - 96, 7, p[2], 8), 3071);
}

TEST(ScaleLayout, KGroupsWorkedExample) {
  // R = 256, token offs [96, 96, 352] -> scale column offsets [3, 3, 11],
  // k = (3, 0, 8), Q = [0, 4, 4].
  const int32_t tokenOffs[] = {96, 96, 352};
  auto tokenStarts = getPaddedGroupStarts(tokenOffs, 3, 32);
  EXPECT_EQ(tokenStarts[1], 96);
  EXPECT_EQ(tokenStarts[2], 96);
  EXPECT_EQ(tokenStarts[3], 352);
  const int32_t scaleOffs[] = {3, 3, 11};
  auto q = getPaddedGroupStarts(scaleOffs, 3, 4);
  EXPECT_EQ(q[0], 0);
  EXPECT_EQ(q[1], 4);
  EXPECT_EQ(q[2], 4);
  EXPECT_EQ(q[3], 12);
  // Element (130, 5) is group 2, c = 2 -> 2082; (5, 3) -> 1104.
  EXPECT_EQ(getKGroupedBlockedOffset(130, 5 - 3, q[2], 8, 256), 2082);
  EXPECT_EQ(getKGroupedBlockedOffset(5, 3 - 3, q[2], 8, 256), 1104);
}

TEST(ScaleLayout, ValidateOffsets) {
  const int32_t good[] = {0, 10, 10, 64};
  EXPECT_EQ(validateGroupEndOffsets(good, 4, 64), "");
  EXPECT_EQ(validateGroupEndOffsets(good, 4, 100), "");
  const int32_t decreasing[] = {16, 64, 40};
  EXPECT_EQ(validateGroupEndOffsets(decreasing, 3, 64),
            "offsets[2] = 40 is smaller than offsets[1] = 64 (offsets must "
            "be non-decreasing)");
  const int32_t past[] = {16, 65};
  EXPECT_EQ(validateGroupEndOffsets(past, 2, 64),
            "offsets[1] = 65 is past the end of the token axis (64 rows)");
  const int32_t negative[] = {-1};
  EXPECT_EQ(validateGroupEndOffsets(negative, 1, 64),
            "offsets[0] = -1 is negative");
}
