//===- Sm90Mx128.cpp - sm_90a grouped GEMM, MX128 promotion ---------------===//
//
// The fp8 strategy of the sm_90a kernel for MX128 operands (GemmKind::mx128:
// both scale tensors record tiles whose c is a multiple of 128, so the four
// MX blocks of a 128-wide pipeline stage share one scale per row of A and
// per row of B). Per stage a consumer warpgroup chains the four k32 fp8
// wgmmas into one fp32 partial P and folds it into the accumulator once:
// acc += P * sa(row) * sb(column) (DeepSeek-V3 report, arXiv 2412.19437
// section 3.3.2: one promotion per 128 K, "equivalent to 4 WGMMAs"). The
// scale products come from the CUDA cores, not from a tf32 wgmma as in the
// MX32 path (at one promotion per 128 K a tf32 m64nNk8 would cost half a
// stage's fp8 tensor-core time):
//   * 2D x 3D: the weight's 128x128 tiles give one rhs scale per tile (the
//     tile's N columns lie in one 128-row block), so the decoder writes
//     sa(row) * sb(tile) per row and the promotion is one FFMA per element;
//   * 2D x 2D (weight gradient, 1x128 windows along the tokens of both
//     operands): row scales and column scales, one FMUL and one FFMA per
//     element.
// Epilogue: each warpgroup stages its 64 rows of the tile in shared memory
// and one thread per valid row copies the row's valid columns to global
// memory with cp.async.bulk (PTX ISA 9.7.9.25), then the warpgroup goes on
// to its next tile while the copies drain (rows past a group's end are
// never written: jagged groups need no padding). Row copies need 16-byte
// aligned rows: N % 8 == 0 (bf16; N % 4 for f32), else the direct
// predicated stores of emitFragmentEpilogue. With `accumulate` (2D x 2D),
// each thread adds the output elements its fragment replaces as it stages
// them (addOutputPair: ld.global, fp32 add), so the rows copied are
// acc + product.
// Decoder: loader-warpgroup threads 64-127, one stage's fp32 table (see
// Sm90SmemMap::tableBytes) from byte 0 (the stage's first MX block, always
// live) of each row of the stage's blocked scale atoms. The table is read
// with ld.shared only (no async-proxy fence), ordered by the decoded
// mbarrier's arrive (release) and the consumers' wait (acquire).
// References: Common.h, Sm90.h; PTX ISA 9.7.15 (wgmma, D fragment layout
// 9.7.15.5.2).
//
//===----------------------------------------------------------------------===//

#include "Sm90.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;

namespace mlir::mxmoe::kernels::gemm {

/// Decoder thread `d` (0-63) of the stage in ring slot `slot` of tile T:
/// rows d and d + 64 of the row scales; 2D x 3D multiplied by the tile's
/// rhs scale (exact: a product of two powers of two, wherever it is an
/// fp32 number), 2D x 2D then tile columns d, d + 64, ... of the column
/// scales.
void Sm90Kernel::decodeStageMx128(const Tile &T, Value d, Value s,
                                  const RingSlot &slot) {
  // Tile N 192 (2D x 3D): the second 128-row block's scale, byte 0 of its
  // stage atom, read from global memory (L2) before the wait, so its
  // latency overlaps the stage's TMA (a second atom copy would cost the
  // loader thread registers it does not have).
  Value sbNextByte;
  if (!p.kGrouped && cfg.tileN > kBM) {
    Value at = b.add(T.bAtom1, b.mulc(s, kAtom));
    sbNextByte = b.ldg(b.getI8Type(), f.bScales, at);
  }
  waitParity(b, f.bar(map.barOff(), slot.st), slot.phase);
  Value tables = f.at(map.tablesOff());
  Value tab = b.add(tables, b.mulc(slot.st, map.tableBytes()));
  Value sbTile, sbNext;
  if (!p.kGrouped)
    sbTile = decodeByte(atomWord(slot, map.sbOff(), T.bAtomRow), 0);
  if (sbNextByte)
    sbNext =
        decodeByte(arith::ExtUIOp::create(b, b.getI32Type(), sbNextByte), 0);
  for (int64_t h = 0; h < 2; ++h) {
    Value row = b.add(d, b.idx(64 * h));
    Value sa = decodeByte(atomWord(slot, map.saOff(), row), 0);
    if (sbNext) {
      Value second = arith::MulFOp::create(b, sa, sbNext);
      Value at = b.add(tab, b.idx(map.colScaleOff()));
      b.sts(second, b.add(at, b.mulc(row, 4)));
    }
    if (sbTile)
      sa = arith::MulFOp::create(b, sa, sbTile);
    b.sts(sa, b.add(tab, b.mulc(row, 4)));
  }
  if (p.kGrouped) {
    for (int64_t c = 0; c < cfg.tileN; c += kDecoderThreads) {
      Value col = b.add(d, b.idx(c));
      ifThen(b, b.ult(col, b.idx(cfg.tileN)), [&] {
        Value word = atomWord(slot, map.sbOff(), b.add(T.bAtomRow, col));
        Value sb = decodeByte(word, 0);
        Value at = b.add(tab, b.idx(map.colScaleOff()));
        b.sts(sb, b.add(at, b.mulc(col, 4)));
      });
    }
  }
  NVVM::MBarrierArriveOp::create(b, Type(), f.bar(map.decodedBar(0), slot.st),
                                 Value(), NVVM::MemScopeKind::CTA, false);
}

/// The stage's scale of every fragment element (D fragment layout: element
/// i of this thread is row fragRow + 8 * ((i / 2) % 2) of the warpgroup's
/// 64, column fragCol + 8 * (i / 4) + i % 2, PTX ISA 9.7.15.5.2), read from
/// the stage's table at `table`: the row scale (2D x 3D, already times the
/// rhs scale), or the row scale times the column scale (2D x 2D).
SmallVector<Value> Sm90Consumer::mx128Scales(const Tile &T, Value table) {
  Value rowTop = b.add(b.mulc(w, 64), fragRow);
  Value top = b.lds(f32, b.add(table, b.mulc(rowTop, 4)));
  Value bottom = b.lds(f32, b.add(table, b.mulc(b.add(rowTop, b.idx(8)), 4)));
  SmallVector<Value> scales;
  if (!p.kGrouped && cfg.tileN > kBM)
    return mx128TwoBlockScales(T, table, rowTop, top, bottom);
  if (!p.kGrouped) {
    for (int64_t i = 0; i < nFrag; ++i)
      scales.push_back((i / 2) % 2 ? bottom : top);
    return scales;
  }
  Value cols = b.add(table, b.idx(map.colScaleOff()));
  auto v2 = VectorType::get({2}, f32);
  SmallVector<Value> colScale; // columns fragCol + 8j, + 8j + 1
  for (int64_t j = 0; j < cfg.tileN / 8; ++j) {
    Value c = b.add(fragCol, b.idx(8 * j));
    Value pair = LLVM::LoadOp::create(b, v2, b.sptr(b.add(cols, b.mulc(c, 4))),
                                      /*alignment=*/8);
    for (int64_t e = 0; e < 2; ++e)
      colScale.push_back(
          LLVM::ExtractElementOp::create(b, pair, b.i32(e)).getResult());
  }
  for (int64_t i = 0; i < nFrag; ++i) {
    Value rowScale = (i / 2) % 2 ? bottom : top;
    Value col = colScale[2 * (i / 4) + i % 2];
    scales.push_back(arith::MulFOp::create(b, rowScale, col));
  }
  return scales;
}

/// 2D x 3D at tile N 192: the tile starts at row 0 or 64 of a 128-row
/// block of N (bAtomRow), so its columns 0-63 take the first block's
/// scales, 128-191 the second's, and 64-127 the first's only when the
/// tile starts a block: two selects per stage (the second block's row
/// scales are the table's second half).
SmallVector<Value> Sm90Consumer::mx128TwoBlockScales(const Tile &T, Value table,
                                                     Value rowTop, Value top,
                                                     Value bottom) {
  Value second = b.add(table, b.idx(map.colScaleOff()));
  Value top1 = b.lds(f32, b.add(second, b.mulc(rowTop, 4)));
  Value bottomAt = b.mulc(b.add(rowTop, b.idx(8)), 4);
  Value bottom1 = b.lds(f32, b.add(second, bottomAt));
  Value startsBlock = b.eq(T.bAtomRow, b.idx(0));
  Value midTop = b.select(startsBlock, top, top1);
  Value midBottom = b.select(startsBlock, bottom, bottom1);
  SmallVector<Value> scales;
  for (int64_t i = 0; i < nFrag; ++i) {
    int64_t col = 8 * (i / 4);
    bool low = (i / 2) % 2 == 0;
    if (col < 64)
      scales.push_back(low ? top : bottom);
    else if (col < kBM)
      scales.push_back(low ? midTop : midBottom);
    else
      scales.push_back(low ? top1 : bottom1);
  }
  return scales;
}

/// One MX128 stage: wait for its decoded table, read this thread's scales,
/// run the stage's live MX blocks (all four; in the last stage of a 2D x 2D
/// group's tile or of a K tail the first kBlocks - 4s) into one fp32
/// partial P, release the ring slot, then acc += P * scale.
SmallVector<Value> Sm90Consumer::mx128Stage(const Tile &T, Value s, Value it,
                                            SmallVector<Value> acc) {
  auto [slot, empty] = acquireStage(it, map.decodedBar(0));
  Value tables = k.f.at(map.tablesOff());
  Value table = b.add(tables, b.mulc(slot.st, map.tableBytes()));
  // Tile N 192: the scales are read after the wgmmas (their registers are
  // not live beside the 96 of P and the 96 of the accumulator).
  bool late = cfg.tileN > kBM;
  SmallVector<Value> scales;
  if (!late)
    scales = mx128Scales(T, table);
  Value aSlot = b.add(slot.stage, b.idx(map.aOff()));
  Value aTile = b.add(aSlot, b.mulc(w, 64 * 128));
  Value bTile = b.add(slot.stage, b.idx(map.bOff()));
  Value P;
  if (!p.kGrouped && p.kMultipleOf128) {
    P = mx128Mma(aTile, bTile, kBlocksPerStage);
  } else {
    Value live = b.sub(T.kBlocks, b.mulc(s, kBlocksPerStage));
    P = mx128LiveMma(aTile, bTile, live, kBlocksPerStage);
  }
  if (late)
    scales = mx128Scales(T, table);
  // The wgmmas completed (wait_group 0) and the scales are in registers:
  // every consumer thread releases the slot before the promotion.
  NVVM::MBarrierArriveOp::create(b, Type(), empty, Value(),
                                 NVVM::MemScopeKind::CTA, false);
  for (int64_t i = 0; i < nFrag; ++i) {
    Value pi = LLVM::ExtractValueOp::create(b, P, ArrayRef<int64_t>{i});
    acc[i] = LLVM::FMAOp::create(b, pi, scales[i], acc[i]);
  }
  return acc;
}

/// The MMAs of the stage's `live` blocks (uniform branches, from `blocks`
/// down to 1): P.
Value Sm90Consumer::mx128LiveMma(Value aTile, Value bTile, Value live,
                                 int64_t blocks) {
  if (blocks == 1)
    return mx128Mma(aTile, bTile, 1);
  auto ty =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(nFrag, f32));
  auto branch = scf::IfOp::create(b, TypeRange{ty}, b.sge(live, b.idx(blocks)),
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&branch.getThenRegion().front());
  scf::YieldOp::create(b, mx128Mma(aTile, bTile, blocks));
  b.setInsertionPointToStart(&branch.getElseRegion().front());
  scf::YieldOp::create(b, mx128LiveMma(aTile, bTile, live, blocks - 1));
  return branch.getResult(0);
}

/// One wgmma group: the k32 wgmmas m64nNk32 of blocks 0 .. blocks-1 of the
/// stage (A and B K-major SWIZZLE_128B: block kb at +32 kb bytes) chained
/// into one fp32 partial P (scale-d 0 for the first); waits for the group.
Value Sm90Consumer::mx128Mma(Value aTile, Value bTile, int64_t blocks) {
  auto ty =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(nFrag, f32));
  auto fp8 = [](::mxmoe::MXElementKind kind) {
    return kind == ::mxmoe::MXElementKind::E5M2 ? NVVM::WGMMATypes::e5m2
                                                : NVVM::WGMMATypes::e4m3;
  };
  NVVM::WgmmaFenceAlignedOp::create(b);
  Value P = LLVM::UndefOp::create(b, ty);
  for (int64_t kb = 0; kb < blocks; ++kb) {
    Value aDesc = descOf(b.add(aTile, b.idx(32 * kb)));
    Value bDesc = descOf(b.add(bTile, b.idx(32 * kb)));
    P = wgmmaKMajor(b, ty, P, aDesc, bDesc, cfg.tileN, 32, fp8(p.aType),
                    fp8(p.bType), /*accumulate=*/kb > 0);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
  return P;
}

/// Named barrier of this consumer warpgroup's 128 threads (1 + w; 0 is the
/// CTA barrier, 3 the bf16 upcast's).
void Sm90Consumer::warpgroupBarrier() {
  Value id = b.toI32(b.add(w, b.idx(1)));
  NVVM::BarrierOp::create(b, Type(), id, b.i32(128), nullptr, Value());
}

/// The tile's epilogue (see the file comment).
void Sm90Consumer::mx128Epilogue(const Tile &T, ArrayRef<Value> accv) {
  TileBounds bounds = readTileBounds(T);
  int64_t align = 16 / map.outBytes;
  Value strideRem = b.rem(T.outStride, align);
  Value aligned = b.eq(strideRem, b.idx(0));
  auto branch = scf::IfOp::create(b, aligned, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&branch.getThenRegion().front());
  mx128StageRows(T, accv, bounds);
  b.setInsertionPointToStart(&branch.getElseRegion().front());
  emitFragmentEpilogue(T, accv);
}

/// Staged epilogue: wait until this warpgroup's previous row copies have
/// read the staging rows, store the fragment (column pairs, 4 or 8 bytes),
/// fence for the async proxy, then thread t < 64 copies row 64 w + t.
void Sm90Consumer::mx128StageRows(const Tile &T, ArrayRef<Value> accv,
                                  const TileBounds &bounds) {
  Value rowsValid = bounds.rowsValid, colsValid = bounds.colsValid;
  Value outBase = bounds.outBase;
  Value issuer = b.ult(t, b.idx(64));
  ifThen(b, issuer,
         [&] { NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, b.getUnitAttr()); });
  warpgroupBarrier();
  Type outTy = p.outF32 ? Type(f32) : Type(b.getBF16Type());
  Value staging = k.f.at(map.stagingOff());
  int64_t stride = map.stagingStride(), esz = map.outBytes;
  for (int64_t i = 0; i < nFrag; i += 2) {
    Value wgRow = b.add(b.mulc(w, 64), fragRow);
    Value r = b.add(wgRow, b.idx(i % 4 < 2 ? 0 : 8));
    Value c = b.add(fragCol, b.idx(8 * (i / 4)));
    Value x2[2] = {accv[i], accv[i + 1]};
    if (p.accumulate)
      std::tie(x2[0], x2[1]) = addOutputPair(T, bounds, r, c, x2[0], x2[1]);
    Value v = LLVM::UndefOp::create(b, VectorType::get({2}, outTy));
    for (int64_t e = 0; e < 2; ++e) {
      Value x = x2[e];
      if (!p.outF32)
        x = arith::TruncFOp::create(b, outTy, x);
      v = LLVM::InsertElementOp::create(b, v, x, b.i32(e));
    }
    Value rowOff = b.mulc(r, stride);
    Value at = b.add(staging, b.add(rowOff, b.mulc(c, esz)));
    LLVM::StoreOp::create(b, v, b.sptr(at), 2 * esz);
  }
  fenceAsyncShared(b);
  warpgroupBarrier();
  Value row = b.add(b.mulc(w, 64), t);
  ifThen(b, b.andi(issuer, b.ult(row, rowsValid)), [&] {
    Value first = b.add(outBase, b.mul(row, T.outStride));
    Value dst = b.elemPtr(outTy, k.f.out, first);
    Value src = b.sptr(b.add(staging, b.mulc(row, stride)));
    Value bytes = b.toI32(b.mulc(colsValid, esz));
    NVVM::CpAsyncBulkSharedCTAToGlobalOp::create(b, dst, src, bytes, Value(),
                                                 Value());
    NVVM::CpAsyncBulkCommitGroupOp::create(b);
  });
}

/// After the last tile: the row copies complete before the CTA (and its
/// shared memory) ends.
void Sm90Consumer::mx128DrainStores() {
  ifThen(b, b.ult(t, b.idx(64)),
         [&] { NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, UnitAttr()); });
}

} // namespace mlir::mxmoe::kernels::gemm
