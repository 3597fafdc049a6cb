//===- KernelGen.h - kernel generators of convert-mxmoe-to-gpu --*- C++ -*-===//
//
// The generator state shared by the lowerings of convert-mxmoe-to-gpu (one
// gpu.func kernel per mxmoe.quantize / dequantize / swizzle_scales, one
// kernel per kind of mxmoe.grouped_matmul) and the helpers more than one of
// them uses. Each op family's lowering is in the file named after it:
// Quantize.cpp, Dequantize.cpp, SwizzleScales.cpp,
// GroupedMatmulLowering.cpp; HostLaunch.cpp rewrites an op into the launch
// of its kernel (or annotates it); MXMoEToGPU.cpp is the pass.
//
// Thread organisation of the SIMT kernels (every output byte is written
// exactly once, padding included, so outputs need no zero-fill):
//  * quantize: one thread per 32-element data block (+ one per blocked
//    scale byte for the padding of blocked layouts);
//  * dequantize: one thread per block (per element with group offsets);
//  * swizzle: one thread per destination scale byte.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_LIB_CONVERSION_MXMOETOGPU_KERNELGEN_H
#define MXMOE_LIB_CONVERSION_MXMOETOGPU_KERNELGEN_H

#include "GemmConfigSelection.h"
#include "GroupedMatmul.h"
#include "KernelBuilder.h"

#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"
#include "mxmoe/Dialect/MXMoE/Transforms/OptionEnums.h"
#include "mxmoe/Dialect/MXMoE/Utils/MXFormats.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>
#include <tuple>

namespace mlir::mxmoe::kernels {

/// Dynamic shared memory one CTA may use on sm_90a and sm_100a (227 KiB,
/// CUDA Programming Guide, compute capability 9.0 / 10.0 technical
/// specifications).
constexpr int64_t kMaxDynamicSmem = 227 * 1024;

/// How the kernels see an MX tensor pair: the data is [batch, rows, len]
/// with len contiguous (the quantized axis); data element (b, r, p) is the
/// high-precision element b*hpBatch + r*hpRow + p*hpAlong.
struct MXGeometry {
  int64_t batch = 1, rows = 0, len = 0;
  int64_t hpBatch = 0, hpRow = 0, hpAlong = 1;
  int64_t scaleCols() const { return len / ::mxmoe::kMXBlockSize; }
  bool rowwise() const { return hpAlong == 1; }
};

/// The checks shared by the quantize and dequantize generators: a supported
/// element type, a supported geometry. (The pass has checked that every
/// operand and result of the op has a static shape.)
FailureOr<std::pair<::mxmoe::MXElementKind, MXGeometry>>
getMXKernelShape(Operation *op, RankedTensorType hp, RankedTensorType data,
                 int64_t axis);

/// Block (b, r, c) of a thread index: rowwise puts c fastest (adjacent
/// threads read adjacent 64-B chunks); columnwise puts r fastest (adjacent
/// threads read adjacent columns).
void decompose(KB &b, Value t, const MXGeometry &g, int64_t rs, int64_t cs,
               Value &bi, Value &r, Value &c);

/// The last group g of `unit` whose padded start t.starts[unit][g] is
/// <= key (countLE - 1).
Value largestStartLE(KB &b, GroupTable &t, unsigned unit, Value key);

/// One kernel parameter as the host sees it: a tensor operand of the op, a
/// result of the op, or the status buffer of a grouped kernel.
struct HostArg {
  enum Kind { In, Out, Status } kind;
  Value value; ///< the operand (In) or the result (Out)
};

/// The generators' shared state: the kernel module, the pass options and
/// the kernels generated so far.
struct KernelGen {
  gpu::GPUModuleOp module;
  int64_t blockSize;
  bool hostLaunch;
  /// The gemm-* options: the configuration of grouped GEMMs without
  /// `mxmoe.gemm_config` (GemmConfigSelection.h).
  GemmOptions gemm;
  bool sm100;     ///< grouped GEMMs use tcgen05 (else wgmma)
  StringRef chip; ///< target chip (diagnostics)
  /// Kernels generated so far per enclosing function (names are
  /// `<function>__<op>_<n>`, n counting that function's MX ops).
  llvm::StringMap<unsigned> counters{};
  /// Grouped-GEMM kernels by configuration and kind (GemmKind's kGrouped,
  /// aType, bType, outF32, kMultipleOf128, accumulate; mx128 follows from
  /// the strategy): their sizes are run-time parameters, so later ops of
  /// the same kind reuse the kernel.
  using GemmKernelKey =
      std::tuple<GemmConfigAttr, unsigned, ::mxmoe::MXElementKind,
                 ::mxmoe::MXElementKind, unsigned, unsigned, unsigned>;
  llvm::DenseMap<GemmKernelKey, gpu::GPUFuncOp> gemmKernels{};

  /// Kernel names are PTX identifiers: characters outside [A-Za-z0-9_] of
  /// the function name (e.g. the dots of `layers.0.moe.experts.w13.forward`)
  /// become '_'.
  std::string name(StringRef kind, Operation *op);
  /// The `<function>` part of the names of `op`'s kernels (the key of
  /// `counters`).
  static std::string functionPart(Operation *op);

  // HostLaunch.cpp.

  /// Marks `op` as implemented by `kernel` and records, per kernel
  /// parameter, what it binds to (`mxmoe.kernel_args`, one
  /// #mxmoe.kernel_arg each: operand i, result i, status (an i32 status
  /// buffer), tensor_map i (a TMA descriptor of operand i) or value N (an
  /// i64 scalar, e.g. a grouped GEMM's sizes). Drivers turn this into
  /// launch programs (mxmoe-compile's manifest).
  void annotate(Operation *op, gpu::GPUFuncOp kernel,
                ArrayRef<Attribute> bindings);
  /// A grouped GEMM's bindings: the seven pointers, then its sizes in
  /// kGemmScalarParams order.
  void annotateGemm(Operation *op, gpu::GPUFuncOp kernel,
                    std::initializer_list<int64_t> sizes);
  static Attribute bindingOf(Operation *op, const HostArg &arg);

  /// Replaces `op` by a launch of `kernel` on buffers: operands go through
  /// bufferization.to_buffer (+ collapse to 1-D), results are gpu.alloc'ed
  /// and handed back with bufferization.to_tensor; a grouped kernel's status
  /// is copied to the host and checked with cf.assert (the runtime's
  /// wording of status 1, mxmoe/KernelStatus.h). Without
  /// `hostLaunch` the op only gets a `mxmoe.kernel` annotation.
  ///
  /// A kernel with run-time sizes (createKernel with a RuntimeShapeSpec)
  /// takes pointers for `args` and then the i64 `scalars` (bound as
  /// `value:N` after the pointers); this use's grid, ceil(`work` /
  /// block-size) CTAs, is recorded on the op as `mxmoe.grid`.
  void finish(Operation *op, gpu::GPUFuncOp kernel, ArrayRef<HostArg> args,
              ArrayRef<int64_t> scalars = {},
              std::optional<int64_t> work = std::nullopt);

  /// The i32 status buffer of a grouped kernel.
  MemRefType statusMemRef();

  // The op lowerings (one file each).

  LogicalResult genQuantize(QuantizeOp op);
  // FusedQuantize.cpp: mxmoe.fused_quantize, one quantization per op
  // (splitFusedQuantize first gives each quantization an op of its own).
  static void splitFusedQuantize(FusedQuantizeOp op);
  LogicalResult genFusedQuantize(FusedQuantizeOp op);
  void genQuantizeGeneral(QuantizeOp op, const MXGeometry &geo,
                          ::mxmoe::MXElementKind kind);
  void genQuantizeColwiseTiled(QuantizeOp op, const MXGeometry &geo,
                               ::mxmoe::MXElementKind kind);
  void genQuantizeRowwiseBlocked(QuantizeOp op, const MXGeometry &geo,
                                 ::mxmoe::MXElementKind kind);
  // QuantizeTiles.cpp: scale tiles other than [1, 32] (MX128), compact
  // scales.
  LogicalResult genQuantizeTiles(QuantizeOp op, const MXGeometry &geo,
                                 ::mxmoe::MXElementKind kind);
  void genQuantizeGeneralTiles(QuantizeOp op, const MXGeometry &geo,
                               ::mxmoe::MXElementKind kind);
  void genQuantizeRowwiseBlockedTiles(QuantizeOp op, const MXGeometry &geo,
                                      ::mxmoe::MXElementKind kind);
  void genQuantizeTile2D(QuantizeOp op, const MXGeometry &geo,
                         ::mxmoe::MXElementKind kind);
  // QuantizeTiles2D.cpp: mxmoe.quantize_weight as one kernel (the staged
  // 128x128 kernel writing both orientations) where it applies; elsewhere
  // the pass first splits it into its two quantizations.
  static bool canFuseQuantizeWeight(QuantizeWeightOp op, int64_t blockSize);
  static void splitQuantizeWeight(QuantizeWeightOp op);
  LogicalResult genQuantizeWeight(QuantizeWeightOp op);
  // QuantizeJagged.cpp: along a jagged token axis (weight-gradient
  // operands), MX and [1, c] scale tiles; needs 256-thread CTAs, [1, 32 /
  // 64 / 128] tiles and rows (K) a multiple of the 16-byte load.
  bool canQuantizeJaggedTiled(QuantizeOp op, const MXGeometry &geo);
  void genQuantizeJaggedTiled(QuantizeOp op, const MXGeometry &geo,
                              ::mxmoe::MXElementKind kind);
  LogicalResult genDequantize(DequantizeOp op);
  // Requantize.cpp: MX (1x32) data to scale tiles.
  LogicalResult genRequantize(RequantizeOp op);
  LogicalResult genSwizzle(SwizzleScalesOp op);
  LogicalResult genGroupedMatmul(GroupedMatmulOp op);
  // Routing.cpp: dispatch and combine of routed rows.
  LogicalResult genGatherRows(GatherRowsOp op);
  LogicalResult genInvertPermutation(InvertPermutationOp op);
  LogicalResult genCombineRows(CombineRowsOp op);
  LogicalResult genCombineScoresGrad(CombineScoresGradOp op);
  // RouterTopK.cpp, SortByExpert.cpp: the routing decision.
  LogicalResult genRouterTopK(RouterTopKOp op);
  LogicalResult genRouterTopKGrad(RouterTopKGradOp op);
  LogicalResult genSortByExpert(SortByExpertOp op);
  // Elementwise.cpp: arith / math ops on tensors inside a static shard
  // loop (a tiled MLP's), operands of the result's shape and element type
  // or splat constants.
  static bool isShardLoopElementwise(Operation *op);
  LogicalResult genElementwise(Operation *op);
  /// Whether `op` is inside a static shard loop whose slices are all whole
  /// rows: the loops a launch program replays (a dense tiled MLP's, which
  /// slices gate / up columns, runs from the manifest's "tiled_mlps").
  static bool isInRowShardLoop(Operation *op);
  // LinearBf16.cpp: bf16 mxmoe.linear ops (x [M, K], W [N, K] bf16, no
  // bias, K and N multiples of 8) and 2-D linalg.transpose ops of shard
  // loops (a tiled MoE block's router and its gradients).
  static bool isShardLoopBf16Linear(Operation *op);
  LogicalResult genBf16Linear(Operation *op);
  static bool isShardLoopTranspose(Operation *op);
  LogicalResult genTranspose(Operation *op);
  // A linalg.reduce summing a 2-D float tensor over its rows into zeros (a
  // linear's bias gradient over the shard's tokens).
  static bool isShardLoopRowSum(Operation *op);
  LogicalResult genRowSum(Operation *op);
};

} // namespace mlir::mxmoe::kernels

#endif // MXMOE_LIB_CONVERSION_MXMOETOGPU_KERNELGEN_H
