//===- GroupedMatmul.h - MX grouped GEMM kernels ----------------*- C++ -*-===//
//
// Generators of the persistent MX grouped-GEMM kernels that implement
// mxmoe.grouped_matmul on MXFP8 operands (e4m3/e5m2 data with e8m0 scales in
// the blocked 128x4 layouts chosen by mxmoe-pack-scales): Blackwell
// (sm_100a, tcgen05 block-scaled MMA; see buildGroupedMatmulSm100 and
// docs/tcgen05-grouped-gemm.md) and Hopper (sm_90a), described here.
//
// Hopper strategy (option B, DeepGEMM's fp8 promotion scheme of
// deep_gemm/include/deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh): per 32-wide K
// block (= one MX block) an fp8 wgmma m64nNk32 into a fresh fp32 partial P
// (scale-d = 0) and a tf32 wgmma m64nNk8 into a fresh S = sa (x) sb, the
// outer product of the block's row scales 2^(ea-127) and column scales
// 2^(eb-127) (an A table holding sa in K slot kb and zeros elsewhere times
// the sbT table holding the stage's four sb: one power-of-two product plus
// exact zeros per element), then acc += P * S on the CUDA cores, one FFMA
// per element. The result is the fp32-accumulated product of the
// dequantized operands up to the fp8 MMA's internal rounding of one
// 32-term block, for block-scale products sa * sb from 2^-149 to 2^127
// (beyond them fp32 underflows or overflows, as any fp32 promotion does).
//
// MX128 operands (GemmKind::mx128: both scale types record tiles whose c
// is a multiple of 128; GroupedMatmul/Sm90Mx128.cpp): per 128-wide stage
// the four k32 fp8 wgmmas chain into one fp32 partial and one FFMA per
// element applies the stage's scale (2D x 3D: row scale times the tile's
// 128x128 rhs block scale; 2D x 2D: row times column scale, from the
// CUDA cores, no tf32 wgmma), and the epilogue stages the rows in shared
// memory for per-row cp.async.bulk copies (DeepSeek-V3 report, arXiv
// 2412.19437 section 3.3.2).
//
// CTA = 3 warpgroups. Warpgroup 0 (40-88 registers per thread): thread 0
// issues the loads (A and B tiles by TMA, cp.async.bulk.tensor,
// SWIZZLE_128B, K-major, and the two 512-byte blocked scale atoms of the
// stage by cp.async.bulk, all completing on the stage's "full" mbarrier);
// thread 32 publishes each tile's record (valid K blocks, rows, columns,
// output base) in a 2-entry mbarrier ring; threads 64-127 decode each
// stage's e8m0 scales into its tf32 tables and arrive on its "decoded"
// mbarrier. Warpgroups 1 and 2 (232 or 224 registers) each own 64 rows of
// the 128-row tile: they read the tile records (no tile walk of their
// own), wait for decoded stages, run the wgmmas and the promotion, release
// the stage on its "empty" mbarrier and store their fragment (bf16 or
// f32) with row/column predication. Tiles are scheduled persistently (tile
// t = blockIdx.x + i * gridDim.x) over the groups read from the device
// offsets.
//
// Implementation: GroupedMatmul/Common.{h,cpp} (tile scheduler, kernel
// frame, prologue, shared-memory maps, pipeline ring), GroupedMatmul/Sm90.cpp
// (with Sm90Upcast.cpp and Sm90Mx128.cpp) and GroupedMatmul/Sm100.cpp (the
// kernels' roles).
//===----------------------------------------------------------------------===//

#ifndef MXMOE_LIB_CONVERSION_MXMOETOGPU_GROUPEDMATMUL_H
#define MXMOE_LIB_CONVERSION_MXMOETOGPU_GROUPEDMATMUL_H

#include "mxmoe/Dialect/MXMoE/Utils/MXFormats.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::mxmoe::kernels {

/// What one grouped-GEMM kernel is specialized on; its sizes (M, N, K, G
/// and the scale extents) are run-time parameters, so one kernel serves
/// every shape of its kind.
///  * 2D x 3D (kGrouped = false): A = lhs [M, K], B = rhs [G, N, K] viewed
///    as [G*N, K]; out [M, N]. lhs scales M-grouped blocked [aScaleRows,
///    aScaleCols]; rhs scales per-expert blocked [G, bScaleRows, bScaleCols].
///  * 2D x 2D (kGrouped = true): A = lhs [M, K] (K = padded token axis
///    Tp), B = rhs [N, K]; out [G, M, N]. Both scales per_k_group blocked
///    [*ScaleRows, *ScaleCols].
struct GemmKind {
  bool kGrouped = false;
  /// Element kinds of the A and B data: E4M3 or E5M2, or (tcgen05 only, K
  /// % 128 == 0) fp4 E2M1, two per byte with element 2i in the low nibble,
  /// loaded with the unpacking TMA type 16U4_ALIGN16B into the
  /// 8-bit-container shared-memory layout of kind::mxf8f6f4 (PTX ISA
  /// §9.7.16.10.4.4), so tiles, descriptors and scales are the fp8 ones.
  ::mxmoe::MXElementKind aType = ::mxmoe::MXElementKind::E4M3;
  ::mxmoe::MXElementKind bType = ::mxmoe::MXElementKind::E4M3;
  bool outF32 = false; ///< else bf16
  /// K is a multiple of 128 (whole pipeline stages; 2D x 3D only): the
  /// sm_90a consumers skip the per-block liveness test. The kernel rejects
  /// another K through its status (2).
  bool kMultipleOf128 = false;
  /// MX128 operands (sm_90a fp8 strategy): both scale tensors record tiles
  /// (#mxmoe.scale_layout tile = [r, c]) with c a multiple of 128, so the
  /// four MX blocks of a pipeline stage share one scale per row of A and
  /// of B. The consumers then chain the stage's four k32 wgmmas into one
  /// fp32 partial and promote it once per stage (DeepSeek-V3 report, arXiv
  /// 2412.19437 section 3.3.2) instead of once per block.
  bool mx128 = false;
  /// 2D x 2D with `accumulate`: the output pointer holds the accumulator;
  /// the epilogue loads each element, adds the fp32 tile value and stores
  /// the sum rounded once (a read-modify-write by the one thread that owns
  /// the element: no atomics, deterministic).
  bool accumulate = false;

  /// True when A or B holds fp4 (E2M1) data.
  bool hasE2M1() const {
    return aType == ::mxmoe::MXElementKind::E2M1 ||
           bType == ::mxmoe::MXElementKind::E2M1;
  }
};

/// The run-time scalar parameters of a grouped-GEMM kernel (i64, after the
/// seven pointers), in order: M, N, K, G, then the lhs and rhs scale
/// extents (rows, columns of one blocked matrix; for 2D x 3D rhs scales
/// those of one expert).
inline constexpr const char *kGemmScalarParams[] = {"m",
                                                    "n",
                                                    "k",
                                                    "groups",
                                                    "a_scale_rows",
                                                    "a_scale_cols",
                                                    "b_scale_rows",
                                                    "b_scale_cols"};

/// Tile configuration: BM = 128 (two consumer warpgroups of 64 rows),
/// BN = `tileN` (wgmma m64nNk32; 64..128, a multiple of 16... validated by
/// the caller), BK = 128 (four MX blocks, one 128-byte swizzle row).
struct GemmConfig {
  int64_t tileN = 128;
  int64_t stages = 4;
  int64_t numCTAs = 132;
  /// sm_90a MMA strategy. false: fp8 wgmma m64nNk32 per MX block, the
  /// block's scale product from a tf32 wgmma, promoted into the fp32
  /// accumulator by one FFMA per element (option B, DeepGEMM-style
  /// promotion; see the file comment). true ("bf16 upcast", option A, as
  /// Triton's DecomposeScaledBlocked.cpp does on sm_90): the consumer
  /// warpgroups dequantize each stage's fp8 tiles exactly to bf16
  /// (e4m3/e5m2 x 2^(e-127) has at most 4 significant bits) into one of two
  /// 128B-swizzled bf16 buffers, and bf16 wgmma m64nNk16 accumulates the
  /// whole K in fp32 (no per-block promotion; products exact).
  bool upcastBF16 = false;
  /// CTAs per thread-block cluster along M (sm_90a MX128 2D x 3D: 2 =
  /// each CTA loads half of the weight tile, multicast to both; the tile
  /// walk pairs vertically adjacent tiles; #mxmoe.gemm_config's cluster).
  int64_t clusterM = 1;
};

/// Dynamic shared memory (bytes) the sm_90a kernel of kind `p` needs for
/// `cfg`.
int64_t getSm90GemmSharedBytes(const GemmKind &p, const GemmConfig &cfg);

/// Builds `gpu.func @name` in `module`. Parameters: seven device pointers
/// (`!llvm.ptr<1>`, noalias, 16-byte aligned):
///   0 tensor map of A (128 B, CUtensorMap: uint8 -- 16U4_ALIGN16B for fp4
///     data --, dims {K, rows} in elements, box {128, 128}, SWIZZLE_128B),
///   1 A scales (e8m0 bytes), 2 tensor map of B (box {128, tileN}),
///   3 B scales, 4 i32 end offsets [G], 5 output (bf16 or f32), 6 i32
///   status [1];
/// then the eight i64 scalars of kGemmScalarParams. Status: 0 done, 1
/// offsets rejected (negative, decreasing, past the token extent, or more
/// padded rows / K-group columns than the scale buffers hold), 2 sizes
/// rejected (not 1 <= G, K and 0 <= M, N below 2^31, G * N >= 2^31 for 2D
/// x 3D, K not a multiple of 32 -- of 128 for a kMultipleOf128 or fp4
/// kernel --, or scale extents other than the blocked layout's); nothing
/// is written unless 0. The function carries mxmoe.grid / mxmoe.block /
/// mxmoe.dynamic_smem, per-argument `mxmoe.tensor_map` dictionaries (the
/// run-time dims come from the bound tensor), `mxmoe.element_type` on the
/// pointers and `mxmoe.scalar` names on the scalars.
gpu::GPUFuncOp buildGroupedMatmulSm90(gpu::GPUModuleOp module, StringRef name,
                                      const GemmKind &p, const GemmConfig &cfg);

/// Dynamic shared memory (bytes) and TMEM columns (before rounding to the
/// power of two tcgen05.alloc takes) of the sm_100a kernel for `cfg`.
int64_t getSm100GemmSharedBytes(const GemmConfig &cfg);
int64_t getSm100GemmTmemColumns(const GemmConfig &cfg);

/// Builds the sm_100a (tcgen05) kernel `gpu.func @name`: same parameters,
/// schedule and semantics as buildGroupedMatmulSm90. CTA = 6 warps: warp 0
/// issues the TMA tile loads and scale-atom bulk copies into a ring of
/// `stages` stages; warp 1 allocates TMEM (accumulator: tileN fp32 columns;
/// per stage 4 SFA + 4 per 128 N of SFB columns), and one of its threads
/// copies each stage's scale atoms to TMEM (tcgen05.cp 32x128b.warpx4) and
/// issues one tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32
/// per MX block (M 128, N tileN, K 32; instruction descriptor from
/// encodeTcgen05BlockScaledInstrDesc with sfa/sfb ids = block % 4), then
/// tcgen05.commit to the stage's empty barrier and, after the last stage,
/// to the accumulator-full barrier; warps 2-5 read the accumulator with
/// tcgen05.ld 32x32b.x32 (warp w owns TMEM lanes 32*(w%4)..+31), convert
/// and store with predication, and release it. Source: PTX ISA 9.7.16
/// (tcgen05), CUTLASS cute/arch/mma_sm100_desc.hpp;
/// docs/tcgen05-grouped-gemm.md.
gpu::GPUFuncOp buildGroupedMatmulSm100(gpu::GPUModuleOp module, StringRef name,
                                       const GemmKind &p,
                                       const GemmConfig &cfg);

} // namespace mlir::mxmoe::kernels

#endif // MXMOE_LIB_CONVERSION_MXMOETOGPU_GROUPEDMATMUL_H
