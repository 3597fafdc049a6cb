//===- Sm90Upcast.cpp - sm_90a grouped GEMM, bf16 upcast strategy --------===//
//
// The consumer warpgroups of the sm_90a kernel with GemmConfig::upcastBF16
// (option A of GroupedMatmul.h): each stage's fp8 tiles dequantized
// exactly to bf16 in shared memory, then bf16 wgmma m64nNk16 (PTX ISA
// 9.7.15). See Sm90.h.
//
//===----------------------------------------------------------------------===//

#include "Sm90.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;

namespace mlir::mxmoe::kernels::gemm {

//===----------------------------------------------------------------------===//
// bf16 upcast (GemmConfig::upcastBF16)
//===----------------------------------------------------------------------===//

/// Stage `it` (the CTA's running stage counter; s-th of the tile) is
/// converted by both consumer warpgroups: every thread converts 16-element
/// chunks of its warpgroup's 64 A rows and of half of the tile's B rows
/// from the fp8 ring slot to the bf16 buffer of parity it % 2 (exact: fp8
/// -> f16 by cvt.rn.f16x2.{e4m3,e5m2}x2, times the block's 2^(e-127) in
/// fp32, rounded to bf16 with no loss; blocks past the tile's valid K
/// blocks are written as zeros), then releases the ring slot. Software
/// pipeline: the 8 bf16 wgmma m64nNk16 of stage s run while stage s+1 is
/// converted into the other buffer; wait_group 0 and a 256-thread barrier
/// close the step, so the accumulator is never read while in flight and no
/// buffer is rewritten before both warpgroups' wgmmas on it are done.
Value Sm90Consumer::emitUpcastConsumer(const Tile &T, Value it0) {
  ifThen(b, b.ult(b.idx(0), T.kStages), [&] {
    convertStage(T, b.idx(0), it0);
    consumerBarrier();
  });
  auto [accOut, itOut] =
      stageLoop(T, it0, [&](Value s, Value it, SmallVector<Value> accIn) {
        return upcastStage(T, s, it, std::move(accIn));
      });
  emitFragmentEpilogue(T, accOut);
  return itOut;
}

/// The bf16 buffer (A, then B at bfBOff) of running stage `it`.
Value Sm90Consumer::upcastBuffer(Value it) {
  Value bufs = k.f.at(map.bfOff());
  return b.add(bufs, b.mulc(b.rem(it, 2), map.bfBufBytes()));
}

void Sm90Consumer::consumerBarrier() {
  Value barId = b.i32(3);
  NVVM::BarrierOp::create(b, Type(), barId, b.i32(256), nullptr, Value());
}

/// The wgmmas of stage s (running counter it) on its bf16 buffer, the
/// conversion of stage s+1 overlapping them.
SmallVector<Value> Sm90Consumer::upcastStage(const Tile &T, Value s, Value it,
                                             SmallVector<Value> accIn) {
  auto accTy =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(nFrag, f32));
  Value bfA = upcastBuffer(it), bfB = b.add(bfA, b.idx(map.bfBOff()));
  Value acc = LLVM::UndefOp::create(b, accTy);
  for (int64_t i = 0; i < nFrag; ++i)
    acc = LLVM::InsertValueOp::create(b, acc, accIn[i], ArrayRef<int64_t>{i});
  NVVM::WgmmaFenceAlignedOp::create(b);
  for (int64_t kk = 0; kk < kBK / 16; ++kk) {
    int64_t j = kk / 4, koff = (kk % 4) * 32;
    // This warpgroup's 64 rows start 64 x 128 B into each A atom (a
    // multiple of the 1024-byte swizzle period).
    Value wgA = b.add(bfA, b.mulc(w, 64 * 128));
    Value aDesc = descOf(b.add(wgA, b.idx(j * kBM * 128 + koff)));
    Value bDesc = descOf(b.add(bfB, b.idx(j * cfg.tileN * 128 + koff)));
    acc = wgmmaKMajor(b, accTy, acc, aDesc, bDesc, cfg.tileN, 16,
                      NVVM::WGMMATypes::bf16, NVVM::WGMMATypes::bf16,
                      /*accumulate=*/true);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  Value next = b.add(s, b.idx(1));
  ifThen(b, b.ult(next, T.kStages),
         [&] { convertStage(T, next, ringNext(b, it, cfg.stages)); });
  NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
  consumerBarrier();
  SmallVector<Value> accNext;
  for (int64_t i = 0; i < nFrag; ++i)
    accNext.push_back(
        LLVM::ExtractValueOp::create(b, acc, ArrayRef<int64_t>{i}));
  return accNext;
}

/// Converts stage s (running counter it) and releases its ring slot.
void Sm90Consumer::convertStage(const Tile &T, Value s, Value it) {
  Type f8a = getMXElementType(ctx, p.aType);
  Type f8b = getMXElementType(ctx, p.bType);
  auto [slot, empty] = acquireStage(it, map.barOff());
  Value stage = slot.stage;
  Value bfA = upcastBuffer(it), bfB = b.add(bfA, b.idx(map.bfBOff()));
  Value fp8A = b.add(stage, b.idx(map.aOff()));
  Value fp8B = b.add(stage, b.idx(map.bOff()));
  Value saAtom = b.add(stage, b.idx(map.saOff()));
  Value sbAtom = b.add(stage, b.idx(map.sbOff()));
  for (int64_t i = 0; i < 4; ++i) { // 64 rows x 8 chunks / 128
    Value c = b.add(t, b.idx(128 * i));
    Value wgRow = b.mulc(w, 64);
    Value row = b.add(wgRow, b.div(c, 8));
    convertChunk(T, s, fp8A, bfA, kBM * 128, row, b.rem(c, 8), saAtom, row,
                 f8a);
  }
  for (int64_t i = 0; i < cfg.tileN / 32; ++i) { // tileN/2 rows x 8 / 128
    Value c = b.add(t, b.idx(128 * i));
    Value wgCol = b.mulc(w, cfg.tileN / 2);
    Value n = b.add(wgCol, b.div(c, 8));
    Value q = b.rem(c, 8);
    convertChunk(T, s, fp8B, bfB, cfg.tileN * 128, n, q, sbAtom,
                 b.add(T.bAtomRow, n), f8b);
  }
  // Generic-proxy shared-memory writes -> visible to wgmma (async proxy);
  // then every consumer thread releases the ring slot.
  fenceAsyncShared(b);
  NVVM::MBarrierArriveOp::create(b, Type(), empty, Value(),
                                 NVVM::MemScopeKind::CTA, false);
}

/// One chunk: row `row` of a [rows x 128] fp8 tile, 16 elements at K
/// 16q..16q+15 (MX block q/2 of stage s), scaled by the byte of scale row
/// `scaleRow` in the atom at `atom`, into the bf16 operand at `dst`.
void Sm90Consumer::convertChunk(const Tile &T, Value s, Value src, Value dst,
                                int64_t dstAtomBytes, Value row, Value q,
                                Value atom, Value scaleRow, Type elem) {
  auto v4 = VectorType::get({4}, b.getI32Type());
  Value sw = b.rem(row, 8);
  Value rowOff = b.mulc(row, 128);
  Value chunkOff = b.add(rowOff, b.mulc(b.xori(q, sw), 16));
  Value in = LLVM::LoadOp::create(b, v4, b.sptr(b.add(src, chunkOff)), 16);
  Value kb = b.div(q, 2);
  Value live = b.ult(b.add(b.mulc(s, kBlocksPerStage), kb), T.kBlocks);
  Value byte = arith::ExtUIOp::create(
      b, b.getI32Type(),
      b.lds(b.getI8Type(), b.add(atom, b.add(b.atomRowOffset(scaleRow), kb))));
  Value scale = decodeScale(b, byte, /*shiftFirst=*/true);
  Value s2 = vector::BroadcastOp::create(b, VectorType::get({2}, f32), scale);
  SmallVector<Value> words;
  for (int64_t i = 0; i < 4; ++i) {
    Value word = LLVM::ExtractElementOp::create(b, in, b.i32(i));
    Value bytes =
        LLVM::BitcastOp::create(b, VectorType::get({4}, b.getI8Type()), word);
    for (int64_t h = 0; h < 2; ++h) {
      Value pair = vector::ShuffleOp::create(
          b, bytes, bytes, ArrayRef<int64_t>{2 * h, 2 * h + 1});
      Value h2 = NVVM::ConvertF8x2ToF16x2Op::create(
          b, VectorType::get({2}, b.getF16Type()), pair, b.getBoolAttr(false),
          TypeAttr::get(elem));
      Value f2 = arith::ExtFOp::create(b, VectorType::get({2}, f32), h2);
      Value m2 = arith::MulFOp::create(b, f2, s2);
      Value bf =
          arith::TruncFOp::create(b, VectorType::get({2}, b.getBF16Type()), m2);
      Value wv = LLVM::BitcastOp::create(b, b.getI32Type(), bf);
      words.push_back(b.select(live, wv, b.i32(0)));
    }
  }
  Value j = b.div(q, 4);
  Value c0 = b.mulc(b.rem(q, 4), 2);
  Value atomBase = b.add(dst, b.mulc(j, dstAtomBytes));
  Value rowBase = b.add(atomBase, b.mulc(row, 128));
  for (int64_t h = 0; h < 2; ++h) {
    Value v = LLVM::UndefOp::create(b, v4);
    for (int64_t i = 0; i < 4; ++i)
      v = LLVM::InsertElementOp::create(b, v4, v, words[4 * h + i], b.i32(i));
    Value chunk = b.xori(b.add(c0, b.idx(h)), sw);
    LLVM::StoreOp::create(b, v, b.sptr(b.add(rowBase, b.mulc(chunk, 16))), 16);
  }
}

} // namespace mlir::mxmoe::kernels::gemm
