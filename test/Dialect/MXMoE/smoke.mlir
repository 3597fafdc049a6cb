// RUN: mxmoe-opt %s | FileCheck %s
// CHECK-LABEL: func.func @smoke
func.func @smoke(%x: tensor<64x64xbf16>) -> tensor<64x64xf8E4M3FN> {
  // CHECK: mxmoe.quantize
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>
  return %q : tensor<64x64xf8E4M3FN>
}
