//===- Sm100.cpp - MX grouped GEMM kernel for sm_100a (tcgen05) -----------===//
//
// buildGroupedMatmulSm100: the tcgen05 block-scaled MMA kernel
// GroupedMatmul.h describes, built from named roles: emitTmaWarp (warp 0),
// emitMmaWarp (warp 1, which also allocates the TMEM), emitTmemEpilogue
// (warps 2-5). References: PTX ISA 9.7.16 (tcgen05),
// CUTLASS cute/arch/mma_sm100_desc.hpp, docs/tcgen05-grouped-gemm.md;
// Common.h.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "mxmoe/Conversion/MMADescriptors.h"
#include "mxmoe/Dialect/MXMoE/IR/MXMoEDialect.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;
using namespace mlir::mxmoe::kernels::gemm;

namespace {

constexpr int64_t kThreads100 = 192; // TMA warp, MMA warp, 4 epilogue warps

/// TMEM columns: the fp32 accumulator (tileN columns, lanes = tile rows)
/// then, per stage, 4 SFA columns and 4 per 128 N of SFB (CUTLASS
/// tmem_sf_frg, cute/atom/mma_traits_sm100_frag.hpp).
struct TmemMap {
  int64_t tileN, stages;
  int64_t sfCols() const { return 4 + 4 * (tileN > 128 ? 2 : 1); }
  int64_t used() const { return tileN + stages * sfCols(); }
  int64_t allocated() const {
    int64_t n = 32;
    while (n < used())
      n *= 2;
    return n;
  }
};

/// The instruction descriptor of the kernel's block-scaled MMA (scale ids
/// 0; tcgen05InstrDescWithScaleIds sets them per MX block).
uint32_t instrDescBase(const GemmKind &p, const GemmConfig &cfg) {
  ::mxmoe::Tcgen05BlockScaledConfig icfg;
  icfg.aType = ::mxmoe::toTcgen05TypeCode(p.aType);
  icfg.bType = ::mxmoe::toTcgen05TypeCode(p.bType);
  icfg.m = kBM;
  icfg.n = static_cast<unsigned>(cfg.tileN);
  return ::mxmoe::encodeTcgen05BlockScaledInstrDesc(icfg);
}

/// The sm_100a kernel under construction: frame, builder, configuration,
/// shared-memory and TMEM maps and tile scheduler; its methods emit the
/// roles.
class Sm100Kernel {
public:
  Sm100Kernel(KernelFrame &f, const GemmKind &p, const GemmConfig &cfg,
              const Sm100SmemMap &map, const TmemMap &tmem)
      : f(f), b(*f.b), p(p), cfg(cfg), map(map), tmem(tmem),
        ctx(b.getContext()), gen(b, p, cfg, f.sizes, f.offsets),
        cta1(NVVM::CTAGroupKindAttr::get(ctx, NVVM::CTAGroupKind::CTA_1)),
        tptr(b.ptr(6)), idescBase(instrDescBase(p, cfg)) {}

  /// Emits the kernel body: prologue, TMEM allocation, the three roles and
  /// the TMEM release.
  void build();

private:
  KernelFrame &f;
  KB &b;
  const GemmKind &p;
  const GemmConfig &cfg;
  const Sm100SmemMap map;
  const TmemMap tmem;
  MLIRContext *ctx;
  Generator gen;
  NVVM::CTAGroupKindAttr cta1;
  Type tptr;
  uint32_t idescBase;
  Value warp, lane;
  Value tbase; ///< TMEM base address (index), after emitTmemAlloc

  void fence(NVVM::Tcgen05FenceKind k) {
    NVVM::Tcgen05FenceOp::create(b, NVVM::Tcgen05FenceKindAttr::get(ctx, k));
  }
  /// TMEM address (index) -> !llvm.ptr<6>.
  Value taddr(Value v) {
    return LLVM::IntToPtrOp::create(b, tptr, b.toI32(v)).getResult();
  }
  void emitTmemAlloc();
  void emitTmaWarp();
  void emitMmaWarp();
  SmallVector<Value> emitMmaTile(const Tile &T, Value it0, Value tiles);
  void emitMmaStage(const Tile &T, Value s, const RingSlot &slot);
  void copyScales(Value col, Value smemAddr);
  void emitTmemEpilogue();
  SmallVector<Value> drainAccumulator(const Tile &T, Value quarter, Value rowOk,
                                      Value rowBase, Value tiles);
  void storeChunk(const Tile &T, Value rowOk, Value rowBase, int64_t c0,
                  function_ref<Value(int64_t)> value);
  void emitTmemDealloc();
};

void Sm100Kernel::build() {
  // Prologue: full barriers expect the loader's arrive.expect_tx, empty
  // barriers one tcgen05.commit, the accumulator barriers one commit and
  // the 128 epilogue threads.
  SmallVector<std::pair<Value, int64_t>> bars;
  for (int64_t s = 0; s < cfg.stages; ++s) {
    bars.push_back({f.at(map.fullBar() + 8 * s), 1});
    bars.push_back({f.at(map.emptyBar() + 8 * s), 1});
  }
  bars.push_back({f.at(map.tmemFullBar()), 1});
  bars.push_back({f.at(map.tmemEmptyBar()), 128});
  Value valid = emitPrologue(b, f, p, f.at(map.flagOff()), bars);
  warp = b.div(f.tid, 32);
  lane = b.rem(f.tid, 32);

  ifThen(b, valid, [&] {
    emitTmemAlloc();
    // ---------------- warp 0: TMA loader ----------------
    ifThen(b, b.eq(f.tid, b.idx(0)), [&] { emitTmaWarp(); });
    // ---------------- warp 1: MMA issuer (one thread) ----------------
    ifThen(b, b.eq(f.tid, b.idx(32)), [&] { emitMmaWarp(); });
    // ---------------- warps 2..5: epilogue ----------------
    ifThen(b, b.ule(b.idx(2), warp), [&] { emitTmemEpilogue(); });
    emitTmemDealloc();
  });
  gpu::ReturnOp::create(b);
}

/// Warp 1 allocates the TMEM columns (power of two >= 32) and writes the
/// base address to shared memory (tcgen05.alloc is warp-wide); every thread
/// reads it after a CTA barrier.
void Sm100Kernel::emitTmemAlloc() {
  ifThen(b, b.eq(warp, b.idx(1)), [&] {
    Value slotPtr = b.sptr(f.at(map.tmemSlot()));
    NVVM::Tcgen05AllocOp::create(b, slotPtr, b.i32(tmem.allocated()), cta1);
    NVVM::Tcgen05RelinquishAllocPermitOp::create(b, cta1);
  });
  fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  gpu::BarrierOp::create(b);
  fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  tbase = b.fromI32(b.lds(b.getI32Type(), f.at(map.tmemSlot())));
}

/// Thread 0: the TMA tile loads and the scale-atom bulk copies of every
/// stage into the ring.
void Sm100Kernel::emitTmaWarp() {
  Value descA = acquireTensorMap(b, f.tmapA);
  Value descB = acquireTensorMap(b, f.tmapB);
  Value saG = f.aScales, sbG = f.bScales;
  int64_t txBytes = map.aBytes() + map.bBytes() + kAtom * (1 + map.sfbAtoms());
  gen.forEachTileStage(
      f.bid, f.grid, f.base, map.stageBytes(),
      [&](const Tile &T, Value s, const RingSlot &slot) {
        Value st = slot.st, phase = slot.phase, stage = slot.stage;
        Value full = f.bar(map.fullBar(), st);
        Value empty = f.bar(map.emptyBar(), st);
        Value kc = b.add(T.kCoord0, b.mulc(s, kBK));
        loadTiles(b, stage, full, empty, phase, txBytes, kc, 0, map.aBytes(),
                  descA, descB, T);
        Value sOff = b.mulc(s, kAtom);
        Value saDst = b.add(stage, b.idx(map.saOff()));
        Value saSrc = b.gep8(saG, b.add(T.aAtom0, sOff));
        loadAtom(b, saDst, saSrc, f.bar(map.fullBar(), st));
        for (int64_t a = 0; a < map.sfbAtoms(); ++a) {
          // An atom past the last 128-row block of N (tile N 256 over a
          // remainder of <= 128 rows) is not in the buffer: load atom 0
          // again; its columns are masked in the epilogue.
          Value stride = T.bAtomStride;
          if (a > 0) {
            Value atomRow = b.add(T.nRow, b.idx(a * kBM));
            Value past = b.sge(atomRow, b.roundUpc(gen.s.n, kBM));
            stride = b.select(past, b.idx(0), stride);
          }
          Value sbDst = b.add(stage, b.idx(map.sbOff() + a * kAtom));
          Value stageAtom = b.add(T.bAtom0, sOff);
          Value sbSrc = b.gep8(sbG, b.add(stageAtom, b.mulc(stride, a)));
          loadAtom(b, sbDst, sbSrc, f.bar(map.fullBar(), st));
        }
      });
}

/// Thread 32: the MMAs of every tile with K work. Carried: the ring's stage
/// counter and the count of accumulating tiles (parity of the TMEM
/// barriers).
void Sm100Kernel::emitMmaWarp() {
  gen.forEachTile(f.bid, f.grid, 2,
                  [&](const Tile &T, ValueRange c) -> SmallVector<Value> {
                    Value it0 = c[0], tiles = c[1];
                    Value has = b.ult(b.idx(0), T.kStages);
                    return ifYield(b, has, c, [&]() -> SmallVector<Value> {
                      return emitMmaTile(T, it0, tiles);
                    });
                  });
}

SmallVector<Value> Sm100Kernel::emitMmaTile(const Tile &T, Value it0,
                                            Value tiles) {
  // Wait until the epilogue drained the accumulator of the previous tile
  // (parity trick as for the ring).
  Value accEmpty = b.sptr(f.at(map.tmemEmptyBar()));
  Value parity = b.rem(tiles, 2);
  waitParity(b, accEmpty, b.xori(parity, b.idx(1)));
  fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  Value it = forEachRingSlot(
      b, f.base, T.kStages, it0, cfg.stages, map.stageBytes(),
      [&](Value s, const RingSlot &slot) { emitMmaStage(T, s, slot); });
  // Accumulator complete -> epilogue.
  NVVM::Tcgen05CommitOp::create(b, b.sptr(f.at(map.tmemFullBar())), Value(),
                                cta1);
  return {it, b.add(tiles, b.idx(1))};
}

/// Scales of the stage: one 512-byte smem atom -> 4 TMEM columns from `col`
/// (tcgen05.cp 32x128b.warpx4).
void Sm100Kernel::copyScales(Value col, Value smemAddr) {
  Value dst = taddr(col);
  Value src =
      smemDescriptor(b, smemAddr, ::mxmoe::kTcgen05ScaleFactorSrcDescConstant);
  NVVM::Tcgen05CpOp::create(
      b,
      NVVM::Tcgen05CpShapeAttr::get(ctx, NVVM::Tcgen05CpShape::SHAPE_32x128b),
      cta1,
      NVVM::Tcgen05CpMulticastAttr::get(ctx, NVVM::Tcgen05CpMulticast::WARPX4),
      nullptr, dst, src);
}

/// One stage: wait for its data, copy its scales to TMEM, issue one
/// block-scaled MMA per live MX block and free the slot on completion.
void Sm100Kernel::emitMmaStage(const Tile &T, Value s, const RingSlot &slot) {
  uint64_t smemDescConst = ::mxmoe::tcgen05SmemDescConstantPart(
      /*lboBytes=*/16, /*sboBytes=*/1024, ::mxmoe::Tcgen05Swizzle::Swizzle128B);
  Value st = slot.st, phase = slot.phase, stage = slot.stage;
  waitParity(b, f.bar(map.fullBar(), st), phase);
  fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  // Scales of the stage: smem atoms -> TMEM (tcgen05.cp 32x128b.warpx4,
  // one 512-byte atom = 4 columns), per-stage columns so no copy
  // overwrites scales an MMA still reads.
  Value accCols = b.idx(cfg.tileN);
  Value sfCol = b.add(tbase, b.add(accCols, b.mulc(st, tmem.sfCols())));
  copyScales(sfCol, b.add(stage, b.idx(map.saOff())));
  for (int64_t a = 0; a < map.sfbAtoms(); ++a) {
    Value atomCol = b.add(sfCol, b.idx(4 + 4 * a));
    copyScales(atomCol, b.add(stage, b.idx(map.sbOff() + a * kAtom)));
  }
  // N = 64 tiles read the upper 64 rows of their B atom from columns +2,
  // +3 (TMEM column j of a 32x128b copy holds rows 32j + lane).
  Value sfbBase = b.add(sfCol, b.idx(4));
  Value sfbCol = b.add(sfbBase, b.div(T.bAtomRow, 32));
  for (int64_t kb = 0; kb < kBlocksPerStage; ++kb) {
    Value firstBlock = b.mulc(s, kBlocksPerStage);
    Value blk = b.add(firstBlock, b.idx(kb));
    ifThen(b, b.ult(blk, T.kBlocks), [&] {
      uint32_t idesc = ::mxmoe::tcgen05InstrDescWithScaleIds(
          idescBase, static_cast<unsigned>(kb), static_cast<unsigned>(kb));
      Value accumulate = b.ne(blk, b.idx(0));
      Value dAddr = taddr(tbase);
      Value aAddr = b.add(stage, b.idx(32 * kb));
      Value aDesc = smemDescriptor(b, aAddr, smemDescConst);
      Value bAddr = b.add(stage, b.idx(map.aBytes() + 32 * kb));
      Value bDesc = smemDescriptor(b, bAddr, smemDescConst);
      Value idescV = b.i32(static_cast<int64_t>(idesc));
      Value sfaAddr = taddr(sfCol);
      Value sfbAddr = taddr(sfbCol);
      NVVM::Tcgen05MMABlockScaleOp::create(
          b,
          NVVM::MMABlockScaleKindAttr::get(ctx,
                                           NVVM::MMABlockScaleKind::MXF8F6F4),
          cta1,
          NVVM::Tcgen05MMABlockScaleAttr::get(
              ctx, NVVM::Tcgen05MMABlockScale::BLOCK32),
          nullptr, dAddr, aDesc, bDesc, idescV, accumulate, sfaAddr, sfbAddr);
    });
  }
  // Free the slot once these MMAs have read it.
  NVVM::Tcgen05CommitOp::create(b, f.bar(map.emptyBar(), st), Value(), cta1);
}

/// Warps 2-5: warp w reads TMEM lanes 32*(w%4)..+31 (tile rows) of the
/// accumulator, converts and stores with predication, and releases it;
/// tiles without K work store zeros.
void Sm100Kernel::emitTmemEpilogue() {
  Value quarter = b.rem(warp, 4); // TMEM lanes 32q..32q+31
  Value row = b.add(b.mulc(quarter, 32), lane);
  gen.forEachTile(f.bid, f.grid, [&](const Tile &T, Value tiles) {
    Value has = b.ult(b.idx(0), T.kStages);
    Value rowOk = b.ult(row, T.rowsValid);
    Value rowBase = b.add(T.outBase, b.mul(row, T.outStride));
    SmallVector<Value> res =
        ifYield(b, has, ValueRange{tiles}, [&]() -> SmallVector<Value> {
          return drainAccumulator(T, quarter, rowOk, rowBase, tiles);
        });
    // Tiles without K work (rows past the last offset, empty groups'
    // weight gradients): zeros, no TMEM round trip (with `accumulate`:
    // the accumulator stays as it is).
    if (!p.accumulate)
      ifThen(b, b.eq(has, b.i1(false)), [&] {
        Value zero = p.outF32 ? b.f32(0.0f)
                              : arith::ConstantOp::create(
                                    b, b.getFloatAttr(b.getBF16Type(), 0.0))
                                    .getResult();
        for (int64_t c0 = 0; c0 < cfg.tileN; c0 += 32)
          storeChunk(T, rowOk, rowBase, c0, [&](int64_t) { return zero; });
      });
    return res[0];
  });
}

/// Stores value(j) (f32, or already of the output type) to columns c0 + j
/// (j < 32) of this thread's row in the output type, each predicated on
/// the tile's bounds; with `accumulate`, the f32 value is first added to
/// the element it replaces.
void Sm100Kernel::storeChunk(const Tile &T, Value rowOk, Value rowBase,
                             int64_t c0, function_ref<Value(int64_t)> value) {
  Type outTy = p.outF32 ? Type(b.getF32Type()) : Type(b.getBF16Type());
  auto cvt = [&](Value x) -> Value {
    return x.getType() == outTy
               ? x
               : arith::TruncFOp::create(b, outTy, x).getResult();
  };
  ifThen(b, rowOk, [&] {
    for (int64_t j = 0; j < 32; ++j) {
      Value c = b.idx(c0 + j);
      ifThen(b, b.ult(c, T.colsValid), [&] {
        Value x = value(j);
        if (!p.accumulate)
          x = cvt(x);
        Value at = b.add(rowBase, c);
        if (p.accumulate)
          x = cvt(addOutput(b, x, f.out, outTy, at));
        b.stg(x, f.out, at);
      });
    }
  });
}

/// Waits for the tile's accumulator, stores it and releases it to the MMA
/// warp. Returns the next count of accumulating tiles.
SmallVector<Value> Sm100Kernel::drainAccumulator(const Tile &T, Value quarter,
                                                 Value rowOk, Value rowBase,
                                                 Value tiles) {
  Value accFull = b.sptr(f.at(map.tmemFullBar()));
  waitParity(b, accFull, b.rem(tiles, 2));
  fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  for (int64_t c0 = 0; c0 < cfg.tileN; c0 += 32) {
    // tcgen05.ld 32x32b.x32: thread t of warp quarter q reads row 32q + t,
    // columns c0..c0+31 (PTX 9.7.16.8.3).
    Value lanes = b.shli(b.mulc(quarter, 32), 16);
    Value addr = b.add(tbase, b.add(lanes, b.idx(c0)));
    auto vt = VectorType::get({32}, b.getI32Type());
    Value v = NVVM::Tcgen05LdOp::create(
        b, vt, nullptr,
        NVVM::Tcgen05LdStShapeAttr::get(ctx,
                                        NVVM::Tcgen05LdStShape::SHAPE_32X32B),
        taddr(addr), Value());
    NVVM::Tcgen05WaitOp::create(
        b, NVVM::Tcgen05WaitKindAttr::get(ctx, NVVM::Tcgen05WaitKind::LOAD));
    storeChunk(T, rowOk, rowBase, c0, [&](int64_t j) -> Value {
      Value bits = LLVM::ExtractElementOp::create(b, v, b.i32(j));
      return b.bitcast(b.getF32Type(), bits);
    });
  }
  // Release the accumulator to the MMA warp.
  fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  NVVM::MBarrierArriveOp::create(b, Type(), b.sptr(f.at(map.tmemEmptyBar())),
                                 Value(), NVVM::MemScopeKind::CTA, false);
  return {b.add(tiles, b.idx(1))};
}

/// The allocating warp frees the columns after every reader is done (warps
/// 0 and 1 reconverge first: one lane of each ran a role loop).
void Sm100Kernel::emitTmemDealloc() {
  NVVM::SyncWarpOp::create(b, b.i32(-1));
  fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  gpu::BarrierOp::create(b);
  ifThen(b, b.eq(warp, b.idx(1)), [&] {
    fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    Value tmemAddr = taddr(tbase);
    NVVM::Tcgen05DeallocOp::create(b, tmemAddr, b.i32(tmem.allocated()), cta1);
  });
}

} // namespace

int64_t mlir::mxmoe::kernels::getSm100GemmSharedBytes(const GemmConfig &cfg) {
  return Sm100SmemMap{cfg.tileN, cfg.stages}.total();
}

int64_t mlir::mxmoe::kernels::getSm100GemmTmemColumns(const GemmConfig &cfg) {
  return TmemMap{cfg.tileN, cfg.stages}.used();
}

gpu::GPUFuncOp
mlir::mxmoe::kernels::buildGroupedMatmulSm100(gpu::GPUModuleOp module,
                                              StringRef name, const GemmKind &p,
                                              const GemmConfig &cfg) {
  Sm100SmemMap map{cfg.tileN, cfg.stages};
  TmemMap tmem{cfg.tileN, cfg.stages};
  KernelFrame f =
      createGemmKernel(module, name, p, cfg, kThreads100, map.total());
  f.fn->setAttr(MXMoEDialect::TmemColumnsAttrHelper::getNameStr(),
                f.ob->getI64IntegerAttr(tmem.allocated()));
  Sm100Kernel(f, p, cfg, map, tmem).build();
  return f.fn;
}
