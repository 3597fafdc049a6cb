// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// mxmoe.quantize and mxmoe.dequantize with every MX element type: MXFP8
// (E4M3, E5M2), MXFP6 (E2M3, E3M2) and MXFP4 (E2M1). The scales are always
// f8E8M0FNU.

// CHECK-LABEL: func.func @mx_element_types(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<64x128xbf16>)
// CHECK:         %[[Q0:[a-z0-9_]+]], %[[S0:[a-z0-9_]+]] = mxmoe.quantize %[[X]] {axis = 1 : i64} : tensor<64x128xbf16> -> tensor<64x128xf8E4M3FN>, tensor<64x4xf8E8M0FNU>
// CHECK-NEXT:    %[[Q1:[a-z0-9_]+]], %[[S1:[a-z0-9_]+]] = mxmoe.quantize %[[X]] {axis = 1 : i64} : tensor<64x128xbf16> -> tensor<64x128xf8E5M2>, tensor<64x4xf8E8M0FNU>
// CHECK-NEXT:    %[[Q2:[a-z0-9_]+]], %[[S2:[a-z0-9_]+]] = mxmoe.quantize %[[X]] {axis = 1 : i64} : tensor<64x128xbf16> -> tensor<64x128xf6E2M3FN>, tensor<64x4xf8E8M0FNU>
// CHECK-NEXT:    %[[Q3:[a-z0-9_]+]], %[[S3:[a-z0-9_]+]] = mxmoe.quantize %[[X]] {axis = 1 : i64} : tensor<64x128xbf16> -> tensor<64x128xf6E3M2FN>, tensor<64x4xf8E8M0FNU>
// CHECK-NEXT:    %[[Q4:[a-z0-9_]+]], %[[S4:[a-z0-9_]+]] = mxmoe.quantize %[[X]] {axis = 1 : i64} : tensor<64x128xbf16> -> tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>
// CHECK-NEXT:    mxmoe.dequantize %[[Q0]], %[[S0]] {axis = 1 : i64} : tensor<64x128xf8E4M3FN>, tensor<64x4xf8E8M0FNU> -> tensor<64x128xbf16>
// CHECK-NEXT:    mxmoe.dequantize %[[Q1]], %[[S1]] {axis = 1 : i64} : tensor<64x128xf8E5M2>, tensor<64x4xf8E8M0FNU> -> tensor<64x128xbf16>
// CHECK-NEXT:    mxmoe.dequantize %[[Q2]], %[[S2]] {axis = 1 : i64} : tensor<64x128xf6E2M3FN>, tensor<64x4xf8E8M0FNU> -> tensor<64x128xbf16>
// CHECK-NEXT:    mxmoe.dequantize %[[Q3]], %[[S3]] {axis = 1 : i64} : tensor<64x128xf6E3M2FN>, tensor<64x4xf8E8M0FNU> -> tensor<64x128xbf16>
// CHECK-NEXT:    mxmoe.dequantize %[[Q4]], %[[S4]] {axis = 1 : i64} : tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<64x128xbf16>
func.func @mx_element_types(%x: tensor<64x128xbf16>) {
  %q0, %s0 = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x128xbf16> -> tensor<64x128xf8E4M3FN>, tensor<64x4xf8E8M0FNU>
  %q1, %s1 = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x128xbf16> -> tensor<64x128xf8E5M2>, tensor<64x4xf8E8M0FNU>
  %q2, %s2 = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x128xbf16> -> tensor<64x128xf6E2M3FN>, tensor<64x4xf8E8M0FNU>
  %q3, %s3 = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x128xbf16> -> tensor<64x128xf6E3M2FN>, tensor<64x4xf8E8M0FNU>
  %q4, %s4 = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x128xbf16> -> tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>
  %d0 = mxmoe.dequantize %q0, %s0 {axis = 1 : i64} : tensor<64x128xf8E4M3FN>, tensor<64x4xf8E8M0FNU> -> tensor<64x128xbf16>
  %d1 = mxmoe.dequantize %q1, %s1 {axis = 1 : i64} : tensor<64x128xf8E5M2>, tensor<64x4xf8E8M0FNU> -> tensor<64x128xbf16>
  %d2 = mxmoe.dequantize %q2, %s2 {axis = 1 : i64} : tensor<64x128xf6E2M3FN>, tensor<64x4xf8E8M0FNU> -> tensor<64x128xbf16>
  %d3 = mxmoe.dequantize %q3, %s3 {axis = 1 : i64} : tensor<64x128xf6E3M2FN>, tensor<64x4xf8E8M0FNU> -> tensor<64x128xbf16>
  %d4 = mxmoe.dequantize %q4, %s4 {axis = 1 : i64} : tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<64x128xbf16>
  return
}

// Each element type combined with a non-default rounding mode, columnwise and
// into blocked scales.
// CHECK-LABEL: func.func @mx_element_types_columnwise_blocked(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 0 : i64, rounding = #mxmoe.rounding<floor>} : tensor<64x128xf32> -> tensor<128x64xf8E4M3FN>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK-NEXT:    mxmoe.quantize %{{[a-z0-9_]+}} {axis = 0 : i64, rounding = #mxmoe.rounding<ceil>} : tensor<64x128xf32> -> tensor<128x64xf8E5M2>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK-NEXT:    mxmoe.quantize %{{[a-z0-9_]+}} {axis = 0 : i64, rounding = #mxmoe.rounding<even>} : tensor<64x128xf32> -> tensor<128x64xf6E2M3FN>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK-NEXT:    mxmoe.quantize %{{[a-z0-9_]+}} {axis = 0 : i64, rounding = #mxmoe.rounding<floor>} : tensor<64x128xf32> -> tensor<128x64xf6E3M2FN>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK-NEXT:    mxmoe.quantize %{{[a-z0-9_]+}} {axis = 0 : i64} : tensor<64x128xf32> -> tensor<128x64xf4E2M1FN>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @mx_element_types_columnwise_blocked(%x: tensor<64x128xf32>) {
  %q0, %s0 = mxmoe.quantize %x {axis = 0 : i64, rounding = #mxmoe.rounding<floor>} : tensor<64x128xf32> -> tensor<128x64xf8E4M3FN>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  %q1, %s1 = mxmoe.quantize %x {axis = 0 : i64, rounding = #mxmoe.rounding<ceil>} : tensor<64x128xf32> -> tensor<128x64xf8E5M2>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  %q2, %s2 = mxmoe.quantize %x {axis = 0 : i64, rounding = #mxmoe.rounding<even>} : tensor<64x128xf32> -> tensor<128x64xf6E2M3FN>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  %q3, %s3 = mxmoe.quantize %x {axis = 0 : i64, rounding = #mxmoe.rounding<floor>} : tensor<64x128xf32> -> tensor<128x64xf6E3M2FN>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  %q4, %s4 = mxmoe.quantize %x {axis = 0 : i64} : tensor<64x128xf32> -> tensor<128x64xf4E2M1FN>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}
