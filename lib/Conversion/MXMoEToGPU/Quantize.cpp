//===- Quantize.cpp - mxmoe.quantize to SIMT kernels ----------------------===//
//
// The three quantize kernels: rowwise with blocked scales (one thread per
// blocked scale byte), columnwise without groups (tiled through shared
// memory), and the general one (any layout, M-grouped or jagged token
// groups; one thread per data block, then one per padding byte of blocked
// scales). Math: OCP MX v1.0 section 6.3 (mxmoe.quantize's description);
// layouts: #mxmoe.scale_layout's description.
//
//===----------------------------------------------------------------------===//

#include "Quantize.h"
#include "FusedQuantize.h"

#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;
using ::mxmoe::kMXBlockSize;
using ::mxmoe::MXElementKind;

void mlir::mxmoe::kernels::decomposeV(KB &b, Value t, bool rowwise, Value rs,
                                      Value cs, Value &bi, Value &r, Value &c) {
  Value q0;
  if (rowwise) {
    std::tie(q0, c) = b.divRem(t, cs);
    std::tie(bi, r) = b.divRem(q0, rs);
  } else {
    std::tie(q0, r) = b.divRem(t, rs);
    std::tie(bi, c) = b.divRem(q0, cs);
  }
}

/// Loads the 32 contiguous elements at `base` as f32, with 16-byte vector
/// loads (rowwise: the quantized axis is contiguous).
SmallVector<Value> mlir::mxmoe::kernels::loadHPBlock(KB &b, Value mem,
                                                     Type elem, Value base) {
  // A fused quantization: the producer's results (FusedQuantize.cpp).
  if (activeFusedSource && activeFusedSource->isAnchor(mem))
    return activeFusedSource->load(b, base);
  Type f32 = b.getF32Type();
  return loadBlockElements(b, mem, elem, base, [&](Value x) -> Value {
    return elem == f32 ? x : arith::ExtFOp::create(b, f32, x);
  });
}

SmallVector<Value>
mlir::mxmoe::kernels::loadBlockElements(KB &b, Value mem, Type elem, Value base,
                                        function_ref<Value(Value)> each,
                                        int64_t count) {
  SmallVector<Value> xs;
  // 16-byte loads, or one smaller load for a shorter run (a jagged f32
  // quantize input's 4-element run of a bf16 producer input: 8 bytes).
  int64_t bytes = elem.getIntOrFloatBitWidth() / 8;
  int64_t vecLen = std::min<int64_t>(16 / bytes, count);
  auto vt = VectorType::get({vecLen}, elem);
  for (int64_t i = 0; i < count; i += vecLen) {
    Value v =
        vector::LoadOp::create(b, vt, mem, ValueRange{b.add(base, b.idx(i))},
                               false, llvm::MaybeAlign(vecLen * bytes));
    for (int64_t j = 0; j < vecLen; ++j)
      xs.push_back(each(vector::ExtractOp::create(b, v, j)));
  }
  return xs;
}

/// Loads the 32 elements base + i*stride (a run-time stride) as f32.
/// `validCount`, when set, replaces element i by 0 unless i < validCount
/// (partial last block of a token group); the loads stay in bounds.
SmallVector<Value> mlir::mxmoe::kernels::loadHPBlockStrided(
    KB &b, Value mem, Type elem, Value base, Value stride, Value validCount) {
  SmallVector<Value> xs;
  Type f32 = b.getF32Type();
  Value zero = b.f32(0.0f);
  // Element i at base + i*stride, stepped by one add per element (clamped
  // to element 0 past `validCount`, so the loads stay in bounds).
  Value at = base;
  for (int64_t i = 0; i < kMXBlockSize; ++i) {
    if (i > 0)
      at = b.add(at, stride);
    Value valid = validCount ? b.ult(b.idx(i), validCount) : Value();
    Value x = b.load(mem, valid ? b.select(valid, at, base) : at);
    if (elem != f32)
      x = arith::ExtFOp::create(b, f32, x);
    xs.push_back(valid ? b.select(valid, x, zero) : x);
  }
  return xs;
}

void mlir::mxmoe::kernels::storeScale(KB &b, Value byteI32, Value mem,
                                      Value index) {
  Value byte8 = arith::TruncIOp::create(b, b.getI8Type(), byteI32);
  b.store(b.bitcast(Float8E8M0FNUType::get(b.getContext()), byte8), mem, index);
}

void mlir::mxmoe::kernels::storeZeroScale(KB &b, Value mem, Value index) {
  storeScale(b, b.i32(0), mem, index);
}

Value mlir::mxmoe::kernels::maxOf(KB &b, Value a, Value c) {
  return arith::MaximumFOp::create(b, a, c);
}

Value mlir::mxmoe::kernels::shiftedTileIndex(KB &b, Value row, Value col,
                                             int64_t stride, int64_t shift) {
  Value unshifted = b.add(b.mulc(row, stride), col);
  Value shifted = b.mulc(b.div(row, 32), shift);
  return b.add(unshifted, shifted);
}

std::pair<int64_t, int64_t>
mlir::mxmoe::kernels::scaleMatrixShape(RankedTensorType scales) {
  return {scales.getShape()[scales.getRank() - 2], scales.getShape().back()};
}

void mlir::mxmoe::kernels::storeScaled(KB &b, ArrayRef<Value> xs, Value inv,
                                       MXElementKind kind, Value data,
                                       Value dataIdx) {
  SmallVector<Value> scaled;
  for (Value x : xs)
    scaled.push_back(arith::MulFOp::create(b, x, inv));
  storeElements(b, scaled, kind, data, dataIdx);
}

Value mlir::mxmoe::kernels::groupMax(KB &b, Value v, int64_t lanes) {
  Value lane = NVVM::LaneIdOp::create(b, b.getI32Type());
  Value first = arith::AndIOp::create(b, lane, b.i32(~(lanes - 1)));
  Value ones = b.i32((int64_t{1} << lanes) - 1);
  Value member = arith::ShLIOp::create(b, ones, first);
  Value clamp = b.i32(0x1f);
  for (int64_t off = 1; off < lanes; off *= 2) {
    Value offset = b.i32(off);
    auto kind = NVVM::ShflKindAttr::get(b.getContext(), NVVM::ShflKind::bfly);
    Value other = NVVM::ShflOp::create(b, b.getF32Type(), member, v, offset,
                                       clamp, kind, UnitAttr());
    v = maxOf(b, v, other);
  }
  return v;
}

/// Quantizes 32 values: computes the scale byte, stores the element codes
/// at `dataIdx`; returns the scale byte (i32).
Value mlir::mxmoe::kernels::quantizeBlock(KB &b, ArrayRef<Value> xs,
                                          RoundingMode mode, MXElementKind kind,
                                          Value data, Value dataIdx) {
  Value byte = computeScaleByte(b, blockAmax(b, xs), mode, kind);
  Value inv = reciprocalScale(b, byte);
  storeScaled(b, xs, inv, kind, data, dataIdx);
  return byte;
}

SmallVector<HostArg> mlir::mxmoe::kernels::quantizeHostArgs(QuantizeOp op) {
  SmallVector<HostArg> args{{HostArg::In, op.getInput()}};
  if (op.getOffsets())
    args.push_back({HostArg::In, op.getOffsets()});
  args.push_back({HostArg::Out, op.getData()});
  args.push_back({HostArg::Out, op.getScales()});
  if (op.getOffsets())
    args.push_back({HostArg::Status, Value()});
  return args;
}

void QuantizeThread::dataBlock(Value t) {
  Value bi, r, c;
  if (jagged) {
    // 2-D (a single batch), columnwise: t = c * rows + r.
    std::tie(c, r) = b.divRem(t, rows);
    bi = b.idx(0);
  } else {
    decomposeV(b, t, rowwise, rows, cs, bi, r, c);
  }
  Value row = b.add(b.mul(bi, rows), r);
  Value rowStart = b.mul(row, len);
  Value dIdx = b.add(rowStart, b.mulc(c, kMXBlockSize));
  if (!jagged) {
    Value batchBase = b.mul(bi, hpBatch);
    Value rowBase = b.add(batchBase, b.mul(r, hpRow));
    Value base = b.add(rowBase, b.mul(b.mulc(c, kMXBlockSize), hpAlong));
    SmallVector<Value> xs = rowwise
                                ? loadHPBlock(b, x, elem, base)
                                : loadHPBlockStrided(b, x, elem, base, hpAlong);
    Value byte = quantizeBlock(b, xs, mode, kind, dmem, dIdx);
    if (!blocked) {
      storeScale(b, byte, smem, b.add(b.mul(b.add(b.mul(bi, rows), r), cs), c));
      return;
    }
    if (!offsets) {
      Value scaleBase = b.mul(bi, b.mul(sR, sC));
      storeScale(b, byte, smem, b.add(scaleBase, b.blockedOffset(r, c, sC)));
      return;
    }
    // M-grouped: row r of group g goes to padded row
    // P_g + (r - s_g); rows past the last offset have no scale.
    Value g = b.countLE(tab.ends, tab.numGroups, r);
    ifThen(b, b.ult(g, b.idx(tab.numGroups)), [&] {
      Value tileRow = b.mulc(b.load(tab.starts[0], g), 128);
      Value pr = b.add(tileRow, b.sub(r, tab.groupBegin(b, g)));
      storeScale(b, byte, smem, b.blockedOffset(pr, c, sC));
    });
    return;
  }
  jaggedDataBlock(r, c, dIdx);
}

void QuantizeThread::jaggedDataBlock(Value r, Value c, Value dIdx) {
  // Jagged token axis: data block c is padded block pb of the
  // token groups (r is the K row of the data).
  Value pb = c;
  Value total = b.load(tab.starts[0], b.idx(tab.numGroups));
  ifThenElse(
      b, b.ult(pb, total),
      [&] {
        Value g = largestStartLE(b, tab, 0, pb);
        Value j = b.sub(pb, b.load(tab.starts[0], g));
        Value begin = tab.groupBegin(b, g);
        Value tok = b.add(begin, b.mulc(j, kMXBlockSize));
        Value count = b.sub(b.load(tab.ends, g), tok);
        Value base = b.add(b.mul(tok, hpAlong), r);
        SmallVector<Value> xs =
            loadHPBlockStrided(b, x, elem, base, hpAlong, count);
        Value byte = quantizeBlock(b, xs, mode, kind, dmem, dIdx);
        if (!blocked) {
          storeScale(b, byte, smem, b.add(b.mul(r, cs), pb));
          return;
        }
        Value q0 = b.load(tab.starts[1], g);
        Value kgp = b.sub(b.load(tab.starts[1], b.add(g, b.idx(1))), q0);
        Value groupBase = b.mul(q0, sR);
        storeScale(b, byte, smem, b.add(groupBase, b.blockedOffset(r, j, kgp)));
      },
      [&] {
        // Past the last group: zero data (and scale).
        storeZeroElements(b, kind, dmem, dIdx);
        if (!blocked)
          storeZeroScale(b, smem, b.add(b.mul(r, cs), pb));
      });
}

void QuantizeThread::scalePadding(Value o) {
  // Padding bytes of blocked scales: write 0 where no real
  // scale lands.
  Value perBatch = b.mul(sR, sC);
  // Offset inside this batch's blocked matrix (jagged: 2-D).
  Value w = jagged ? o : b.divRem(o, perBatch).second;
  Value real;
  if (jagged) {
    Value col = b.divv(w, sR);
    Value totalQ = b.load(tab.starts[1], b.idx(tab.numGroups));
    Value inGroups = b.ult(col, totalQ);
    Value found = largestStartLE(b, tab, 1, col);
    Value g = b.minui(found, b.idx(tab.numGroups - 1));
    Value q0 = b.load(tab.starts[1], g);
    Value kgp = b.sub(b.load(tab.starts[1], b.add(g, b.idx(1))), q0);
    Value nextStart = b.load(tab.starts[0], b.add(g, b.idx(1)));
    Value kg = b.sub(nextStart, b.load(tab.starts[0], g));
    Value local = b.sub(w, b.mul(q0, sR));
    // Guard the division for empty regions (col past groups).
    Value safeKgp = b.select(inGroups, kgp, b.idx(4));
    auto [r, j] = b.blockedCoord(b.select(inGroups, local, b.idx(0)), safeKgp);
    Value rowOk = b.ult(r, rows);
    real = b.andi(inGroups, b.andi(rowOk, b.ult(j, kg)));
  } else {
    auto [pr, c] = b.blockedCoord(w, sC);
    Value colOk = b.ult(c, cs);
    if (!offsets) {
      real = b.andi(b.ult(pr, rows), colOk);
    } else {
      Value tile = b.div(pr, 128);
      Value totalT = b.load(tab.starts[0], b.idx(tab.numGroups));
      Value inGroups = b.ult(tile, totalT);
      Value found = largestStartLE(b, tab, 0, tile);
      Value g = b.minui(found, b.idx(tab.numGroups - 1));
      Value local = b.sub(pr, b.mulc(b.load(tab.starts[0], g), 128));
      Value end = b.load(tab.ends, g);
      Value size = b.sub(end, tab.groupBegin(b, g));
      real = b.andi(inGroups, b.andi(b.ult(local, size), colOk));
    }
  }
  ifThen(b, b.lnot(real), [&] { storeZeroScale(b, smem, o); });
}

namespace {

/// Tile of the columnwise tiled kernel (genQuantizeColwiseTiled): TM tokens
/// x TK columns per CTA of kThreads threads, in shared-memory rows of
/// kStride elements.
constexpr int64_t TM = 128, TK = 64, kThreads = 256, kStride = TK;
// A warp covers 8 columns c x 4 blocks b; a row is 64 elements (a
// multiple of 32 words), so shifting 32-row block b by 8b elements puts
// lane (c, b)'s element in word (8b + c) * size / 4 mod 32: for 2- and
// 4-byte elements the 4 blocks occupy disjoint banks (two 16-bit columns
// share a word, which is not a conflict).
constexpr int64_t kShift = 8;

/// Work items of the tiled kernel: tiles x 256 threads, then (blocked) one
/// per padding byte.
struct TiledWork {
  Value tilesM, tilesK, tileWork, padRowBytes, padColBytes, padPerBatch;
};

/// One thread of the tiled kernel: the kernel's configuration and the
/// values its code reads.
struct TiledThread {
  KB &b;
  Type elem;
  RoundingMode mode;
  MXElementKind kind;
  bool blocked, padRows, padCols;
  int64_t perLoad, chunksPerRow, rowsPerPass;
  ValueRange a; ///< input, data, scales
  Value smem;   ///< the shared-memory tile
  TiledWork wk;
  Value Mv, Kv, csv, sR, sC, hpBatch;

  /// Element offset of (row, col) in the shared-memory tile.
  Value sIndex(Value row, Value col);
  /// Thread t of the tiles: its share of the tile's loads into shared
  /// memory, then one (column, 32-token block).
  void tiles(Value t);
  /// Writes 0 to padding byte o of the blocked scales.
  void padding(Value o);
};

Value TiledThread::sIndex(Value row, Value col) {
  return shiftedTileIndex(b, row, col, kStride, kShift);
}

void TiledThread::tiles(Value t) {
  Value tid = b.rem(t, kThreads), tile = b.div(t, kThreads);
  Value q, tk, bi, tm;
  std::tie(q, tk) = b.divRem(tile, wk.tilesK);
  std::tie(bi, tm) = b.divRem(q, wk.tilesM);
  Value m0 = b.mulc(tm, TM), k0 = b.mulc(tk, TK);
  Value inBase = b.mul(bi, hpBatch);
  // Phase 1: coalesced loads into shared memory.
  Value chunk = b.rem(tid, chunksPerRow);
  Value col = b.mulc(chunk, perLoad);
  auto vt = VectorType::get({perLoad}, elem);
  for (int64_t pass = 0; pass < TM / rowsPerPass; ++pass) {
    Value firstRow = b.div(tid, chunksPerRow);
    Value row = b.add(firstRow, b.idx(pass * rowsPerPass));
    Value m = b.add(m0, row), k = b.add(k0, col);
    Value mOk = b.ult(m, Mv);
    Value inBounds = b.andi(mOk, b.ult(k, Kv));
    ifThen(b, inBounds, [&] {
      Value v = vector::LoadOp::create(
          b, vt, a[0], ValueRange{b.add(inBase, b.add(b.mul(m, Kv), k))}, false,
          llvm::MaybeAlign(16));
      vector::StoreOp::create(b, v, smem, ValueRange{sIndex(row, col)}, false,
                              llvm::MaybeAlign(16));
    });
  }
  gpu::BarrierOp::create(b);
  // Phase 2: one thread per (column, 32-token block).
  Value blk = b.rem(tid, TM / 32), c = b.div(tid, TM / 32);
  Value k = b.add(k0, c), m = b.add(m0, b.mulc(blk, 32));
  Value kOk = b.ult(k, Kv);
  Value inBounds = b.andi(kOk, b.ult(m, Mv));
  ifThen(b, inBounds, [&] {
    SmallVector<Value> xs;
    for (int64_t i = 0; i < kMXBlockSize; ++i) {
      Value blockRow = b.mulc(blk, 32);
      Value e = b.load(smem, sIndex(b.add(blockRow, b.idx(i)), c));
      if (e.getType() != b.getF32Type())
        e = arith::ExtFOp::create(b, b.getF32Type(), e);
      xs.push_back(e);
    }
    Value row = b.add(b.mul(bi, Kv), k);
    Value dIdx = b.add(b.mul(row, Mv), m);
    Value byte = quantizeBlock(b, xs, mode, kind, a[1], dIdx);
    Value mb = b.div(m, kMXBlockSize);
    Value sIdx;
    if (blocked) {
      Value scaleBase = b.mul(bi, b.mul(sR, sC));
      sIdx = b.add(scaleBase, b.blockedOffset(k, mb, sC));
    } else {
      sIdx = b.add(b.mul(row, csv), mb);
    }
    storeScale(b, byte, a[2], sIdx);
  });
}

void TiledThread::padding(Value o) {
  auto [bi, w] = b.divRem(o, wk.padPerBatch);
  // w < padRowBytes: padding row; else a padding column of a
  // real row.
  Value row, col;
  Value padColW = b.sub(sC, csv);
  if (!padCols) {
    auto [q, r] = b.divRem(w, sC);
    row = b.add(Kv, q);
    col = r;
  } else if (!padRows) {
    auto [r2, c2] = b.divRem(w, padColW);
    row = r2;
    col = b.add(csv, c2);
  } else {
    Value inRows = b.ult(w, wk.padRowBytes);
    Value w2 = b.sub(w, wk.padRowBytes);
    // Safe divisors in both branches (selects evaluate both).
    auto [r1, c1] = b.divRem(w, sC);
    auto [r2, c2] = b.divRem(w2, padColW);
    row = b.select(inRows, b.add(Kv, r1), r2);
    col = b.select(inRows, c1, b.add(csv, c2));
  }
  Value scaleBase = b.mul(bi, b.mul(sR, sC));
  storeZeroScale(b, a[2], b.add(scaleBase, b.blockedOffset(row, col, sC)));
}

} // namespace

//===----------------------------------------------------------------------===//
// quantize
//===----------------------------------------------------------------------===//

LogicalResult KernelGen::genQuantize(QuantizeOp op) {
  RankedTensorType in = op.getInput().getType();
  RankedTensorType data = op.getData().getType();
  RankedTensorType scales = op.getScales().getType();
  auto shape = getMXKernelShape(op, in, data, op.getAxis());
  if (failed(shape))
    return failure();
  MXElementKind kind = shape->first;
  MXGeometry geo = shape->second;
  Type elem = in.getElementType();
  bool blocked = isBlockedScales(scales);
  Value offsets = op.getOffsets();
  // Scale tiles (MX128) and compact scales: QuantizeTiles.cpp.
  std::array<int64_t, 2> tile = op.getScaleTileOrDefault();
  if (tile[0] != 1 || tile[1] != kMXBlockSize || isCompactScales(scales))
    return genQuantizeTiles(op, geo, kind);
  // Rowwise with blocked scales (plain, per expert or M-grouped): one
  // thread per blocked scale byte.
  if (geo.rowwise() && blocked) {
    genQuantizeRowwiseBlocked(op, geo, kind);
    return success();
  }
  // Along a jagged token axis: the chunked shared-memory kernel.
  if (canQuantizeJaggedTiled(op, geo)) {
    genQuantizeJaggedTiled(op, geo, kind);
    return success();
  }
  // Columnwise without groups: the tiled kernel (shared-memory transpose).
  int64_t elemsPerLoad = 16 / (elem.getIntOrFloatBitWidth() / 8);
  if (!offsets && !geo.rowwise() && blockSize == 256 &&
      geo.rows % elemsPerLoad == 0) {
    genQuantizeColwiseTiled(op, geo, kind);
    return success();
  }
  genQuantizeGeneral(op, geo, kind);
  return success();
}

GeneralQuantizeSizes
mlir::mxmoe::kernels::generalQuantizeSizes(QuantizeOp op,
                                           const MXGeometry &geo) {
  RankedTensorType in = op.getInput().getType();
  RankedTensorType data = op.getData().getType();
  RankedTensorType scales = op.getScales().getType();
  auto [sRows, sCols] = scaleMatrixShape(scales);
  SmallVector<int64_t> sizes{geo.batch,   geo.rows,  geo.len,
                             geo.hpBatch, geo.hpRow, geo.hpAlong,
                             sRows,       sCols,     in.getDimSize(0)};
  RuntimeShapeSpec spec{{in.getElementType(), flatMemRef(data).getElementType(),
                         scales.getElementType()},
                        {"batch", "rows", "len", "hp_batch", "hp_row",
                         "hp_along", "scale_rows", "scale_cols", "tokens"}};
  return {std::move(sizes), std::move(spec)};
}

void KernelGen::genQuantizeGeneral(QuantizeOp op, const MXGeometry &geo,
                                   MXElementKind kind) {
  RankedTensorType in = op.getInput().getType();
  RankedTensorType scales = op.getScales().getType();
  Type elem = in.getElementType();
  RoundingMode mode = op.getRounding();
  bool blocked = isBlockedScales(scales);
  Value offsets = op.getOffsets();
  int64_t cs = geo.scaleCols();
  int64_t dataWork = geo.batch * geo.rows * cs;
  int64_t padWork = blocked ? scales.getNumElements() : 0;
  // Sizes are run-time parameters (one kernel per element types, layout,
  // rounding, axis kind and group count): generalQuantizeSizes.
  using namespace general_quantize_sizes;
  auto [sizes, rspec] = generalQuantizeSizes(op, geo);
  std::optional<GroupSpec> spec;
  bool jagged = offsets && op.getAxis() == 0;
  bool rowwise = geo.rowwise();
  if (offsets) {
    int64_t G = cast<RankedTensorType>(offsets.getType()).getDimSize(0);
    rspec.views.insert(rspec.views.begin() + 1,
                       IntegerType::get(op.getContext(), 32));
    rspec.views.push_back(IntegerType::get(op.getContext(), 32));
    spec = GroupSpec{1, 4, G, 0, {}, kTokens};
    if (jagged) {
      // data blocks: len / 32; K-group scale columns: scale_cols.
      spec->units.push_back({kMXBlockSize, 1, kMXBlockSize, kLen});
      if (blocked)
        spec->units.push_back({kMXBlockSize, 4, 1, kScaleCols});
    } else {
      spec->units.push_back({128, 1, 128, kScaleRows}); // 128-row tiles
    }
  }
  // Argument positions.
  unsigned aIn = 0, aData = offsets ? 2 : 1, aScales = offsets ? 3 : 2;
  // Threads: one per data block, then (blocked) one per scale byte.
  auto dataWorkOf = [&](KB &b, ValueRange sz) {
    Value batchRows = b.mul(sz[kBatch], sz[kRows]);
    return b.mul(batchRows, b.div(sz[kLen], kMXBlockSize));
  };
  auto padWorkOf = [&](KB &b, ValueRange sz) {
    return b.mul(sz[kBatch], b.mul(sz[kScaleRows], sz[kScaleCols]));
  };

  auto kernel = createKernel(
      module, name("quantize", op), rspec,
      [&](KB &b, ValueRange sz) {
        Value w = dataWorkOf(b, sz);
        return blocked ? b.add(w, padWorkOf(b, sz)) : w;
      },
      blockSize, spec ? &*spec : nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value t, GroupTable &tab) {
        Value len = sz[kLen];
        Value cs = b.div(len, kMXBlockSize);
        QuantizeThread q{b,
                         tab,
                         elem,
                         mode,
                         kind,
                         blocked,
                         jagged,
                         rowwise,
                         offsets,
                         a[aIn],
                         a[aData],
                         a[aScales],
                         sz[kRows],
                         len,
                         cs,
                         sz[kScaleRows],
                         sz[kScaleCols],
                         sz[kHpBatch],
                         sz[kHpRow],
                         sz[kHpAlong]};
        Value dataWork = dataWorkOf(b, sz);
        if (!blocked) {
          q.dataBlock(t);
          return;
        }
        ifThenElse(
            b, b.ult(t, dataWork), [&] { q.dataBlock(t); },
            [&] { q.scalePadding(b.sub(t, dataWork)); });
      });
  finish(op, kernel, quantizeHostArgs(op), sizes, dataWork + padWork);
}

//===----------------------------------------------------------------------===//
// quantize, rowwise, blocked scales
//===----------------------------------------------------------------------===//

// One thread per byte of the blocked scale buffer, in buffer order: a warp
// writes one full 32-byte sector of scales (two atom rows), and its data
// accesses are 8 runs of 4 consecutive 32-element blocks (128 B of fp8
// written, 256 B of bf16 read). Padding positions write 0. For M-grouped
// scales a thread also quantizes (data only) the data block with its own
// index if that block's row lies past the last offset, so those rows are
// written too.
RowwiseBlockedABI
mlir::mxmoe::kernels::getRowwiseBlockedABI(QuantizeOp op,
                                           const MXGeometry &geo) {
  RankedTensorType in = op.getInput().getType();
  RankedTensorType data = op.getData().getType();
  RankedTensorType scales = op.getScales().getType();
  // Sizes are run-time parameters (one kernel per element types, rounding
  // and group count): batch, rows R and length L of each row (the input is
  // [batch, R, L], L contiguous), rows and columns of one blocked scale
  // matrix.
  auto [sRows, sCols] = scaleMatrixShape(scales);
  RowwiseBlockedABI abi{
      {geo.batch, geo.rows, geo.len, sRows, sCols},
      geo.batch * sRows * sCols,
      {{in.getElementType(), flatMemRef(data).getElementType(),
        scales.getElementType()},
       {"batch", "rows", "len", "scale_rows", "scale_cols"}},
      std::nullopt,
      1,
      2};
  if (Value offsets = op.getOffsets()) {
    int64_t G = cast<RankedTensorType>(offsets.getType()).getDimSize(0);
    abi.spec.views.insert(abi.spec.views.begin() + 1,
                          IntegerType::get(op.getContext(), 32));
    abi.spec.views.push_back(IntegerType::get(op.getContext(), 32));
    // capacity: scale rows / 128 tiles of 128 rows.
    abi.groups = GroupSpec{1, 4, G, 0, {{128, 1, 128, kRBScaleRows}}, kRBRows};
    abi.aData = 2;
    abi.aScales = 3;
  }
  return abi;
}

BlockedByte mlir::mxmoe::kernels::getRowwiseBlockedByte(KB &b, GroupTable &tab,
                                                        ValueRange sz, Value t,
                                                        Value C, bool grouped) {
  Value R = sz[kRBRows];
  Value perBatch = b.mul(sz[kRBScaleRows], sz[kRBScaleCols]);
  BlockedByte o;
  Value within;
  std::tie(o.bi, within) = b.divRem(t, perBatch);
  auto prc = b.blockedCoord(within, sz[kRBScaleCols]);
  Value pr = prc.first;
  o.c = prc.second;
  Value colOk = b.ult(o.c, C);
  if (!grouped) {
    o.real = b.andi(b.ult(pr, R), colOk);
    o.r = pr;
    return o;
  }
  int64_t G = tab.numGroups;
  Value tile = b.div(pr, 128);
  Value inGroups = b.ult(tile, b.load(tab.starts[0], b.idx(G)));
  Value found = largestStartLE(b, tab, 0, tile);
  Value g = b.minui(found, b.idx(G - 1));
  Value local = b.sub(pr, b.mulc(b.load(tab.starts[0], g), 128));
  Value begin = tab.groupBegin(b, g);
  Value size = b.sub(b.load(tab.ends, g), begin);
  o.real = b.andi(inGroups, b.andi(b.ult(local, size), colOk));
  o.r = b.add(begin, local);
  return o;
}

void KernelGen::genQuantizeRowwiseBlocked(QuantizeOp op, const MXGeometry &geo,
                                          MXElementKind kind) {
  Type elem = op.getInput().getType().getElementType();
  RoundingMode mode = op.getRounding();
  Value offsets = op.getOffsets();
  RowwiseBlockedABI abi = getRowwiseBlockedABI(op, geo);
  auto kernel = createKernel(
      module, name("quantize", op), abi.spec,
      [&](KB &b, ValueRange sz) {
        return b.mul(sz[kRBBatch], b.mul(sz[kRBScaleRows], sz[kRBScaleCols]));
      },
      blockSize, abi.groups ? &*abi.groups : nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value t, GroupTable &tab) {
        Value x = a[0], dmem = a[abi.aData], smem = a[abi.aScales];
        Value R = sz[kRBRows], L = sz[kRBLen], C = b.div(L, kMXBlockSize);
        auto quantizeRow = [&](Value bi, Value r, Value c) {
          Value row = b.add(b.mul(bi, R), r);
          Value rowStart = b.mul(row, L);
          Value base = b.add(rowStart, b.mulc(c, kMXBlockSize));
          SmallVector<Value> xs = loadHPBlock(b, x, elem, base);
          return quantizeBlock(b, xs, mode, kind, dmem, base);
        };
        BlockedByte o = getRowwiseBlockedByte(b, tab, sz, t, C, bool(offsets));
        ifThenElse(
            b, o.real,
            [&] { storeScale(b, quantizeRow(o.bi, o.r, o.c), smem, t); },
            [&] { storeZeroScale(b, smem, t); });
        if (!offsets)
          return;
        // Rows past the last offset have no scale but their data is
        // quantized all the same (thread d handles data block d).
        Value lastEnd = b.load(tab.ends, b.idx(tab.numGroups - 1));
        Value rowB, cB;
        std::tie(rowB, cB) = b.divRem(t, C);
        Value isBlock = b.ult(t, b.mul(R, C));
        Value tail = b.andi(isBlock, b.ule(lastEnd, rowB));
        ifThen(b, tail, [&] { quantizeRow(b.idx(0), rowB, cB); });
      });
  finish(op, kernel, quantizeHostArgs(op), abi.sizes, abi.work);
}

//===----------------------------------------------------------------------===//
// quantize, columnwise, tiled through shared memory
//===----------------------------------------------------------------------===//

// A CTA of 256 threads quantizes a tile of 128 tokens x 64 columns of a
// row-major [M, K] input (per batch for 3-D inputs): coalesced 16-byte
// loads along K (128-byte row segments for 16-bit inputs) stored as they
// are (16-byte stores, input element type) into shared memory whose
// 32-row blocks are shifted by 8 elements so that the column reads of a
// warp (8 columns x 4 blocks) hit distinct banks, a barrier, then one
// thread per (column, 32-token block) with the four blocks of a column in
// adjacent lanes, so each output row [K, M] receives 128 contiguous bytes
// per tile. (256 x 32 and 64 x 128 tiles, and an fp32 shared-memory tile,
// measured slower on the H200: bench/RESULTS.md.)
void KernelGen::genQuantizeColwiseTiled(QuantizeOp op, const MXGeometry &geo,
                                        MXElementKind kind) {
  RankedTensorType in = op.getInput().getType();
  RankedTensorType data = op.getData().getType();
  RankedTensorType scales = op.getScales().getType();
  Type elem = in.getElementType();
  RoundingMode mode = op.getRounding();
  bool blocked = isBlockedScales(scales);
  // geo: rows = K (data rows), len = M (tokens), hpAlong = K. The sizes
  // are run-time parameters (one kernel per element types, layout,
  // rounding and padding case; K must be a multiple of the 16-byte load,
  // as when the kernel was chosen).
  auto [sRows, sCols] = scaleMatrixShape(scales);
  int64_t M = geo.len, K = geo.rows, cs = geo.scaleCols();
  // Padding bytes of blocked scales: rows K..sRows-1 of every scale column
  // and columns cs..sCols-1 of rows < K, per batch. One extra thread
  // zeroes each (none when K % 128 == 0 and M/32 % 4 == 0: enumerating
  // every scale byte instead doubled the grid of the large shapes with
  // threads that write nothing). Which of the two regions exist is fixed
  // per kernel.
  bool padRows = blocked && sRows > K, padCols = blocked && sCols > cs;
  auto tileWorkOf = [&](int64_t batch, int64_t m, int64_t k) {
    return batch * ::mxmoe::ceilDiv(m, TM) * ::mxmoe::ceilDiv(k, TK) * kThreads;
  };
  int64_t work =
      tileWorkOf(geo.batch, M, K) +
      (blocked ? geo.batch * ((sRows - K) * sCols + K * (sCols - cs)) : 0);
  enum { kBatch, kTokens, kRows, kHpBatch, kScaleRows, kScaleCols };
  SmallVector<int64_t> sizes{geo.batch, M, K, geo.hpBatch, sRows, sCols};
  RuntimeShapeSpec spec{
      {elem, flatMemRef(data).getElementType(), scales.getElementType()},
      {"batch", "tokens", "rows", "hp_batch", "scale_rows", "scale_cols"}};
  int64_t perLoad = 16 / (elem.getIntOrFloatBitWidth() / 8);
  int64_t chunksPerRow = TK / perLoad, rowsPerPass = kThreads / chunksPerRow;
  int64_t smemElems = TM * kStride + (TM / 32) * kShift;

  auto workOf = [&](KB &b, ValueRange sz) {
    TiledWork w;
    Value k = sz[kRows], sC = sz[kScaleCols];
    Value cols = b.div(sz[kTokens], kMXBlockSize);
    w.tilesM = b.div(b.add(sz[kTokens], b.idx(TM - 1)), TM);
    w.tilesK = b.div(b.add(k, b.idx(TK - 1)), TK);
    w.tileWork = b.mulc(b.mul(sz[kBatch], b.mul(w.tilesM, w.tilesK)), kThreads);
    w.padRowBytes = padRows ? b.mul(b.sub(sz[kScaleRows], k), sC) : b.idx(0);
    w.padColBytes = padCols ? b.mul(k, b.sub(sC, cols)) : b.idx(0);
    w.padPerBatch = b.add(w.padRowBytes, w.padColBytes);
    return w;
  };

  auto kernel = createKernel(
      module, name("quantize", op), spec,
      [&](KB &b, ValueRange sz) {
        TiledWork w = workOf(b, sz);
        return b.add(w.tileWork, b.mul(sz[kBatch], w.padPerBatch));
      },
      blockSize, nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value t, GroupTable &) {
        Value smem = addSharedBuffer(b, smemElems, elem);
        TiledWork wk = workOf(b, sz);
        Value Mv = sz[kTokens], Kv = sz[kRows];
        Value csv = b.div(Mv, kMXBlockSize);
        TiledThread th{b,
                       elem,
                       mode,
                       kind,
                       blocked,
                       padRows,
                       padCols,
                       perLoad,
                       chunksPerRow,
                       rowsPerPass,
                       a,
                       smem,
                       wk,
                       Mv,
                       Kv,
                       csv,
                       sz[kScaleRows],
                       sz[kScaleCols],
                       sz[kHpBatch]};
        if (!padRows && !padCols) {
          th.tiles(t);
          return;
        }
        ifThenElse(
            b, b.ult(t, wk.tileWork), [&] { th.tiles(t); },
            [&] { th.padding(b.sub(t, wk.tileWork)); });
      });
  finish(op, kernel, quantizeHostArgs(op), sizes, work);
}
