//===- Quantize.h - pieces shared by the quantize kernels -------*- C++ -*-===//
//
// Internal to the quantize lowerings: Quantize.cpp (one scale per 1x32
// block: the general, rowwise-blocked and columnwise-tiled kernels) and
// QuantizeTiles.cpp (scale tiles: mxmoe.quantize's `scale_tile`, MX128)
// with QuantizeTiles2D.cpp (multi-row tiles: MX128 weights), and
// QuantizeJagged.cpp (along a jagged token axis, MX and MX128).
// Math: OCP MX v1.0 section 6.3 (mxmoe.quantize's description); layouts:
// #mxmoe.scale_layout's description.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_LIB_CONVERSION_MXMOETOGPU_QUANTIZE_H
#define MXMOE_LIB_CONVERSION_MXMOETOGPU_QUANTIZE_H

#include "KernelGen.h"

namespace mlir::mxmoe::kernels {

/// The run-time sizes of the general quantize kernels (genQuantizeGeneral,
/// genQuantizeGeneralTiles), in launch order (the indices in
/// general_quantize_sizes): the data is [batch, rows, len] with
/// high-precision element (b, r, p) at b*hp_batch + r*hp_row + p*hp_along;
/// one blocked scale matrix is [scale_rows, scale_cols]; `tokens` bounds
/// the offsets (the input's dim 0).
namespace general_quantize_sizes {
enum : unsigned {
  kBatch,
  kRows,
  kLen,
  kHpBatch,
  kHpRow,
  kHpAlong,
  kScaleRows,
  kScaleCols,
  kTokens
};
} // namespace general_quantize_sizes
struct GeneralQuantizeSizes {
  SmallVector<int64_t> values; ///< the op's sizes, kernel argument order
  RuntimeShapeSpec spec;       ///< views (input, data, scales) and names
};
GeneralQuantizeSizes generalQuantizeSizes(QuantizeOp op, const MXGeometry &geo);

/// decompose() with run-time extents (index values).
void decomposeV(KB &b, Value t, bool rowwise, Value rs, Value cs, Value &bi,
                Value &r, Value &c);

/// Loads the 32 contiguous elements at `base` as f32, with 16-byte vector
/// loads (rowwise: the quantized axis is contiguous).
SmallVector<Value> loadHPBlock(KB &b, Value mem, Type elem, Value base);
/// loadHPBlock's loads: the `count` (32 = one MX block; a power of two)
/// elements at `base`, aligned to min(16 bytes, the run), each passed
/// through `each` as it is extracted (loadHPBlock: to f32).
SmallVector<Value> loadBlockElements(KB &b, Value mem, Type elem, Value base,
                                     function_ref<Value(Value)> each,
                                     int64_t count = 32);

/// Loads the 32 elements base + i*stride (a run-time stride) as f32.
/// `validCount`, when set, replaces element i by 0 unless i < validCount
/// (partial last block of a token group); the loads stay in bounds.
SmallVector<Value> loadHPBlockStrided(KB &b, Value mem, Type elem, Value base,
                                      Value stride, Value validCount = {});

/// Stores the low byte of `byteI32` as an E8M0 scale at `mem[index]`.
void storeScale(KB &b, Value byteI32, Value mem, Value index);
void storeZeroScale(KB &b, Value mem, Value index);

/// The scale-tile sizes of a quantization (`scale_tile`): rows x cols
/// elements, cols / 32 blocks per tile row.
struct TileShape {
  int64_t rows, cols;
  int64_t blocks() const { return cols / ::mxmoe::kMXBlockSize; }
};

/// NaN-propagating maximum of fp32 values.
Value maxOf(KB &b, Value a, Value c);

/// Element index of (row, col) in a shared-memory tile of `stride`-element
/// rows whose 32-row block i is shifted by i * `shift` elements (the
/// columnwise kernels' bank-conflict-free layout: a warp reading 8 columns
/// x 4 blocks hits distinct banks for 2- and 4-byte elements).
Value shiftedTileIndex(KB &b, Value row, Value col, int64_t stride,
                       int64_t shift);

/// Rows and columns of one scale matrix of `scales` ([.., rows, cols]).
std::pair<int64_t, int64_t> scaleMatrixShape(RankedTensorType scales);

/// The maximum of fp32 `v` over the `lanes` (a power of two <= 32) lanes
/// of the calling thread's aligned lane group; only that group need take
/// part (shfl.sync with the group's member mask, PTX ISA section 9.7.9.6).
Value groupMax(KB &b, Value v, int64_t lanes);

/// Converts 32 values with the reciprocal scale `inv` and stores the codes
/// at element index `dataIdx`.
void storeScaled(KB &b, ArrayRef<Value> xs, Value inv,
                 ::mxmoe::MXElementKind kind, Value data, Value dataIdx);

/// Quantizes 32 values: computes the scale byte, stores the element codes
/// at `dataIdx`; returns the scale byte (i32).
Value quantizeBlock(KB &b, ArrayRef<Value> xs, RoundingMode mode,
                    ::mxmoe::MXElementKind kind, Value data, Value dataIdx);

/// Host view of a quantize kernel's parameters: input, (offsets), data,
/// scales, (status).
SmallVector<HostArg> quantizeHostArgs(QuantizeOp op);

/// The interface of the rowwise blocked quantize kernels (one thread per
/// blocked scale byte, genQuantizeRowwiseBlocked and its scale-tile
/// variant): the sizes bound at launch (kRB* order), the threads, the
/// run-time parameters and the M-group table of grouped ones.
enum RowwiseBlockedScalar {
  kRBBatch,
  kRBRows,
  kRBLen,
  kRBScaleRows,
  kRBScaleCols
};
struct RowwiseBlockedABI {
  SmallVector<int64_t> sizes;
  int64_t work;
  RuntimeShapeSpec spec;
  std::optional<GroupSpec> groups;
  unsigned aData, aScales; ///< argument positions of data and scales
};
RowwiseBlockedABI getRowwiseBlockedABI(QuantizeOp op, const MXGeometry &geo);

/// Blocked scale byte `t` of a rowwise quantization with `C` scale columns
/// (sizes `sz` in kRB* order): its batch, data row (within the batch; for
/// M-grouped scales the token row of the padded row), scale column, and
/// whether a real scale lands there (else padding).
struct BlockedByte {
  Value bi, r, c, real;
};
BlockedByte getRowwiseBlockedByte(KB &b, GroupTable &tab, ValueRange sz,
                                  Value t, Value C, bool grouped);

/// One thread of the general quantize kernel (genQuantizeGeneral): the
/// kernel's configuration and the values its code reads.
struct QuantizeThread {
  KB &b;
  GroupTable &tab;
  Type elem;
  RoundingMode mode;
  ::mxmoe::MXElementKind kind;
  bool blocked, jagged, rowwise;
  Value offsets; ///< the op's group offsets, if any
  Value x, dmem, smem;
  Value rows, len, cs, sR, sC, hpBatch, hpRow, hpAlong;

  /// Quantizes data block t and writes its scale (where one lands).
  void dataBlock(Value t);
  /// dataBlock() on a jagged token axis: data block c of K row r.
  void jaggedDataBlock(Value r, Value c, Value dIdx);
  /// Writes 0 to blocked scale byte o where no real scale lands.
  void scalePadding(Value o);
};

} // namespace mlir::mxmoe::kernels

#endif // MXMOE_LIB_CONVERSION_MXMOETOGPU_QUANTIZE_H
