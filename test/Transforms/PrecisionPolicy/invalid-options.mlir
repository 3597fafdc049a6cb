// RUN: not mxmoe-opt %s --mxmoe-precision-policy="precision=bf16" 2>&1 | FileCheck %s --check-prefix=PREC
// RUN: not mxmoe-opt %s --mxmoe-precision-policy="rounding=nearest" 2>&1 | FileCheck %s --check-prefix=ROUND
// RUN: not mxmoe-opt %s --mxmoe-precision-policy="min-dim=-4" 2>&1 | FileCheck %s --check-prefix=MINDIM
// RUN: not mxmoe-opt %s --mxmoe-precision-policy="recipe=mx64" 2>&1 | FileCheck %s --check-prefix=RECIPE
// The options fail when the pipeline is built (initializeOptions), before
// any pass runs; the module is not printed after the error.
// RUN: not mxmoe-opt %s --mxmoe-precision-policy="min-dim=-4" 2>&1 | FileCheck %s --check-prefix=NODUMP

// PREC: error: mxmoe-precision-policy: precision must be mxfp8 or mxfp4, got 'bf16'
// ROUND: error: mxmoe-precision-policy: rounding must be floor, rceil, ceil or even, got 'nearest'
// MINDIM: error: mxmoe-precision-policy: min-dim must be >= 0, got -4
// RECIPE: error: mxmoe-precision-policy: recipe must be mx32, mx128 or auto, got 'mx64'
// NODUMP: <unknown>:0: error: mxmoe-precision-policy: min-dim must be >= 0, got -4
// NODUMP-NOT: see current operation
// NODUMP-NOT: mxmoe.linear
func.func @f(%x: tensor<64x64xbf16>, %w: tensor<64x64xbf16>) {
  %a = mxmoe.linear %x, %w {fqn = "a"} : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  return
}
