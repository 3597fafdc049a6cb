//===- Common.h - shared parts of the MX grouped-GEMM kernels ---*- C++ -*-===//
//
// What the sm_90a (Sm90.cpp) and sm_100a (Sm100.cpp) generators of the
// persistent grouped-GEMM kernels share (all built with KB, the builder of
// ../KernelBuilder.h): the shared-memory maps, the synchronization helpers,
// the pipeline ring (ringSlot / ringNext / ringLoop), the tile scheduler
// (Generator: the persistent tile walk over the groups read from the device
// offsets), the kernel frame (createGemmKernel), the loader steps and the
// prologue with its size and offsets validation. See ../GroupedMatmul.h for
// the strategies.
//
// PTX references: wgmma (PTX ISA 9.7.15: m64nNk32 e4m3/e5m2 -> f32,
// shared-memory matrix descriptor 9.7.15.5.1, D fragment layout
// 9.7.15.5.2), cp.async.bulk.tensor and cp.async.bulk (9.7.9.25), mbarrier
// (9.7.13.15). MX math: OCP MX v1.0 section 5 (value = q * 2^(b - 127)).
// Layouts: torchao to_blocked, CUTLASS sm100_blockscaled_layout.hpp
// (blocked 128x4 atoms of 512 bytes); tcgen05: PTX ISA 9.7.16, CUTLASS
// cute/arch/mma_sm100_desc.hpp.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_LIB_CONVERSION_MXMOETOGPU_GROUPEDMATMUL_COMMON_H
#define MXMOE_LIB_CONVERSION_MXMOETOGPU_GROUPEDMATMUL_COMMON_H

#include "../GroupedMatmul.h"
#include "../KernelBuilder.h"

#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

#include <memory>

namespace mlir::mxmoe::kernels::gemm {

constexpr int64_t kBM = 128;           // rows per tile (2 x wgmma m64)
constexpr int64_t kBK = 128;           // K per stage = 4 MX blocks
constexpr int64_t kBlocksPerStage = 4; // MX blocks (k32 wgmmas) per stage
constexpr int64_t kAtom = 512;         // one blocked 128x4 scale atom
constexpr StringLiteral kSmemGlobal = "__mxmoe_dynamic_smem";

//===----------------------------------------------------------------------===//
// Shared-memory maps
//===----------------------------------------------------------------------===//

/// Entries of the sm_90a kernel's tile-record ring.
constexpr int64_t kTileRing = 2;
/// sm_90a fp8 path: loader-warpgroup threads 64-127 decode the scales.
constexpr int64_t kDecoderThreads = 64;

/// Shared-memory map of the sm_90a kernel (byte offsets from the
/// 1024-aligned base).
struct Sm90SmemMap {
  int64_t tileN, stages;
  bool upcast = false;  ///< GemmConfig::upcastBF16
  bool mx128 = false;   ///< GemmKind::mx128
  int64_t outBytes = 2; ///< bytes per output element (bf16 2, f32 4)
  int64_t cluster = 1;  ///< GemmConfig::clusterM
  /// The map of the kernel of kind `p` under `cfg`.
  static Sm90SmemMap of(const GemmKind &p, const GemmConfig &cfg) {
    return {cfg.tileN, cfg.stages,       cfg.upcastBF16,
            p.mx128,   p.outF32 ? 4 : 2, cfg.clusterM};
  }
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
  /// MX128: one stage's fp32 scales, 128 row scales (2D x 3D: times the
  /// tile's rhs scale) then, 2D x 2D, tileN column scales (2D x 3D at N
  /// 192: the 128 row scales times the second rhs block's scale).
  int64_t tableBytes() const {
    return upcast ? 0 : mx128 ? 4 * (kBM + tileN) : sbTableOff() + 16 * tileN;
  }
  /// MX128: the column scales inside a stage's table.
  int64_t colScaleOff() const { return 4 * kBM; }
  int64_t tablesOff() const { return bfOff() + 2 * bfBufBytes(); }
  /// 1 KB of zeros: K slots 4-7 of every A table (its LBO points here).
  int64_t zeroOff() const { return tablesOff() + stages * tableBytes(); }
  int64_t zeroBytes() const { return upcast ? 0 : 64 * 16; }
  /// MX128: the epilogue's staging rows (128 rows of tileN outputs, the
  /// row stride padded by 16 bytes so a warp's fragment stores hit 32
  /// distinct banks), read by per-row bulk copies to global memory.
  int64_t stagingOff() const { return zeroOff() + zeroBytes(); }
  int64_t stagingStride() const { return tileN * outBytes + 16; }
  int64_t stagingBytes() const { return mx128 ? kBM * stagingStride() : 0; }
  int64_t barOff() const { return stagingOff() + stagingBytes(); }
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
  /// Cluster: stage s's slot is free in every CTA of the cluster.
  int64_t clusterFreeBar(int64_t s) const { return barOff() + 320 + 8 * s; }
  int64_t total() const {
    return barOff() + (cluster > 1 ? 384 : 320) + 1024; /* align slack */
  }
};

/// Shared memory of the sm_100a (tcgen05) kernel (offsets from the
/// 1024-aligned base).
struct Sm100SmemMap {
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
  int64_t fullBar() const { return barOff(); }       // + 8 s
  int64_t emptyBar() const { return barOff() + 64; } // + 8 s
  int64_t tmemFullBar() const { return barOff() + 128; }
  int64_t tmemEmptyBar() const { return barOff() + 136; }
  int64_t tmemSlot() const { return barOff() + 144; }
  int64_t flagOff() const { return barOff() + 148; }
  int64_t total() const { return barOff() + 256 + 1024; }
};

//===----------------------------------------------------------------------===//
// Synchronization helpers
//===----------------------------------------------------------------------===//

/// Waits (mbarrier.try_wait.parity, 10 ms suspend hint per try) until the
/// phase of parity `phase` (index) of the mbarrier at `bar` completed.
void waitParity(KB &b, Value bar, Value phase);

/// `accumulate` epilogues: the fp32 sum of `value` (f32) and the output
/// element `out[at]` (of type `outTy`, bf16 or f32, widened exactly).
Value addOutput(KB &b, Value value, Value out, Type outTy, Value at);

/// fence.proxy.async.shared::cta: this thread's generic-proxy shared-memory
/// writes become visible to later async-proxy reads (TMA, wgmma, tcgen05).
void fenceAsyncShared(KB &b);

/// The 64-bit shared-memory matrix descriptor (i64) of the operand at
/// shared-window address `addr` (index), for wgmma (PTX ISA 9.7.15.5.1) and
/// tcgen05 (9.7.16.4.1): the run-time start-address field (addr & 0x3FFFF)
/// >> 4 (smemDescStartAddressField) ORed into `constantPart`, the
/// compile-time fields from MMADescriptors.h (wgmmaSmemDescConstantPart,
/// tcgen05SmemDescConstantPart, kTcgen05ScaleFactorSrcDescConstant). When
/// given, the run-time leading byte offset `lboBytes` (index, a multiple of
/// 16) is ORed into the LBO field, which is then 0 in `constantPart`.
Value smemDescriptor(KB &b, Value addr, uint64_t constantPart,
                     Value lboBytes = Value());

/// scf.if yielding `then()` or `otherwise` values.
SmallVector<Value> ifYield(KB &b, Value cond, ValueRange otherwise,
                           function_ref<SmallVector<Value>()> then);

//===----------------------------------------------------------------------===//
// Pipeline ring
//===----------------------------------------------------------------------===//

/// The ring slot of a CTA's `it`-th pipeline stage (all index values): slot
/// number, mbarrier phase parity of this use, shared-memory base address.
struct RingSlot {
  Value st, phase, stage;
};
/// The ring counter runs modulo 2 x stages (ringNext), so slot and phase
/// are a compare and two selects for any stage count (a 64-bit division by
/// a non-power-of-two stage count cost the loader warpgroup registers it
/// does not have); counter % 2 is the running stage's parity.
RingSlot ringSlot(KB &b, Value base, Value it, int64_t stages,
                  int64_t stageBytes);
/// The ring counter after `it` (modulo 2 x stages).
Value ringNext(KB &b, Value it, int64_t stages);

/// The loop over one tile's `kStages` pipeline stages (scf.for s in [0,
/// kStages)) every role runs: carries `carried` and then the CTA's running
/// ring counter (from `it0`); `body(s, it, carried)` returns the next
/// carried values and the counter advances by ringNext after it. Returns
/// (carried results, counter after the tile).
std::pair<SmallVector<Value>, Value> ringLoop(
    KB &b, Value kStages, ValueRange carried, Value it0, int64_t stages,
    function_ref<SmallVector<Value>(Value, Value, SmallVector<Value>)> body);
/// ringLoop without carried values, `body(s, slot)` seeing the ring slot
/// of the running stage (its ringSlot is emitted first). Returns the
/// counter after the tile.
Value forEachRingSlot(KB &b, Value base, Value kStages, Value it0,
                      int64_t stages, int64_t stageBytes,
                      function_ref<void(Value, const RingSlot &)> body);

//===----------------------------------------------------------------------===//
// Tile scheduler
//===----------------------------------------------------------------------===//

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
  /// sm_90a 2D x 3D tiles wider than 128 (MX128, N 192): byte offset of
  /// the B scale atom of K-block 0 of the tile's second 128-row block of
  /// N (bAtom0 again past the expert's last block: its columns are
  /// masked). Its MX128 scale is byte 0 of the stage's atom.
  Value bAtom1;
  Value nRow; ///< first output column (rhs row within N)
  /// sm_90a consumers: shared-memory address of the tile's record
  /// (rowsValid, colsValid and outBase are read from it at the epilogue).
  Value record;
};

/// The run-time sizes: index values of the kernel's i64 scalar parameters
/// (kGemmScalarParams).
struct GemmSizes {
  Value m, n, k, groups, aScaleRows, aScaleCols, bScaleRows, bScaleCols;
};

/// The persistent tile scheduler: tile t of the CTA's walk (t = first,
/// first + step, ...) over the groups of the device end offsets.
struct Generator {
  KB &b;
  const GemmKind &p;
  const GemmConfig &cfg;
  const GemmSizes &s;
  Value offsets;
  Value nTiles; ///< tiles along N (2D x 3D) or N' (2D x 2D)
  Value mTiles; ///< tiles along M' (2D x 2D only)

  Generator(KB &b, const GemmKind &p, const GemmConfig &cfg, const GemmSizes &s,
            Value offsets);

  /// End offset of group g (clamped to the last group).
  Value offsetAt(Value g);
  /// Tiles of group g (size `size`).
  Value groupTiles(Value size);
  /// `rowTiles` 128-row tiles rounded up to whole clusters (cfg.clusterM):
  /// the two CTAs of a cluster take tiles t and t + 1 of a group, rows
  /// 128 mt and 128 (mt + 1) of one N block (their shared weight tile is
  /// multicast).
  Value clusterRows(Value rowTiles);
  /// Advances (g, gBase, gStart, padStart, sStart) past every group whose
  /// tiles all lie before tile t.
  Walk advance(Walk w);
  /// True while tile t exists: inside a group, or (2D x 3D) one of the
  /// zero tiles covering rows [offsets[G-1], M).
  Value exists(const Walk &w);
  /// The tile at the walk's position.
  Tile tile(const Walk &w);

  /// Emits the persistent loop over the CTA's tiles t = firstTile,
  /// firstTile + step, ...; `body(tile, carried)` returns the next carried
  /// index values (pipeline counters), which start at `numCarried` zeros.
  /// Returns their final values.
  SmallVector<Value>
  forEachTile(Value firstTile, Value step, unsigned numCarried,
              function_ref<SmallVector<Value>(const Tile &, ValueRange)> body);
  /// One carried counter; returns its final value.
  Value forEachTile(Value firstTile, Value step,
                    function_ref<Value(const Tile &, Value)> body);

  /// Each stage of each of the CTA's tiles, in the consumers' order:
  /// body(tile, s, ring slot of the CTA's running stage) (the loader-side
  /// roles: forEachTile around forEachRingSlot).
  void forEachTileStage(
      Value firstTile, Value step, Value base, int64_t stageBytes,
      function_ref<void(const Tile &, Value, const RingSlot &)> body);

private:
  /// Tile of the 2D x 3D walk: the group's rows (or the zero tail past the
  /// last offset) times the expert's N.
  Tile expertTile(const Walk &w, Value local, Value inGroups);
  /// Tile of the 2D x 2D walk: M x N of one K group.
  Tile kGroupTile(const Walk &w, Value local);
};

//===----------------------------------------------------------------------===//
// Kernel frame, loader steps and prologue
//===----------------------------------------------------------------------===//

/// The kernel skeleton shared by both chips: the dynamic shared memory
/// global, the gpu.func with its launch attributes and tensor-map argument
/// descriptions, and the values every role uses.
struct KernelFrame {
  gpu::GPUFuncOp fn;
  std::unique_ptr<OpBuilder> ob;
  std::unique_ptr<KB> b;
  Value tmapA, aScales, tmapB, bScales, offsets, out, status;
  GemmSizes sizes;
  Value tid, bid, grid;
  Value base; ///< 1024-aligned shared-window address of the dynamic smem

  /// Shared-window address of byte `off` of the dynamic shared memory.
  Value at(int64_t off) { return b->add(base, b->idx(off)); }
  /// The mbarrier of ring slot `st` in the array of 8-byte barriers at `off`.
  Value bar(int64_t off, Value st) {
    Value array = at(off);
    return b->sptr(b->add(array, b->mulc(st, 8)));
  }
};

/// Creates the gpu.func of a grouped-GEMM kernel (parameters and attributes
/// as GroupedMatmul.h describes, `threads` per CTA, `smemBytes` of dynamic
/// shared memory) and emits the values of its frame; the builder is left at
/// the start of the body.
KernelFrame createGemmKernel(gpu::GPUModuleOp module, StringRef name,
                             const GemmKind &p, const GemmConfig &cfg,
                             int64_t threads, int64_t smemBytes);

/// The type of a grouped-GEMM kernel's tensor-map parameter (operand 0:
/// lhs, 2: rhs): upstream's `!nvgpu.tensormap.descriptor` of the shared
/// tile one copy fills (`boxRows` x kBK bytes; fp8 elements, or fp4 ones
/// unpacked to a byte each), 128-byte swizzle, 256-byte L2 promotion,
/// zero fill, no interleave: the fields the launcher encodes
/// (mxmoeRtEncodeTensorMap2D, or `nvgpu.tma.create.descriptor` of a host
/// launch). convert-gpu-to-nvvm lowers it to a generic pointer to the
/// 128-byte map in global memory.
nvgpu::TensorMapDescriptorType gemmTensorMapType(MLIRContext *ctx,
                                                 int64_t boxRows);

/// A CUtensorMap parameter as a generic address (a pointer into global
/// memory, where the launcher copied it), after
/// `fence.proxy.tensormap::generic.acquire.sys` on its 128 bytes, issued
/// by the thread that will use it for TMA: the descriptor was written
/// through the generic proxy (the launcher's host-to-device copy), and the
/// tensormap proxy may still hold an earlier descriptor at that address
/// (a buffer freed and reused for another map: the maps of consecutive
/// calls in a CUDA graph). PTX ISA 8.3+, "Parallel Synchronization and
/// Communication Instructions: membar / fence" (fence.proxy.tensormap);
/// the CUDA C++ Programming Guide's TMA section passes maps in global
/// memory with the same acquire fence.
Value acquireTensorMap(KB &b, Value map);

/// Loader step shared by both chips: wait until the consumers freed ring
/// slot `st` (parity trick: the first pass waits on the "previous" phase,
/// which counts as complete), announce `txBytes` on its full barrier, and
/// issue the TMA tile loads of A and (`loadB`; a cluster's B tiles are
/// multicast by another thread) B at K coordinate `kc`.
void loadTiles(KB &b, Value stage, Value full, Value empty, Value phase,
               int64_t txBytes, Value kc, int64_t aOff, int64_t bOff,
               Value descA, Value descB, const Tile &T, bool loadB = true);

/// cp.async.bulk of one 512-byte scale atom into shared memory.
void loadAtom(KB &b, Value dstAddr, Value src, Value full);

/// Thread-local check of the i32 end offsets (run by one thread): every
/// offset within [previous, token extent], and the padded extents the
/// layouts need (rows of M-grouped scales; padded token columns and
/// K-group scale columns) within the buffers. Returns an i1.
Value validateOffsets(KB &b, const GemmKind &p, const GemmSizes &s,
                      Value offsets);

/// The size parameters a kernel of kind `p` accepts (i1), compared as
/// signed 64-bit values: 1 <= G, 0 <= M, N and 1 <= K, each below 2^31 (TMA
/// coordinates and tile indices are 32-bit), G * N < 2^31 for 2D x 3D (the
/// rhs map's rows), fewer than 2^31 tiles per group; K a multiple of 32 (of
/// 128 for kMultipleOf128 or fp4 data); and the blocked scale extents the
/// tile walk derives from M, N, K (PyTorch GroupedBlas.cpp
/// _check_scales_blocked): 2D x 3D lhs [a non-negative multiple of 128,
/// roundUp(K/32, 4)], rhs per expert [roundUp(N, 128), roundUp(K/32, 4)];
/// 2D x 2D lhs rows roundUp(M, 128), rhs rows roundUp(N, 128), columns >= 0
/// (checked against the offsets).
Value validateSizes(KB &b, const GemmKind &p, const GemmSizes &s);

/// The prologue both kernels share: thread 0 validates the sizes and then
/// the offsets, writes the verdict (0 valid, 1 offsets rejected, 2 sizes
/// rejected) to shared memory at `flagAddr` and initializes the mbarriers
/// (address, expected arrivals), fenced for the async (TMA / tcgen05)
/// proxy; after a CTA barrier every thread reads the verdict and CTA 0
/// publishes it as the kernel's status. Returns the i1 "input valid".
Value emitPrologue(KB &b, KernelFrame &f, const GemmKind &p, Value flagAddr,
                   ArrayRef<std::pair<Value, int64_t>> barriers);

} // namespace mlir::mxmoe::kernels::gemm

#endif // MXMOE_LIB_CONVERSION_MXMOETOGPU_GROUPEDMATMUL_COMMON_H
