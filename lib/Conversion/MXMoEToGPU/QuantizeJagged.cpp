//===- QuantizeJagged.cpp - quantize along a jagged token axis ------------===//
//
// The weight gradient's operands: `mxmoe.quantize %x offsets(%o) {axis = 0}`
// of x [T, K] along its token axis in token groups, data written transposed
// [K, len] with every group's blocks padded to 32 tokens, scales row-major,
// blocked per K group or (scale tiles) compact. Scale windows of c = 32
// (MX), 64 or 128 (MX128, `scale_tile = [1, c]`) tokens restart at every
// group start (mxmoe.quantize's description; the DeepSeek-V3 report, arXiv
// 2412.19437 section 3.3.2, for 1x128 windows).
//
// One CTA per (128-token chunk of a group, up to 4 x 64 K columns), as the
// columnwise tiled kernel (Quantize.cpp): per 64-column tile, coalesced
// 16-byte loads of the chunk into shared memory (tokens past the group's
// end as zeros), a barrier, then one thread per (two adjacent columns,
// 16-token segment), reading both columns with 4-byte reads: the 8 lanes
// of a column pair write each column's 128 codes as one 128-byte row
// segment (16 bytes each), and a window's segments are adjacent lanes
// that combine their amax by shuffles. Chunks restart at every group start, so
// they hold whole windows. Blocked scales: the chunk threads also write the
// padding bytes of their group's columns (blocks past the group's end, rows
// K..scale rows); CTAs past the chunks zero the data blocks, scale columns and
// blocked columns past the groups. Replaces one thread per window with
// strided 2-byte loads (18-29 % of copy bandwidth on the H200,
// bench/RESULTS.md).
//
//===----------------------------------------------------------------------===//

#include "FusedQuantize.h"
#include "Quantize.h"

#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;
using ::mxmoe::kMXBlockSize;
using ::mxmoe::MXElementKind;

namespace {

/// Chunk of tokens x K columns per tile, threads per CTA, tiles per CTA;
/// shared-memory rows of kStride elements, 16-row group i shifted by
/// i * kShift elements (16 bytes for 2-byte inputs), so that a warp's
/// 4-byte reads (4 column pairs x 8 segments) fall in distinct banks.
constexpr int64_t TM = 128, TK = 64, kThreads = 256, kTilesPerCta = 4;
constexpr int64_t kStride = TK, kGroupRows = 16, kShift = 8;
constexpr int64_t kBlocksPerChunk = TM / kMXBlockSize;
/// Tokens per thread (a segment) and segments per block.
constexpr int64_t kSegment = 16, kSegsPerBlock = kMXBlockSize / kSegment;

/// Argument positions: input, offsets, data, scales, status.
enum : unsigned { aIn, aOffsets, aData, aScales, aStatus };

/// for (i = first; i < end; i += step) fn(i), index values.
void forRange(KB &b, Value first, Value end, Value step,
              function_ref<void(Value)> fn) {
  auto loop = scf::ForOp::create(b, first, end, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  fn(loop.getInductionVar());
}

/// The chunk a CTA quantizes: its group, index in the group, first token
/// and the group's tokens from there (>= 1).
struct Chunk {
  Value g, j, tok0, count;
};

/// One thread of the jagged kernel: configuration and the values its code
/// reads. Units of the group table: 0 data blocks, 1 (blocked) K-group
/// scale columns, `chunkUnit` 128-token chunks, `windowUnit` (compact)
/// scale windows.
struct JaggedThread {
  KB &b;
  GroupTable &tab;
  Type elem;
  RoundingMode mode;
  MXElementKind kind;
  int64_t lanes; ///< blocks per scale window (c / 32)
  bool blocked, compact;
  unsigned chunkUnit, windowUnit;
  ValueRange a;
  Value smem;
  Value K, len, cs, sR, sC;
  Value tilesK; ///< 64-column tiles (blocked: over max(K, scale rows))
  Value ctasK;  ///< CTAs per chunk slot
  Value slots;  ///< chunk slots (>= the chunks)

  void run(Value t);
  void chunk(Value u, Value tc, Value tid);
  /// Loads the chunk's tokens of columns [k0, k0 + 64) into shared memory.
  void loadTile(const Chunk &ch, Value k0, Value tid);
  /// Quantizes segment `seg` of the tile columns c, c + 1 (data rows k,
  /// k + 1).
  void quantizePair(const Chunk &ch, Value k, Value c, Value seg);
  /// Segment `seg` of one column: its amax over the scale window, codes
  /// and scales; every lane of the window's lane group calls it.
  void quantizeSegment(const Chunk &ch, ArrayRef<Value> xs, Value k, Value seg,
                       Value real);
  void storeScales(const Chunk &ch, Value jb, Value blk, Value k, Value pb,
                   Value byte);
  /// Blocked scale byte of (column k, block jb of the chunk's group).
  Value blockedSlot(const Chunk &ch, Value k, Value jb);
  /// Thread `i` of `n` past the chunks: zeroes what lies past the groups.
  void pastGroups(Value i, Value n);
  Value sIndex(Value row, Value col);
};

Value JaggedThread::sIndex(Value row, Value col) {
  Value unshifted = b.add(b.mulc(row, kStride), col);
  Value shifted = b.mulc(b.div(row, kGroupRows), kShift);
  return b.add(unshifted, shifted);
}

void JaggedThread::run(Value t) {
  Value tid = b.rem(t, kThreads), cta = b.div(t, kThreads);
  Value u, tc;
  std::tie(u, tc) = b.divRem(cta, ctasK);
  Value chunks = b.load(tab.starts[chunkUnit], b.idx(tab.numGroups));
  // u is uniform per CTA: the barriers in chunk() are reached by all.
  ifThenElse(
      b, b.ult(u, chunks), [&] { chunk(u, tc, tid); },
      [&] {
        Value zeroCtas = b.mul(b.sub(slots, chunks), ctasK);
        Value first = b.sub(cta, b.mul(chunks, ctasK));
        Value i = b.add(b.mulc(first, kThreads), tid);
        pastGroups(i, b.mulc(zeroCtas, kThreads));
      });
}

void JaggedThread::loadTile(const Chunk &ch, Value k0, Value tid) {
  int64_t perLoad = 16 / (elem.getIntOrFloatBitWidth() / 8);
  int64_t chunksPerRow = TK / perLoad, rowsPerPass = kThreads / chunksPerRow;
  auto vt = VectorType::get({perLoad}, elem);
  Value col = b.mulc(b.rem(tid, chunksPerRow), perLoad);
  Value k = b.add(k0, col);
  Value kOk = b.ult(k, K);
  Value row0 = b.div(tid, chunksPerRow);
  for (int64_t pass = 0; pass < TM / rowsPerPass; ++pass) {
    Value row = b.add(row0, b.idx(pass * rowsPerPass));
    Value at = sIndex(row, col);
    // Tokens past the group's end (the next group's) load as zeros.
    ifThenElse(
        b, b.andi(kOk, b.ult(row, ch.count)),
        [&] {
          Value tok = b.add(ch.tok0, row);
          Value idx = b.add(b.mul(tok, K), k);
          // A fused quantization: the producer's results (FusedQuantize.h).
          FusedSource *fused = activeFusedSource;
          Value v = fused && fused->isAnchor(a[aIn])
                        ? fused->loadVector(b, idx, perLoad)
                        : vector::LoadOp::create(b, vt, a[aIn], ValueRange{idx},
                                                 false, llvm::MaybeAlign(16));
          vector::StoreOp::create(b, v, smem, ValueRange{at}, false,
                                  llvm::MaybeAlign(16));
        },
        [&] {
          Value zero = arith::ConstantOp::create(
              b, vt, DenseElementsAttr::get(vt, b.getZeroAttr(elem)));
          vector::StoreOp::create(b, zero, smem, ValueRange{at}, false,
                                  llvm::MaybeAlign(16));
        });
  }
}

void JaggedThread::chunk(Value u, Value tc, Value tid) {
  Chunk ch;
  ch.g = largestStartLE(b, tab, chunkUnit, u);
  ch.j = b.sub(u, b.load(tab.starts[chunkUnit], ch.g));
  Value begin = tab.groupBegin(b, ch.g);
  ch.tok0 = b.add(begin, b.mulc(ch.j, TM));
  ch.count = b.sub(b.load(tab.ends, ch.g), ch.tok0);
  // One thread per (column pair, segment): lanes 8p .. 8p + 7 of a warp
  // hold pair p's 128 tokens, so a window's segments are an aligned lane
  // group.
  Value warp, lane;
  std::tie(warp, lane) = b.divRem(tid, b.idx(32));
  Value seg = b.rem(lane, TM / kSegment);
  Value warpPairs = b.mulc(warp, 32 / (TM / kSegment));
  Value pair = b.add(warpPairs, b.div(lane, TM / kSegment));
  Value c = b.mulc(pair, 2);
  Value tk0 = b.mulc(tc, kTilesPerCta);
  Value tkLast = b.add(tk0, b.idx(kTilesPerCta));
  Value tkEnd = b.minui(tkLast, tilesK);
  forRange(b, tk0, tkEnd, b.idx(1), [&](Value tk) {
    Value k0 = b.mulc(tk, TK);
    loadTile(ch, k0, tid);
    gpu::BarrierOp::create(b);
    quantizePair(ch, b.add(k0, c), c, seg);
    gpu::BarrierOp::create(b); // the next tile overwrites shared memory
  });
}

void JaggedThread::quantizePair(const Chunk &ch, Value k, Value c, Value seg) {
  Value blk = b.div(seg, kSegsPerBlock);
  Value row0 = b.mulc(seg, kSegment);
  Value blkRow0 = b.mulc(blk, kMXBlockSize);
  Value real = b.ult(blkRow0, ch.count);
  // K % (16-byte load) == 0: both columns of a pair are inside K or both
  // past it (padding rows of blocked scales).
  ifThen(b, b.ult(k, K), [&] {
    SmallVector<Value> xa, xb;
    auto vt = VectorType::get({2}, elem);
    int64_t align = 2 * elem.getIntOrFloatBitWidth() / 8;
    for (int64_t i = 0; i < kSegment; ++i) {
      Value at = sIndex(b.add(row0, b.idx(i)), c);
      Value two = vector::LoadOp::create(b, vt, smem, ValueRange{at}, false,
                                         llvm::MaybeAlign(align));
      for (auto [h, xs] : llvm::enumerate(std::array{&xa, &xb})) {
        Value e = vector::ExtractOp::create(b, two, static_cast<int64_t>(h));
        if (e.getType() != b.getF32Type())
          e = arith::ExtFOp::create(b, b.getF32Type(), e);
        xs->push_back(e);
      }
    }
    quantizeSegment(ch, xa, k, seg, real);
    quantizeSegment(ch, xb, b.add(k, b.idx(1)), seg, real);
  });
  if (!blocked)
    return;
  // Blocked: rows K .. scale rows of the group's columns are padding (one
  // lane per block writes them).
  Value jb = b.add(b.mulc(ch.j, kBlocksPerChunk), blk);
  Value segInBlock = b.rem(seg, kSegsPerBlock);
  Value firstSeg = b.eq(segInBlock, b.idx(0));
  for (int64_t h = 0; h < 2; ++h) {
    Value kh = b.add(k, b.idx(h));
    Value pastK = b.ule(K, kh);
    Value padRow = b.andi(pastK, b.ult(kh, sR));
    ifThen(b, b.andi(padRow, firstSeg),
           [&] { storeZeroScale(b, a[aScales], blockedSlot(ch, kh, jb)); });
  }
}

void JaggedThread::quantizeSegment(const Chunk &ch, ArrayRef<Value> xs, Value k,
                                   Value seg, Value real) {
  Value blk = b.div(seg, kSegsPerBlock);
  Value jb = b.add(b.mulc(ch.j, kBlocksPerChunk), blk); // block in group
  Value pb = b.add(b.load(tab.starts[0], ch.g), jb);    // padded block
  Value segInBlock = b.rem(seg, kSegsPerBlock);
  Value firstSeg = b.eq(segInBlock, b.idx(0));
  Value segMax = blockAmax(b, xs);
  Value amax = b.select(real, segMax, b.f32(0.0f));
  amax = groupMax(b, amax, lanes * kSegsPerBlock);
  Value byte = computeScaleByte(b, amax, mode, kind);
  Value inv = reciprocalScale(b, byte);
  ifThen(b, real, [&] {
    Value rowStart = b.mul(k, len);
    Value blockStart = b.add(rowStart, b.mulc(pb, kMXBlockSize));
    Value dIdx = b.add(blockStart, b.mulc(segInBlock, kSegment));
    storeScaled(b, xs, inv, kind, a[aData], dIdx);
    ifThen(b, firstSeg, [&] { storeScales(ch, jb, blk, k, pb, byte); });
  });
  // Blocked: the chunk's blocks past the group's end are the group's
  // padding columns (its column count is a multiple of 4).
  if (blocked) {
    Value pad = b.andi(b.lnot(real), firstSeg);
    ifThen(b, pad,
           [&] { storeZeroScale(b, a[aScales], blockedSlot(ch, k, jb)); });
  }
}

Value JaggedThread::blockedSlot(const Chunk &ch, Value k, Value jb) {
  // Group g's blocked matrix: scale rows x its K-group columns, from
  // column q0 on (per_k_group).
  Value q0 = b.load(tab.starts[1], ch.g);
  Value q1 = b.load(tab.starts[1], b.add(ch.g, b.idx(1)));
  Value kgp = b.sub(q1, q0);
  Value groupBase = b.mul(q0, sR);
  return b.add(groupBase, b.blockedOffset(k, jb, kgp));
}

void JaggedThread::storeScales(const Chunk &ch, Value jb, Value blk, Value k,
                               Value pb, Value byte) {
  Value mem = a[aScales];
  if (compact) {
    // One scale per window, written by its first block's lane.
    Value sub = b.rem(blk, lanes);
    ifThen(b, b.eq(sub, b.idx(0)), [&] {
      Value w = b.div(jb, lanes);
      Value col = b.add(b.load(tab.starts[windowUnit], ch.g), w);
      Value rowStart = b.mul(k, sC);
      storeScale(b, byte, mem, b.add(rowStart, col));
    });
    return;
  }
  if (!blocked) {
    Value rowStart = b.mul(k, cs);
    storeScale(b, byte, mem, b.add(rowStart, pb));
    return;
  }
  storeScale(b, byte, mem, blockedSlot(ch, k, jb));
}

void JaggedThread::pastGroups(Value i, Value n) {
  // Thread i of the n past the chunks: a grid-stride loop per region.
  // Data blocks (and row-major scales) past the groups, every column.
  Value total = b.load(tab.starts[0], b.idx(tab.numGroups));
  Value tail = b.sub(cs, total);
  Value blocks = b.mul(K, tail);
  forRange(b, i, blocks, n, [&](Value w) {
    Value k, q;
    std::tie(k, q) = b.divRem(w, tail);
    Value pb = b.add(total, q);
    Value rowStart = b.mul(k, len);
    storeZeroElements(b, kind, a[aData], b.add(rowStart, b.mulc(pb, 32)));
    if (!blocked && !compact) {
      Value scaleRow = b.mul(k, cs);
      storeZeroScale(b, a[aScales], b.add(scaleRow, pb));
    }
  });
  if (compact) {
    // Window columns past the groups.
    Value windows = b.load(tab.starts[windowUnit], b.idx(tab.numGroups));
    Value wTail = b.sub(sC, windows);
    forRange(b, i, b.mul(K, wTail), n, [&](Value w) {
      Value k, q;
      std::tie(k, q) = b.divRem(w, wTail);
      Value rowStart = b.mul(k, sC);
      storeZeroScale(b, a[aScales], b.add(rowStart, b.add(windows, q)));
    });
  }
  if (blocked) {
    // Blocked columns past the groups: one contiguous byte range.
    Value cols = b.load(tab.starts[1], b.idx(tab.numGroups));
    Value first = b.mul(cols, sR);
    Value bytes = b.sub(b.mul(sC, sR), first);
    forRange(b, i, bytes, n,
             [&](Value w) { storeZeroScale(b, a[aScales], b.add(first, w)); });
  }
}

} // namespace

bool KernelGen::canQuantizeJaggedTiled(QuantizeOp op, const MXGeometry &geo) {
  Type elem = op.getInput().getType().getElementType();
  int64_t perLoad = 16 / (elem.getIntOrFloatBitWidth() / 8);
  std::array<int64_t, 2> tile = op.getScaleTileOrDefault();
  bool windows =
      tile[0] == 1 && (tile[1] == 32 || tile[1] == 64 || tile[1] == 128);
  return op.getOffsets() && op.getAxis() == 0 && blockSize == kThreads &&
         geo.rows % perLoad == 0 && windows;
}

void KernelGen::genQuantizeJaggedTiled(QuantizeOp op, const MXGeometry &geo,
                                       MXElementKind kind) {
  RankedTensorType scales = op.getScales().getType();
  bool blocked = isBlockedScales(scales), compact = isCompactScales(scales);
  int64_t c = op.getScaleTileOrDefault()[1];
  int64_t G = cast<RankedTensorType>(op.getOffsets().getType()).getDimSize(0);
  using namespace general_quantize_sizes;
  auto [sizes, rspec] = generalQuantizeSizes(op, geo);
  rspec.views.insert(rspec.views.begin() + aOffsets,
                     IntegerType::get(op.getContext(), 32));
  rspec.views.push_back(IntegerType::get(op.getContext(), 32));
  GroupSpec spec{aOffsets, aStatus, G, 0, {}, kTokens};
  spec.units.push_back({kMXBlockSize, 1, kMXBlockSize, kLen}); // data blocks
  if (blocked)
    spec.units.push_back({kMXBlockSize, 4, 1, kScaleCols}); // K-group columns
  // Chunks: at most one per data block, so within the data capacity.
  unsigned chunkUnit = spec.units.size();
  spec.units.push_back({TM, 1, kMXBlockSize, kLen});
  unsigned windowUnit = spec.units.size();
  if (compact)
    spec.units.push_back({c, 1, 1, kScaleCols});
  // CTAs: ceil(T / 128) + G chunk slots (more than the chunks: a group of
  // n tokens has ceil(n / 128) < n / 128 + 1) x CTAs of 4 column tiles.
  int64_t cols = blocked ? std::max(geo.rows, sizes[kScaleRows]) : geo.rows;
  int64_t ctasK = ::mxmoe::ceilDiv(::mxmoe::ceilDiv(cols, TK), kTilesPerCta);
  int64_t slots = ::mxmoe::ceilDiv(sizes[kTokens], TM) + G;
  int64_t work = slots * ctasK * kThreads;
  auto tilesKOf = [&](KB &b, ValueRange sz) {
    Value k = blocked ? b.maxsi(sz[kRows], sz[kScaleRows]) : sz[kRows];
    return b.ceilDivc(k, TK);
  };
  auto ctasKOf = [&](KB &b, ValueRange sz) {
    return b.ceilDivc(tilesKOf(b, sz), kTilesPerCta);
  };
  auto slotsOf = [&](KB &b, ValueRange sz) {
    Value tokenChunks = b.ceilDivc(sz[kTokens], TM);
    return b.add(tokenChunks, b.idx(G));
  };
  int64_t smemElems = TM * kStride + (TM / kGroupRows) * kShift;
  Type elem = op.getInput().getType().getElementType();
  auto kernel = createKernel(
      module, name("quantize", op), rspec,
      [&](KB &b, ValueRange sz) {
        Value perSlot = b.mulc(ctasKOf(b, sz), kThreads);
        return b.mul(slotsOf(b, sz), perSlot);
      },
      blockSize, &spec,
      [&](KB &b, ValueRange a, ValueRange sz, Value t, GroupTable &tab) {
        Value smem = addSharedBuffer(b, smemElems, elem);
        // Four CTAs per SM for 2-byte inputs, three for FP4 data, two for
        // f32 (PTX `.minnctapersm`: at most 64 / 85 / 128 registers): with
        // `.maxntid` alone ptxas 13.0 chose 64 registers for the compact
        // sm_100a kernel and spilled 8 bytes; the FP4 blocked kernel spills
        // 4 bytes at 64, f32 (2 x 16 values per thread) at 85.
        auto fn = b.getInsertionBlock()
                      ->getParent()
                      ->getParentOfType<gpu::GPUFuncOp>();
        int32_t ctas = elem.getIntOrFloatBitWidth() != 16 ? 2
                       : kind == MXElementKind::E2M1      ? 3
                                                          : 4;
        fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    b.getI32IntegerAttr(ctas));
        Value len = sz[kLen];
        JaggedThread th{b,
                        tab,
                        elem,
                        op.getRounding(),
                        kind,
                        c / kMXBlockSize,
                        blocked,
                        compact,
                        chunkUnit,
                        windowUnit,
                        a,
                        smem,
                        sz[kRows],
                        len,
                        b.div(len, kMXBlockSize),
                        sz[kScaleRows],
                        sz[kScaleCols],
                        tilesKOf(b, sz),
                        ctasKOf(b, sz),
                        slotsOf(b, sz)};
        th.run(t);
      });
  finish(op, kernel, quantizeHostArgs(op), sizes, work);
}
