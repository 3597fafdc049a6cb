//===- QuantizeTiles2D.cpp - mxmoe.quantize with multi-row scale tiles ----===//
//
// Quantize kernels for `scale_tile = [r, c]` with r > 1 (MX128 weights:
// [128, 128], the DeepSeek-V3 report, arXiv 2412.19437 section 3.3.2): one
// CTA per tile, the amax reduced by warp shuffles and shared memory, one
// E8M0 scale per tile written into every 1x32 slot (row-major or blocked
// MX scales; blocked as whole 512-byte atoms) or once (compact scales).
// Scale math and element conversion are the MX kernels' (Quantize.h).
// mxmoe.quantize_weight is the staged along-N kernel that also writes the
// tile along K from the staged copy (one read of the weight, both
// orientations).
//
//===----------------------------------------------------------------------===//

#include "Quantize.h"

#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;
using ::mxmoe::kMXBlockSize;
using ::mxmoe::MXElementKind;

namespace {

/// The staged kernel's shared-memory tile: rows of 128 elements, 16-row
/// group i shifted by 8 i elements (16 bytes, keeping the 16-byte chunks
/// aligned), so that a warp's 4-byte column reads (4 column pairs x 8
/// row groups) fall in distinct banks.
constexpr int64_t kStagedStride = 128, kStagedGroup = 16, kStagedShift = 8;
constexpr int64_t kStagedElems =
    128 * kStagedStride + (128 / kStagedGroup) * kStagedShift;

/// One thread of the CTA-per-tile kernel (genQuantizeTile2D): the tile
/// (bi, ti, tj) of the data [batch, R, L] is r rows x c/32 blocks; thread
/// `tid` holds blocks tid + k * blockSize of it.
struct Tile2DThread {
  KB &b;
  Type elem;
  RoundingMode mode;
  MXElementKind kind;
  TileShape tile;
  int64_t blockSize;
  bool rowwise, blocked, compact;
  Value x, dmem, smem, red; ///< red: per-warp amax in shared memory
  Value R, L, cs, tilesR, tilesC, sR, sC, hpBatch, hpRow, hpAlong;
  /// Shared-memory input tile of the staged kernel (null: loads straight
  /// from global memory).
  Value tileBuf = {};
  /// mxmoe.quantize_weight: the forward orientation's data ([batch, L,
  /// R]: the input's own layout) and scales (layout flags and blocked
  /// extents), written from the staged tile; null: none.
  Value fwdData = {}, fwdScales = {}, fsR = {}, fsC = {};
  bool fwdBlocked = false, fwdCompact = false;

  /// A thread's blocks of the tile: values, validity, data row and block
  /// index of each, and their amax (staged tiles: the amax only; their
  /// stores read the staged tile, storeStaged).
  struct TileValues {
    /// Empty: re-read from x at baseOf (rowwise).
    SmallVector<SmallVector<Value>> xs;
    SmallVector<Value> valid, rowOf, blkOf, baseOf;
    Value amax;
  };

  void run(Value t);
  TileValues loadDirect(Value tid, Value bi, Value ti, Value tj);
  /// Strided [128, 128] tiles of 2-byte elements: the tile through shared
  /// memory (16-byte loads along the contiguous data rows).
  TileValues loadStaged(Value tid, Value bi, Value ti, Value tj);
  Value sIndex(Value row, Value col);
  /// The elements of a staged 16-byte chunk as f32.
  SmallVector<Value> widen(Value chunk);
  /// The `count` values of tileBuf columns `col` (even) and col + 1 from
  /// row `first` on, as f32, with 4-byte reads.
  std::pair<SmallVector<Value>, SmallVector<Value>>
  readStagedPair(Value first, Value col, int64_t count);
  /// The stores of a staged tile: data and row-major scales of the
  /// quantized orientation, from shared memory.
  void storeStaged(Value tid, Value bi, Value ti, Value tj, Value byte,
                   Value inv);
  /// The CTA's amax of the per-thread `amax` (every thread gets it).
  Value ctaAmax(Value tid, Value amax);
  /// Writes the tile's 512-byte blocked atom ([128, 128] tiles): atom
  /// (rowTile, colTile) of the blocked matrices [sRows, sCols] in `mem`,
  /// real bytes for the `rows` x `cols` logical scales, zeros elsewhere.
  void storeAtom(Value tid, Value bi, Value rowTile, Value colTile, Value byte,
                 Value mem, Value sRows, Value sCols, Value rows, Value cols);
  /// Where thread `tid`'s 16-byte chunks of the staged tile (bi, ti, tj)
  /// are: column j (data row k0 + j) of tile rows i0 + pass * rowsPerPass
  /// (n0 + i along the quantized axis); `first` is the tile's first input
  /// element.
  struct StagedThread {
    int64_t perLoad, rowsPerPass, passes;
    Value batchBase, k0, n0, j, k, kOk, i0, first;
    /// Chunk `pass`: tile row i, input index (`first` when outside the
    /// data) and validity.
    std::tuple<Value, Value, Value> chunk(KB &b, Value L, Value hpAlong,
                                          int64_t pass) const;
  };
  /// `rowXor` exchanges the tile rows of neighbouring thread groups:
  /// quantize_weight's second pass over the chunks uses it so that its
  /// indices are not the load pass's (the compiler would otherwise keep
  /// those live across the barrier: 78 registers).
  StagedThread stagedThread(Value tid, Value bi, Value ti, Value tj,
                            bool rowXor = false);
  /// quantize_weight: the tile along K (data and scales of the forward
  /// orientation) from the staged copy.
  void storeForward(Value tid, Value bi, Value ti, Value tj, Value byte,
                    Value inv);
};

Value Tile2DThread::ctaAmax(Value tid, Value amax) {
  for (int32_t off = 16; off >= 1; off /= 2) {
    auto shfl = gpu::ShuffleOp::create(b, amax, off, 32, gpu::ShuffleMode::XOR);
    amax = maxOf(b, amax, shfl.getShuffleResult());
  }
  Value warp, lane;
  std::tie(warp, lane) = b.divRem(tid, b.idx(32));
  ifThen(b, b.eq(lane, b.idx(0)), [&] { b.store(amax, red, warp); });
  gpu::BarrierOp::create(b);
  Value all = b.load(red, b.idx(0));
  for (int64_t w = 1; w < blockSize / 32; ++w)
    all = maxOf(b, all, b.load(red, b.idx(w)));
  return all;
}

void Tile2DThread::storeAtom(Value tid, Value bi, Value rowTile, Value colTile,
                             Value byte, Value mem, Value sRows, Value sCols,
                             Value rows, Value cols) {
  // Byte o of an atom holds row (o % 16) / 4 * 32 + o / 16, column o % 4
  // (the inverse of the in-atom part of the blocked offset).
  Value atom = b.add(b.mul(rowTile, b.div(sCols, 4)), colTile);
  Value batchBase = b.mul(bi, b.mul(sRows, sCols));
  Value atomBase = b.add(batchBase, b.mulc(atom, 512));
  for (int64_t k = 0; k * blockSize < 512; ++k) {
    Value o = b.add(tid, b.idx(k * blockSize));
    Value inAtom = b.ult(o, b.idx(512));
    Value quarter = b.div(b.rem(o, 16), 4);
    Value quarterRow = b.mulc(quarter, 32);
    Value ar = b.add(quarterRow, b.div(o, 16));
    Value row = b.add(b.mulc(rowTile, 128), ar);
    Value atomCol = b.mulc(colTile, 4);
    Value blk = b.add(atomCol, b.rem(o, 4));
    Value rowOk = b.ult(row, rows);
    Value real = b.andi(rowOk, b.ult(blk, cols));
    Value value = b.select(real, byte, b.i32(0));
    ifThen(b, inAtom, [&] { storeScale(b, value, mem, b.add(atomBase, o)); });
  }
}

void Tile2DThread::run(Value t) {
  Value cta, tid, rest, tj, bi, ti;
  std::tie(cta, tid) = b.divRem(t, b.idx(blockSize));
  std::tie(rest, tj) = b.divRem(cta, tilesC);
  std::tie(bi, ti) = b.divRem(rest, tilesR);
  TileValues v =
      tileBuf ? loadStaged(tid, bi, ti, tj) : loadDirect(tid, bi, ti, tj);
  Value byte = computeScaleByte(b, ctaAmax(tid, v.amax), mode, kind);
  Value inv = reciprocalScale(b, byte);
  if (tileBuf)
    storeStaged(tid, bi, ti, tj, byte, inv);
  for (size_t k = 0; k < v.xs.size(); ++k)
    ifThen(b, v.valid[k], [&] {
      Value dRow = b.add(b.mul(bi, R), v.rowOf[k]);
      Value rowStart = b.mul(dRow, L);
      Value dIdx = b.add(rowStart, b.mulc(v.blkOf[k], kMXBlockSize));
      SmallVector<Value> xs =
          !v.xs[k].empty() ? v.xs[k] : loadHPBlock(b, x, elem, v.baseOf[k]);
      storeScaled(b, xs, inv, kind, dmem, dIdx);
      if (!blocked && !compact)
        storeScale(b, byte, smem, b.add(b.mul(dRow, cs), v.blkOf[k]));
    });
  if (fwdData)
    storeForward(tid, bi, ti, tj, byte, inv);
  if (blocked) {
    storeAtom(tid, bi, ti, tj, byte, smem, sR, sC, R, cs);
    return;
  }
  if (compact) {
    Value cRow = b.add(b.mul(bi, tilesR), ti);
    Value cIdx = b.add(b.mul(cRow, tilesC), tj);
    ifThen(b, b.eq(tid, b.idx(0)), [&] { storeScale(b, byte, smem, cIdx); });
  }
}

Tile2DThread::TileValues Tile2DThread::loadDirect(Value tid, Value bi, Value ti,
                                                  Value tj) {
  int64_t tileBlocks = tile.rows * tile.blocks();
  int64_t perThread = ::mxmoe::ceilDiv(tileBlocks, blockSize);
  Value row0 = b.mulc(ti, tile.rows), blk0 = b.mulc(tj, tile.blocks());
  Value batchBase = b.mul(bi, hpBatch);
  auto baseOf = [&](Value row, Value blk) {
    Value along = b.mul(b.mulc(blk, kMXBlockSize), hpAlong);
    return b.add(b.add(batchBase, b.mul(row, hpRow)), along);
  };
  Value base0 = baseOf(row0, blk0); // the tile's first block exists
  TileValues v;
  v.amax = b.f32(0.0f);
  for (int64_t k = 0; k < perThread; ++k) {
    // Rowwise: blocks of a row adjacent (contiguous loads); strided:
    // rows adjacent (adjacent threads read adjacent columns).
    Value q = b.add(tid, b.idx(k * blockSize));
    Value hi, lo;
    std::tie(hi, lo) = b.divRem(q, b.idx(rowwise ? tile.blocks() : tile.rows));
    Value row = b.add(row0, rowwise ? hi : lo);
    Value blk = b.add(blk0, rowwise ? lo : hi);
    Value rowOk = b.ult(row, R);
    Value ok = b.andi(rowOk, b.ult(blk, cs));
    if ((k + 1) * blockSize > tileBlocks)
      ok = b.andi(ok, b.ult(q, b.idx(tileBlocks)));
    Value own = baseOf(row, blk);
    Value base = b.select(ok, own, base0);
    SmallVector<Value> xs = rowwise
                                ? loadHPBlock(b, x, elem, base)
                                : loadHPBlockStrided(b, x, elem, base, hpAlong);
    Value vMax = blockAmax(b, xs);
    Value m = b.select(ok, vMax, b.f32(0.0f));
    v.amax = maxOf(b, v.amax, m);
    // Rowwise blocks are read again after the amax (from L2: the CTA has
    // just read its tile): keeping their 64 values live took 98 registers,
    // 2 CTAs per SM (ncu, bench/RESULTS.md). Strided ones stay in registers.
    v.xs.push_back(rowwise ? SmallVector<Value>{} : std::move(xs));
    v.baseOf.push_back(base);
    v.valid.push_back(ok);
    v.rowOf.push_back(row);
    v.blkOf.push_back(blk);
  }
  return v;
}

Value Tile2DThread::sIndex(Value row, Value col) {
  Value unshifted = b.add(b.mulc(row, kStagedStride), col);
  Value shifted = b.mulc(b.div(row, kStagedGroup), kStagedShift);
  return b.add(unshifted, shifted);
}

SmallVector<Value> Tile2DThread::widen(Value chunk) {
  SmallVector<Value> xs;
  int64_t n = cast<VectorType>(chunk.getType()).getNumElements();
  for (int64_t e = 0; e < n; ++e)
    xs.push_back(arith::ExtFOp::create(
        b, b.getF32Type(), vector::ExtractOp::create(b, chunk, e).getResult()));
  return xs;
}

std::pair<SmallVector<Value>, SmallVector<Value>>
Tile2DThread::readStagedPair(Value first, Value col, int64_t count) {
  SmallVector<Value> xa, xb;
  auto vt = VectorType::get({2}, elem);
  for (int64_t e = 0; e < count; ++e) {
    Value at = sIndex(b.add(first, b.idx(e)), col);
    Value two = vector::LoadOp::create(b, vt, tileBuf, ValueRange{at}, false,
                                       llvm::MaybeAlign(4));
    for (auto [i, xs] : llvm::enumerate(std::array{&xa, &xb}))
      xs->push_back(arith::ExtFOp::create(
          b, b.getF32Type(),
          vector::ExtractOp::create(b, two, static_cast<int64_t>(i))
              .getResult()));
  }
  return {xa, xb};
}

void Tile2DThread::storeStaged(Value tid, Value bi, Value ti, Value tj,
                               Value byte, Value inv) {
  // Tile column c (data row k0 + c) is an output row: 8 lanes write its
  // 128 codes, 16 each (lane % 8 = segment s: tile rows 16 s..16 s + 15),
  // so a warp stores four whole 128-byte rows; each lane reads two
  // adjacent columns (4-byte reads) and writes two rows. Column pairs:
  // 4 per warp per pass.
  Value warp, lane;
  std::tie(warp, lane) = b.divRem(tid, b.idx(32));
  Value seg = b.mulc(b.rem(lane, 8), 16);
  Value pairInWarp = b.div(lane, 8);
  Value k0 = b.mulc(ti, tile.rows), n0 = b.mulc(tj, tile.cols);
  Value n = b.add(n0, seg);
  Value nOk = b.ult(n, L);
  Value blk = b.div(n, kMXBlockSize);
  Value segInBlock = b.rem(seg, kMXBlockSize);
  Value firstOfBlock = b.eq(segInBlock, b.idx(0));
  int64_t pairsPerPass = blockSize / 8;
  for (int64_t pass = 0; pass * pairsPerPass < tile.rows / 2; ++pass) {
    Value warpPairs = b.mulc(warp, 4);
    Value pw = b.add(warpPairs, pairInWarp);
    Value p = b.add(pw, b.idx(pass * pairsPerPass));
    Value col = b.mulc(p, 2);
    Value k = b.add(k0, col);
    // R % 8 == 0: the pair's second column is valid with its first.
    Value kOk = b.ult(k, R);
    Value ok = b.andi(nOk, kOk);
    ifThen(b, ok, [&] {
      auto [xa, xb] = readStagedPair(seg, col, 16);
      for (auto [half, xs] : llvm::enumerate(std::array{&xa, &xb})) {
        Value kRow = b.add(k, b.idx(static_cast<int64_t>(half)));
        Value dRow = b.add(b.mul(bi, R), kRow);
        Value rowStart = b.mul(dRow, L);
        storeScaled(b, *xs, inv, kind, dmem, b.add(rowStart, n));
        if (!blocked && !compact)
          ifThen(b, firstOfBlock, [&] {
            Value sRow = b.mul(dRow, cs);
            storeScale(b, byte, smem, b.add(sRow, blk));
          });
      }
    });
  }
}

Tile2DThread::StagedThread Tile2DThread::stagedThread(Value tid, Value bi,
                                                      Value ti, Value tj,
                                                      bool rowXor) {
  // The input tile: 128 rows along the quantized axis (n0 + i, strided by
  // hp_along) x 128 contiguous data rows (k0 + j), into shared memory
  // [i][j] with 16-byte loads.
  StagedThread st;
  st.perLoad = 16 / (elem.getIntOrFloatBitWidth() / 8);
  int64_t chunksPerRow = tile.rows / st.perLoad;
  st.rowsPerPass = blockSize / chunksPerRow;
  st.passes = tile.cols / st.rowsPerPass;
  st.k0 = b.mulc(ti, tile.rows);
  st.n0 = b.mulc(tj, tile.cols);
  st.batchBase = b.mul(bi, hpBatch);
  st.j = b.mulc(b.rem(tid, chunksPerRow), st.perLoad);
  st.k = b.add(st.k0, st.j);
  st.kOk = b.ult(st.k, R);
  st.i0 = b.div(tid, chunksPerRow);
  if (rowXor)
    st.i0 = arith::XOrIOp::create(b, st.i0, b.idx(1));
  st.first = b.add(b.add(st.batchBase, b.mul(st.n0, hpAlong)), st.k0);
  return st;
}

std::tuple<Value, Value, Value>
Tile2DThread::StagedThread::chunk(KB &b, Value L, Value hpAlong,
                                  int64_t pass) const {
  Value i = b.add(i0, b.idx(pass * rowsPerPass));
  Value n = b.add(n0, i);
  Value ok = b.andi(kOk, b.ult(n, L));
  Value idx =
      b.select(ok, b.add(b.add(batchBase, b.mul(n, hpAlong)), k), first);
  return {i, idx, ok};
}

Tile2DThread::TileValues Tile2DThread::loadStaged(Value tid, Value bi, Value ti,
                                                  Value tj) {
  // The tile's amax is taken from these loads (one max for all of it), so
  // shared memory is read once, by the stores: reading it down its
  // columns two bytes at a time for the amax and again for the values
  // kept its pipe 75 % busy (ncu, bench/RESULTS.md). A chunk outside the
  // data (k >= R or n >= L) is read from the tile's first address and
  // left out of the amax; only invalid blocks read it back.
  StagedThread st = stagedThread(tid, bi, ti, tj);
  auto vt = VectorType::get({st.perLoad}, elem);
  TileValues v;
  v.amax = b.f32(0.0f);
  for (int64_t pass = 0; pass < st.passes; ++pass) {
    auto [i, idx, ok] = st.chunk(b, L, hpAlong, pass);
    Value chunk = vector::LoadOp::create(b, vt, x, ValueRange{idx}, false,
                                         llvm::MaybeAlign(16));
    vector::StoreOp::create(b, chunk, tileBuf, ValueRange{sIndex(i, st.j)},
                            false, llvm::MaybeAlign(16));
    SmallVector<Value> xs = widen(chunk);
    Value chunkMax = blockAmax(b, xs);
    Value m = b.select(ok, chunkMax, b.f32(0.0f));
    v.amax = maxOf(b, v.amax, m);
  }
  gpu::BarrierOp::create(b);
  return v;
}

void Tile2DThread::storeForward(Value tid, Value bi, Value ti, Value tj,
                                Value byte, Value inv) {
  // The data: each staged chunk again, now a row of the forward data
  // (its input index: the forward orientation is the input's layout).
  StagedThread st = stagedThread(tid, bi, ti, tj, /*rowXor=*/true);
  auto vt = VectorType::get({st.perLoad}, elem);
  for (int64_t pass = 0; pass < st.passes; ++pass) {
    Value i, idx, ok;
    std::tie(i, idx, ok) = st.chunk(b, L, hpAlong, pass);
    ifThen(b, ok, [&] {
      Value chunk =
          vector::LoadOp::create(b, vt, tileBuf, ValueRange{sIndex(i, st.j)},
                                 false, llvm::MaybeAlign(16));
      storeScaled(b, widen(chunk), inv, kind, fwdData, idx);
    });
  }
  // The scales: the tile is (row tile tj, column tile ti) of the forward
  // scale matrices [L, R / 32].
  Value fcs = b.div(R, kMXBlockSize);
  if (fwdBlocked) {
    storeAtom(tid, bi, tj, ti, byte, fwdScales, fsR, fsC, L, fcs);
    return;
  }
  if (fwdCompact) {
    Value cRow = b.add(b.mul(bi, tilesC), tj);
    Value cIdx = b.add(b.mul(cRow, tilesR), ti);
    ifThen(b, b.eq(tid, b.idx(0)),
           [&] { storeScale(b, byte, fwdScales, cIdx); });
    return;
  }
  // Row-major: the tile's 128 rows x 4 slots.
  for (int64_t k = 0; k * blockSize < tile.rows * tile.blocks(); ++k) {
    Value s = b.add(tid, b.idx(k * blockSize));
    Value nl, kb;
    std::tie(nl, kb) = b.divRem(s, b.idx(tile.blocks()));
    Value n = b.add(b.mulc(tj, tile.cols), nl);
    Value blk = b.add(b.mulc(ti, tile.blocks()), kb);
    Value nOk = b.ult(n, L);
    Value ok = b.andi(nOk, b.ult(blk, fcs));
    Value row = b.add(b.mul(bi, L), n);
    ifThen(b, ok, [&] {
      storeScale(b, byte, fwdScales, b.add(b.mul(row, fcs), blk));
    });
  }
}

/// The CTA-per-tile kernel of genQuantizeTile2D and genQuantizeWeight.
/// Parameters: input, data, scales (the quantized orientation), then for
/// quantize_weight the forward data and scales; sizes as
/// general_quantize_sizes up to kScaleCols, then for quantize_weight the
/// forward scale matrix's rows and columns.
struct Tile2DKernel {
  Type elem;
  RoundingMode mode;
  MXElementKind kind;
  TileShape tile;
  int64_t blockSize;
  bool rowwise, blocked, compact, staged;
  bool forward = false, fwdBlocked = false, fwdCompact = false;

  /// Scale columns, tiles along the rows and along the blocks.
  std::tuple<Value, Value, Value> tileCounts(KB &b, ValueRange sz) const {
    using namespace general_quantize_sizes;
    Value cs = b.div(sz[kLen], kMXBlockSize);
    Value tilesR = b.div(b.add(sz[kRows], b.idx(tile.rows - 1)), tile.rows);
    Value tilesC = b.div(b.add(cs, b.idx(tile.blocks() - 1)), tile.blocks());
    return std::make_tuple(cs, tilesR, tilesC);
  }
  Value work(KB &b, ValueRange sz) const {
    using namespace general_quantize_sizes;
    Value cs, tilesR, tilesC;
    std::tie(cs, tilesR, tilesC) = tileCounts(b, sz);
    Value perBatch = b.mul(tilesR, tilesC);
    return b.mulc(b.mul(sz[kBatch], perBatch), blockSize);
  }
  void body(KB &b, ValueRange a, ValueRange sz, Value t) const;
};

void Tile2DKernel::body(KB &b, ValueRange a, ValueRange sz, Value t) const {
  using namespace general_quantize_sizes;
  auto fn =
      b.getInsertionBlock()->getParent()->getParentOfType<gpu::GPUFuncOp>();
  auto wg =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value red = fn.addWorkgroupAttribution(
      MemRefType::get({blockSize / 32}, b.getF32Type(),
                      MemRefLayoutAttrInterface{}, wg),
      fn.getLoc());
  Value cs, tilesR, tilesC;
  std::tie(cs, tilesR, tilesC) = tileCounts(b, sz);
  Tile2DThread th{b,
                  elem,
                  mode,
                  kind,
                  tile,
                  blockSize,
                  rowwise,
                  blocked,
                  compact,
                  a[0],
                  a[1],
                  a[2],
                  red,
                  sz[kRows],
                  sz[kLen],
                  cs,
                  tilesR,
                  tilesC,
                  sz[kScaleRows],
                  sz[kScaleCols],
                  sz[kHpBatch],
                  sz[kHpRow],
                  sz[kHpAlong]};
  if (staged)
    th.tileBuf = addSharedBuffer(b, kStagedElems, elem);
  if (forward) {
    th.fwdData = a[3];
    th.fwdScales = a[4];
    th.fsR = sz[kScaleCols + 1];
    th.fsC = sz[kScaleCols + 2];
    th.fwdBlocked = fwdBlocked;
    th.fwdCompact = fwdCompact;
  }
  th.run(t);
}

/// The staged kernel's conditions: strided [128, 128] tiles of bf16/f16
/// whose data rows (the contiguous input axis) are a multiple of the
/// 16-byte load, 256-thread CTAs.
bool canStageTile2D(const MXGeometry &geo, TileShape tile, Type elem,
                    int64_t blockSize) {
  return !geo.rowwise() && tile.rows == 128 && tile.cols == 128 &&
         elem.getIntOrFloatBitWidth() == 16 && geo.hpRow == 1 &&
         geo.rows % 8 == 0 && blockSize == 256;
}

int64_t tileCount(const MXGeometry &geo, TileShape tile) {
  return geo.batch * ::mxmoe::ceilDiv(geo.rows, tile.rows) *
         ::mxmoe::ceilDiv(geo.scaleCols(), tile.blocks());
}

} // namespace

void KernelGen::genQuantizeTile2D(QuantizeOp op, const MXGeometry &geo,
                                  MXElementKind kind) {
  RankedTensorType in = op.getInput().getType();
  RankedTensorType scales = op.getScales().getType();
  std::array<int64_t, 2> ts = op.getScaleTileOrDefault();
  TileShape tile{ts[0], ts[1]};
  Type elem = in.getElementType();
  // Sizes are run-time parameters; one CTA per tile. They are the
  // general kernels' (general_quantize_sizes) without `tokens`: no groups.
  auto [sizes, rspec] = generalQuantizeSizes(op, geo);
  sizes.pop_back();
  rspec.scalars.pop_back();
  // The strided 2-byte loads of unstaged tiles ran at 61 % of copy
  // bandwidth on the H200 (bench/RESULTS.md).
  Tile2DKernel k{elem,
                 op.getRounding(),
                 kind,
                 tile,
                 blockSize,
                 geo.rowwise(),
                 isBlockedScales(scales),
                 isCompactScales(scales),
                 canStageTile2D(geo, tile, elem, blockSize)};
  auto kernel = createKernel(
      module, name("quantize", op), rspec,
      [&](KB &b, ValueRange sz) { return k.work(b, sz); }, blockSize, nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value t, GroupTable &) {
        k.body(b, a, sz, t);
      });
  finish(op, kernel, quantizeHostArgs(op), sizes,
         tileCount(geo, tile) * blockSize);
}

bool KernelGen::canFuseQuantizeWeight(QuantizeWeightOp op, int64_t blockSize) {
  RankedTensorType in = op.getInput().getType();
  ArrayRef<int64_t> t = op.getScaleTile();
  int64_t k = in.getShape().back();
  // FP8 data (8-byte stores of a chunk's codes); FP4 weights are split.
  std::optional<MXElementKind> kind =
      getMXElementKind(op.getData().getType().getElementType());
  bool fp8 = kind == MXElementKind::E4M3 || kind == MXElementKind::E5M2;
  return t[0] == 128 && t[1] == 128 &&
         in.getElementType().getIntOrFloatBitWidth() == 16 && k % 8 == 0 &&
         blockSize == 256 && fp8;
}

void KernelGen::splitQuantizeWeight(QuantizeWeightOp op) {
  OpBuilder b(op);
  int64_t rank = op.getInput().getType().getRank();
  auto quantize = [&](Value data, Value scales, int64_t axis) {
    auto q = QuantizeOp::create(
        b, op.getLoc(), data.getType(), scales.getType(), op.getInput(),
        Value(), b.getI64IntegerAttr(axis), op.getBlockSizeAttr(),
        op.getRoundingAttr(), op.getScaleTileAttr());
    data.replaceAllUsesWith(q.getData());
    scales.replaceAllUsesWith(q.getScales());
  };
  quantize(op.getData(), op.getScales(), rank - 1);
  quantize(op.getTransposedData(), op.getTransposedScales(), rank - 2);
  op.erase();
}

LogicalResult KernelGen::genQuantizeWeight(QuantizeWeightOp op) {
  RankedTensorType in = op.getInput().getType();
  RankedTensorType dataT = op.getTransposedData().getType();
  RankedTensorType scalesT = op.getTransposedScales().getType();
  RankedTensorType data = op.getData().getType();
  RankedTensorType scales = op.getScales().getType();
  auto shape = getMXKernelShape(op, in, dataT, in.getRank() - 2);
  if (failed(shape))
    return failure();
  auto [kind, geo] = *shape;
  TileShape tile{128, 128};
  using namespace general_quantize_sizes;
  auto [sR, sC] = scaleMatrixShape(scalesT);
  auto [fR, fC] = scaleMatrixShape(scales);
  SmallVector<int64_t> sizes{geo.batch, geo.rows,    geo.len, geo.hpBatch,
                             geo.hpRow, geo.hpAlong, sR,      sC,
                             fR,        fC};
  Type e8m0 = scales.getElementType();
  RuntimeShapeSpec spec{
      {in.getElementType(), flatMemRef(dataT).getElementType(), e8m0,
       flatMemRef(data).getElementType(), e8m0},
      {"batch", "rows", "len", "hp_batch", "hp_row", "hp_along", "scale_rows",
       "scale_cols", "forward_scale_rows", "forward_scale_cols"}};
  Tile2DKernel k{in.getElementType(),
                 op.getRounding(),
                 kind,
                 tile,
                 blockSize,
                 /*rowwise=*/false,
                 isBlockedScales(scalesT),
                 isCompactScales(scalesT),
                 /*staged=*/true,
                 /*forward=*/true,
                 isBlockedScales(scales),
                 isCompactScales(scales)};
  auto kernel = createKernel(
      module, name("quantize_weight", op), spec,
      [&](KB &b, ValueRange sz) { return k.work(b, sz); }, blockSize, nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value t, GroupTable &) {
        k.body(b, a, sz, t);
      });
  SmallVector<HostArg> args{{HostArg::In, op.getInput()},
                            {HostArg::Out, op.getTransposedData()},
                            {HostArg::Out, op.getTransposedScales()},
                            {HostArg::Out, op.getData()},
                            {HostArg::Out, op.getScales()}};
  finish(op, kernel, args, sizes, tileCount(geo, tile) * blockSize);
  return success();
}
