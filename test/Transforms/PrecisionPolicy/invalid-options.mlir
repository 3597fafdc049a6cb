// RUN: not mxmoe-opt %s --mxmoe-precision-policy="precision=bf16" 2>&1 | FileCheck %s --check-prefix=PREC
// RUN: not mxmoe-opt %s --mxmoe-precision-policy="rounding=nearest" 2>&1 | FileCheck %s --check-prefix=ROUND
// RUN: not mxmoe-opt %s --mxmoe-precision-policy="min-dim=-4" 2>&1 | FileCheck %s --check-prefix=MINDIM

// PREC: error: mxmoe-precision-policy: precision must be mxfp8 or mxfp4, got 'bf16'
// ROUND: error: mxmoe-precision-policy: rounding must be floor, rceil, ceil or even, got 'nearest'
// MINDIM: error: mxmoe-precision-policy: min-dim must be >= 0, got -4
func.func @f(%x: tensor<64x64xbf16>, %w: tensor<64x64xbf16>) {
  %a = mxmoe.linear %x, %w {fqn = "a"} : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  return
}
