//===- GroupedMatmul.cpp - MX grouped GEMM kernels (sm_90a, sm_100a) ------===//
//
// See GroupedMatmul.h for the strategies. PTX references: wgmma (PTX ISA
// 9.7.15: m64nNk32 e4m3/e5m2 -> f32, shared-memory matrix descriptor
// 9.7.15.5.1, D fragment layout 9.7.15.5.2), cp.async.bulk.tensor and
// cp.async.bulk (9.7.9.25), mbarrier (9.7.13.15). MX math: OCP MX v1.0
// (value = q * 2^(b - 127); shared/reference/mx-formats.md). Layouts:
// shared/reference/scale-layout.md (blocked 128x4 atoms of 512 bytes);
// tcgen05: PTX ISA 9.7.16, shared/reference/tcgen05.md.
//
//===----------------------------------------------------------------------===//

#include "GroupedMatmul.h"
#include "KernelBuilder.h"

#include "mxmoe/Dialect/MXMoE/Utils/MMADescriptors.h"
#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;

namespace {

constexpr int64_t kBM = 128;           // rows per tile (2 x wgmma m64)
constexpr int64_t kBK = 128;           // K per stage = 4 MX blocks
constexpr int64_t kBlocksPerStage = 4; // MX blocks (k32 wgmmas) per stage
constexpr int64_t kThreads = 384;      // producer + 2 consumer warpgroups
constexpr int64_t kAtom = 512;         // one blocked 128x4 scale atom
/// Arrivals on an sm_90a "empty" mbarrier: every consumer thread arrives
/// once per stage after its last shared-memory read of the slot. (One
/// elected lane per warp after bar.warp.sync would release only that lane's
/// own accesses under the PTX memory model's mbarrier.arrive .release
/// semantics for compute-sanitizer racecheck, which then reports the next
/// fill's bulk copy as racing with the other lanes' reads.)
constexpr int64_t kConsumerArrivals = 256;
constexpr StringLiteral kSmemGlobal = "__mxmoe_dynamic_smem";

/// Shared-memory map (byte offsets from the 1024-aligned base).
struct SmemMap {
  int64_t tileN, stages;
  bool upcast = false; ///< GemmConfig::upcastBF16
  int64_t aBytes() const { return kBM * kBK; }
  int64_t bBytes() const { return tileN * kBK; }
  int64_t stageBytes() const {
    return ::mxmoe::roundUp(aBytes() + bBytes() + 2 * kAtom, 1024);
  }
  int64_t aOff() const { return 0; }
  int64_t bOff() const { return aBytes(); }
  int64_t saOff() const { return aBytes() + bBytes(); }
  int64_t sbOff() const { return saOff() + kAtom; }
  /// bf16 upcast: two buffers, each A [128 x 128] then B [tileN x 128]
  /// bf16, every operand as two 128B-swizzled K-major atoms (K 0-63,
  /// 64-127) of rows x 128 bytes.
  int64_t bfOff() const { return stages * stageBytes(); }
  int64_t bfBufBytes() const { return upcast ? 2 * (kBM + tileN) * kBK : 0; }
  int64_t bfBOff() const { return 2 * kBM * kBK; } ///< B inside a buffer
  /// Decoded fp32 scales of one ring stage (fp8 path only), the tf32
  /// operands of the scale-product wgmma, 16 B (K slots 0-3 = the stage's
  /// four MX blocks) per row: for each consumer warpgroup and block kb an
  /// A table [64 rows] holding sa in slot kb and zeros elsewhere, then the
  /// B table sbT [tileN columns] holding sb of all four blocks.
  int64_t saTableBytes() const { return 64 * 16; }
  int64_t sbTableOff() const { return 2 * kBlocksPerStage * saTableBytes(); }
  int64_t tableBytes() const {
    return upcast ? 0 : sbTableOff() + 16 * tileN;
  }
  int64_t tablesOff() const { return bfOff() + 2 * bfBufBytes(); }
  /// 1 KB of zeros: K slots 4-7 of every A table (its LBO points here).
  int64_t zeroOff() const { return tablesOff() + stages * tableBytes(); }
  int64_t zeroBytes() const { return upcast ? 0 : 64 * 16; }
  int64_t barOff() const { return zeroOff() + zeroBytes(); }
  int64_t fullBar(int64_t s) const { return barOff() + 8 * s; }
  int64_t emptyBarBase() const { return barOff() + 64; }
  int64_t flagOff() const { return barOff() + 128; }
  /// Tile-record ring (kTileRing entries of 32 B, a full and an empty
  /// mbarrier each): the loader warpgroup publishes each tile's record for
  /// the consumers: i32 valid K blocks (-1: the CTA has no more tiles) at
  /// +0, i32 first row of the tile in the B scale atom at +4, i32 valid
  /// rows at +8, i32 valid columns at +12, i64 output base index at +16.
  int64_t tileFullBar(int64_t i) const { return barOff() + 160 + 8 * i; }
  int64_t tileEmptyBar(int64_t i) const { return barOff() + 176 + 8 * i; }
  int64_t tileRecord(int64_t i) const { return barOff() + 192 + 32 * i; }
  /// fp8 path: stage s's scale tables are decoded (kDecoderThreads arrive).
  int64_t decodedBar(int64_t s) const { return barOff() + 256 + 8 * s; }
  int64_t total() const { return barOff() + 320 + 1024; /* align slack */ }
};

/// Entries of the sm_90a kernel's tile-record ring.
constexpr int64_t kTileRing = 2;
/// sm_90a fp8 path: loader-warpgroup threads 64-127 decode the scales.
constexpr int64_t kDecoderThreads = 64;

/// KB plus the LLVM-pointer and shared-memory helpers of this kernel.
struct GB : KB {
  using KB::KB;
  Type ptr(unsigned as) { return LLVM::LLVMPointerType::get(getContext(), as); }
  Value i64(Value idx) {
    return arith::IndexCastOp::create(*this, getI64Type(), idx);
  }
  Value toI32(Value idx) {
    return arith::IndexCastOp::create(*this, getI32Type(), idx);
  }
  Value fromI32(Value v) {
    return arith::IndexCastOp::create(*this, getIndexType(), v);
  }
  /// Shared-window address (index) -> !llvm.ptr<3>.
  Value sptr(Value addr) {
    return LLVM::IntToPtrOp::create(*this, ptr(3), i64(addr));
  }
  /// Generic pointer of a global (`!llvm.ptr<1>`) kernel argument.
  Value genericPtr(Value global) {
    return LLVM::AddrSpaceCastOp::create(*this, ptr(0), global);
  }
  /// Address of element `i` (index) of type `t` at global pointer `base`.
  Value elemPtr(Type t, Value base, Value i) {
    return LLVM::GEPOp::create(*this, base.getType(), t, base,
                               ArrayRef<LLVM::GEPArg>{LLVM::GEPArg(i64(i))});
  }
  Value ldg(Type t, Value base, Value i) {
    return LLVM::LoadOp::create(*this, t, elemPtr(t, base, i));
  }
  void stg(Value v, Value base, Value i) {
    LLVM::StoreOp::create(*this, v, elemPtr(v.getType(), base, i));
  }
  /// Quotient and remainder of tile indices (non-negative, < 2^31) by a
  /// run-time tile count, in 32-bit arithmetic: a 64-bit division is a
  /// long instruction sequence that the loader's 40 registers cannot hold.
  std::pair<Value, Value> divRem32(Value a, Value c) {
    Value a32 = toI32(a), c32 = toI32(c);
    Value q = arith::DivUIOp::create(*this, a32, c32);
    Value r = arith::RemUIOp::create(*this, a32, c32);
    return {arith::IndexCastUIOp::create(*this, getIndexType(), q),
            arith::IndexCastUIOp::create(*this, getIndexType(), r)};
  }
  Value gep8(Value base, Value offIdx) {
    return LLVM::GEPOp::create(*this, base.getType(), getI8Type(), base,
                               ArrayRef<LLVM::GEPArg>{LLVM::GEPArg(i64(offIdx))});
  }
  Value lds(Type t, Value addr) { return LLVM::LoadOp::create(*this, t, sptr(addr)); }
  void sts(Value v, Value addr) { LLVM::StoreOp::create(*this, v, sptr(addr)); }
  Value ceilDivc(Value a, int64_t c) { return div(add(a, idx(c - 1)), c); }
  Value roundUpc(Value a, int64_t c) { return mulc(ceilDivc(a, c), c); }
  Value sge(Value a, Value b) {
    return arith::CmpIOp::create(*this, arith::CmpIPredicate::sge, a, b);
  }
  Value slt(Value a, Value b) {
    return arith::CmpIOp::create(*this, arith::CmpIPredicate::slt, a, b);
  }
  Value land(Value a, Value b) { return arith::AndIOp::create(*this, a, b); }
  Value lor(Value a, Value b) { return arith::OrIOp::create(*this, a, b); }
  Value remui(Value a, Value c) { return arith::RemUIOp::create(*this, a, c); }
  Value divui(Value a, Value c) { return arith::DivUIOp::create(*this, a, c); }
  Value xori(Value a, Value c) { return arith::XOrIOp::create(*this, a, c); }
  Value boolc(bool v) {
    return arith::ConstantIntOp::create(*this, getI1Type(), v ? 1 : 0);
  }
};

/// Waits (mbarrier.try_wait.parity, 10 ms suspend hint per try) until the
/// phase of parity `phase` (index) of the mbarrier at `bar` completed.
void waitParity(GB &b, Value bar, Value phase) {
  Value parity = b.toI32(phase);
  NVVM::MBarrierTryWaitParityOp::create(b, bar, parity, b.i32(0x989680));
}

/// fence.proxy.async.shared::cta: this thread's generic-proxy shared-memory
/// writes become visible to later async-proxy reads (TMA, wgmma, tcgen05).
void fenceAsyncShared(GB &b) {
  NVVM::FenceProxyOp::create(
      b, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
}

/// scf.if yielding `then()` or `otherwise` values.
SmallVector<Value> ifYield(GB &b, Value cond, ValueRange otherwise,
                           function_ref<SmallVector<Value>()> then) {
  auto op = scf::IfOp::create(b, otherwise.getTypes(), cond, true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&op.getThenRegion().front());
    scf::YieldOp::create(b, then());
    b.setInsertionPointToStart(&op.getElseRegion().front());
    scf::YieldOp::create(b, otherwise);
  }
  return SmallVector<Value>(op.getResults());
}

/// One wgmma.mma_async m64nNkK with both operands K-major in shared memory
/// (descriptors `aDesc`, `bDesc`) and an fp32 accumulator struct `acc` of
/// type `accTy`; `accumulate` false writes D = A*B (scale-d 0).
Value wgmmaKMajor(GB &b, Type accTy, Value acc, Value aDesc, Value bDesc,
                  int64_t n, int64_t k, NVVM::WGMMATypes aType,
                  NVVM::WGMMATypes bType, bool accumulate) {
  MLIRContext *ctx = b.getContext();
  return NVVM::WgmmaMmaAsyncOp::create(
      b, accTy, acc, aDesc, bDesc, NVVM::MMAShapeAttr::get(ctx, 64, n, k),
      NVVM::WGMMATypesAttr::get(ctx, aType), NVVM::WGMMATypesAttr::get(ctx, bType),
      NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
      NVVM::WGMMAScaleOutAttr::get(ctx, accumulate ? NVVM::WGMMAScaleOut::one
                                                   : NVVM::WGMMAScaleOut::zero),
      NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
      NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
      NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row),
      NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::col), nullptr);
}

/// The ring slot of a CTA's `it`-th pipeline stage (all index values): slot
/// number, mbarrier phase parity of this use, shared-memory base address.
struct RingSlot {
  Value st, phase, stage;
};
/// The ring counter runs modulo 2 x stages (ringNext), so slot and phase
/// are a compare and two selects for any stage count (a 64-bit division by
/// a non-power-of-two stage count cost the loader warpgroup registers it
/// does not have); counter % 2 is the running stage's parity.
RingSlot ringSlot(GB &b, Value base, Value it, int64_t stages,
                  int64_t stageBytes) {
  Value wrapped = b.sge(it, b.idx(stages));
  Value st = b.select(wrapped, b.sub(it, b.idx(stages)), it);
  Value one = b.idx(1);
  Value phase = b.select(wrapped, one, b.idx(0));
  Value stage = b.add(base, b.mulc(st, stageBytes));
  return {st, phase, stage};
}
/// The ring counter after `it` (modulo 2 x stages).
Value ringNext(GB &b, Value it, int64_t stages) {
  Value n = b.add(it, b.idx(1));
  Value wraps = b.eq(n, b.idx(2 * stages));
  return b.select(wraps, b.idx(0), n);
}

/// fp32 2^(byte - 127) from an i32 byte: byte 0 -> 2^-127 (subnormal
/// 0x00400000, never 0), 255 -> NaN (OCP MX v1.0 E8M0).
Value decodeE8M0(GB &b, Value byte) {
  Value bits = b.shli(byte, 23);
  Value isZero = b.eq(byte, b.i32(0));
  bits = b.select(isZero, b.i32(0x00400000), bits);
  Value isNaN = b.eq(byte, b.i32(255));
  bits = b.select(isNaN, b.i32(0x7fc00000), bits);
  return b.bitcast(b.getF32Type(), bits);
}

/// The state of the persistent tile walk (all index values).
struct Walk {
  Value t, g, gBase, gStart, padStart, sStart;
  SmallVector<Value> asRange() const {
    return {t, g, gBase, gStart, padStart, sStart};
  }
  static Walk from(ValueRange v) {
    return {v[0], v[1], v[2], v[3], v[4], v[5]};
  }
};

/// One output tile of the walk.
struct Tile {
  Value rowsValid, colsValid; ///< predicates of the epilogue
  Value outBase;              ///< flat index of out(tile row 0, col 0)
  Value outStride;            ///< elements between output rows
  Value aRow, bRow, kCoord0;  ///< TMA coordinates of stage 0
  Value kStages, kBlocks;     ///< pipeline stages and valid MX blocks
  Value aAtom0, bAtom0;       ///< byte offsets of the stage-0 scale atoms
  Value bAtomRow;             ///< first row of this tile inside the B atom
  Value bAtomStride;          ///< bytes between B atoms 128 rows apart
  Value nRow;                 ///< first output column (rhs row within N)
  /// sm_90a consumers: shared-memory address of the tile's record
  /// (rowsValid, colsValid and outBase are read from it at the epilogue).
  Value record;
};

/// The run-time sizes: index values of the kernel's i64 scalar parameters
/// (kGemmScalarParams).
struct GemmSizes {
  Value m, n, k, groups, aScaleRows, aScaleCols, bScaleRows, bScaleCols;
};

struct Generator {
  GB &b;
  const GemmKind &p;
  const GemmConfig &cfg;
  const GemmSizes &s;
  Value offsets;
  Value nTiles; ///< tiles along N (2D x 3D) or N' (2D x 2D)
  Value mTiles; ///< tiles along M' (2D x 2D only)

  Generator(GB &b, const GemmKind &p, const GemmConfig &cfg,
            const GemmSizes &s, Value offsets)
      : b(b), p(p), cfg(cfg), s(s), offsets(offsets) {
    nTiles = b.ceilDivc(s.n, cfg.tileN);
    mTiles = b.ceilDivc(s.m, kBM);
  }

  Value offsetAt(Value g) {
    Value safe = b.minui(g, b.sub(s.groups, b.idx(1)));
    return b.fromI32(b.ldg(b.getI32Type(), offsets, safe));
  }

  /// Tiles of group g (size `size`).
  Value groupTiles(Value size) {
    if (p.kGrouped)
      return b.mul(mTiles, nTiles);
    return b.mul(b.ceilDivc(size, kBM), nTiles);
  }

  /// Advances (g, gBase, gStart, padStart, sStart) past every group whose
  /// tiles all lie before tile t.
  Walk advance(Walk w) {
    SmallVector<Value> init = w.asRange();
    SmallVector<Type> types(init.size(), b.getIndexType());
    auto loop = scf::WhileOp::create(b, types, init);
    {
      OpBuilder::InsertionGuard guard(b);
      Block *before = b.createBlock(&loop.getBefore(), {}, types,
                                    SmallVector<Location>(types.size(), b.getLoc()));
      Walk w = Walk::from(before->getArguments());
      Value inGroups = b.ult(w.g, s.groups);
      Value size = b.sub(offsetAt(w.g), w.gStart);
      Value past = b.ule(b.add(w.gBase, groupTiles(size)), w.t);
      scf::ConditionOp::create(b, b.land(inGroups, past),
                               before->getArguments());
      Block *after = b.createBlock(&loop.getAfter(), {}, types,
                                   SmallVector<Location>(types.size(), b.getLoc()));
      Walk a = Walk::from(after->getArguments());
      Value end = offsetAt(a.g);
      Value sz = b.sub(end, a.gStart);
      Walk n = a;
      n.g = b.add(a.g, b.idx(1));
      n.gBase = b.add(a.gBase, groupTiles(sz));
      n.gStart = end;
      if (p.kGrouped) {
        n.padStart = b.add(a.padStart, b.roundUpc(sz, 32));
        n.sStart = b.add(a.sStart, b.roundUpc(b.ceilDivc(sz, 32), 4));
      } else {
        n.padStart = b.add(a.padStart, b.roundUpc(sz, kBM));
      }
      scf::YieldOp::create(b, n.asRange());
    }
    return Walk::from(loop.getResults());
  }

  /// True while tile t exists: inside a group, or (2D x 3D) one of the
  /// zero tiles covering rows [offsets[G-1], M).
  Value exists(const Walk &w) {
    Value inGroups = b.ult(w.g, s.groups);
    if (p.kGrouped)
      return inGroups;
    Value tail = b.sub(s.m, w.gStart);
    Value tailTiles = b.mul(b.ceilDivc(tail, kBM), nTiles);
    return b.lor(inGroups, b.ult(b.sub(w.t, w.gBase), tailTiles));
  }

  Tile tile(const Walk &w) {
    Tile T;
    Value local = b.sub(w.t, w.gBase);
    Value inGroups = b.ult(w.g, s.groups);
    if (!p.kGrouped) {
      // Blocked scale extents follow from K and N (validateSizes checks
      // the bound ones): roundUp(K/32, 4) columns, one atom per 4.
      Value cpA = b.ceilDivc(b.div(s.k, 32), 4), cpB = cpA;
      // Rows of the group, or of the zero tail past the last offset.
      Value end = b.select(inGroups, offsetAt(w.g), s.m);
      Value size = b.sub(end, w.gStart);
      Value sizeTiles = b.ceilDivc(size, kBM);
      Value mt_count = b.maxsi(sizeTiles, b.idx(1));
      auto [nt, mt] = b.divRem32(local, mt_count);
      Value row0 = b.add(w.gStart, b.mulc(mt, kBM));
      Value rowsLeft = b.sub(size, b.mulc(mt, kBM));
      T.rowsValid = b.minsi(rowsLeft, b.idx(kBM));
      Value colsLeft = b.sub(s.n, b.mulc(nt, cfg.tileN));
      T.colsValid = b.minsi(colsLeft, b.idx(cfg.tileN));
      T.outStride = s.n;
      Value rowOff = b.mul(row0, s.n);
      T.outBase = b.add(rowOff, b.mulc(nt, cfg.tileN));
      T.aRow = row0;
      Value gSafe = b.minui(w.g, b.sub(s.groups, b.idx(1)));
      Value expertRow = b.mul(gSafe, s.n);
      T.bRow = b.add(expertRow, b.mulc(nt, cfg.tileN));
      T.kCoord0 = b.idx(0);
      Value allBlocks = b.div(s.k, 32);
      T.kBlocks = b.select(inGroups, allBlocks, b.idx(0));
      T.kStages = b.ceilDivc(T.kBlocks, kBlocksPerStage);
      Value aTileRow = b.add(b.div(w.padStart, kBM), mt);
      T.aAtom0 = b.mulc(b.mul(aTileRow, cpA), kAtom);
      Value nRow = b.mulc(nt, cfg.tileN);
      Value expertTileRow = b.mul(gSafe, b.ceilDivc(s.n, kBM));
      Value bTileRow = b.add(expertTileRow, b.div(nRow, kBM));
      T.bAtom0 = b.mulc(b.mul(bTileRow, cpB), kAtom);
      T.bAtomRow = b.rem(nRow, kBM);
      T.bAtomStride = b.mulc(cpB, kAtom);
      T.nRow = nRow;
    } else {
      auto [nt, mt] = b.divRem32(local, mTiles);
      Value size = b.sub(offsetAt(w.g), w.gStart);
      Value rowsLeft = b.sub(s.m, b.mulc(mt, kBM));
      T.rowsValid = b.minsi(rowsLeft, b.idx(kBM));
      Value colsLeft = b.sub(s.n, b.mulc(nt, cfg.tileN));
      T.colsValid = b.minsi(colsLeft, b.idx(cfg.tileN));
      T.outStride = s.n;
      Value groupOff = b.mul(w.g, b.mul(s.m, s.n));
      Value rowOff = b.mul(b.mulc(mt, kBM), s.n);
      Value tileOff = b.add(rowOff, b.mulc(nt, cfg.tileN));
      T.outBase = b.add(groupOff, tileOff);
      T.aRow = b.mulc(mt, kBM);
      Value nRow = b.mulc(nt, cfg.tileN);
      T.bRow = nRow;
      T.kCoord0 = w.padStart;
      T.kBlocks = b.ceilDivc(size, 32);
      T.kStages = b.ceilDivc(T.kBlocks, kBlocksPerStage);
      // per_k_group blocked scales (torchao's K-group layout,
      // scale-layout.md): group g's columns form their own blocked matrix
      // [Rp, kgp_g] (kgp_g = roundUp(ceil(m_g/32), 4)) stored at byte
      // S_g * Rp, S_g = sum_{h<g} kgp_h.
      Value kgpAtoms = b.div(b.roundUpc(T.kBlocks, 4), 4);
      Value aGroupOff = b.mul(w.sStart, b.roundUpc(s.m, kBM));
      T.aAtom0 = b.add(aGroupOff, b.mulc(b.mul(mt, kgpAtoms), kAtom));
      Value bGroupOff = b.mul(w.sStart, b.roundUpc(s.n, kBM));
      T.bAtom0 = b.add(bGroupOff,
                       b.mulc(b.mul(b.div(nRow, kBM), kgpAtoms), kAtom));
      T.bAtomRow = b.rem(nRow, kBM);
      T.bAtomStride = b.mulc(kgpAtoms, kAtom);
      T.nRow = nRow;
    }
    return T;
  }

  /// Emits the persistent loop: body(tile, it) -> it'. `it` counts pipeline
  /// stages consumed so far (index).
  /// Emits the persistent loop over the CTA's tiles t = first, first +
  /// step, ...; `body(tile, carried)` returns the next carried index values
  /// (pipeline counters), which start at `numCarried` zeros.
  SmallVector<Value>
  forEachTile(Value firstTile, Value step, unsigned numCarried,
              function_ref<SmallVector<Value>(const Tile &, ValueRange)> body) {
    SmallVector<Value> init{firstTile, b.idx(0), b.idx(0), b.idx(0), b.idx(0),
                            b.idx(0)};
    for (unsigned i = 0; i < numCarried; ++i)
      init.push_back(b.idx(0));
    SmallVector<Type> types(init.size(), b.getIndexType());
    auto loop = scf::WhileOp::create(b, types, init);
    OpBuilder::InsertionGuard guard(b);
    SmallVector<Location> locs(types.size(), b.getLoc());
    Block *before = b.createBlock(&loop.getBefore(), {}, types, locs);
    Walk w = advance(Walk::from(before->getArguments().take_front(6)));
    SmallVector<Value> fwd = w.asRange();
    llvm::append_range(fwd, before->getArguments().drop_front(6));
    scf::ConditionOp::create(b, exists(w), fwd);
    Block *after = b.createBlock(&loop.getAfter(), {}, types, locs);
    Walk a = Walk::from(after->getArguments().take_front(6));
    SmallVector<Value> carried = body(tile(a), after->getArguments().drop_front(6));
    Walk n = a;
    n.t = b.add(a.t, step);
    SmallVector<Value> next = n.asRange();
    llvm::append_range(next, carried);
    scf::YieldOp::create(b, next);
    b.setInsertionPointAfter(loop);
    return SmallVector<Value>(loop.getResults().drop_front(6));
  }
  /// One carried counter; returns its final value.
  Value forEachTile(Value firstTile, Value step,
                    function_ref<Value(const Tile &, Value)> body) {
    return forEachTile(firstTile, step, 1,
                       [&](const Tile &T, ValueRange c) -> SmallVector<Value> {
                         return {body(T, c[0])};
                       })[0];
  }
};

/// The kernel skeleton shared by both chips: the dynamic shared memory
/// global, the gpu.func with its launch attributes and tensor-map argument
/// descriptions, and the values every role uses.
struct KernelFrame {
  gpu::GPUFuncOp fn;
  std::unique_ptr<OpBuilder> ob;
  std::unique_ptr<GB> b;
  Value tmapA, aScales, tmapB, bScales, offsets, out, status;
  GemmSizes sizes;
  Value tid, bid, grid;
  Value base; ///< 1024-aligned shared-window address of the dynamic smem
};

KernelFrame createGemmKernel(gpu::GPUModuleOp module, StringRef name,
                             const GemmKind &p, const GemmConfig &cfg,
                             int64_t threads, int64_t smemBytes) {
  KernelFrame f;
  f.ob = std::make_unique<OpBuilder>(module.getBodyRegion());
  OpBuilder &ob = *f.ob;
  ob.setInsertionPointToEnd(&module.getBodyRegion().front());
  Location loc = module.getLoc();

  // The dynamic shared memory window, declared once per module.
  if (!SymbolTable::lookupSymbolIn(module, kSmemGlobal)) {
    OpBuilder gb(module.getBodyRegion());
    gb.setInsertionPointToStart(&module.getBodyRegion().front());
    LLVM::GlobalOp::create(gb, loc, LLVM::LLVMArrayType::get(gb.getI8Type(), 0),
                           /*isConstant=*/false, LLVM::Linkage::External,
                           kSmemGlobal, Attribute(), /*alignment=*/1024,
                           /*addrSpace=*/3);
  }

  MLIRContext *ctx = module.getContext();
  Type gptr = LLVM::LLVMPointerType::get(ctx, 1);
  SmallVector<Type> argTypes(7, gptr);
  argTypes.append(std::size(kGemmScalarParams), ob.getI64Type());
  auto fn = gpu::GPUFuncOp::create(ob, loc, name, ob.getFunctionType(argTypes, {}));
  f.fn = fn;
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), ob.getUnitAttr());
  fn.setKnownBlockSizeAttr(
      ob.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
  // One CTA per SM (PTX `.minnctapersm 1`): with `.maxntid` alone ptxas
  // cannot determine the register count at entry and ignores `setmaxnreg`
  // (warning C7508), which capped the sm_90a consumer warpgroups at 168
  // registers and made them spill.
  fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(), ob.getI32IntegerAttr(1));
  fn->setAttr("mxmoe.block", ob.getDenseI64ArrayAttr({threads, 1, 1}));
  fn->setAttr("mxmoe.grid", ob.getDenseI64ArrayAttr({cfg.numCTAs, 1, 1}));
  fn->setAttr("mxmoe.dynamic_smem", ob.getI64IntegerAttr(smemBytes));
  SymbolTable(module).insert(fn);
  // Pointers: noalias, with the element type a launcher must bind.
  auto elem = [&](bool e5m2, bool e2m1) -> Type {
    if (e2m1)
      return Float4E2M1FNType::get(ctx);
    return e5m2 ? Type(Float8E5M2Type::get(ctx)) : Float8E4M3FNType::get(ctx);
  };
  Type e8m0 = Float8E8M0FNUType::get(ctx);
  Type elems[7] = {elem(p.aE5M2, p.aE2M1), e8m0, elem(p.bE5M2, p.bE2M1), e8m0,
                   ob.getI32Type(),
                   p.outF32 ? ob.getF32Type() : Type(ob.getBF16Type()),
                   ob.getI32Type()};
  for (unsigned i = 0; i < 7; ++i) {
    fn.setArgAttr(i, "llvm.noalias", ob.getUnitAttr());
    fn.setArgAttr(i, "mxmoe.element_type", TypeAttr::get(elems[i]));
  }
  for (auto [i, scalar] : llvm::enumerate(kGemmScalarParams))
    fn.setArgAttr(7 + i, "mxmoe.scalar", ob.getStringAttr(scalar));
  // A TMA map over the bound operand viewed as [rows, K]: its dims (K,
  // rows in elements) and row stride come from the bound tensor at launch;
  // box in elements; fp4 rows hold two elements per byte and are unpacked
  // by the copy to one shared-memory byte per element.
  auto tmapAttr = [&](StringRef operand, bool fp4) {
    return ob.getDictionaryAttr({
        ob.getNamedAttr("operand", ob.getStringAttr(operand)),
        ob.getNamedAttr("data_type",
                        ob.getStringAttr(fp4 ? "16U4_ALIGN16B" : "uint8")),
        ob.getNamedAttr("box", ob.getDenseI64ArrayAttr(
                                   {kBK, operand == "lhs" ? kBM : cfg.tileN})),
        ob.getNamedAttr("swizzle", ob.getStringAttr("128B")),
        ob.getNamedAttr("oob_fill", ob.getStringAttr("zero"))});
  };
  fn.setArgAttr(0, "mxmoe.tensor_map", tmapAttr("lhs", p.aE2M1));
  fn.setArgAttr(2, "mxmoe.tensor_map", tmapAttr("rhs", p.bE2M1));

  f.b = std::make_unique<GB>(loc, ob);
  GB &b = *f.b;
  b.setInsertionPointToStart(&fn.getBody().front());
  f.tmapA = fn.getArgument(0);
  f.aScales = fn.getArgument(1);
  f.tmapB = fn.getArgument(2);
  f.bScales = fn.getArgument(3);
  f.offsets = fn.getArgument(4);
  f.out = fn.getArgument(5);
  f.status = fn.getArgument(6);
  Value *sizes[] = {&f.sizes.m,          &f.sizes.n,          &f.sizes.k,
                    &f.sizes.groups,     &f.sizes.aScaleRows, &f.sizes.aScaleCols,
                    &f.sizes.bScaleRows, &f.sizes.bScaleCols};
  for (auto [i, v] : llvm::enumerate(sizes))
    *v = arith::IndexCastOp::create(b, b.getIndexType(), fn.getArgument(7 + i));
  f.tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  f.bid = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  f.grid = gpu::GridDimOp::create(b, gpu::Dimension::x);
  // 1024-aligned base of the dynamic shared memory (SWIZZLE_128B atoms).
  Value smem = LLVM::AddressOfOp::create(b, b.ptr(3), kSmemGlobal);
  Value raw = arith::IndexCastOp::create(
      b, b.getIndexType(),
      LLVM::PtrToIntOp::create(b, b.getI64Type(), smem).getResult());
  Value rawUp = b.add(raw, b.idx(1023));
  f.base = b.andi(rawUp, b.idx(~int64_t{1023}));
  return f;
}

/// Loader step shared by both chips: wait until the consumers freed ring
/// slot `st` (parity trick: the first pass waits on the "previous" phase,
/// which counts as complete), announce `txBytes` on its full barrier, and
/// issue the TMA tile loads of A and B at K coordinate `kc`.
void loadTiles(GB &b, Value stage, Value full, Value empty, Value phase,
               int64_t txBytes, Value kc, int64_t aOff, int64_t bOff,
               Value descA, Value descB, const Tile &T) {
  waitParity(b, empty, b.xori(phase, b.idx(1)));
  NVVM::MBarrierArriveExpectTxOp::create(b, Type(), full, b.i32(txBytes),
                                         NVVM::MemScopeKind::CTA, false,
                                         Value());
  auto tma = [&](int64_t off, Value desc, Value row) {
    // A shared::cta address is valid in the shared::cluster window (the
    // PTX 8.0 form of the instruction takes the latter).
    Value dst = LLVM::AddrSpaceCastOp::create(
        b, b.ptr(7), b.sptr(b.add(stage, b.idx(off))));
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, dst, desc, ValueRange{b.toI32(kc), b.toI32(row)}, full,
        ValueRange{}, Value(), Value(), NVVM::TMALoadMode::TILE, false,
        nullptr, Value());
  };
  tma(aOff, descA, T.aRow);
  tma(bOff, descB, T.bRow);
}

/// cp.async.bulk of one 512-byte scale atom into shared memory.
void loadAtom(GB &b, Value dstAddr, Value src, Value full) {
  Value dst = LLVM::AddrSpaceCastOp::create(b, b.ptr(7), b.sptr(dstAddr));
  NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(b, dst, src, full,
                                                   b.i32(kAtom), Value(),
                                                   Value());
}

/// Thread-local check of the i32 end offsets (run by one thread): every
/// offset within [previous, token extent], and the padded extents the
/// layouts need (rows of M-grouped scales; padded token columns and
/// K-group scale columns) within the buffers. Returns an i1.
Value validateOffsets(GB &b, const GemmKind &p, const GemmSizes &s,
                      Value offsets) {
  SmallVector<Value> init{b.idx(0), b.boolc(true), b.idx(0), b.idx(0)};
    Value zero = b.idx(0);
    auto loop = scf::ForOp::create(b, zero, s.groups, b.idx(1), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value g = loop.getInductionVar();
      Value prev = loop.getRegionIterArg(0), ok = loop.getRegionIterArg(1);
      Value pad = loop.getRegionIterArg(2), scol = loop.getRegionIterArg(3);
      Value o = b.fromI32(b.ldg(b.getI32Type(), offsets, g));
      Value total = p.kGrouped ? s.k : s.m; // token axis (padded for 2Dx2D)
      Value ordered = b.sge(o, prev);
      ok = b.land(ok, b.land(ordered, b.ule(o, total)));
      Value diff = b.sub(o, prev);
      Value size = b.maxsi(diff, b.idx(0));
      if (p.kGrouped) {
        pad = b.add(pad, b.roundUpc(size, 32));
        scol = b.add(scol, b.roundUpc(b.ceilDivc(size, 32), 4));
      } else {
        pad = b.add(pad, b.roundUpc(size, kBM));
      }
      scf::YieldOp::create(b, ValueRange{b.maxsi(o, prev), ok, pad, scol});
    }
    Value ok = loop.getResult(1), pad = loop.getResult(2), scol = loop.getResult(3);
    if (p.kGrouped) {
      // Padded token columns and K-group scale columns must fit.
      ok = b.land(ok, b.ule(pad, s.k));
      ok = b.land(ok, b.ule(scol, b.minsi(s.aScaleCols, s.bScaleCols)));
    } else {
      ok = b.land(ok, b.ule(pad, s.aScaleRows));
    }
  return ok;
}

/// The size parameters a kernel of kind `p` accepts (i1), compared as
/// signed 64-bit values: 1 <= G, 0 <= M, N and 1 <= K, each below 2^31 (TMA
/// coordinates and tile indices are 32-bit), G * N < 2^31 for 2D x 3D (the
/// rhs map's rows), fewer than 2^31 tiles per group; K a multiple of 32 (of
/// 128 for kMultipleOf128 or fp4 data); and the blocked scale extents the
/// tile walk derives from M, N, K (scale-layout.md): 2D x 3D lhs [a
/// non-negative multiple of 128, roundUp(K/32, 4)], rhs per expert
/// [roundUp(N, 128), roundUp(K/32, 4)]; 2D x 2D lhs rows roundUp(M, 128),
/// rhs rows roundUp(N, 128), columns >= 0 (checked against the offsets).
Value validateSizes(GB &b, const GemmKind &p, const GemmSizes &s) {
  Value zero = b.idx(0), one = b.idx(1), lim = b.idx(int64_t{1} << 31);
  auto inRange = [&](Value v, Value lo) {
    Value atLeast = b.sge(v, lo);
    return b.land(atLeast, b.slt(v, lim));
  };
  int64_t kQuantum = (p.kMultipleOf128 || p.aE2M1 || p.bE2M1) ? 128 : 32;
  Value groupsOk = inRange(s.groups, one);
  Value ok = b.land(groupsOk, inRange(s.k, one));
  Value mOk = inRange(s.m, zero);
  ok = b.land(ok, b.land(mOk, inRange(s.n, zero)));
  ok = b.land(ok, b.eq(b.rem(s.k, kQuantum), zero));
  // Tiles of one group: at most ceil(M/128) x ceil(N/tileN) (each < 2^24
  // and < 2^25 here, so the product does not overflow).
  Value mTiles = b.ceilDivc(s.m, kBM);
  Value tiles = b.mul(mTiles, b.ceilDivc(s.n, 64));
  ok = b.land(ok, b.slt(tiles, lim));
  if (!p.kGrouped)
    ok = b.land(ok, b.slt(b.mul(s.groups, s.n), lim));
  for (Value extent : {s.aScaleRows, s.aScaleCols, s.bScaleRows, s.bScaleCols})
    ok = b.land(ok, b.sge(extent, zero));
  ok = b.land(ok, b.eq(s.bScaleRows, b.roundUpc(s.n, kBM)));
  if (p.kGrouped)
    return b.land(ok, b.eq(s.aScaleRows, b.roundUpc(s.m, kBM)));
  Value cols = b.roundUpc(b.div(s.k, 32), 4);
  Value aColsOk = b.eq(s.aScaleCols, cols);
  ok = b.land(ok, b.land(aColsOk, b.eq(s.bScaleCols, cols)));
  return b.land(ok, b.eq(b.rem(s.aScaleRows, kBM), zero));
}

/// The prologue both kernels share: thread 0 validates the sizes and then
/// the offsets, writes the verdict (0 valid, 1 offsets rejected, 2 sizes
/// rejected) to shared memory at `flagAddr` and initializes the mbarriers
/// (address, expected arrivals), fenced for the async (TMA / tcgen05)
/// proxy; after a CTA barrier every thread reads the verdict and CTA 0
/// publishes it as the kernel's status. Returns the i1 "input valid".
Value emitPrologue(GB &b, KernelFrame &f, const GemmKind &p, Value flagAddr,
                   ArrayRef<std::pair<Value, int64_t>> barriers) {
  ifThen(b, b.eq(f.tid, b.idx(0)), [&] {
    // Offsets are read only for valid sizes (G bounds the loop).
    Value sizesOk = validateSizes(b, p, f.sizes);
    Value offsetsOk =
        ifYield(b, sizesOk, ValueRange{b.boolc(false)}, [&] {
          return SmallVector<Value>{validateOffsets(b, p, f.sizes, f.offsets)};
        })[0];
    Value zero32 = b.i32(0);
    Value offsetsVerdict = b.select(offsetsOk, zero32, b.i32(1));
    Value verdict = b.select(sizesOk, offsetsVerdict, b.i32(2));
    b.sts(verdict, flagAddr);
    for (auto [addr, count] : barriers) {
      Value barPtr = b.sptr(addr);
      NVVM::MBarrierInitOp::create(b, barPtr, b.i32(count), Value());
    }
    NVVM::FenceMbarrierInitOp::create(b);
    fenceAsyncShared(b);
  });
  gpu::BarrierOp::create(b);
  Value flag = b.lds(b.getI32Type(), flagAddr);
  Value firstCta = b.eq(f.bid, b.idx(0));
  Value publisher = b.land(firstCta, b.eq(f.tid, b.idx(0)));
  ifThen(b, publisher, [&] { b.stg(flag, f.status, b.idx(0)); });
  return b.eq(flag, b.i32(0));
}

} // namespace

int64_t mlir::mxmoe::kernels::getSm90GemmSharedBytes(const GemmConfig &cfg) {
  return SmemMap{cfg.tileN, cfg.stages, cfg.upcastBF16}.total();
}

gpu::GPUFuncOp mlir::mxmoe::kernels::buildGroupedMatmulSm90(
    gpu::GPUModuleOp module, StringRef name, const GemmKind &p,
    const GemmConfig &cfg) {
  MLIRContext *ctx = module.getContext();
  SmemMap map{cfg.tileN, cfg.stages, cfg.upcastBF16};
  KernelFrame f = createGemmKernel(module, name, p, cfg, kThreads, map.total());
  GB &b = *f.b;
  gpu::GPUFuncOp fn = f.fn;
  Value tmapA = f.tmapA, aScales = f.aScales, tmapB = f.tmapB,
        bScales = f.bScales, offsets = f.offsets, out = f.out,
        tid = f.tid, bid = f.bid, grid = f.grid,
        base = f.base;
  Generator gen(b, p, cfg, f.sizes, offsets);
  auto at = [&](int64_t off) { return b.add(base, b.idx(off)); };
  (void)fn;
  // The mbarrier of ring slot `st` in the array of 8-byte barriers at `off`.
  auto bar = [&](int64_t off, Value st) {
    Value array = at(off);
    return b.sptr(b.add(array, b.mulc(st, 8)));
  };

  // Prologue: full barriers expect the loader's arrive.expect_tx, empty
  // barriers one arrival per consumer warp.
  SmallVector<std::pair<Value, int64_t>> bars;
  for (int64_t s = 0; s < cfg.stages; ++s) {
    bars.push_back({at(map.fullBar(s)), 1});
    bars.push_back({at(map.emptyBarBase() + 8 * s), kConsumerArrivals});
  }
  for (int64_t i = 0; i < kTileRing; ++i) {
    bars.push_back({at(map.tileFullBar(i)), 1});
    bars.push_back({at(map.tileEmptyBar(i)), kConsumerArrivals});
  }
  if (!cfg.upcastBF16)
    for (int64_t s = 0; s < cfg.stages; ++s)
      bars.push_back({at(map.decodedBar(s)), kDecoderThreads});
  // The fp8 path's scale tables and zero block start as zeros (the A
  // tables' slots other than their block are never written); the stores
  // are fenced for the async proxy (wgmma reads them) before the
  // prologue's CTA barrier.
  if (!cfg.upcastBF16) {
    int64_t bytes = map.barOff() - map.tablesOff();
    auto v4 = VectorType::get({4}, b.getI32Type());
    Value zero4 = LLVM::ZeroOp::create(b, v4);
    for (int64_t off = 0; off < bytes; off += 16 * kThreads) {
      Value chunk = b.idx(off);
      Value at16 = b.add(chunk, b.mulc(tid, 16));
      ifThen(b, b.ult(at16, b.idx(bytes)), [&] {
        LLVM::StoreOp::create(b, zero4, b.sptr(b.add(at(map.tablesOff()), at16)), 16);
      });
    }
    fenceAsyncShared(b);
  }
  Value valid = emitPrologue(b, f, p, at(map.flagOff()), bars);

  // Register rebalancing (PTX setmaxnreg, per warpgroup): the loader
  // warpgroup (loads, tile records, scale decode) needs few registers, the
  // consumers hold the fp8 partial P, the scale product S (or, upcast, the
  // A/B fragments) and the accumulator (3 x tileN/2 registers). The pool is what the CTA got at
  // launch, 384 x 168 = 64512 (setmaxnreg.inc waits for free registers, so
  // a larger split deadlocks): 128*40 + 256*232 for 2D x 3D at tileN 128;
  // the K-group walk of 2D x 2D needs more loader registers (128*56 +
  // 256*224), and narrower tiles leave them to the loader (ptxas -v: no
  // spills; lit grouped-matmul-sm90).
  const int64_t loaderRegs = cfg.tileN < 128 ? 88 : p.kGrouped ? 56 : 40;
  const int64_t consumerRegs = (64512 - 128 * loaderRegs) / 256 / 8 * 8;

  ifThen(b, valid, [&] {
    Value wg = b.div(tid, 128);
    auto branch = scf::IfOp::create(b, b.eq(wg, b.idx(0)), true);
    // ---------------- loader warpgroup: loads (thread 0), tile records
    // (thread 32), scale decode (threads 64-127, fp8 path) ----------------
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&branch.getThenRegion().front());
      NVVM::SetMaxRegisterOp::create(b, loaderRegs,
                                     NVVM::SetMaxRegisterAction::decrease);
      // Publishes tile record `tc` (SmemMap::tileRecord): waits until the
      // consumers have read the entry's previous record, stores, and
      // arrives on the entry's full barrier (release; the consumers'
      // try_wait acquires).
      auto publish = [&](Value tc, Value kBlocks, Value bAtomRow,
                         Value rowsValid, Value colsValid, Value outBase) {
        Value slot = b.rem(tc, kTileRing);
        Value phase = b.rem(b.div(tc, kTileRing), 2);
        Value empty = bar(map.tileEmptyBar(0), slot);
        waitParity(b, empty, b.xori(phase, b.idx(1)));
        Value records = at(map.tileRecord(0));
        Value rec = b.add(records, b.mulc(slot, 32));
        Value fields[] = {kBlocks, bAtomRow, rowsValid, colsValid};
        for (int64_t i = 0; i < 4; ++i) {
          Value field = b.toI32(fields[i]);
          b.sts(field, b.add(rec, b.idx(4 * i)));
        }
        Value outBase64 = b.i64(outBase);
        b.sts(outBase64, b.add(rec, b.idx(16)));
        NVVM::MBarrierArriveOp::create(
            b, Type(), bar(map.tileFullBar(0), slot),
            Value(), NVVM::MemScopeKind::CTA, false);
      };
      // Walks the CTA's tiles and their pipeline stages in the consumers'
      // order: body(tile, s, ring slot of the CTA's running stage).
      auto forEachStage = [&](function_ref<void(const Tile &, Value, const RingSlot &)> body) {
        gen.forEachTile(bid, grid, [&](const Tile &T, Value it0) {
          Value zero = b.idx(0);
          auto loop = scf::ForOp::create(b, zero, T.kStages, b.idx(1),
                                         ValueRange{it0});
          OpBuilder::InsertionGuard g2(b);
          b.setInsertionPointToStart(loop.getBody());
          Value it = loop.getRegionIterArg(0);
          body(T, loop.getInductionVar(),
               ringSlot(b, base, it, cfg.stages, map.stageBytes()));
          scf::YieldOp::create(b, ValueRange{ringNext(b, it, cfg.stages)});
          return loop.getResult(0);
        });
      };
      ifThen(b, b.eq(tid, b.idx(0)), [&] {
        Value descA = b.genericPtr(tmapA), descB = b.genericPtr(tmapB);
        Value saG = aScales, sbG = bScales;
        int64_t txBytes = map.aBytes() + map.bBytes() + 2 * kAtom;
        forEachStage([&](const Tile &T, Value s, const RingSlot &slot) {
          Value st = slot.st, phase = slot.phase, stage = slot.stage;
          Value full = bar(map.barOff(), st);
          Value empty = bar(map.emptyBarBase(), st);
          loadTiles(b, stage, full, empty, phase, txBytes,
                    b.add(T.kCoord0, b.mulc(s, kBK)), map.aOff(), map.bOff(),
                    descA, descB, T);
          Value sOff = b.mulc(s, kAtom);
          Value saDst = b.add(stage, b.idx(map.saOff()));
          loadAtom(b, saDst, b.gep8(saG, b.add(T.aAtom0, sOff)), full);
          Value sbDst = b.add(stage, b.idx(map.sbOff()));
          loadAtom(b, sbDst, b.gep8(sbG, b.add(T.bAtom0, sOff)), full);
        });
      });
      // Thread 32 (its own warp: the loader's 40 registers hold only its
      // walk) walks the same tiles and publishes their records, then a
      // record with kBlocks = -1 after the CTA's last tile.
      ifThen(b, b.eq(tid, b.idx(32)), [&] {
        Value tc = gen.forEachTile(bid, grid, [&](const Tile &T, Value tc) {
          publish(tc, T.kBlocks, T.bAtomRow, T.rowsValid, T.colsValid, T.outBase);
          return b.add(tc, b.idx(1));
        });
        Value none = b.idx(0);
        publish(tc, b.idx(-1), none, none, none, none);
      });
      // fp8 path: threads 64-127 decode each stage's e8m0 scales
      // (decodeE8M0) into the stage's tf32 tables (SmemMap::tableBytes) as
      // soon as its TMA data lands: A rows r and r + 64 (one per consumer
      // warpgroup: sa of block kb in slot kb of A table kb) and the sbT
      // rows of tile columns c, c + 64 (sb of the four blocks, 0 for blocks
      // past the tile's K extent so that their slots add exact zeros). A
      // row's four e8m0 bytes are contiguous in the blocked atom (one
      // 32-bit load). The stores are fenced for the async proxy (wgmma
      // reads the tables) before the arrival on the stage's decoded
      // barrier, which the consumers wait on instead of the full barrier;
      // a stage's tables are rewritten only after its next fill, i.e.
      // after the consumers released it.
      if (!cfg.upcastBF16) {
        ifThen(b, b.sge(tid, b.idx(128 - kDecoderThreads)), [&] {
          Value d = b.sub(tid, b.idx(128 - kDecoderThreads));
          forEachStage([&](const Tile &T, Value s, const RingSlot &slot) {
            waitParity(b, bar(map.barOff(), slot.st), slot.phase);
            Value tables = at(map.tablesOff());
            Value tab = b.add(tables, b.mulc(slot.st, map.tableBytes()));
            auto atomWord = [&](int64_t atomOff, Value row) {
              Value atom = b.add(slot.stage, b.idx(atomOff));
              return b.lds(b.getI32Type(), b.add(atom, b.atomRowOffset(row)));
            };
            auto decodeByte = [&](Value word, int64_t kb) {
              Value shifted = b.shrui(word, 8 * kb);
              return decodeE8M0(b, b.andi(shifted, b.i32(0xff)));
            };
            for (int64_t h = 0; h < 2; ++h) {
              Value word = atomWord(map.saOff(), b.add(d, b.idx(64 * h)));
              for (int64_t kb = 0; kb < kBlocksPerStage; ++kb) {
                Value sa = decodeByte(word, kb);
                Value rowOff = b.mulc(d, 16);
                Value entry = b.add(rowOff, b.idx((h * kBlocksPerStage + kb) *
                                                      map.saTableBytes() +
                                                  4 * kb));
                b.sts(sa, b.add(tab, entry));
              }
            }
            for (int64_t c = 0; c < cfg.tileN; c += kDecoderThreads) {
              Value col = b.add(d, b.idx(c));
              ifThen(b, b.ult(col, b.idx(cfg.tileN)), [&] {
                Value word = atomWord(map.sbOff(), b.add(T.bAtomRow, col));
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
            NVVM::MBarrierArriveOp::create(
                b, Type(), bar(map.decodedBar(0), slot.st),
                Value(), NVVM::MemScopeKind::CTA, false);
          });
        });
      }
    }
    // ---------------- consumers: warpgroups 1 and 2 ----------------
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&branch.getElseRegion().front());
      NVVM::SetMaxRegisterOp::create(b, consumerRegs,
                                     NVVM::SetMaxRegisterAction::increase);
      Value w = b.sub(wg, b.idx(1));          // 0 or 1: rows 64w..64w+63
      Value t = b.rem(tid, 128);
      Value warp = b.div(t, 32), lane = b.rem(t, 32);
      Value warpRow = b.mulc(warp, 16);
      Value fragRow = b.add(warpRow, b.div(lane, 4)); // + 8 for i%4>=2
      Value fragCol = b.mulc(b.rem(lane, 4), 2);
      int64_t nFrag = cfg.tileN / 2; // f32 registers per thread
      auto f32 = b.getF32Type();
      // Hopper smem descriptor, K-major SWIZZLE_128B: layout 1 at bits
      // 62-63, SBO = 1024 B (8 rows x 128 B) >> 4 at 32-45, LBO 16 B >> 4
      // (unused for swizzled K-major) at 16-29 (PTX ISA 9.7.15.5.1).
      int64_t descConst = static_cast<int64_t>(::mxmoe::wgmmaSmemDescConstantPart(
          /*lboBytes=*/16, /*sboBytes=*/1024, ::mxmoe::WgmmaSwizzle::Swizzle128B));
      auto descOf = [&](Value addr) {
        Value enc = b.shrui(b.andi(addr, b.idx(0x3FFFF)), 4);
        return b.i64(b.ori(enc, b.idx(descConst)));
      };
      auto typeOf = [](bool e5m2) {
        return e5m2 ? NVVM::WGMMATypes::e5m2 : NVVM::WGMMATypes::e4m3;
      };

      // Epilogue: predicated stores of this thread's fragment (the fp32
      // accumulator of wgmma m64nNk*: element i of thread (warp, lane) is
      // row 16*warp + lane/4 + 8*((i/2)%2), column 8*(i/4) + 2*(lane%4) +
      // i%2, PTX ISA 9.7.15.5.2).
      auto epilogue = [&](const Tile &T, ArrayRef<Value> accv) {
        Type outTy = p.outF32 ? Type(f32) : Type(b.getBF16Type());
        auto field = [&](int64_t off, Type t) -> Value {
          return arith::IndexCastOp::create(b, b.getIndexType(),
                                            b.lds(t, b.add(T.record, b.idx(off))));
        };
        Value rowsValid = field(8, b.getI32Type());
        Value colsValid = field(12, b.getI32Type());
        Value outBase = field(16, b.getI64Type());
        // Elements i, i+1 are columns c, c+1 (c even) of one row: one 4-byte
        // (bf16) or 8-byte (f32) store when both are valid and the row
        // stride N is even (outBase and c are then even too, so the pair
        // is aligned); otherwise one predicated store each.
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
          Value pairOk = b.land(b.land(rowOk, b.ult(c1, colsValid)), evenN);
          auto pair = scf::IfOp::create(b, pairOk, /*withElseRegion=*/true);
          {
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPointToStart(&pair.getThenRegion().front());
            auto v2 = VectorType::get({2}, outTy);
            Value v = LLVM::UndefOp::create(b, v2);
            Value lo = cvt(accv[i]);
            v = LLVM::InsertElementOp::create(b, v, lo, b.i32(0));
            Value hi = cvt(accv[i + 1]);
            v = LLVM::InsertElementOp::create(b, v, hi, b.i32(1));
            LLVM::StoreOp::create(b, v, b.elemPtr(outTy, out, at0),
                                  p.outF32 ? 8 : 4);
            b.setInsertionPointToStart(&pair.getElseRegion().front());
            ifThen(b, b.land(rowOk, b.ult(c, colsValid)),
                   [&] { b.stg(cvt(accv[i]), out, at0); });
            ifThen(b, b.land(rowOk, b.ult(c1, colsValid)), [&] {
              Value second = cvt(accv[i + 1]);
              b.stg(second, out, b.add(at0, b.idx(1)));
            });
          }
        }
      };

      // A consumer's view of the CTA's it-th stage: waits until the slot's
      // tiles and scale atoms landed (its full barrier) and returns the
      // slot's shared-memory base and its empty barrier.
      // Waits on the stage's barrier in the array at `readyBars` (the full
      // barriers, or the fp8 path's decoded barriers) and returns the slot
      // and its empty barrier.
      auto acquireStage = [&](Value it, int64_t readyBars) -> std::pair<RingSlot, Value> {
        RingSlot slot = ringSlot(b, base, it, cfg.stages, map.stageBytes());
        waitParity(b, bar(readyBars, slot.st), slot.phase);
        return {slot, bar(map.emptyBarBase(), slot.st)};
      };

      // The per-tile loop over pipeline stages shared by both strategies:
      // carries the nFrag fp32 accumulator values (zero at the tile's start)
      // and the CTA's running stage counter; body(s, it, acc) returns the
      // updated accumulator. Returns (accumulator, next counter).
      auto stageLoop = [&](const Tile &T, Value it0,
                           function_ref<SmallVector<Value>(
                               Value, Value, SmallVector<Value>)> body)
          -> std::pair<SmallVector<Value>, Value> {
        SmallVector<Value> init(nFrag, b.f32(0.0f));
        init.push_back(it0);
        Value zero = b.idx(0);
        auto loop = scf::ForOp::create(b, zero, T.kStages, b.idx(1), init);
        {
          OpBuilder::InsertionGuard g2(b);
          b.setInsertionPointToStart(loop.getBody());
          Value it = loop.getRegionIterArgs().back();
          SmallVector<Value> yield =
              body(loop.getInductionVar(), it,
                   SmallVector<Value>(loop.getRegionIterArgs().drop_back()));
          yield.push_back(ringNext(b, it, cfg.stages));
          scf::YieldOp::create(b, yield);
        }
        return {SmallVector<Value>(loop.getResults().drop_back()),
                loop.getResults().back()};
      };

      // ---- bf16 upcast (GemmConfig::upcastBF16) ----
      // Stage `it` (the CTA's running stage counter; s-th of the tile) is
      // converted by both consumer warpgroups: every thread converts
      // 16-element chunks of its warpgroup's 64 A rows and of half of the
      // tile's B rows from the fp8 ring slot to the bf16 buffer of parity
      // it % 2 (exact: fp8 -> f16 by cvt.rn.f16x2.{e4m3,e5m2}x2, times the
      // block's 2^(e-127) in fp32, rounded to bf16 with no loss; blocks
      // past the tile's valid K blocks are written as zeros), then releases
      // the ring slot. Software pipeline: the 8 bf16 wgmma m64nNk16 of
      // stage s run while stage s+1 is converted into the other buffer;
      // wait_group 0 and a 256-thread barrier close the step, so the
      // accumulator is never read while in flight and no buffer is
      // rewritten before both warpgroups' wgmmas on it are done.
      auto upcastTile = [&](const Tile &T, Value it0) -> Value {
        auto accTy = LLVM::LLVMStructType::getLiteral(
            ctx, SmallVector<Type>(nFrag, f32));
        auto v4 = VectorType::get({4}, b.getI32Type());
        Type f8a = p.aE5M2 ? Type(Float8E5M2Type::get(ctx)) : Type(Float8E4M3FNType::get(ctx));
        Type f8b = p.bE5M2 ? Type(Float8E5M2Type::get(ctx)) : Type(Float8E4M3FNType::get(ctx));
        auto bufA = [&](Value it) {
          Value bufs = at(map.bfOff());
          return b.add(bufs, b.mulc(b.rem(it, 2), map.bfBufBytes()));
        };
        // One chunk: row `row` of a [rows x 128] fp8 tile, 16 elements at
        // K 16q..16q+15 (MX block q/2 of stage s).
        auto convert = [&](Value s, Value src, Value dst, int64_t dstAtomBytes,
                           Value row, Value q, Value atom, Value scaleRow,
                           Type elem) {
          Value sw = b.rem(row, 8);
          Value rowOff = b.mulc(row, 128);
          Value chunkOff = b.add(rowOff, b.mulc(b.xori(q, sw), 16));
          Value in = LLVM::LoadOp::create(b, v4, b.sptr(b.add(src, chunkOff)), 16);
          Value kb = b.div(q, 2);
          Value live = b.ult(b.add(b.mulc(s, kBlocksPerStage), kb), T.kBlocks);
          Value byte = arith::ExtUIOp::create(
              b, b.getI32Type(),
              b.lds(b.getI8Type(),
                    b.add(atom, b.add(b.atomRowOffset(scaleRow), kb))));
          Value scale = decodeE8M0(b, byte);
          Value s2 = vector::BroadcastOp::create(b, VectorType::get({2}, f32), scale);
          SmallVector<Value> words;
          for (int64_t i = 0; i < 4; ++i) {
            Value word = LLVM::ExtractElementOp::create(b, in, b.i32(i));
            Value bytes = LLVM::BitcastOp::create(
                b, VectorType::get({4}, b.getI8Type()), word);
            for (int64_t h = 0; h < 2; ++h) {
              Value pair = vector::ShuffleOp::create(
                  b, bytes, bytes, ArrayRef<int64_t>{2 * h, 2 * h + 1});
              Value h2 = NVVM::ConvertF8x2ToF16x2Op::create(
                  b, VectorType::get({2}, b.getF16Type()), pair,
                  b.getBoolAttr(false), TypeAttr::get(elem));
              Value f2 = arith::ExtFOp::create(b, VectorType::get({2}, f32), h2);
              Value m2 = arith::MulFOp::create(b, f2, s2);
              Value bf = arith::TruncFOp::create(
                  b, VectorType::get({2}, b.getBF16Type()), m2);
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
        };
        // Converts stage s (running counter it) and releases its ring slot.
        auto convertStage = [&](Value s, Value it) {
          auto [slot, empty] = acquireStage(it, map.barOff());
          Value stage = slot.stage;
          Value bfA = bufA(it), bfB = b.add(bfA, b.idx(map.bfBOff()));
          Value fp8A = b.add(stage, b.idx(map.aOff()));
          Value fp8B = b.add(stage, b.idx(map.bOff()));
          Value saAtom = b.add(stage, b.idx(map.saOff()));
          Value sbAtom = b.add(stage, b.idx(map.sbOff()));
          for (int64_t i = 0; i < 4; ++i) { // 64 rows x 8 chunks / 128
            Value c = b.add(t, b.idx(128 * i));
            Value wgRow = b.mulc(w, 64);
            Value row = b.add(wgRow, b.div(c, 8));
            convert(s, fp8A, bfA, kBM * 128, row, b.rem(c, 8), saAtom, row, f8a);
          }
          for (int64_t i = 0; i < cfg.tileN / 32; ++i) { // tileN/2 rows x 8 / 128
            Value c = b.add(t, b.idx(128 * i));
            Value wgCol = b.mulc(w, cfg.tileN / 2);
            Value n = b.add(wgCol, b.div(c, 8));
            Value q = b.rem(c, 8);
            convert(s, fp8B, bfB, cfg.tileN * 128, n, q, sbAtom,
                    b.add(T.bAtomRow, n), f8b);
          }
          // Generic-proxy shared-memory writes -> visible to wgmma (async
          // proxy); then every consumer thread releases the ring slot.
          fenceAsyncShared(b);
          NVVM::MBarrierArriveOp::create(b, Type(), empty, Value(),
                                         NVVM::MemScopeKind::CTA, false);
        };
        auto consumerBarrier = [&] {
          Value barId = b.i32(3);
          NVVM::BarrierOp::create(b, Type(), barId, b.i32(256), nullptr, Value());
        };
        ifThen(b, b.ult(b.idx(0), T.kStages), [&] {
          convertStage(b.idx(0), it0);
          consumerBarrier();
        });
        auto [accOut, itOut] = stageLoop(T, it0, [&](Value s, Value it,
                                                     SmallVector<Value> accIn)
                                                     -> SmallVector<Value> {
          Value bfA = bufA(it), bfB = b.add(bfA, b.idx(map.bfBOff()));
          Value acc = LLVM::UndefOp::create(b, accTy);
          for (int64_t i = 0; i < nFrag; ++i)
            acc = LLVM::InsertValueOp::create(b, acc, accIn[i], ArrayRef<int64_t>{i});
          NVVM::WgmmaFenceAlignedOp::create(b);
          for (int64_t kk = 0; kk < kBK / 16; ++kk) {
            int64_t j = kk / 4, koff = (kk % 4) * 32;
            // This warpgroup's 64 rows start 64 x 128 B into each A atom
            // (a multiple of the 1024-byte swizzle period).
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
                 [&] { convertStage(next, ringNext(b, it, cfg.stages)); });
          NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
          consumerBarrier();
          SmallVector<Value> accNext;
          for (int64_t i = 0; i < nFrag; ++i)
            accNext.push_back(LLVM::ExtractValueOp::create(b, acc, ArrayRef<int64_t>{i}));
          return accNext;
        });
        epilogue(T, accOut);
        return itOut;
      };

      auto fp8Tile = [&](const Tile &T, Value it0) -> Value {
        auto [accOut, itOut] = stageLoop(T, it0, [&](Value s, Value it,
                                                     SmallVector<Value> acc)
                                                     -> SmallVector<Value> {
          // The stage's tiles landed and its scales are decoded: the
          // decoder threads acquired the stage's full barrier (TMA
          // complete) before releasing its decoded barrier, which this
          // acquires, so the wgmmas below see the TMA data too.
          auto [slot, empty] = acquireStage(it, map.decodedBar(0));
          Value stage = slot.stage;
          Value tables = at(map.tablesOff());
          Value table = b.add(tables, b.mulc(slot.st, map.tableBytes()));
          Value saTab = b.add(table, b.mulc(w, kBlocksPerStage * map.saTableBytes()));
          Value sbTab = b.add(table, b.idx(map.sbTableOff()));
          Value aSlot = b.add(stage, b.idx(map.aOff()));
          Value aTile = b.add(aSlot, b.mulc(w, 64 * 128));
          Value bTile = b.add(stage, b.idx(map.bOff()));
          // Blocks past the group's end (2D x 2D, K % 128 != 0) are skipped
          // with uniform branches.
          bool allLive = !p.kGrouped && p.kMultipleOf128;
          auto live = [&](int64_t kb) -> Value {
            Value firstBlock = b.mulc(s, kBlocksPerStage);
            return b.ult(b.add(firstBlock, b.idx(kb)), T.kBlocks);
          };
          // The scale product S = sa (x) sb of MX block kb comes from the
          // tensor cores: a tf32 wgmma m64nNk8 of A table kb (row r: sa of
          // block kb in K slot kb, zeros in the other slots and, through
          // its LBO, in slots 4-7) and the sbT table (column c: sb of the
          // four blocks in slots 0-3; LBO 0 makes slots 4-7 repeat them,
          // multiplied by A's zeros). Operands are no-swizzle K-major:
          // 8-row core matrices of 8 x 16 B, SBO 128 B (PTX ISA 9.7.15.5.1).
          // Each output is one product of two powers of two plus exact
          // zeros: S is exact wherever sa * sb is a normal fp32 number.
          Value zeroBlock = at(map.zeroOff());
          auto descNoSwizzle = [&](Value addr, Value lbo) {
            Value enc = b.shrui(b.andi(addr, b.idx(0x3FFFF)), 4);
            enc = b.ori(enc, b.shli(b.shrui(lbo, 4), 16));
            return b.i64(b.ori(enc, b.idx(int64_t(128 >> 4) << 32)));
          };
          auto scaleProduct = [&](int64_t kb, int64_t n) -> Value {
            auto ty = LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(n / 2, f32));
            Value aAddr = b.add(saTab, b.idx(kb * map.saTableBytes()));
            Value aDesc = descNoSwizzle(aAddr, b.sub(zeroBlock, aAddr));
            Value bDesc = descNoSwizzle(sbTab, b.idx(0));
            return wgmmaKMajor(b, ty, LLVM::UndefOp::create(b, ty), aDesc, bDesc,
                               n, 8, NVVM::WGMMATypes::tf32,
                               NVVM::WGMMATypes::tf32, /*accumulate=*/false);
          };
          auto fmaInto = [&](Value P, Value S, int64_t n) {
            for (int64_t i = 0; i < n / 2; ++i) {
              Value pi = LLVM::ExtractValueOp::create(b, P, ArrayRef<int64_t>{i});
              Value si = LLVM::ExtractValueOp::create(b, S, ArrayRef<int64_t>{i});
              acc[i] = LLVM::FMAOp::create(b, pi, si, acc[i]);
            }
          };
          // One MX block kb: the block's scale product S and a wgmma
          // m64nNk32 (N = tileN) into a fresh fp32 partial P (scale-d 0),
          // one wgmma group; wait; acc += P * S, one FFMA per element (P,
          // S and the accumulator share the D fragment layout, PTX
          // 9.7.15.5.2). Measured on the H200 (bench/RESULTS.md, "Where
          // the time goes"): whole-tile blocks with wait 0 match or beat
          // software pipelines over column chunks (halves or quarters, one
          // or two chunks in flight: the chunks re-read A and the tables),
          // and the tf32 scale product beats an FMUL product on the CUDA
          // cores (issue-bound); the two consumer warpgroups keep the
          // tensor cores busy in turn. For a pipeline, note that ptxas
          // silently serializes wgmmas in flight when each one's
          // accumulator operand is a fresh undef (it may overlap their
          // registers): pass the consumed chunk's struct back as the in/out
          // operand of the wgmma that reuses it (scale-d 0 ignores it).
          auto block = [&](int64_t kb) {
            int64_t n = cfg.tileN;
            auto ty = LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(n / 2, f32));
            NVVM::WgmmaFenceAlignedOp::create(b);
            Value S = scaleProduct(kb, n);
            Value pInit = LLVM::UndefOp::create(b, ty);
            Value aDesc = descOf(b.add(aTile, b.idx(32 * kb)));
            Value bDesc = descOf(b.add(bTile, b.idx(32 * kb)));
            Value P = wgmmaKMajor(b, ty, pInit, aDesc, bDesc, n, 32,
                                  typeOf(p.aE5M2), typeOf(p.bE5M2),
                                  /*accumulate=*/false);
            NVVM::WgmmaGroupSyncAlignedOp::create(b);
            NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
            fmaInto(P, S, n);
          };
          // Full stages run their four blocks straight; the partial stage
          // a tile can end with (2D x 2D groups, K % 128) runs each live
          // block behind a uniform branch (liveness only decreases along kb).
          auto allBlocks = [&]() -> SmallVector<Value> {
            for (int64_t kb = 0; kb < kBlocksPerStage; ++kb)
              block(kb);
            return acc;
          };
          auto partial = [&]() -> SmallVector<Value> {
            for (int64_t kb = 0; kb < kBlocksPerStage; ++kb) {
              SmallVector<Value> before = acc; // block() updates acc
              acc = ifYield(b, live(kb), before, [&]() -> SmallVector<Value> {
                block(kb);
                return acc;
              });
            }
            return acc;
          };
          acc = allLive ? allBlocks() : partial();
          // Release the slot: every consumer thread arrives once.
          NVVM::MBarrierArriveOp::create(b, Type(), empty, Value(),
                                         NVVM::MemScopeKind::CTA, false);
          return acc;
        });
        epilogue(T, accOut);
        return itOut;
      };
      // The consumers' tile loop reads the loader's tile records (no tile
      // walk of their own: its state would cost registers the fp32
      // partials need): wait for entry tc % kTileRing, read the record,
      // release the entry (every consumer thread arrives), stop at
      // kStages = -1.
      {
        Type idx = b.getIndexType();
        SmallVector<Type> fwdTypes(5, idx), carriedTypes(2, idx);
        auto loop = scf::WhileOp::create(b, fwdTypes,
                                         ValueRange{b.idx(0), b.idx(0)});
        OpBuilder::InsertionGuard g2(b);
        Block *before = b.createBlock(&loop.getBefore(), {}, carriedTypes,
                                      SmallVector<Location>(2, b.getLoc()));
        Value it = before->getArgument(0), tc = before->getArgument(1);
        Value slot = b.rem(tc, kTileRing);
        Value phase = b.rem(b.div(tc, kTileRing), 2);
        waitParity(b, bar(map.tileFullBar(0), slot), phase);
        Value records = at(map.tileRecord(0));
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
        Value itOut = cfg.upcastBF16 ? upcastTile(T, after->getArgument(0))
                                     : fp8Tile(T, after->getArgument(0));
        // The epilogue has read the record: release its entry.
        NVVM::MBarrierArriveOp::create(
            b, Type(),
            bar(map.tileEmptyBar(0), b.rem(tcA, kTileRing)),
            Value(), NVVM::MemScopeKind::CTA, false);
        scf::YieldOp::create(b, ValueRange{itOut, b.add(tcA, b.idx(1))});
      }
    }
  });
  gpu::ReturnOp::create(b);
  return f.fn;
}

//===----------------------------------------------------------------------===//
// sm_100a: tcgen05 block-scaled MMA
//===----------------------------------------------------------------------===//

namespace {

constexpr int64_t kThreads100 = 192; // TMA warp, MMA warp, 4 epilogue warps

/// Shared memory of the tcgen05 kernel (offsets from the 1024-aligned base).
struct SmemMap100 {
  int64_t tileN, stages;
  int64_t sfbAtoms() const { return tileN > 128 ? 2 : 1; }
  int64_t aBytes() const { return kBM * kBK; }
  int64_t bBytes() const { return tileN * kBK; }
  int64_t stageBytes() const {
    return ::mxmoe::roundUp(aBytes() + bBytes() + kAtom * (1 + sfbAtoms()),
                            1024);
  }
  int64_t saOff() const { return aBytes() + bBytes(); }
  int64_t sbOff() const { return saOff() + kAtom; }
  int64_t barOff() const { return stages * stageBytes(); }
  int64_t fullBar() const { return barOff(); }            // + 8 s
  int64_t emptyBar() const { return barOff() + 64; }      // + 8 s
  int64_t tmemFullBar() const { return barOff() + 128; }
  int64_t tmemEmptyBar() const { return barOff() + 136; }
  int64_t tmemSlot() const { return barOff() + 144; }
  int64_t flagOff() const { return barOff() + 148; }
  int64_t total() const { return barOff() + 256 + 1024; }
};

/// TMEM columns: the fp32 accumulator (tileN columns, lanes = tile rows)
/// then, per stage, 4 SFA columns and 4 per 128 N of SFB (tcgen05.md
/// section 6).
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

} // namespace

int64_t mlir::mxmoe::kernels::getSm100GemmSharedBytes(const GemmConfig &cfg) {
  return SmemMap100{cfg.tileN, cfg.stages}.total();
}

int64_t mlir::mxmoe::kernels::getSm100GemmTmemColumns(const GemmConfig &cfg) {
  return TmemMap{cfg.tileN, cfg.stages}.used();
}

gpu::GPUFuncOp mlir::mxmoe::kernels::buildGroupedMatmulSm100(
    gpu::GPUModuleOp module, StringRef name, const GemmKind &p,
    const GemmConfig &cfg) {
  MLIRContext *ctx = module.getContext();
  SmemMap100 map{cfg.tileN, cfg.stages};
  TmemMap tmem{cfg.tileN, cfg.stages};
  KernelFrame f = createGemmKernel(module, name, p, cfg, kThreads100,
                                   map.total());
  f.fn->setAttr("mxmoe.tmem_columns", f.ob->getI64IntegerAttr(tmem.allocated()));
  GB &b = *f.b;
  Value base = f.base, tid = f.tid, bid = f.bid, grid = f.grid;
  Generator gen(b, p, cfg, f.sizes, f.offsets);
  auto at = [&](int64_t off) { return b.add(base, b.idx(off)); };
  auto cta1 = NVVM::CTAGroupKindAttr::get(ctx, NVVM::CTAGroupKind::CTA_1);
  auto fence = [&](NVVM::Tcgen05FenceKind k) {
    NVVM::Tcgen05FenceOp::create(b, NVVM::Tcgen05FenceKindAttr::get(ctx, k));
  };
  Type tptr = b.ptr(6);
  auto bar = [&](int64_t off, Value st) {
    Value array = at(off);
    return b.sptr(b.add(array, b.mulc(st, 8)));
  };

  // Prologue: full barriers expect the loader's arrive.expect_tx, empty
  // barriers one tcgen05.commit, the accumulator barriers one commit and
  // the 128 epilogue threads.
  SmallVector<std::pair<Value, int64_t>> bars;
  for (int64_t s = 0; s < cfg.stages; ++s) {
    bars.push_back({at(map.fullBar() + 8 * s), 1});
    bars.push_back({at(map.emptyBar() + 8 * s), 1});
  }
  bars.push_back({at(map.tmemFullBar()), 1});
  bars.push_back({at(map.tmemEmptyBar()), 128});
  Value valid = emitPrologue(b, f, p, at(map.flagOff()), bars);
  Value warp = b.div(tid, 32), lane = b.rem(tid, 32);

  ifThen(b, valid, [&] {
    // Warp 1 allocates the TMEM columns (power of two >= 32) and writes the
    // base address to shared memory (tcgen05.alloc is warp-wide).
    ifThen(b, b.eq(warp, b.idx(1)), [&] {
      Value slotPtr = b.sptr(at(map.tmemSlot()));
      NVVM::Tcgen05AllocOp::create(b, slotPtr, b.i32(tmem.allocated()), cta1);
      NVVM::Tcgen05RelinquishAllocPermitOp::create(b, cta1);
    });
    fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
    gpu::BarrierOp::create(b);
    fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
    Value tbase = b.fromI32(b.lds(b.getI32Type(), at(map.tmemSlot())));
    auto taddr = [&](Value v) {
      return LLVM::IntToPtrOp::create(b, tptr, b.toI32(v)).getResult();
    };

    // ---------------- warp 0: TMA loader ----------------
    ifThen(b, b.eq(tid, b.idx(0)), [&] {
      Value descA = b.genericPtr(f.tmapA), descB = b.genericPtr(f.tmapB);
      Value saG = f.aScales, sbG = f.bScales;
      int64_t txBytes = map.aBytes() + map.bBytes() + kAtom * (1 + map.sfbAtoms());
      gen.forEachTile(bid, grid, [&](const Tile &T, Value it0) {
        Value zero = b.idx(0);
        auto loop = scf::ForOp::create(b, zero, T.kStages, b.idx(1),
                                       ValueRange{it0});
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(loop.getBody());
        Value s = loop.getInductionVar(), it = loop.getRegionIterArg(0);
        RingSlot slot = ringSlot(b, base, it, cfg.stages, map.stageBytes());
        Value st = slot.st, phase = slot.phase, stage = slot.stage;
        Value full = bar(map.fullBar(), st);
        Value empty = bar(map.emptyBar(), st);
        Value kc = b.add(T.kCoord0, b.mulc(s, kBK));
        loadTiles(b, stage, full, empty, phase, txBytes, kc, 0, map.aBytes(),
                  descA, descB, T);
        Value sOff = b.mulc(s, kAtom);
        Value saDst = b.add(stage, b.idx(map.saOff()));
        Value saSrc = b.gep8(saG, b.add(T.aAtom0, sOff));
        loadAtom(b, saDst, saSrc, bar(map.fullBar(), st));
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
          loadAtom(b, sbDst, sbSrc, bar(map.fullBar(), st));
        }
        scf::YieldOp::create(b, ValueRange{ringNext(b, it, cfg.stages)});
        return loop.getResult(0);
      });
    });

    // ---------------- warp 1: MMA issuer (one thread) ----------------
    ::mxmoe::Tcgen05BlockScaledConfig icfg;
    auto elemKind = [](bool e5m2, bool e2m1) {
      return e2m1   ? ::mxmoe::MXElemKind::E2M1
             : e5m2 ? ::mxmoe::MXElemKind::E5M2
                    : ::mxmoe::MXElemKind::E4M3;
    };
    icfg.aType = elemKind(p.aE5M2, p.aE2M1);
    icfg.bType = elemKind(p.bE5M2, p.bE2M1);
    icfg.m = kBM;
    icfg.n = static_cast<unsigned>(cfg.tileN);
    uint32_t idescBase = ::mxmoe::encodeTcgen05BlockScaledInstrDesc(icfg);
    int64_t smemDescConst = static_cast<int64_t>(::mxmoe::tcgen05SmemDescConstantPart(
        /*lboBytes=*/16, /*sboBytes=*/1024, ::mxmoe::Tcgen05Swizzle::Swizzle128B));
    int64_t sfDescConst =
        static_cast<int64_t>(::mxmoe::kTcgen05ScaleFactorSrcDescConstant);
    auto desc = [&](int64_t constant, Value addr) {
      Value enc = b.shrui(b.andi(addr, b.idx(0x3FFFF)), 4);
      return b.i64(b.ori(enc, b.idx(constant)));
    };
    ifThen(b, b.eq(tid, b.idx(32)), [&] {
      // Walk state + the count of accumulating tiles (TMEM barrier parity).
      // Carried: the ring's stage counter and the count of accumulating
      // tiles (parity of the TMEM barriers).
      gen.forEachTile(bid, grid, 2, [&](const Tile &T, ValueRange c) -> SmallVector<Value> {
        Value it0 = c[0], tiles = c[1];
        Value has = b.ult(b.idx(0), T.kStages);
        SmallVector<Value> res = ifYield(b, has, c, [&]() -> SmallVector<Value> {
          // Wait until the epilogue drained the accumulator of the previous
          // tile (parity trick as for the ring).
          Value accEmpty = b.sptr(at(map.tmemEmptyBar()));
          Value parity = b.rem(tiles, 2);
          waitParity(b, accEmpty, b.xori(parity, b.idx(1)));
          fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
          Value zero = b.idx(0);
          auto loop = scf::ForOp::create(b, zero, T.kStages, b.idx(1),
                                         ValueRange{it0});
          {
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPointToStart(loop.getBody());
            Value s = loop.getInductionVar(), it = loop.getRegionIterArg(0);
            RingSlot slot = ringSlot(b, base, it, cfg.stages, map.stageBytes());
            Value st = slot.st, phase = slot.phase, stage = slot.stage;
            waitParity(b, bar(map.fullBar(), st), phase);
            fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
            // Scales of the stage: smem atoms -> TMEM (tcgen05.cp
            // 32x128b.warpx4, one 512-byte atom = 4 columns), per-stage
            // columns so no copy overwrites scales an MMA still reads.
            Value accCols = b.idx(cfg.tileN);
            Value sfCol =
                b.add(tbase, b.add(accCols, b.mulc(st, tmem.sfCols())));
            auto cp = [&](Value col, Value smemAddr) {
              Value dst = taddr(col);
              NVVM::Tcgen05CpOp::create(
                  b,
                  NVVM::Tcgen05CpShapeAttr::get(ctx, NVVM::Tcgen05CpShape::SHAPE_32x128b),
                  cta1,
                  NVVM::Tcgen05CpMulticastAttr::get(ctx, NVVM::Tcgen05CpMulticast::WARPX4),
                  nullptr, dst, desc(sfDescConst, smemAddr));
            };
            cp(sfCol, b.add(stage, b.idx(map.saOff())));
            for (int64_t a = 0; a < map.sfbAtoms(); ++a) {
              Value atomCol = b.add(sfCol, b.idx(4 + 4 * a));
              cp(atomCol, b.add(stage, b.idx(map.sbOff() + a * kAtom)));
            }
            // N = 64 tiles read the upper 64 rows of their B atom from
            // columns +2, +3 (TMEM column j of a 32x128b copy holds rows
            // 32j + lane).
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
                Value aDesc = desc(smemDescConst, b.add(stage, b.idx(32 * kb)));
                Value bDesc = desc(smemDescConst,
                                   b.add(stage, b.idx(map.aBytes() + 32 * kb)));
                Value idescV = b.i32(static_cast<int64_t>(idesc));
                Value sfaAddr = taddr(sfCol);
                Value sfbAddr = taddr(sfbCol);
                NVVM::Tcgen05MMABlockScaleOp::create(
                    b, NVVM::MMABlockScaleKindAttr::get(ctx, NVVM::MMABlockScaleKind::MXF8F6F4),
                    cta1,
                    NVVM::Tcgen05MMABlockScaleAttr::get(ctx, NVVM::Tcgen05MMABlockScale::BLOCK32),
                    nullptr, dAddr, aDesc, bDesc, idescV, accumulate, sfaAddr,
                    sfbAddr);
              });
            }
            // Free the slot once these MMAs have read it.
            NVVM::Tcgen05CommitOp::create(b, bar(map.emptyBar(), st), Value(), cta1);
            scf::YieldOp::create(b, ValueRange{ringNext(b, it, cfg.stages)});
          }
          // Accumulator complete -> epilogue.
          NVVM::Tcgen05CommitOp::create(b, b.sptr(at(map.tmemFullBar())), Value(), cta1);
          return {loop.getResult(0), b.add(tiles, b.idx(1))};
        });
        return res;
      });
    });

    // ---------------- warps 2..5: epilogue ----------------
    ifThen(b, b.ule(b.idx(2), warp), [&] {
      Value quarter = b.rem(warp, 4);       // TMEM lanes 32q..32q+31
      Value row = b.add(b.mulc(quarter, 32), lane);
      Type outTy = p.outF32 ? Type(b.getF32Type()) : Type(b.getBF16Type());
      gen.forEachTile(bid, grid, [&](const Tile &T, Value tiles) {
        Value has = b.ult(b.idx(0), T.kStages);
        Value rowOk = b.ult(row, T.rowsValid);
        Value rowBase = b.add(T.outBase, b.mul(row, T.outStride));
        auto storeChunk = [&](int64_t c0, function_ref<Value(int64_t)> value) {
          ifThen(b, rowOk, [&] {
            for (int64_t j = 0; j < 32; ++j) {
              Value c = b.idx(c0 + j);
              ifThen(b, b.ult(c, T.colsValid), [&] {
                Value x = value(j);
                b.stg(x, f.out, b.add(rowBase, c));
              });
            }
          });
        };
        SmallVector<Value> res = ifYield(b, has, ValueRange{tiles}, [&]() -> SmallVector<Value> {
          Value accFull = b.sptr(at(map.tmemFullBar()));
          waitParity(b, accFull, b.rem(tiles, 2));
          fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
          for (int64_t c0 = 0; c0 < cfg.tileN; c0 += 32) {
            // tcgen05.ld 32x32b.x32: thread t of warp quarter q reads row
            // 32q + t, columns c0..c0+31 (PTX 9.7.16.8.3).
            Value lanes = b.shli(b.mulc(quarter, 32), 16);
            Value addr = b.add(tbase, b.add(lanes, b.idx(c0)));
            auto vt = VectorType::get({32}, b.getI32Type());
            Value v = NVVM::Tcgen05LdOp::create(
                b, vt, nullptr,
                NVVM::Tcgen05LdStShapeAttr::get(ctx, NVVM::Tcgen05LdStShape::SHAPE_32X32B),
                taddr(addr), Value());
            NVVM::Tcgen05WaitOp::create(
                b, NVVM::Tcgen05WaitKindAttr::get(ctx, NVVM::Tcgen05WaitKind::LOAD));
            storeChunk(c0, [&](int64_t j) -> Value {
              Value bits = LLVM::ExtractElementOp::create(b, v, b.i32(j));
              Value x = b.bitcast(b.getF32Type(), bits);
              return p.outF32 ? x : arith::TruncFOp::create(b, outTy, x).getResult();
            });
          }
          // Release the accumulator to the MMA warp.
          fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
          NVVM::MBarrierArriveOp::create(b, Type(), b.sptr(at(map.tmemEmptyBar())),
                                         Value(), NVVM::MemScopeKind::CTA, false);
          return {b.add(tiles, b.idx(1))};
        });
        // Tiles without K work (rows past the last offset, empty groups'
        // weight gradients): zeros, no TMEM round trip.
        ifThen(b, b.eq(has, b.boolc(false)), [&] {
          Value zero = p.outF32 ? b.f32(0.0f)
                                : arith::ConstantOp::create(b, b.getFloatAttr(outTy, 0.0)).getResult();
          for (int64_t c0 = 0; c0 < cfg.tileN; c0 += 32)
            storeChunk(c0, [&](int64_t) { return zero; });
        });
        return res[0];
      });
    });

    // The allocating warp frees the columns after every reader is done
    // (warps 0 and 1 reconverge first: one lane of each ran a role loop).
    NVVM::SyncWarpOp::create(b, b.i32(-1));
    fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
    gpu::BarrierOp::create(b);
    ifThen(b, b.eq(warp, b.idx(1)), [&] {
      fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
      Value tmemAddr = taddr(tbase);
      NVVM::Tcgen05DeallocOp::create(b, tmemAddr, b.i32(tmem.allocated()), cta1);
    });
  });
  gpu::ReturnOp::create(b);
  return f.fn;
}
