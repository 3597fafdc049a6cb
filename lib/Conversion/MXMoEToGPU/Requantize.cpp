//===- Requantize.cpp - mxmoe.requantize (MX 1x32 -> scale tiles) ---------===//
//
// MX data with one scale per 1x32 block to one scale per r x c scale tile
// by exponent shifts (mxmoe.requantize's description; reference:
// python/mxmoe/reference.py mx_to_tiled). One thread per (tile, tile row):
// it takes the largest scale byte of its row's c/32 blocks, the r threads
// of a tile combine theirs (shuffles within a warp, shared memory across
// warps), then the thread shifts its row's codes by 2^(s - S) and writes
// them with the tile's byte. Run-time sizes: batch, rows, len.
//
//===----------------------------------------------------------------------===//

#include "Quantize.h"

#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;
using ::mxmoe::kMXBlockSize;
using ::mxmoe::MXElementKind;

namespace {

enum : unsigned { kBatch, kRows, kLen };
enum : unsigned { aData, aScales, aOut, aOutScales };

struct RequantizeThread {
  KB &b;
  MXElementKind kind;
  TileShape tile;
  int64_t blockSize;
  bool compact;
  ValueRange a;
  Value red; ///< per-warp maxima (tiles of more than 32 rows)
  Value R, L, cs, tilesR, tilesC, tiles;

  void run(Value t);
  /// The largest scale byte of the tile (as f32) from each thread's row.
  Value tileMax(Value tid, Value rowMax);
};

Value RequantizeThread::tileMax(Value tid, Value rowMax) {
  if (tile.rows <= 32)
    return groupMax(b, rowMax, tile.rows);
  Value warpMax = groupMax(b, rowMax, 32);
  Value warp, lane;
  std::tie(warp, lane) = b.divRem(tid, b.idx(32));
  ifThen(b, b.eq(lane, b.idx(0)), [&] { b.store(warpMax, red, warp); });
  gpu::BarrierOp::create(b);
  int64_t warps = tile.rows / 32;
  Value first = b.mulc(b.div(warp, warps), warps);
  Value m = b.load(red, first);
  for (int64_t w = 1; w < warps; ++w)
    m = maxOf(b, m, b.load(red, b.add(first, b.idx(w))));
  return m;
}

void RequantizeThread::run(Value t) {
  Value tid = b.rem(t, blockSize);
  Value tileIdx, rowIn, rest, tj, bi, ti;
  std::tie(tileIdx, rowIn) = b.divRem(t, b.idx(tile.rows));
  std::tie(rest, tj) = b.divRem(tileIdx, tilesC);
  std::tie(bi, ti) = b.divRem(rest, tilesR);
  Value row = b.add(b.mulc(ti, tile.rows), rowIn);
  // Threads past the tiles take part in the reduction only.
  Value tileOk = b.ult(tileIdx, tiles);
  Value rowOk = b.andi(tileOk, b.ult(row, R));
  Value dRow = b.add(b.mul(bi, R), row);
  Value sRow = b.mul(dRow, cs);
  SmallVector<Value> bytes, oks, blks;
  Value rowMax = b.f32(0.0f);
  for (int64_t j = 0; j < tile.blocks(); ++j) {
    Value blk0 = b.mulc(tj, tile.blocks());
    Value blk = b.add(blk0, b.idx(j));
    Value ok = b.andi(rowOk, b.ult(blk, cs));
    Value own = b.add(sRow, blk);
    Value at = b.select(ok, own, b.idx(0));
    Value s8 = b.bitcast(b.getI8Type(), b.load(a[aScales], at));
    Value s = arith::ExtUIOp::create(b, b.getI32Type(), s8);
    Value sf = arith::UIToFPOp::create(b, b.getF32Type(), s);
    rowMax = maxOf(b, rowMax, b.select(ok, sf, b.f32(0.0f)));
    bytes.push_back(s);
    oks.push_back(ok);
    blks.push_back(blk);
  }
  Value S = arith::FPToUIOp::create(b, b.getI32Type(), tileMax(tid, rowMax));
  Value nanTile = b.eq(S, b.i32(255));
  for (int64_t j = 0; j < tile.blocks(); ++j)
    ifThen(b, oks[j], [&] {
      // 2^(s - S) as fp32 bits; below 2^-126 every shifted FP8 value
      // rounds to zero anyway, so the exponent is clamped there.
      Value d = b.sub(bytes[j], S);
      Value clamped = arith::MaxSIOp::create(b, d, b.i32(-126));
      Value biased = b.add(clamped, b.i32(127));
      Value bits = arith::ShLIOp::create(b, biased, b.i32(23));
      Value pow2 = b.bitcast(b.getF32Type(), bits);
      Value factor = b.select(nanTile, b.f32(NAN), pow2);
      Value rowStart = b.mul(dRow, L);
      Value dIdx = b.add(rowStart, b.mulc(blks[j], kMXBlockSize));
      SmallVector<Value> xs = loadElements(b, kind, a[aData], dIdx);
      storeScaled(b, xs, factor, kind, a[aOut], dIdx);
      if (!compact)
        storeScale(b, S, a[aOutScales], b.add(sRow, blks[j]));
    });
  if (compact) {
    Value first = b.andi(tileOk, b.eq(rowIn, b.idx(0)));
    Value cRow = b.add(b.mul(bi, tilesR), ti);
    Value cIdx = b.add(b.mul(cRow, tilesC), tj);
    ifThen(b, first, [&] { storeScale(b, S, a[aOutScales], cIdx); });
  }
}

} // namespace

LogicalResult KernelGen::genRequantize(RequantizeOp op) {
  RankedTensorType data = op.getData().getType();
  ArrayRef<int64_t> ts = op.getScaleTile();
  TileShape tile{ts[0], ts[1]};
  if (!llvm::isPowerOf2_64(tile.rows) || tile.rows > blockSize ||
      blockSize % tile.rows != 0)
    return op.emitOpError("GPU lowering needs a scale tile of a power of two "
                          "rows dividing the block size (")
           << blockSize << "), got " << tile.rows;
  std::optional<MXElementKind> kind = getMXElementKind(data.getElementType());
  ArrayRef<int64_t> shape = data.getShape();
  int64_t batch = shape.size() == 3 ? shape[0] : 1;
  int64_t R = shape[shape.size() - 2], L = shape.back();
  Type e8m0 = op.getScales().getType().getElementType();
  RuntimeShapeSpec spec{
      {data.getElementType(), e8m0, data.getElementType(), e8m0},
      {"batch", "rows", "len"}};
  bool compact = isCompactScales(op.getTiledScales().getType());
  auto counts = [&](KB &b, ValueRange sz) {
    Value cs = b.div(sz[kLen], kMXBlockSize);
    Value tilesR = b.ceilDivc(sz[kRows], tile.rows);
    Value tilesC = b.ceilDivc(cs, tile.blocks());
    Value tiles = b.mul(sz[kBatch], b.mul(tilesR, tilesC));
    return std::make_tuple(cs, tilesR, tilesC, tiles);
  };
  // Whole CTAs: every thread reaches the reduction's barrier.
  auto workOf = [&](KB &b, ValueRange sz) {
    Value tiles = std::get<3>(counts(b, sz));
    Value threads = b.mulc(tiles, tile.rows);
    return b.mulc(b.ceilDivc(threads, blockSize), blockSize);
  };
  int64_t tiles = batch * ::mxmoe::ceilDiv(R, tile.rows) *
                  ::mxmoe::ceilDiv(L / kMXBlockSize, tile.blocks());
  int64_t work = ::mxmoe::ceilDiv(tiles * tile.rows, blockSize) * blockSize;
  auto kernel = createKernel(
      module, name("requantize", op), spec, workOf, blockSize, nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value t, GroupTable &) {
        Value red;
        if (tile.rows > 32) {
          auto fn = b.getInsertionBlock()
                        ->getParent()
                        ->getParentOfType<gpu::GPUFuncOp>();
          auto wg = gpu::AddressSpaceAttr::get(b.getContext(),
                                               gpu::AddressSpace::Workgroup);
          red = fn.addWorkgroupAttribution(
              MemRefType::get({blockSize / 32}, b.getF32Type(),
                              MemRefLayoutAttrInterface{}, wg),
              fn.getLoc());
        }
        auto [cs, tilesR, tilesC, all] = counts(b, sz);
        RequantizeThread th{b,      *kind,  tile,      blockSize, compact,
                            a,      red,    sz[kRows], sz[kLen],  cs,
                            tilesR, tilesC, all};
        th.run(t);
      });
  finish(op, kernel,
         {{HostArg::In, op.getData()},
          {HostArg::In, op.getScales()},
          {HostArg::Out, op.getTiledData()},
          {HostArg::Out, op.getTiledScales()}},
         {batch, R, L}, work);
  return success();
}
