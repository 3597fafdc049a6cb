// RUN: not mxmoe-opt %s --convert-mxmoe-to-gpu=block-size=48 2>&1 | FileCheck %s
// CHECK: error: convert-mxmoe-to-gpu: block-size must be a multiple of 32 in [32, 1024], got 48
func.func @f(%x: tensor<64x64xbf16>) {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>
  return
}
