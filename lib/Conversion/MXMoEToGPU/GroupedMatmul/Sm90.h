//===- Sm90.h - roles of the sm_90a grouped-GEMM kernel ---------*- C++ -*-===//
//
// The classes buildGroupedMatmulSm90 builds the Hopper kernel with:
// Sm90Kernel (frame, prologue, loader warpgroup; Sm90.cpp) and Sm90Consumer
// (consumer warpgroups: tile loop, epilogue and the fp8 strategy in
// Sm90.cpp, the bf16 upcast strategy in Sm90Upcast.cpp, the MX128
// one-promotion-per-stage strategy in Sm90Mx128.cpp). References:
// Common.h.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_LIB_CONVERSION_MXMOETOGPU_GROUPEDMATMUL_SM90_H
#define MXMOE_LIB_CONVERSION_MXMOETOGPU_GROUPEDMATMUL_SM90_H

#include "Common.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::mxmoe::kernels::gemm {

/// One wgmma.mma_async m64nNkK with both operands K-major in shared memory
/// (descriptors `aDesc`, `bDesc`) and an fp32 accumulator struct `acc` of
/// type `accTy`; `accumulate` false writes D = A*B (scale-d 0).
Value wgmmaKMajor(KB &b, Type accTy, Value acc, Value aDesc, Value bDesc,
                  int64_t n, int64_t k, NVVM::WGMMATypes aType,
                  NVVM::WGMMATypes bType, bool accumulate);

/// The sm_90a kernel under construction: frame, builder, configuration,
/// shared-memory map and tile scheduler; its methods emit the roles.
class Sm90Kernel {
public:
  Sm90Kernel(KernelFrame &f, const GemmKind &p, const GemmConfig &cfg,
             const Sm90SmemMap &map)
      : f(f), b(*f.b), p(p), cfg(cfg), map(map), ctx(b.getContext()),
        gen(b, p, cfg, f.sizes, f.offsets) {}

  /// Emits the kernel body: the prologue, then the loader warpgroup and
  /// the consumer warpgroups (each with its setmaxnreg share).
  void build();

  KernelFrame &f;
  KB &b;
  const GemmKind &p;
  const GemmConfig &cfg;
  const Sm90SmemMap map;
  MLIRContext *ctx;
  Generator gen; ///< the tile scheduler (loader-side roles)

private:
  /// The mbarriers the prologue initializes (address, expected arrivals).
  SmallVector<std::pair<Value, int64_t>> prologueBarriers();
  /// fp8 path: zeroes the scale tables and the zero block.
  void zeroScaleTables();
  /// Cluster barrier of every thread (cfg.clusterM > 1).
  void clusterSync();

  // Loader warpgroup (warpgroup 0).
  void emitLoaderWarpgroup(int64_t regs);
  /// Thread 0: TMA tile loads and scale-atom bulk copies of every stage.
  void emitLoader();
  /// Thread 32: the tile records for the consumers.
  void emitTileRecordPublisher();
  /// Thread 33 (cfg.clusterM > 1): the cluster's slot handshake and this
  /// CTA's share of each B tile, multicast.
  void emitMulticaster();
  void publishRecord(Value tc, Value kBlocks, Value bAtomRow, Value rowsValid,
                     Value colsValid, Value outBase);
  /// Threads 64-127 (fp8 path): scale decode into the tf32 tables.
  void emitScaleDecoder();
  void decodeStage(const Tile &T, Value d, Value s, const RingSlot &slot);
  /// MX128 (Sm90Mx128.cpp): the stage's fp32 row (and column) scales.
  void decodeStageMx128(const Tile &T, Value d, Value s, const RingSlot &slot);
  /// The four e8m0 bytes of row `row` of the scale atom at `atomOff` of
  /// ring slot `slot` (one i32 load).
  Value atomWord(const RingSlot &slot, int64_t atomOff, Value row);
  /// fp32 scale of byte `kb` of an atom word.
  Value decodeByte(Value word, int64_t kb);
};

/// Addresses of one fp8 ring stage's operands (index values): this
/// warpgroup's A tables and A tile, the sbT table, the B tile and the zero
/// block.
struct Fp8Operands {
  Value saTab, sbTab, aTile, bTile, zeroBlock;
};

/// A tile's epilogue bounds from its record (index values).
struct TileBounds {
  Value rowsValid, colsValid, outBase;
};

/// Consumer warpgroups 1 and 2: each owns 64 rows of the 128-row tile;
/// they read the loader's tile records, run the MMAs of every stage and
/// store their fragment.
class Sm90Consumer {
public:
  /// Emits the thread's fragment coordinates (warpgroup `wg` is 1 or 2).
  Sm90Consumer(Sm90Kernel &k, Value wg);
  /// The consumers' tile loop over the loader's tile records.
  void emitTileLoop();

private:
  Sm90Kernel &k;
  KB &b;
  const GemmKind &p;
  const GemmConfig &cfg;
  const Sm90SmemMap &map;
  MLIRContext *ctx;
  Type f32;
  int64_t nFrag;          ///< f32 registers per thread
  uint64_t descConst;     ///< constant part of descOf's descriptors
  Value w, t;             ///< w 0 or 1 (rows 64w..64w+63); t in [0, 128)
  Value fragRow, fragCol; ///< fragment row (+ 8 for i%4>=2) and column

  /// Hopper smem descriptor of a K-major SWIZZLE_128B operand at `addr`.
  Value descOf(Value addr);
  std::pair<RingSlot, Value> acquireStage(Value it, int64_t readyBars);
  std::pair<SmallVector<Value>, Value> stageLoop(
      const Tile &T, Value it0,
      function_ref<SmallVector<Value>(Value, Value, SmallVector<Value>)> body);
  TileBounds readTileBounds(const Tile &T);
  void emitFragmentEpilogue(const Tile &T, ArrayRef<Value> fragment);
  void storeFragment(const Tile &T, const TileBounds &bounds,
                     ArrayRef<Value> accv);
  std::pair<Value, Value> addOutputPair(const Tile &T, const TileBounds &bounds,
                                        Value r, Value c, Value lo, Value hi);

  // fp8 wgmma with tf32 scale products (option B).
  Value emitFp8Consumer(const Tile &T, Value it0);
  SmallVector<Value> fp8Stage(const Tile &T, Value s, Value it,
                              SmallVector<Value> acc);
  Value scaleProduct(const Fp8Operands &ops, int64_t kb, int64_t n);
  void fp8Block(const Fp8Operands &ops, int64_t kb, SmallVector<Value> &acc);
  // MX128: chained k32 wgmmas, one promotion per stage (Sm90Mx128.cpp).
  SmallVector<Value> mx128Stage(const Tile &T, Value s, Value it,
                                SmallVector<Value> acc);
  SmallVector<Value> mx128Scales(const Tile &T, Value table);
  SmallVector<Value> mx128TwoBlockScales(const Tile &T, Value table,
                                         Value rowTop, Value top, Value bottom);
  Value mx128Mma(Value aTile, Value bTile, int64_t blocks);
  Value mx128LiveMma(Value aTile, Value bTile, Value live, int64_t blocks);
  void mx128Epilogue(const Tile &T, ArrayRef<Value> accv);
  void mx128StageRows(const Tile &T, ArrayRef<Value> accv,
                      const TileBounds &bounds);
  void mx128DrainStores();
  void warpgroupBarrier();

  // bf16 upcast (option A).
  Value emitUpcastConsumer(const Tile &T, Value it0);
  SmallVector<Value> upcastStage(const Tile &T, Value s, Value it,
                                 SmallVector<Value> accIn);
  Value upcastBuffer(Value it);
  void convertStage(const Tile &T, Value s, Value it);
  void convertChunk(const Tile &T, Value s, Value src, Value dst,
                    int64_t dstAtomBytes, Value row, Value q, Value atom,
                    Value scaleRow, Type elem);
  void consumerBarrier();
};

} // namespace mlir::mxmoe::kernels::gemm

#endif // MXMOE_LIB_CONVERSION_MXMOETOGPU_GROUPEDMATMUL_SM90_H
