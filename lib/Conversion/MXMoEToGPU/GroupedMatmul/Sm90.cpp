//===- Sm90.cpp - MX grouped GEMM kernel for sm_90a (wgmma) ---------------===//
//
// buildGroupedMatmulSm90: the Hopper kernel GroupedMatmul.h describes,
// built from named roles (classes in Sm90.h). Warpgroup 0: emitLoader
// (thread 0), emitTileRecordPublisher (thread 32), emitScaleDecoder
// (threads 64-127, fp8 path); warpgroups 1 and 2 (Sm90Consumer): the
// tile-record loop around emitFp8Consumer or emitUpcastConsumer
// (Sm90Upcast.cpp), and emitFragmentEpilogue. References: Common.h.
//
//===----------------------------------------------------------------------===//

#include "Sm90.h"

#include "mxmoe/Conversion/MMADescriptors.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;
using namespace mlir::mxmoe::kernels::gemm;

namespace {

constexpr int64_t kThreads = 384; // producer + 2 consumer warpgroups
/// Arrivals on an sm_90a "empty" mbarrier: every consumer thread arrives
/// once per stage after its last shared-memory read of the slot. (One
/// elected lane per warp after bar.warp.sync would release only that lane's
/// own accesses under the PTX memory model's mbarrier.arrive .release
/// semantics for compute-sanitizer racecheck, which then reports the next
/// fill's bulk copy as racing with the other lanes' reads.)
constexpr int64_t kConsumerArrivals = 256;
/// The loader-warpgroup thread that multicasts the B tiles in a cluster
/// (warp 1, beside the tile-record publisher at thread 32).
constexpr int64_t kMulticastThread = 33;

/// The wgmma element type of an fp8 (E4M3 or E5M2) operand.
NVVM::WGMMATypes wgmmaFp8Type(::mxmoe::MXElementKind kind) {
  return kind == ::mxmoe::MXElementKind::E5M2 ? NVVM::WGMMATypes::e5m2
                                              : NVVM::WGMMATypes::e4m3;
}

} // namespace

namespace mlir::mxmoe::kernels::gemm {

Value wgmmaKMajor(KB &b, Type accTy, Value acc, Value aDesc, Value bDesc,
                  int64_t n, int64_t k, NVVM::WGMMATypes aType,
                  NVVM::WGMMATypes bType, bool accumulate) {
  MLIRContext *ctx = b.getContext();
  return NVVM::WgmmaMmaAsyncOp::create(
      b, accTy, acc, aDesc, bDesc, NVVM::MMAShapeAttr::get(ctx, 64, n, k),
      NVVM::WGMMATypesAttr::get(ctx, aType),
      NVVM::WGMMATypesAttr::get(ctx, bType),
      NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
      NVVM::WGMMAScaleOutAttr::get(ctx, accumulate ? NVVM::WGMMAScaleOut::one
                                                   : NVVM::WGMMAScaleOut::zero),
      NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
      NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
      NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row),
      NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::col), nullptr);
}

//===----------------------------------------------------------------------===//
// Kernel, prologue and loader warpgroup
//===----------------------------------------------------------------------===//

SmallVector<std::pair<Value, int64_t>> Sm90Kernel::prologueBarriers() {
  // Full barriers expect the loader's arrive.expect_tx; empty barriers
  // (ring and tile records) one arrival per consumer thread, decoded
  // barriers one per decoder thread.
  SmallVector<std::pair<Value, int64_t>> bars;
  for (int64_t s = 0; s < cfg.stages; ++s) {
    bars.push_back({f.at(map.fullBar(s)), 1});
    bars.push_back({f.at(map.emptyBarBase() + 8 * s), kConsumerArrivals});
  }
  // Cluster: a slot is free in every CTA (one arrival per CTA's
  // multicast thread).
  for (int64_t s = 0; s < cfg.stages && cfg.clusterM > 1; ++s)
    bars.push_back({f.at(map.clusterFreeBar(s)), cfg.clusterM});
  for (int64_t i = 0; i < kTileRing; ++i) {
    bars.push_back({f.at(map.tileFullBar(i)), 1});
    bars.push_back({f.at(map.tileEmptyBar(i)), kConsumerArrivals});
  }
  if (!cfg.upcastBF16)
    for (int64_t s = 0; s < cfg.stages; ++s)
      bars.push_back({f.at(map.decodedBar(s)), kDecoderThreads});
  return bars;
}

void Sm90Kernel::zeroScaleTables() {
  // The fp8 path's scale tables and zero block start as zeros (the A
  // tables' slots other than their block are never written); the stores
  // are fenced for the async proxy (wgmma reads them) before the
  // prologue's CTA barrier.
  int64_t bytes = map.barOff() - map.tablesOff();
  auto v4 = VectorType::get({4}, b.getI32Type());
  Value zero4 = LLVM::ZeroOp::create(b, v4);
  for (int64_t off = 0; off < bytes; off += 16 * kThreads) {
    Value chunk = b.idx(off);
    Value at16 = b.add(chunk, b.mulc(f.tid, 16));
    ifThen(b, b.ult(at16, b.idx(bytes)), [&] {
      LLVM::StoreOp::create(b, zero4,
                            b.sptr(b.add(f.at(map.tablesOff()), at16)), 16);
    });
  }
  fenceAsyncShared(b);
}

void Sm90Kernel::build() {
  SmallVector<std::pair<Value, int64_t>> bars = prologueBarriers();
  if (!cfg.upcastBF16)
    zeroScaleTables();
  Value valid = emitPrologue(b, f, p, f.at(map.flagOff()), bars);
  // Every CTA's mbarriers are initialized before any CTA of the cluster
  // multicasts into it or arrives on them (the prologue fenced the inits
  // with fence.mbarrier_init.release.cluster).
  if (cfg.clusterM > 1)
    clusterSync();

  // Register rebalancing (PTX setmaxnreg, per warpgroup): the loader
  // warpgroup (loads, tile records, scale decode) needs few registers, the
  // consumers hold the fp8 partial P, the scale product S (or, upcast, the
  // A/B fragments) and the accumulator (3 x tileN/2 registers). The pool is
  // what the CTA got at launch, 384 x 168 = 64512 (setmaxnreg.inc waits for
  // free registers, so a larger split deadlocks): 128*40 + 256*232 for 2D
  // x 3D at tileN 128; the K-group walk of 2D x 2D needs more loader
  // registers (128*56 + 256*224), and narrower tiles leave them to the
  // loader (ptxas -v: no spills; lit grouped-matmul-sm90).
  const int64_t loaderRegs = cfg.tileN < 128 ? 88 : p.kGrouped ? 56 : 40;
  const int64_t consumerRegs = (64512 - 128 * loaderRegs) / 256 / 8 * 8;

  ifThen(b, valid, [&] {
    Value wg = b.div(f.tid, 128);
    auto branch = scf::IfOp::create(b, b.eq(wg, b.idx(0)), true);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&branch.getThenRegion().front());
      emitLoaderWarpgroup(loaderRegs);
    }
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&branch.getElseRegion().front());
      NVVM::SetMaxRegisterOp::create(b, consumerRegs,
                                     NVVM::SetMaxRegisterAction::increase);
      Sm90Consumer(*this, wg).emitTileLoop();
    }
  });
  // No CTA leaves while the others may still multicast into its shared
  // memory or arrive on its barriers.
  if (cfg.clusterM > 1)
    clusterSync();
  gpu::ReturnOp::create(b);
}

/// barrier.cluster.arrive (release) and barrier.cluster.wait (acquire) by
/// every thread (PTX ISA 9.7.13.4 barrier.cluster; exited threads count as
/// arrived).
void Sm90Kernel::clusterSync() {
  NVVM::ClusterArriveOp::create(b, UnitAttr());
  NVVM::ClusterWaitOp::create(b, UnitAttr());
}

/// Loader warpgroup: loads (thread 0), tile records (thread 32), scale
/// decode (threads 64-127, fp8 path).
void Sm90Kernel::emitLoaderWarpgroup(int64_t regs) {
  NVVM::SetMaxRegisterOp::create(b, regs, NVVM::SetMaxRegisterAction::decrease);
  ifThen(b, b.eq(f.tid, b.idx(0)), [&] { emitLoader(); });
  // Thread 32 (its own warp: the loader's 40 registers hold only its
  // walk) walks the same tiles and publishes their records, then a
  // record with kBlocks = -1 after the CTA's last tile.
  ifThen(b, b.eq(f.tid, b.idx(32)), [&] { emitTileRecordPublisher(); });
  if (cfg.clusterM > 1)
    ifThen(b, b.eq(f.tid, b.idx(kMulticastThread)), [&] { emitMulticaster(); });
  if (!cfg.upcastBF16)
    ifThen(b, b.sge(f.tid, b.idx(128 - kDecoderThreads)),
           [&] { emitScaleDecoder(); });
}

void Sm90Kernel::emitLoader() {
  Value descA = acquireTensorMap(b, f.tmapA);
  // (In a cluster the multicast thread loads B: it acquires the map.)
  Value descB = cfg.clusterM == 1 ? acquireTensorMap(b, f.tmapB) : Value();
  Value saG = f.aScales, sbG = f.bScales;
  int64_t txBytes = map.aBytes() + map.bBytes() + 2 * kAtom;
  gen.forEachTileStage(
      f.bid, f.grid, f.base, map.stageBytes(),
      [&](const Tile &T, Value s, const RingSlot &slot) {
        Value st = slot.st, phase = slot.phase, stage = slot.stage;
        Value full = f.bar(map.barOff(), st);
        Value empty = f.bar(map.emptyBarBase(), st);
        loadTiles(b, stage, full, empty, phase, txBytes,
                  b.add(T.kCoord0, b.mulc(s, kBK)), map.aOff(), map.bOff(),
                  descA, descB, T, /*loadB=*/cfg.clusterM == 1);
        Value sOff = b.mulc(s, kAtom);
        Value saDst = b.add(stage, b.idx(map.saOff()));
        loadAtom(b, saDst, b.gep8(saG, b.add(T.aAtom0, sOff)), full);
        Value sbDst = b.add(stage, b.idx(map.sbOff()));
        loadAtom(b, sbDst, b.gep8(sbG, b.add(T.bAtom0, sOff)), full);
      });
}

/// Cluster of two along M: for each stage, once this CTA's consumers
/// released the ring slot (its empty barrier), say so to both CTAs (an
/// arrival on the slot's cluster-free barrier here and, through mapa, in
/// the other CTA: mbarrier.arrive.release.cluster, PTX ISA 9.7.13.15.13),
/// wait until both did (phase r of the cluster-free barrier completes
/// with the two arrivals of the slot's r-th fill), then load this CTA's
/// half of the B tile into the slot of both CTAs (TMA .multicast::cluster,
/// 9.7.9.25; each CTA's full barrier counts the bytes of both halves,
/// announced by its loader thread). The loader thread and the consumers
/// are those of a single CTA: their registers are at the limit.
void Sm90Kernel::emitMulticaster() {
  Value descB = acquireTensorMap(b, f.tmapB);
  Value rank32 = NVVM::ClusterId::create(b, b.getI32Type());
  Value peer = arith::XOrIOp::create(b, rank32, b.i32(1));
  Value rank = arith::IndexCastUIOp::create(b, b.getIndexType(), rank32);
  int64_t rows = cfg.tileN / cfg.clusterM;
  Value first = b.mulc(rank, rows);
  Value firstBytes = b.mulc(first, kBK);
  Value dstOff = b.add(b.idx(map.bOff()), firstBytes);
  Value mask = arith::ConstantOp::create(
      b, b.getI16IntegerAttr((1 << cfg.clusterM) - 1));
  gen.forEachTileStage(
      f.bid, f.grid, f.base, map.stageBytes(),
      [&](const Tile &T, Value s, const RingSlot &slot) {
        // (One IR-creating call per argument list: GCC and clang evaluate
        // arguments in different orders.)
        Value empty = f.bar(map.emptyBarBase(), slot.st);
        Value previous = b.xori(slot.phase, b.idx(1));
        waitParity(b, empty, previous);
        Value free = f.bar(map.clusterFreeBar(0), slot.st);
        NVVM::MBarrierArriveOp::create(b, Type(), free, Value(),
                                       NVVM::MemScopeKind::CLUSTER, false);
        Value remote = NVVM::MapaOp::create(b, b.ptr(7), free, peer);
        NVVM::MBarrierArriveOp::create(b, Type(), remote, Value(),
                                       NVVM::MemScopeKind::CLUSTER, false);
        waitParity(b, free, slot.phase);
        Value dst = LLVM::AddrSpaceCastOp::create(
            b, b.ptr(7), b.sptr(b.add(slot.stage, dstOff)));
        Value kc = b.add(T.kCoord0, b.mulc(s, kBK));
        Value row = b.add(T.bRow, first);
        Value full = f.bar(map.barOff(), slot.st);
        NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
            b, dst, descB, ValueRange{b.toI32(kc), b.toI32(row)}, full,
            ValueRange{}, mask, Value(), NVVM::TMALoadMode::TILE, false,
            nullptr, Value());
      });
}

void Sm90Kernel::emitTileRecordPublisher() {
  Value tc = gen.forEachTile(f.bid, f.grid, [&](const Tile &T, Value tc) {
    publishRecord(tc, T.kBlocks, T.bAtomRow, T.rowsValid, T.colsValid,
                  T.outBase);
    return b.add(tc, b.idx(1));
  });
  Value none = b.idx(0);
  publishRecord(tc, b.idx(-1), none, none, none, none);
}

/// Publishes tile record `tc` (Sm90SmemMap::tileRecord): waits until the
/// consumers have read the entry's previous record, stores, and arrives on
/// the entry's full barrier (release; the consumers' try_wait acquires).
void Sm90Kernel::publishRecord(Value tc, Value kBlocks, Value bAtomRow,
                               Value rowsValid, Value colsValid,
                               Value outBase) {
  Value slot = b.rem(tc, kTileRing);
  Value phase = b.rem(b.div(tc, kTileRing), 2);
  Value empty = f.bar(map.tileEmptyBar(0), slot);
  waitParity(b, empty, b.xori(phase, b.idx(1)));
  Value records = f.at(map.tileRecord(0));
  Value rec = b.add(records, b.mulc(slot, 32));
  Value fields[] = {kBlocks, bAtomRow, rowsValid, colsValid};
  for (int64_t i = 0; i < 4; ++i) {
    Value field = b.toI32(fields[i]);
    b.sts(field, b.add(rec, b.idx(4 * i)));
  }
  Value outBase64 = b.toI64(outBase);
  b.sts(outBase64, b.add(rec, b.idx(16)));
  NVVM::MBarrierArriveOp::create(b, Type(), f.bar(map.tileFullBar(0), slot),
                                 Value(), NVVM::MemScopeKind::CTA, false);
}

/// fp8 path: threads 64-127 decode each stage's e8m0 scales (decodeScale)
/// into the stage's tf32 tables (Sm90SmemMap::tableBytes) as soon as its
/// TMA data lands: A rows r and r + 64 (one per consumer warpgroup: sa of
/// block kb in slot kb of A table kb) and the sbT rows of tile columns c,
/// c + 64 (sb of the four blocks, 0 for blocks past the tile's K extent so
/// that their slots add exact zeros). A row's four e8m0 bytes are
/// contiguous in the blocked atom (one 32-bit load). The stores are fenced
/// for the async proxy (wgmma reads the tables) before the arrival on the
/// stage's decoded barrier, which the consumers wait on instead of the
/// full barrier; a stage's tables are rewritten only after its next fill,
/// i.e. after the consumers released it.
void Sm90Kernel::emitScaleDecoder() {
  Value d = b.sub(f.tid, b.idx(128 - kDecoderThreads));
  gen.forEachTileStage(f.bid, f.grid, f.base, map.stageBytes(),
                       [&](const Tile &T, Value s, const RingSlot &slot) {
                         if (p.mx128)
                           decodeStageMx128(T, d, s, slot);
                         else
                           decodeStage(T, d, s, slot);
                       });
}

Value Sm90Kernel::atomWord(const RingSlot &slot, int64_t atomOff, Value row) {
  Value atom = b.add(slot.stage, b.idx(atomOff));
  return b.lds(b.getI32Type(), b.add(atom, b.atomRowOffset(row)));
}

Value Sm90Kernel::decodeByte(Value word, int64_t kb) {
  Value shifted = b.shrui(word, 8 * kb);
  return decodeScale(b, b.andi(shifted, b.i32(0xff)), /*shiftFirst=*/true);
}

/// Decoder thread `d` (0-63) of stage `s` of tile T in ring slot `slot`.
void Sm90Kernel::decodeStage(const Tile &T, Value d, Value s,
                             const RingSlot &slot) {
  waitParity(b, f.bar(map.barOff(), slot.st), slot.phase);
  Value tables = f.at(map.tablesOff());
  Value tab = b.add(tables, b.mulc(slot.st, map.tableBytes()));
  for (int64_t h = 0; h < 2; ++h) {
    Value word = atomWord(slot, map.saOff(), b.add(d, b.idx(64 * h)));
    for (int64_t kb = 0; kb < kBlocksPerStage; ++kb) {
      Value sa = decodeByte(word, kb);
      Value rowOff = b.mulc(d, 16);
      Value entry =
          b.add(rowOff, b.idx((h * kBlocksPerStage + kb) * map.saTableBytes() +
                              4 * kb));
      b.sts(sa, b.add(tab, entry));
    }
  }
  for (int64_t c = 0; c < cfg.tileN; c += kDecoderThreads) {
    Value col = b.add(d, b.idx(c));
    ifThen(b, b.ult(col, b.idx(cfg.tileN)), [&] {
      Value word = atomWord(slot, map.sbOff(), b.add(T.bAtomRow, col));
      Value v = LLVM::UndefOp::create(b, VectorType::get({4}, b.getF32Type()));
      for (int64_t kb = 0; kb < kBlocksPerStage; ++kb) {
        Value firstBlock = b.mulc(s, kBlocksPerStage);
        Value liveKb = b.ult(b.add(firstBlock, b.idx(kb)), T.kBlocks);
        Value sb = decodeByte(word, kb);
        Value sbOrZero = b.select(liveKb, sb, b.f32(0.0f));
        v = LLVM::InsertElementOp::create(b, v, sbOrZero, b.i32(kb));
      }
      Value sbTable = b.idx(map.sbTableOff());
      Value entry = b.add(tab, b.add(sbTable, b.mulc(col, 16)));
      LLVM::StoreOp::create(b, v, b.sptr(entry), 16);
    });
  }
  fenceAsyncShared(b);
  NVVM::MBarrierArriveOp::create(b, Type(), f.bar(map.decodedBar(0), slot.st),
                                 Value(), NVVM::MemScopeKind::CTA, false);
}

//===----------------------------------------------------------------------===//
// Consumer warpgroups
//===----------------------------------------------------------------------===//

Sm90Consumer::Sm90Consumer(Sm90Kernel &k, Value wg)
    : k(k), b(k.b), p(k.p), cfg(k.cfg), map(k.map), ctx(k.ctx),
      f32(b.getF32Type()), nFrag(cfg.tileN / 2) {
  w = b.sub(wg, b.idx(1));
  t = b.rem(k.f.tid, 128);
  Value warp = b.div(t, 32), lane = b.rem(t, 32);
  Value warpRow = b.mulc(warp, 16);
  fragRow = b.add(warpRow, b.div(lane, 4));
  fragCol = b.mulc(b.rem(lane, 4), 2);
  // Hopper smem descriptor, K-major SWIZZLE_128B: layout 1 at bits
  // 62-63, SBO = 1024 B (8 rows x 128 B) >> 4 at 32-45, LBO 16 B >> 4
  // (unused for swizzled K-major) at 16-29 (PTX ISA 9.7.15.5.1).
  descConst = ::mxmoe::wgmmaSmemDescConstantPart(
      /*lboBytes=*/16, /*sboBytes=*/1024, ::mxmoe::WgmmaSwizzle::Swizzle128B);
}

Value Sm90Consumer::descOf(Value addr) {
  return smemDescriptor(b, addr, descConst);
}

/// A consumer's view of the CTA's it-th stage: waits on the stage's
/// barrier in the array at `readyBars` (the full barriers: its tiles and
/// scale atoms landed; or the fp8 path's decoded barriers) and returns the
/// ring slot and its empty barrier.
std::pair<RingSlot, Value> Sm90Consumer::acquireStage(Value it,
                                                      int64_t readyBars) {
  RingSlot slot = ringSlot(b, k.f.base, it, cfg.stages, map.stageBytes());
  waitParity(b, k.f.bar(readyBars, slot.st), slot.phase);
  return {slot, k.f.bar(map.emptyBarBase(), slot.st)};
}

/// The per-tile loop over pipeline stages shared by both strategies:
/// carries the nFrag fp32 accumulator values (zero at the tile's start)
/// and the CTA's running stage counter; body(s, it, acc) returns the
/// updated accumulator. Returns (accumulator, next counter).
std::pair<SmallVector<Value>, Value> Sm90Consumer::stageLoop(
    const Tile &T, Value it0,
    function_ref<SmallVector<Value>(Value, Value, SmallVector<Value>)> body) {
  SmallVector<Value> init(nFrag, b.f32(0.0f));
  return ringLoop(b, T.kStages, init, it0, cfg.stages, body);
}

/// The consumers' tile loop reads the loader's tile records (no tile walk
/// of their own: its state would cost registers the fp32 partials need):
/// wait for entry tc % kTileRing, read the record, release the entry
/// (every consumer thread arrives), stop at kBlocks = -1.
void Sm90Consumer::emitTileLoop() {
  KernelFrame &f = k.f;
  Type idx = b.getIndexType();
  SmallVector<Type> fwdTypes(5, idx), carriedTypes(2, idx);
  auto loop = scf::WhileOp::create(b, fwdTypes, ValueRange{b.idx(0), b.idx(0)});
  OpBuilder::InsertionGuard g(b);
  Block *before = b.createBlock(&loop.getBefore(), {}, carriedTypes,
                                SmallVector<Location>(2, b.getLoc()));
  Value it = before->getArgument(0), tc = before->getArgument(1);
  Value slot = b.rem(tc, kTileRing);
  Value phase = b.rem(b.div(tc, kTileRing), 2);
  waitParity(b, f.bar(map.tileFullBar(0), slot), phase);
  Value records = f.at(map.tileRecord(0));
  Value rec = b.add(records, b.mulc(slot, 32));
  SmallVector<Value> fwd{it, tc};
  for (int64_t i = 0; i < 2; ++i)
    fwd.push_back(arith::IndexCastOp::create(
        b, idx, b.lds(b.getI32Type(), b.add(rec, b.idx(4 * i)))));
  fwd.push_back(rec);
  scf::ConditionOp::create(b, b.sge(fwd[2], b.idx(0)), fwd);
  Block *after = b.createBlock(&loop.getAfter(), {}, fwdTypes,
                               SmallVector<Location>(5, b.getLoc()));
  Tile T;
  T.kBlocks = after->getArgument(2);
  T.kStages = b.ceilDivc(T.kBlocks, kBlocksPerStage);
  T.bAtomRow = after->getArgument(3);
  T.record = after->getArgument(4);
  T.outStride = f.sizes.n;
  Value tcA = after->getArgument(1);
  Value itOut = cfg.upcastBF16 ? emitUpcastConsumer(T, after->getArgument(0))
                               : emitFp8Consumer(T, after->getArgument(0));
  // The epilogue has read the record: release its entry.
  NVVM::MBarrierArriveOp::create(
      b, Type(), f.bar(map.tileEmptyBar(0), b.rem(tcA, kTileRing)), Value(),
      NVVM::MemScopeKind::CTA, false);
  scf::YieldOp::create(b, ValueRange{itOut, b.add(tcA, b.idx(1))});
  if (p.mx128) {
    b.setInsertionPointAfter(loop);
    mx128DrainStores();
  }
}

/// The tile record's epilogue fields (Sm90SmemMap::tileRecord): valid rows
/// (+8), valid columns (+12), output base index (+16).
TileBounds Sm90Consumer::readTileBounds(const Tile &T) {
  auto field = [&](int64_t off, Type t) -> Value {
    return arith::IndexCastOp::create(b, b.getIndexType(),
                                      b.lds(t, b.add(T.record, b.idx(off))));
  };
  Value rowsValid = field(8, b.getI32Type());
  Value colsValid = field(12, b.getI32Type());
  Value outBase = field(16, b.getI64Type());
  return {rowsValid, colsValid, outBase};
}

/// Epilogue: predicated stores of this thread's fragment (the fp32
/// accumulator of wgmma m64nNk*: element i of thread (warp, lane) is row
/// 16*warp + lane/4 + 8*((i/2)%2), column 8*(i/4) + 2*(lane%4) + i%2, PTX
/// ISA 9.7.15.5.2), bounds and output base from the tile's record.
void Sm90Consumer::emitFragmentEpilogue(const Tile &T,
                                        ArrayRef<Value> fragment) {
  storeFragment(T, readTileBounds(T), fragment);
}

/// The stores of emitFragmentEpilogue.
void Sm90Consumer::storeFragment(const Tile &T, const TileBounds &bounds,
                                 ArrayRef<Value> accv) {
  Value out = k.f.out;
  Type outTy = p.outF32 ? Type(f32) : Type(b.getBF16Type());
  Value rowsValid = bounds.rowsValid, colsValid = bounds.colsValid;
  Value outBase = bounds.outBase;
  // Elements i, i+1 are columns c, c+1 (c even) of one row: one 4-byte
  // (bf16) or 8-byte (f32) store when both are valid and the row stride N
  // is even (outBase and c are then even too, so the pair is aligned);
  // otherwise one predicated store each.
  Value strideOdd = b.rem(T.outStride, 2);
  Value evenN = b.eq(strideOdd, b.idx(0));
  auto cvt = [&](Value v) -> Value {
    return p.outF32 ? v : arith::TruncFOp::create(b, outTy, v).getResult();
  };
  for (int64_t i = 0; i < nFrag; i += 2) {
    int64_t j = i / 4, e = i % 4;
    Value wgRow = b.add(b.mulc(w, 64), fragRow);
    Value r = b.add(wgRow, b.idx(e < 2 ? 0 : 8));
    Value c = b.add(fragCol, b.idx(8 * j));
    Value c1 = b.add(c, b.idx(1));
    Value rowOk = b.ult(r, rowsValid);
    Value at0 = b.add(outBase, b.add(b.mul(r, T.outStride), c));
    Value pairOk = b.andi(b.andi(rowOk, b.ult(c1, colsValid)), evenN);
    Value x0 = accv[i], x1 = accv[i + 1];
    if (p.accumulate)
      std::tie(x0, x1) = addOutputPair(T, bounds, r, c, x0, x1);
    auto pair = scf::IfOp::create(b, pairOk, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&pair.getThenRegion().front());
    auto v2 = VectorType::get({2}, outTy);
    Value v = LLVM::UndefOp::create(b, v2);
    Value lo = cvt(x0);
    v = LLVM::InsertElementOp::create(b, v, lo, b.i32(0));
    Value hi = cvt(x1);
    v = LLVM::InsertElementOp::create(b, v, hi, b.i32(1));
    LLVM::StoreOp::create(b, v, b.elemPtr(outTy, out, at0), p.outF32 ? 8 : 4);
    b.setInsertionPointToStart(&pair.getElseRegion().front());
    ifThen(b, b.andi(rowOk, b.ult(c, colsValid)),
           [&] { b.stg(cvt(x0), out, at0); });
    ifThen(b, b.andi(rowOk, b.ult(c1, colsValid)), [&] {
      Value second = cvt(x1);
      b.stg(second, out, b.add(at0, b.idx(1)));
    });
  }
}

/// `accumulate`: the fragment pair lo, hi (row r of the tile, columns c,
/// c + 1, c even) plus the output elements they replace (fp32 sums; 0 is
/// added where an element is out of bounds). One 4- or 8-byte load when
/// both are valid and N is even, else one predicated load each; every
/// element is read by the one thread that writes it, just before it
/// writes it.
std::pair<Value, Value> Sm90Consumer::addOutputPair(const Tile &T,
                                                    const TileBounds &bounds,
                                                    Value r, Value c, Value lo,
                                                    Value hi) {
  Value out = k.f.out;
  Type outTy = p.outF32 ? Type(f32) : Type(b.getBF16Type());
  auto widen = [&](Value v) -> Value {
    return p.outF32 ? v : arith::ExtFOp::create(b, f32, v).getResult();
  };
  Value strideOdd = b.rem(T.outStride, 2);
  Value evenN = b.eq(strideOdd, b.idx(0));
  Value zero = b.f32(0.0f);
  Value c1 = b.add(c, b.idx(1));
  Value rowOk = b.ult(r, bounds.rowsValid);
  Value at0 = b.add(bounds.outBase, b.add(b.mul(r, T.outStride), c));
  Value at1 = b.add(at0, b.idx(1));
  auto scalar = [&](Value col, Value at) {
    return ifYield(b, b.andi(rowOk, b.ult(col, bounds.colsValid)), {zero},
                   [&]() -> SmallVector<Value> {
                     return {widen(b.ldg(outTy, out, at))};
                   })[0];
  };
  Value pairOk = b.andi(b.andi(rowOk, b.ult(c1, bounds.colsValid)), evenN);
  SmallVector<Value> old =
      ifYield(b, pairOk, {zero, zero}, [&]() -> SmallVector<Value> {
        auto v2 = VectorType::get({2}, outTy);
        Value v = LLVM::LoadOp::create(b, v2, b.elemPtr(outTy, out, at0),
                                       p.outF32 ? 8 : 4);
        return {widen(LLVM::ExtractElementOp::create(b, v, b.i32(0))),
                widen(LLVM::ExtractElementOp::create(b, v, b.i32(1)))};
      });
  old = ifYield(b, b.lnot(pairOk), old, [&]() -> SmallVector<Value> {
    return {scalar(c, at0), scalar(c1, at1)};
  });
  return {arith::AddFOp::create(b, old[0], lo),
          arith::AddFOp::create(b, old[1], hi)};
}

//===----------------------------------------------------------------------===//
// fp8 wgmma, tf32 scale product, FFMA promotion
//===----------------------------------------------------------------------===//

Value Sm90Consumer::emitFp8Consumer(const Tile &T, Value it0) {
  auto [accOut, itOut] =
      stageLoop(T, it0, [&](Value s, Value it, SmallVector<Value> acc) {
        return p.mx128 ? mx128Stage(T, s, it, std::move(acc))
                       : fp8Stage(T, s, it, std::move(acc));
      });
  if (p.mx128)
    mx128Epilogue(T, accOut);
  else
    emitFragmentEpilogue(T, accOut);
  return itOut;
}

SmallVector<Value> Sm90Consumer::fp8Stage(const Tile &T, Value s, Value it,
                                          SmallVector<Value> acc) {
  // The stage's tiles landed and its scales are decoded: the decoder
  // threads acquired the stage's full barrier (TMA complete) before
  // releasing its decoded barrier, which this acquires, so the wgmmas
  // below see the TMA data too.
  auto [slot, empty] = acquireStage(it, map.decodedBar(0));
  Value stage = slot.stage;
  Fp8Operands ops;
  Value tables = k.f.at(map.tablesOff());
  Value table = b.add(tables, b.mulc(slot.st, map.tableBytes()));
  ops.saTab = b.add(table, b.mulc(w, kBlocksPerStage * map.saTableBytes()));
  ops.sbTab = b.add(table, b.idx(map.sbTableOff()));
  Value aSlot = b.add(stage, b.idx(map.aOff()));
  ops.aTile = b.add(aSlot, b.mulc(w, 64 * 128));
  ops.bTile = b.add(stage, b.idx(map.bOff()));
  // Blocks past the group's end (2D x 2D, K % 128 != 0) are skipped with
  // uniform branches.
  bool allLive = !p.kGrouped && p.kMultipleOf128;
  ops.zeroBlock = k.f.at(map.zeroOff());
  if (allLive) {
    // Full stages run their four blocks straight.
    for (int64_t kb = 0; kb < kBlocksPerStage; ++kb)
      fp8Block(ops, kb, acc);
  } else {
    // The partial stage a tile can end with (2D x 2D groups, K % 128) runs
    // each live block behind a uniform branch (liveness only decreases
    // along kb).
    for (int64_t kb = 0; kb < kBlocksPerStage; ++kb) {
      SmallVector<Value> before = acc; // fp8Block() updates acc
      Value firstBlock = b.mulc(s, kBlocksPerStage);
      Value live = b.ult(b.add(firstBlock, b.idx(kb)), T.kBlocks);
      acc = ifYield(b, live, before, [&]() -> SmallVector<Value> {
        fp8Block(ops, kb, acc);
        return acc;
      });
    }
  }
  // Release the slot: every consumer thread arrives once.
  NVVM::MBarrierArriveOp::create(b, Type(), empty, Value(),
                                 NVVM::MemScopeKind::CTA, false);
  return acc;
}

/// The scale product S = sa (x) sb of MX block kb comes from the tensor
/// cores: a tf32 wgmma m64nNk8 of A table kb (row r: sa of block kb in K
/// slot kb, zeros in the other slots and, through its LBO, in slots 4-7)
/// and the sbT table (column c: sb of the four blocks in slots 0-3; LBO 0
/// makes slots 4-7 repeat them, multiplied by A's zeros). Operands are
/// no-swizzle K-major: 8-row core matrices of 8 x 16 B, SBO 128 B (PTX ISA
/// 9.7.15.5.1). Each output is one product of two powers of two plus exact
/// zeros: S is exact wherever sa * sb is a normal fp32 number.
Value Sm90Consumer::scaleProduct(const Fp8Operands &ops, int64_t kb,
                                 int64_t n) {
  auto ty =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(n / 2, f32));
  Value aAddr = b.add(ops.saTab, b.idx(kb * map.saTableBytes()));
  // No-swizzle K-major tables: SBO 128 B, the A table's LBO run-time.
  uint64_t tableDesc = ::mxmoe::wgmmaSmemDescConstantPart(
      /*lboBytes=*/0, /*sboBytes=*/128, ::mxmoe::WgmmaSwizzle::None);
  Value aLbo = b.sub(ops.zeroBlock, aAddr);
  Value aDesc = smemDescriptor(b, aAddr, tableDesc, aLbo);
  Value bDesc = smemDescriptor(b, ops.sbTab, tableDesc, b.idx(0));
  return wgmmaKMajor(b, ty, LLVM::UndefOp::create(b, ty), aDesc, bDesc, n, 8,
                     NVVM::WGMMATypes::tf32, NVVM::WGMMATypes::tf32,
                     /*accumulate=*/false);
}

/// One MX block kb: the block's scale product S and a wgmma m64nNk32 (N =
/// tileN) into a fresh fp32 partial P (scale-d 0), one wgmma group; wait;
/// acc += P * S, one FFMA per element (P, S and the accumulator share the
/// D fragment layout, PTX 9.7.15.5.2). Measured on the H200
/// (bench/RESULTS.md, "Where the time goes"): whole-tile blocks with wait 0
/// match or beat software pipelines over column chunks (halves or quarters,
/// one or two chunks in flight: the chunks re-read A and the tables), and
/// the tf32 scale product beats an FMUL product on the CUDA cores
/// (issue-bound); the two consumer warpgroups keep the tensor cores busy in
/// turn. For a pipeline, note that ptxas silently serializes wgmmas in
/// flight when each one's accumulator operand is a fresh undef (it may
/// overlap their registers): pass the consumed chunk's struct back as the
/// in/out operand of the wgmma that reuses it (scale-d 0 ignores it).
void Sm90Consumer::fp8Block(const Fp8Operands &ops, int64_t kb,
                            SmallVector<Value> &acc) {
  int64_t n = cfg.tileN;
  auto ty =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(n / 2, f32));
  NVVM::WgmmaFenceAlignedOp::create(b);
  Value S = scaleProduct(ops, kb, n);
  Value pInit = LLVM::UndefOp::create(b, ty);
  Value aDesc = descOf(b.add(ops.aTile, b.idx(32 * kb)));
  Value bDesc = descOf(b.add(ops.bTile, b.idx(32 * kb)));
  Value P = wgmmaKMajor(b, ty, pInit, aDesc, bDesc, n, 32,
                        wgmmaFp8Type(p.aType), wgmmaFp8Type(p.bType),
                        /*accumulate=*/false);
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
  for (int64_t i = 0; i < n / 2; ++i) {
    Value pi = LLVM::ExtractValueOp::create(b, P, ArrayRef<int64_t>{i});
    Value si = LLVM::ExtractValueOp::create(b, S, ArrayRef<int64_t>{i});
    acc[i] = LLVM::FMAOp::create(b, pi, si, acc[i]);
  }
}

} // namespace mlir::mxmoe::kernels::gemm

int64_t mlir::mxmoe::kernels::getSm90GemmSharedBytes(const GemmKind &p,
                                                     const GemmConfig &cfg) {
  return Sm90SmemMap::of(p, cfg).total();
}

gpu::GPUFuncOp
mlir::mxmoe::kernels::buildGroupedMatmulSm90(gpu::GPUModuleOp module,
                                             StringRef name, const GemmKind &p,
                                             const GemmConfig &cfg) {
  Sm90SmemMap map = Sm90SmemMap::of(p, cfg);
  KernelFrame f = createGemmKernel(module, name, p, cfg, kThreads, map.total());
  Sm90Kernel(f, p, cfg, map).build();
  return f.fn;
}
