//===- QuantizeTiles.cpp - mxmoe.quantize with scale tiles (MX128) --------===//
//
// Quantize kernels for `scale_tile = [r, c]` other than [1, 32] (MX128:
// [1, 128] for activations and gradients, [128, 128] for weights; the
// DeepSeek-V3 report, arXiv 2412.19437 section 3.3.2): one E8M0 scale per
// tile, from the tile's amax, written into every 1x32 slot of the tile
// (row-major or blocked MX scales) or once (compact scales).
//
//  * [1, c] tiles, rowwise with blocked scales (plain, per expert or
//    M-grouped), c = 64 or 128: one thread per blocked scale byte as in the
//    MX kernel; a tile's c/32 bytes are consecutive, so its threads are an
//    aligned lane group that combines the amax with shuffles (one thread
//    per tile, 128 values in registers, ran at 53-56 % of copy bandwidth;
//    this layout is the MX kernel's);
//  * other [1, c] tiles (any layout, M-grouped or jagged token groups,
//    strided input): rowwise with c/32 a power of two, one thread per
//    block in aligned lane groups as above; otherwise one thread per tile;
//    on a jagged token axis the tiles are c-token windows restarting at
//    every group start, blocked padding bytes as in the MX kernel (the
//    chunked kernel of QuantizeJagged.cpp takes every jagged case whose
//    rows are a multiple of the 16-byte load);
//  * [r, c] tiles with r > 1 (weights, no token groups): QuantizeTiles2D.cpp.
//
// Scale math and element conversion are the MX kernels' (Quantize.h).
//
//===----------------------------------------------------------------------===//

#include "Quantize.h"

#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;
using ::mxmoe::kMXBlockSize;
using ::mxmoe::MXElementKind;

namespace {

/// The most 1x32 blocks one thread of the CTA-per-tile kernel keeps in
/// registers (4 x 32 fp32 values).
constexpr int64_t kMaxBlocksPerThread = 4;

/// The blocks of one [1, c] tile: their values, whether each exists, and
/// the tile's amax over the existing ones.
struct TileBlocks {
  SmallVector<SmallVector<Value>> xs;
  SmallVector<Value> valid; ///< i1 per block; null = always
  Value amax;
};

/// Runs `fn` for block i of a tile: directly when it always exists, else
/// under its validity.
void forValid(KB &b, const TileBlocks &t, int64_t i, function_ref<void()> fn) {
  if (!t.valid[i]) {
    fn();
    return;
  }
  ifThen(b, t.valid[i], fn);
}

/// Loads the blocks of a tile. `baseOf(i)` is block i's first element;
/// `validOf(i)` (i >= 1) whether it exists (block 0 always does); missing
/// blocks load block 0's elements and count as zeros. `countOf(i)`, when
/// set, bounds the elements of strided block i (jagged windows).
TileBlocks loadTile(KB &b, int64_t blocks, bool rowwise, Value x, Type elem,
                    Value stride, function_ref<Value(int64_t)> baseOf,
                    function_ref<Value(int64_t)> validOf,
                    function_ref<Value(int64_t)> countOf = {}) {
  TileBlocks t;
  Value base0 = baseOf(0);
  Value zero = b.f32(0.0f);
  for (int64_t i = 0; i < blocks; ++i) {
    Value valid = i == 0 ? Value() : validOf(i);
    Value base = base0;
    if (i > 0) {
      Value own = baseOf(i);
      base = b.select(valid, own, base0);
    }
    Value count = countOf ? countOf(i) : Value();
    SmallVector<Value> xs =
        rowwise ? loadHPBlock(b, x, elem, base)
                : loadHPBlockStrided(b, x, elem, base, stride, count);
    Value amax = blockAmax(b, xs);
    if (valid)
      amax = b.select(valid, amax, zero);
    t.amax = i == 0 ? amax : maxOf(b, t.amax, amax);
    t.xs.push_back(std::move(xs));
    t.valid.push_back(valid);
  }
  return t;
}

/// One thread of the general tile kernel: the kernel's configuration and
/// the values its code reads (scales `smem` are [.., sR, sC]: blocked,
/// row-major MX or compact).
struct TileThread {
  KB &b;
  GroupTable &tab;
  Type elem;
  RoundingMode mode;
  MXElementKind kind;
  TileShape tile;
  bool blocked, compact, jagged, rowwise;
  Value offsets;
  Value x, dmem, smem;
  Value rows, len, cs, tpr, sR, sC, hpBatch, hpRow, hpAlong;
  unsigned windowUnit; ///< GroupTable unit of the jagged windows
  bool lanes;          ///< rowwise, c/32 a power of two: one thread per block

  /// Quantizes tile t of a non-jagged quantization.
  void rowTile(Value t);
  /// rowTile() by the c/32 lanes of an aligned lane group, one block each
  /// (thread t: block t % (c/32) of tile t / (c/32)).
  void rowTileLanes(Value t);
  /// Quantizes window u of K row r (jagged), or zeroes past the groups.
  void jaggedUnit(Value t);
  void window(Value r, Value u);
  void pastGroups(Value r, Value u, Value windows);
  /// Stores the MX scale slot of block c of data row `row` (batch bi,
  /// batch row r) for non-jagged quantizations.
  void storeSlot(Value byte, Value bi, Value r, Value row, Value c);
};

void TileThread::rowTile(Value t) {
  Value bi, r, j;
  decomposeV(b, t, rowwise, rows, tpr, bi, r, j);
  Value row = b.add(b.mul(bi, rows), r);
  Value c0 = b.mulc(j, tile.blocks());
  Value batchBase = b.mul(bi, hpBatch);
  Value rowBase = b.add(batchBase, b.mul(r, hpRow));
  auto blockOf = [&](int64_t i) { return b.add(c0, b.idx(i)); };
  TileBlocks blocks = loadTile(
      b, tile.blocks(), rowwise, x, elem, hpAlong,
      [&](int64_t i) {
        Value along = b.mulc(blockOf(i), kMXBlockSize);
        return b.add(rowBase, b.mul(along, hpAlong));
      },
      [&](int64_t i) { return b.ult(blockOf(i), cs); });
  Value byte = computeScaleByte(b, blocks.amax, mode, kind);
  Value inv = reciprocalScale(b, byte);
  Value rowStart = b.mul(row, len);
  for (int64_t i = 0; i < tile.blocks(); ++i)
    forValid(b, blocks, i, [&] {
      Value c = blockOf(i);
      Value dIdx = b.add(rowStart, b.mulc(c, kMXBlockSize));
      storeScaled(b, blocks.xs[i], inv, kind, dmem, dIdx);
      if (!compact)
        storeSlot(byte, bi, r, row, c);
    });
  if (compact)
    storeScale(b, byte, smem, b.add(b.mul(row, tpr), j));
}

void TileThread::rowTileLanes(Value t) {
  Value tileIdx, sub, bi, r, j;
  std::tie(tileIdx, sub) = b.divRem(t, b.idx(tile.blocks()));
  decomposeV(b, tileIdx, /*rowwise=*/true, rows, tpr, bi, r, j);
  Value row = b.add(b.mul(bi, rows), r);
  Value c = b.add(b.mulc(j, tile.blocks()), sub);
  Value valid = b.ult(c, cs);
  Value batchBase = b.mul(bi, hpBatch);
  Value rowBase = b.add(batchBase, b.mul(r, hpRow));
  Value own = b.add(rowBase, b.mulc(c, kMXBlockSize));
  Value base = b.select(valid, own, rowBase); // block 0 of a tile exists
  SmallVector<Value> xs = loadHPBlock(b, x, elem, base);
  Value amax = blockAmax(b, xs);
  amax = b.select(valid, amax, b.f32(0.0f));
  Value tileAmax = groupMax(b, amax, tile.blocks());
  Value byte = computeScaleByte(b, tileAmax, mode, kind);
  Value inv = reciprocalScale(b, byte);
  ifThen(b, valid, [&] {
    Value rowStart = b.mul(row, len);
    Value dIdx = b.add(rowStart, b.mulc(c, kMXBlockSize));
    storeScaled(b, xs, inv, kind, dmem, dIdx);
    if (!compact)
      storeSlot(byte, bi, r, row, c);
  });
  if (compact)
    ifThen(b, b.eq(sub, b.idx(0)), [&] {
      Value rowTiles = b.mul(row, tpr);
      storeScale(b, byte, smem, b.add(rowTiles, j));
    });
}

void TileThread::storeSlot(Value byte, Value bi, Value r, Value row, Value c) {
  if (!blocked) {
    storeScale(b, byte, smem, b.add(b.mul(row, cs), c));
    return;
  }
  if (!offsets) {
    Value scaleBase = b.mul(bi, b.mul(sR, sC));
    storeScale(b, byte, smem, b.add(scaleBase, b.blockedOffset(r, c, sC)));
    return;
  }
  // M-grouped: row r of group g goes to padded row P_g + (r - s_g); rows
  // past the last offset have no scale.
  Value g = b.countLE(tab.ends, tab.numGroups, r);
  ifThen(b, b.ult(g, b.idx(tab.numGroups)), [&] {
    Value tileRow = b.mulc(b.load(tab.starts[0], g), 128);
    Value pr = b.add(tileRow, b.sub(r, tab.groupBegin(b, g)));
    storeScale(b, byte, smem, b.blockedOffset(pr, c, sC));
  });
}

void TileThread::jaggedUnit(Value t) {
  // 2-D, columnwise: t = u * rows + r (adjacent threads read adjacent K
  // columns of a token).
  Value u, r;
  std::tie(u, r) = b.divRem(t, rows);
  Value windows = b.load(tab.starts[windowUnit], b.idx(tab.numGroups));
  ifThenElse(
      b, b.ult(u, windows), [&] { window(r, u); },
      [&] { pastGroups(r, u, windows); });
}

void TileThread::window(Value r, Value u) {
  Value g = largestStartLE(b, tab, windowUnit, u);
  Value w = b.sub(u, b.load(tab.starts[windowUnit], g));
  Value begin = tab.groupBegin(b, g);
  Value tok0 = b.add(begin, b.mulc(w, tile.cols));
  Value count = b.sub(b.load(tab.ends, g), tok0);  // >= 1
  Value j0 = b.mulc(w, tile.blocks());             // block within the group
  Value pb0 = b.add(b.load(tab.starts[0], g), j0); // padded data block
  auto firstOf = [&](int64_t i) { return b.idx(i * kMXBlockSize); };
  TileBlocks blocks = loadTile(
      b, tile.blocks(), /*rowwise=*/false, x, elem, hpAlong,
      [&](int64_t i) {
        Value tok = b.add(tok0, firstOf(i));
        return b.add(b.mul(tok, hpAlong), r);
      },
      [&](int64_t i) { return b.ult(firstOf(i), count); },
      [&](int64_t i) {
        if (i == 0)
          return count;
        Value first = firstOf(i);
        Value valid = b.ult(first, count);
        Value end = b.select(valid, count, first);
        return b.sub(end, first);
      });
  Value byte = computeScaleByte(b, blocks.amax, mode, kind);
  Value inv = reciprocalScale(b, byte);
  Value rowStart = b.mul(r, len);
  for (int64_t i = 0; i < tile.blocks(); ++i)
    forValid(b, blocks, i, [&] {
      Value pb = b.add(pb0, b.idx(i));
      Value dIdx = b.add(rowStart, b.mulc(pb, kMXBlockSize));
      storeScaled(b, blocks.xs[i], inv, kind, dmem, dIdx);
      if (compact)
        return;
      if (!blocked) {
        storeScale(b, byte, smem, b.add(b.mul(r, cs), pb));
        return;
      }
      Value q0 = b.load(tab.starts[1], g);
      Value q1 = b.load(tab.starts[1], b.add(g, b.idx(1)));
      Value kgp = b.sub(q1, q0);
      Value groupBase = b.mul(q0, sR);
      Value j = b.add(j0, b.idx(i));
      storeScale(b, byte, smem, b.add(groupBase, b.blockedOffset(r, j, kgp)));
    });
  if (compact)
    storeScale(b, byte, smem, b.add(b.mul(r, sC), u));
}

void TileThread::pastGroups(Value r, Value u, Value windows) {
  // Units past the windows zero the data blocks past the groups (there
  // are at least as many units as blocks: every window has >= 1 block)
  // and, for compact scales, the window columns past the groups.
  Value total = b.load(tab.starts[0], b.idx(tab.numGroups));
  Value pb = b.add(total, b.sub(u, windows));
  ifThen(b, b.ult(pb, cs), [&] {
    Value rowStart = b.mul(r, len);
    Value dIdx = b.add(rowStart, b.mulc(pb, kMXBlockSize));
    storeZeroElements(b, kind, dmem, dIdx);
    if (!blocked && !compact)
      storeZeroScale(b, smem, b.add(b.mul(r, cs), pb));
  });
  if (compact)
    ifThen(b, b.ult(u, sC),
           [&] { storeZeroScale(b, smem, b.add(b.mul(r, sC), u)); });
}

/// The rowwise blocked tile kernel's thread: one blocked scale byte, i.e.
/// one 1x32 block; the c/32 blocks of a [1, c] tile (c = 64 or 128) are
/// consecutive bytes of a blocked atom row, hence an aligned group of
/// c/32 lanes, which combines its amax by shuffles.
struct RowwiseBlockedLanes {
  KB &b;
  Type elem;
  RoundingMode mode;
  MXElementKind kind;
  TileShape tile;
  Value x, dmem;
  Value R, L, C;

  /// Quantizes block c of row r of batch bi when `real` (else only joins
  /// the group's amax with 0); returns the tile's scale byte (i32).
  Value quantize(Value bi, Value r, Value c, Value real);
};

Value RowwiseBlockedLanes::quantize(Value bi, Value r, Value c, Value real) {
  Value row = b.add(b.mul(bi, R), r);
  Value rowStart = b.mul(row, L);
  Value own = b.add(rowStart, b.mulc(c, kMXBlockSize));
  Value base = b.select(real, own, b.idx(0)); // element 0 always exists
  SmallVector<Value> xs = loadHPBlock(b, x, elem, base);
  Value amax = blockAmax(b, xs);
  amax = b.select(real, amax, b.f32(0.0f));
  Value byte =
      computeScaleByte(b, groupMax(b, amax, tile.blocks()), mode, kind);
  Value inv = reciprocalScale(b, byte);
  ifThen(b, real, [&] { storeScaled(b, xs, inv, kind, dmem, own); });
  return byte;
}

} // namespace

LogicalResult KernelGen::genQuantizeTiles(QuantizeOp op, const MXGeometry &geo,
                                          MXElementKind kind) {
  std::array<int64_t, 2> t = op.getScaleTileOrDefault();
  TileShape tile{t[0], t[1]};
  RankedTensorType scales = op.getScales().getType();
  bool blocked = isBlockedScales(scales);
  if (tile.rows > 1) {
    if (blocked && (tile.rows != 128 || tile.cols != 128))
      return op.emitOpError()
             << "convert-mxmoe-to-gpu: blocked_128x4 scales with scale_tile ["
             << tile.rows << ", " << tile.cols
             << "] are not supported: a multi-row tile must be [128, 128] "
                "(one 512-byte blocked atom per tile) or write row-major or "
                "compact scales";
    int64_t perThread = ::mxmoe::ceilDiv(tile.rows * tile.blocks(), blockSize);
    if (perThread > kMaxBlocksPerThread)
      return op.emitOpError()
             << "convert-mxmoe-to-gpu: scale_tile [" << tile.rows << ", "
             << tile.cols << "] has " << tile.rows * tile.blocks()
             << " blocks of 32, over the " << kMaxBlocksPerThread * blockSize
             << " one CTA of block-size " << blockSize << " quantizes (at most "
             << kMaxBlocksPerThread << " blocks per thread)";
    genQuantizeTile2D(op, geo, kind);
    return success();
  }
  if (canQuantizeJaggedTiled(op, geo)) {
    genQuantizeJaggedTiled(op, geo, kind);
    return success();
  }
  bool jagged = op.getOffsets() && op.getAxis() == 0;
  if (geo.rowwise() && blocked && !jagged &&
      (tile.cols == 64 || tile.cols == 128)) {
    genQuantizeRowwiseBlockedTiles(op, geo, kind);
    return success();
  }
  genQuantizeGeneralTiles(op, geo, kind);
  return success();
}

void KernelGen::genQuantizeGeneralTiles(QuantizeOp op, const MXGeometry &geo,
                                        MXElementKind kind) {
  RankedTensorType in = op.getInput().getType();
  RankedTensorType scales = op.getScales().getType();
  std::array<int64_t, 2> ts = op.getScaleTileOrDefault();
  TileShape tile{ts[0], ts[1]};
  Type elem = in.getElementType();
  bool blocked = isBlockedScales(scales), compact = isCompactScales(scales);
  Value offsets = op.getOffsets();
  bool jagged = offsets && op.getAxis() == 0;
  int64_t cs = geo.scaleCols();
  int64_t tpr = ::mxmoe::ceilDiv(cs, tile.blocks());
  // One thread per tile (jagged: per unit, one per data block of the
  // padded token axis), then (blocked) one per scale byte for padding.
  int64_t bpt = tile.blocks();
  bool lanes = !jagged && geo.rowwise() && bpt <= 32 && (bpt & (bpt - 1)) == 0;
  int64_t dataWork =
      geo.batch * geo.rows * (jagged ? cs : tpr * (lanes ? bpt : 1));
  int64_t padWork = blocked ? scales.getNumElements() : 0;
  // Sizes as the MX general kernel's (generalQuantizeSizes).
  using namespace general_quantize_sizes;
  auto [sizes, rspec] = generalQuantizeSizes(op, geo);
  std::optional<GroupSpec> spec;
  unsigned windowUnit = 0;
  if (offsets) {
    int64_t G = cast<RankedTensorType>(offsets.getType()).getDimSize(0);
    rspec.views.insert(rspec.views.begin() + 1,
                       IntegerType::get(op.getContext(), 32));
    rspec.views.push_back(IntegerType::get(op.getContext(), 32));
    spec = GroupSpec{1, 4, G, 0, {}, kTokens};
    if (jagged) {
      // data blocks: len / 32; K-group scale columns: scale_cols; windows:
      // scale_cols for compact scales, else at most one per data block.
      spec->units.push_back({kMXBlockSize, 1, kMXBlockSize, kLen});
      if (blocked)
        spec->units.push_back({kMXBlockSize, 4, 1, kScaleCols});
      windowUnit = spec->units.size();
      spec->units.push_back(compact
                                ? PrefixUnit{tile.cols, 1, 1, kScaleCols}
                                : PrefixUnit{tile.cols, 1, kMXBlockSize, kLen});
    } else {
      spec->units.push_back({128, 1, 128, kScaleRows}); // 128-row tiles
    }
  }
  unsigned aIn = 0, aData = offsets ? 2 : 1, aScales = offsets ? 3 : 2;
  auto dataWorkOf = [&](KB &b, ValueRange sz) {
    Value batchRows = b.mul(sz[kBatch], sz[kRows]);
    Value blocks = b.div(sz[kLen], kMXBlockSize);
    if (jagged)
      return b.mul(batchRows, blocks);
    Value tiles = b.div(b.add(blocks, b.idx(tile.blocks() - 1)), tile.blocks());
    Value rowTiles = b.mul(batchRows, tiles);
    return lanes ? b.mulc(rowTiles, bpt) : rowTiles;
  };
  auto kernel = createKernel(
      module, name("quantize", op), rspec,
      [&](KB &b, ValueRange sz) {
        Value w = dataWorkOf(b, sz);
        if (!blocked)
          return w;
        Value pad = b.mul(sz[kBatch], b.mul(sz[kScaleRows], sz[kScaleCols]));
        return b.add(w, pad);
      },
      blockSize, spec ? &*spec : nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value t, GroupTable &tab) {
        Value len = sz[kLen];
        Value csv = b.div(len, kMXBlockSize);
        Value tprv = b.div(b.add(csv, b.idx(tile.blocks() - 1)), tile.blocks());
        TileThread th{b,
                      tab,
                      elem,
                      op.getRounding(),
                      kind,
                      tile,
                      blocked,
                      compact,
                      jagged,
                      geo.rowwise(),
                      offsets,
                      a[aIn],
                      a[aData],
                      a[aScales],
                      sz[kRows],
                      len,
                      csv,
                      tprv,
                      sz[kScaleRows],
                      sz[kScaleCols],
                      sz[kHpBatch],
                      sz[kHpRow],
                      sz[kHpAlong],
                      windowUnit,
                      lanes};
        auto dataPart = [&] {
          if (jagged)
            th.jaggedUnit(t);
          else
            lanes ? th.rowTileLanes(t) : th.rowTile(t);
        };
        if (!blocked) {
          dataPart();
          return;
        }
        QuantizeThread pad{b,
                           tab,
                           elem,
                           op.getRounding(),
                           kind,
                           blocked,
                           jagged,
                           geo.rowwise(),
                           offsets,
                           a[aIn],
                           a[aData],
                           a[aScales],
                           sz[kRows],
                           len,
                           csv,
                           sz[kScaleRows],
                           sz[kScaleCols],
                           sz[kHpBatch],
                           sz[kHpRow],
                           sz[kHpAlong]};
        Value dataWork = dataWorkOf(b, sz);
        ifThenElse(b, b.ult(t, dataWork), dataPart,
                   [&] { pad.scalePadding(b.sub(t, dataWork)); });
      });
  finish(op, kernel, quantizeHostArgs(op), sizes, dataWork + padWork);
}

void KernelGen::genQuantizeRowwiseBlockedTiles(QuantizeOp op,
                                               const MXGeometry &geo,
                                               MXElementKind kind) {
  std::array<int64_t, 2> ts = op.getScaleTileOrDefault();
  TileShape tile{ts[0], ts[1]};
  int64_t lanes = tile.blocks(); // 2 or 4 bytes of one blocked atom row
  Type elem = op.getInput().getType().getElementType();
  Value offsets = op.getOffsets();
  // The MX rowwise blocked kernel's interface and threads: one thread per
  // blocked scale byte. A batch's blocked bytes are a multiple of 512, so
  // whole warps run the body together and byte o's lane group is o's tile.
  RowwiseBlockedABI abi = getRowwiseBlockedABI(op, geo);
  auto kernel = createKernel(
      module, name("quantize", op), abi.spec,
      [&](KB &b, ValueRange sz) {
        return b.mul(sz[kRBBatch], b.mul(sz[kRBScaleRows], sz[kRBScaleCols]));
      },
      blockSize, abi.groups ? &*abi.groups : nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value t, GroupTable &tab) {
        Value R = sz[kRBRows], L = sz[kRBLen], C = b.div(L, kMXBlockSize);
        RowwiseBlockedLanes th{
            b, elem, op.getRounding(), kind, tile, a[0], a[abi.aData], R, L, C};
        BlockedByte o = getRowwiseBlockedByte(b, tab, sz, t, C, bool(offsets));
        // Rows of other lanes may be padding: they load element 0.
        Value r = offsets ? b.select(o.real, o.r, b.idx(0)) : o.r;
        Value byte = th.quantize(o.bi, r, o.c, o.real);
        Value zero = b.i32(0);
        storeScale(b, b.select(o.real, byte, zero), a[abi.aScales], t);
        if (!offsets)
          return;
        // Rows past the last offset have no scale but their data is
        // quantized all the same: thread d takes block d % lanes of tile
        // d / lanes (tiles row by row), so a tile is again a lane group;
        // only tail rows' groups take part.
        Value lastEnd = b.load(tab.ends, b.idx(tab.numGroups - 1));
        Value tpr = b.div(b.add(C, b.idx(lanes - 1)), lanes);
        Value tileIdx, sub, rowB, jB;
        std::tie(tileIdx, sub) = b.divRem(t, b.idx(lanes));
        std::tie(rowB, jB) = b.divRem(tileIdx, tpr);
        Value isTile = b.ult(tileIdx, b.mul(R, tpr));
        Value tail = b.andi(isTile, b.ule(lastEnd, rowB));
        ifThen(b, tail, [&] {
          Value batch0 = b.idx(0);
          Value cB = b.add(b.mulc(jB, lanes), sub);
          th.quantize(batch0, rowB, cB, b.ult(cB, C));
        });
      });
  finish(op, kernel, quantizeHostArgs(op), abi.sizes, abi.work);
}
