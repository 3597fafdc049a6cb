//===- ScaleLayout.h - 128x4 blocked E8M0 scale layout ----------*- C++ -*-===//
//
// Index math of the "blocked 128x4" (SWIZZLE_32_4_4) scale layout read by
// cuBLAS, CUTLASS, PyTorch's _scaled_grouped_mm and the tcgen05 block-scaled
// MMA, and of its grouped variants used by MoE grouped GEMMs. Pure C++ with
// no MLIR dependency: the verifiers, the lowering, the host runtime and the
// unit tests share it.
//
// Sources: pytorch/ao torchao/prototype/mx_formats/utils.py (to_blocked),
// torchao/prototype/moe_training/kernels/mxfp8/quant.py (M-groups and
// K-groups rearrangements), CUTLASS sm100_blockscaled_layout.hpp and
// media/docs/cpp/blackwell_functionality.md ("Scale Factor Layouts"); worked
// examples in test/unittests/ScaleLayoutTest.cpp.
//
// Terms: a scale matrix S has R rows (M for the A operand, N for B) and
// C = K/32 columns (one E8M0 byte per 32-element block along the contraction
// axis K). The blocked layout pads R to Rp = roundUp(R, 128) and C to
// Cp = roundUp(C, 4) and stores 512-byte atoms of 128 rows x 4 columns.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_DIALECT_MXMOE_UTILS_SCALELAYOUT_H
#define MXMOE_DIALECT_MXMOE_UTILS_SCALELAYOUT_H

#include <cstdint>
#include <string>
#include <vector>

namespace mxmoe {

/// Rows of one blocked atom (one tcgen05 M tile).
inline constexpr int64_t kBlockedRows = 128;
/// Scale columns of one blocked atom (4 x 32 = 128 elements of K).
inline constexpr int64_t kBlockedCols = 4;
/// Bytes of one blocked atom: 128 x 4 E8M0 scales = one tcgen05.cp 32x128b.
inline constexpr int64_t kBlockedAtomBytes = kBlockedRows * kBlockedCols;

/// Ceiling division for non-negative `a` and positive `b`.
inline constexpr int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}
/// Smallest multiple of `m` (> 0) that is >= `x` (>= 0).
inline constexpr int64_t roundUp(int64_t x, int64_t m) {
  return ceilDiv(x, m) * m;
}

/// Padded (rows, cols) of the blocked layout of an R x C scale matrix:
/// (roundUp(R, 128), roundUp(C, 4)). Total bytes = rows * cols.
struct BlockedDims {
  int64_t rows;
  int64_t cols;
};
BlockedDims getBlockedDims(int64_t rows, int64_t cols);

/// Byte offset of logical scale (r, c) in the blocked layout of a matrix with
/// `paddedCols` (= Cp, a multiple of 4) columns (torchao to_blocked):
///   ((r/128)*(Cp/4) + c/4)*512 + (r%32)*16 + ((r%128)/32)*4 + c%4.
int64_t getBlockedOffset(int64_t r, int64_t c, int64_t paddedCols);

/// Inverse of getBlockedOffset: the logical (row, col) stored at `offset`.
struct ScaleCoord {
  int64_t row;
  int64_t col;
};
ScaleCoord getBlockedCoord(int64_t offset, int64_t paddedCols);

/// Static upper bound of sum_g roundUp(size_g, multiple) over `numGroups`
/// groups whose sizes sum to at most `total`: each group adds at most
/// multiple-1 elements of padding, and the sum is a multiple of `multiple`,
/// so the bound is roundDown(total + (multiple-1)*numGroups, multiple).
/// Used for the padded token axis of jagged quantization (multiple 32), the
/// rows of M-grouped blocked scales (multiple 128) and the columns of
/// K-grouped blocked scales (multiple 4).
int64_t getGroupPaddedExtent(int64_t total, int64_t numGroups,
                             int64_t multiple);

/// Checks int32 group *end* offsets (offs[g] = end of group g, group 0 starts
/// at 0; the convention of torch._grouped_mm and torchao) against a token
/// axis of `total` rows: offsets must be >= 0, non-decreasing and <= total.
/// Returns an empty string when valid, otherwise a message naming the first
/// offending index, e.g. "offsets[3] = 40 is smaller than offsets[2] = 64
/// (offsets must be non-decreasing)".
std::string validateGroupEndOffsets(const int32_t *offsets, int64_t numGroups,
                                    int64_t total);

/// Padded group start positions: starts[g] = sum_{h<g} roundUp(size_h,
/// multiple), size_h = offs[h] - offs[h-1]. Empty groups take no space (the
/// next group starts at the same position). Offsets must be valid (see
/// validateGroupEndOffsets). Returns numGroups + 1 entries; the last one is
/// the padded total.
std::vector<int64_t> getPaddedGroupStarts(const int32_t *offsets,
                                          int64_t numGroups, int64_t multiple);

/// Byte offset of scale (rowInGroup, col) of the M-group whose rows start at
/// padded row `paddedGroupStart` (a multiple of 128) in M-grouped blocked
/// scales with `paddedCols` columns (torchao torch_to_blocked_2d_M_groups).
/// M-grouped blocked scales are the plain blocked layout of the matrix whose
/// group g occupies rows [P_g, P_g + m_g).
int64_t getMGroupedBlockedOffset(int64_t rowInGroup, int64_t col,
                                 int64_t paddedGroupStart, int64_t paddedCols);

/// Byte offset of scale (row, colInGroup) of the K-group g in K-grouped
/// blocked scales (torchao torch_to_blocked_2d_K_groups, ao PR #3603): each
/// group is an independent blocked buffer of paddedRows x roundUp(groupCols,
/// 4) bytes starting at byte groupColStart * paddedRows, where groupColStart
/// (Q_g) is the padded (multiple of 4) start column of the group.
int64_t getKGroupedBlockedOffset(int64_t row, int64_t colInGroup,
                                 int64_t groupColStart, int64_t groupCols,
                                 int64_t paddedRows);

} // namespace mxmoe

#endif // MXMOE_DIALECT_MXMOE_UTILS_SCALELAYOUT_H
