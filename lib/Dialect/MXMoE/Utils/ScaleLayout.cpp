//===- ScaleLayout.cpp - 128x4 blocked E8M0 scale layout ------------------===//
//
// Formulas: torchao torchao/prototype/mx_formats/utils.py (to_blocked) and
// its M-groups / K-groups variants in
// torchao/prototype/moe_training/kernels/mxfp8/quant.py.
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

namespace mxmoe {

BlockedDims getBlockedDims(int64_t rows, int64_t cols) {
  return {roundUp(rows, kBlockedRows), roundUp(cols, kBlockedCols)};
}

int64_t getBlockedOffset(int64_t r, int64_t c, int64_t paddedCols) {
  const int64_t numColBlocks = paddedCols / kBlockedCols;
  return ((r / kBlockedRows) * numColBlocks + c / kBlockedCols) *
             kBlockedAtomBytes +
         (r % 32) * 16 + ((r % kBlockedRows) / 32) * 4 + (c % kBlockedCols);
}

ScaleCoord getBlockedCoord(int64_t offset, int64_t paddedCols) {
  const int64_t numColBlocks = paddedCols / kBlockedCols;
  const int64_t atom = offset / kBlockedAtomBytes;
  const int64_t w = offset % kBlockedAtomBytes;
  return {(atom / numColBlocks) * kBlockedRows + ((w % 16) / 4) * 32 + w / 16,
          (atom % numColBlocks) * kBlockedCols + w % 4};
}

int64_t getGroupPaddedExtent(int64_t total, int64_t numGroups,
                             int64_t multiple) {
  return ((total + (multiple - 1) * numGroups) / multiple) * multiple;
}

std::string validateGroupEndOffsets(const int32_t *offsets, int64_t numGroups,
                                    int64_t total) {
  int64_t prev = 0;
  for (int64_t g = 0; g < numGroups; ++g) {
    int64_t o = offsets[g];
    if (o < 0)
      return "offsets[" + std::to_string(g) + "] = " + std::to_string(o) +
             " is negative";
    if (o < prev)
      return "offsets[" + std::to_string(g) + "] = " + std::to_string(o) +
             " is smaller than offsets[" + std::to_string(g - 1) +
             "] = " + std::to_string(prev) +
             " (offsets must be non-decreasing)";
    if (o > total)
      return "offsets[" + std::to_string(g) + "] = " + std::to_string(o) +
             " is past the end of the token axis (" + std::to_string(total) +
             " rows)";
    prev = o;
  }
  return {};
}

std::vector<int64_t> getPaddedGroupStarts(const int32_t *offsets,
                                          int64_t numGroups, int64_t multiple) {
  std::vector<int64_t> starts(numGroups + 1, 0);
  int64_t prevEnd = 0;
  for (int64_t g = 0; g < numGroups; ++g) {
    starts[g + 1] = starts[g] + roundUp(offsets[g] - prevEnd, multiple);
    prevEnd = offsets[g];
  }
  return starts;
}

int64_t getMGroupedBlockedOffset(int64_t rowInGroup, int64_t col,
                                 int64_t paddedGroupStart, int64_t paddedCols) {
  return getBlockedOffset(paddedGroupStart + rowInGroup, col, paddedCols);
}

int64_t getKGroupedBlockedOffset(int64_t row, int64_t colInGroup,
                                 int64_t groupColStart, int64_t groupCols,
                                 int64_t paddedRows) {
  return groupColStart * paddedRows +
         getBlockedOffset(row, colInGroup, roundUp(groupCols, kBlockedCols));
}

} // namespace mxmoe
