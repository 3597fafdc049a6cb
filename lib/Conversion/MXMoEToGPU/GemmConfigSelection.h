//===- GemmConfigSelection.h - grouped-GEMM kernel configuration -*- C++
//-*-===//
//
// The selection step of the grouped-GEMM kernels, in the style of IREE's
// KernelConfig: mxmoe-select-gemm-config attaches `mxmoe.gemm_config =
// #mxmoe.gemm_config<...>` (MXMoEAttrs.td) to every grouped GEMM from its
// gemm-* options, the chip and the op's operands; convert-mxmoe-to-gpu
// builds the kernel an op's configuration describes (checkGemmConfig), and
// selects one itself for an op without (selectGemmConfig, the same
// function). The generators read the configuration as the GemmConfig
// struct of GroupedMatmul.h (toGemmConfig).
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_LIB_CONVERSION_MXMOETOGPU_GEMMCONFIGSELECTION_H
#define MXMOE_LIB_CONVERSION_MXMOETOGPU_GEMMCONFIGSELECTION_H

#include "GroupedMatmul.h"

#include "mxmoe/Conversion/Chips.h"
#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"
#include "mxmoe/Dialect/MXMoE/Transforms/OptionEnums.h"

#include <string>

namespace mlir::mxmoe::kernels {

/// The grouped-GEMM options (MXMoEGemmOptions in Passes.td) of
/// mxmoe-select-gemm-config and convert-mxmoe-to-gpu.
struct GemmOptions {
  Chip chip = Chip::sm_90a;
  int64_t tileN = 128;
  int64_t stages = 0; ///< 0: auto (2 for wgmma_bf16_upcast, else 4)
  int64_t ctas = 132;
  Sm90Mma sm90Mma = Sm90Mma::automatic;
  int64_t cluster = 0; ///< 0: auto (1); 1 or 2 CTAs per cluster along M

  StringRef chipName() const { return stringifyChip(chip); }
  /// The chip's grouped GEMM is the tcgen05 kernel (else wgmma).
  bool tcgen05() const { return isTcgen05Chip(chipName()); }
};

/// "" when `o` is valid, else the error (prefixed by "`pass`: ", naming
/// the option and its value): gemm-tile-n (64 or 128; 256 on sm_100a and
/// sm_103a), gemm-stages (0 or 2..8), gemm-ctas (1..2^31-1), gemm-cluster
/// (0, 1 or 2 on sm_90a; 2 with an even gemm-ctas) and, on
/// sm_100a and sm_103a, the shared memory and TMEM of the configuration
/// (the same for every op there).
std::string checkGemmOptions(StringRef pass, const GemmOptions &o);

/// The configuration `attr` as the generators take it.
GemmConfig toGemmConfig(GemmConfigAttr attr);

/// The configuration of `op` under `o`: the strategy from the chip,
/// gemm-sm90-mma, the output type (f32: bf16 upcast under auto) and the
/// scales (MX128 tiles: promotion per 128 K); stages from gemm-stages,
/// else 2 for the bf16 upcast and 4 otherwise; the cluster from
/// gemm-cluster (2: MX128 2D x 3D bf16 only). An sm_90a kernel over the
/// chip's shared memory is an error at `op` naming the strategy and the
/// option to lower.
FailureOr<GemmConfigAttr> selectGemmConfig(GroupedMatmulOp op,
                                           const GemmOptions &o);

/// Checks the configuration `attr` that `op` (of kind `p`, its mx128 as
/// the strategy sets it) carries for `chip`: a strategy of that chip,
/// MX128 scales for wgmma_fp8_promote_k128, tile_n 192 and cluster 2 on
/// 2D x 3D bf16-output kernels only, the kernel within the chip's
/// shared memory (and TMEM). Errors at `op`.
LogicalResult checkGemmConfig(GroupedMatmulOp op, GemmConfigAttr attr,
                              const GemmKind &p, StringRef chip);

} // namespace mlir::mxmoe::kernels

#endif // MXMOE_LIB_CONVERSION_MXMOETOGPU_GEMMCONFIGSELECTION_H
