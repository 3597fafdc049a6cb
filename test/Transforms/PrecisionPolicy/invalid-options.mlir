// RUN: not mxmoe-opt %s --mxmoe-precision-policy="precision=bf16" 2>&1 | FileCheck %s --check-prefix=PREC
// RUN: not mxmoe-opt %s --mxmoe-precision-policy="rounding=nearest" 2>&1 | FileCheck %s --check-prefix=ROUND
// RUN: not mxmoe-opt %s --mxmoe-precision-policy="min-dim=-4" 2>&1 | FileCheck %s --check-prefix=MINDIM
// RUN: not mxmoe-opt %s --mxmoe-precision-policy="recipe=mx64" 2>&1 | FileCheck %s --check-prefix=RECIPE
// The options fail when the pipeline is built (initializeOptions), before
// any pass runs; the module is not printed after the error.
// RUN: not mxmoe-opt %s --mxmoe-precision-policy="min-dim=-4" 2>&1 | FileCheck %s --check-prefix=NODUMP

// precision, rounding and recipe are enum options: rejected when parsed,
// with the valid values.
// PREC: for the --precision option: 'bf16' is not one of: mxfp8, mxfp4
// ROUND: for the --rounding option: 'nearest' is not one of: floor, rceil, ceil, even
// MINDIM: error: mxmoe-precision-policy: min-dim must be >= 0, got -4
// RECIPE: for the --recipe option: 'mx64' is not one of: mx32, mx128, auto
// NODUMP: <unknown>:0: error: mxmoe-precision-policy: min-dim must be >= 0, got -4
// NODUMP-NOT: see current operation
// NODUMP-NOT: mxmoe.linear
func.func @f(%x: tensor<64x64xbf16>, %w: tensor<64x64xbf16>) {
  %a = mxmoe.linear %x, %w {fqn = "a"} : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  return
}
