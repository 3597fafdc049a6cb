// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// mxmoe.dequantize with token-group `offsets`, the inverse of the grouped
// variants of mxmoe.quantize: a jagged token axis (axis = 0) drops the group
// padding (data [K, Tp] -> result [T, K]); axis = 1 reads M-grouped blocked
// scales.

// Jagged token axis, row-major scales: T = 1000 tokens of the Tp = 1248
// stored ones.
// CHECK-LABEL: func.func @dequantize_jagged_row_major(
// CHECK-SAME:    %[[Q:[a-z0-9_]+]]: tensor<256x1248xf8E4M3FN>, %[[S:[a-z0-9_]+]]: tensor<256x39xf8E8M0FNU>, %[[OFFS:[a-z0-9_]+]]: tensor<8xi32>)
// CHECK:         %[[X:[a-z0-9_]+]] = mxmoe.dequantize %[[Q]], %[[S]] offsets(%[[OFFS]] : tensor<8xi32>) {axis = 0 : i64}
// CHECK-SAME:      : tensor<256x1248xf8E4M3FN>, tensor<256x39xf8E8M0FNU> -> tensor<1000x256xbf16>
// CHECK-NEXT:    return %[[X]] : tensor<1000x256xbf16>
func.func @dequantize_jagged_row_major(%q: tensor<256x1248xf8E4M3FN>, %s: tensor<256x39xf8E8M0FNU>, %offs: tensor<8xi32>) -> tensor<1000x256xbf16> {
  %x = mxmoe.dequantize %q, %s offsets(%offs : tensor<8xi32>) {axis = 0 : i64}
      : tensor<256x1248xf8E4M3FN>, tensor<256x39xf8E8M0FNU> -> tensor<1000x256xbf16>
  return %x : tensor<1000x256xbf16>
}

// Jagged token axis, per-K-group blocked scales.
// CHECK-LABEL: func.func @dequantize_jagged_per_k_group(
// CHECK:         mxmoe.dequantize %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} offsets(%{{[a-z0-9_]+}} : tensor<8xi32>) {axis = 0 : i64}
// CHECK-SAME:      : tensor<256x1248xf8E5M2>, tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>> -> tensor<1000x256xf32>
func.func @dequantize_jagged_per_k_group(%q: tensor<256x1248xf8E5M2>, %s: tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, %offs: tensor<8xi32>) -> tensor<1000x256xf32> {
  %x = mxmoe.dequantize %q, %s offsets(%offs : tensor<8xi32>) {axis = 0 : i64}
      : tensor<256x1248xf8E5M2>, tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>> -> tensor<1000x256xf32>
  return %x : tensor<1000x256xf32>
}

// M-grouped blocked scales (axis = 1).
// CHECK-LABEL: func.func @dequantize_m_grouped(
// CHECK:         mxmoe.dequantize %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} offsets(%{{[a-z0-9_]+}} : tensor<8xi32>) {axis = 1 : i64}
// CHECK-SAME:      : tensor<1000x256xf8E4M3FN>, tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<1000x256xbf16>
func.func @dequantize_m_grouped(%q: tensor<1000x256xf8E4M3FN>, %s: tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, %offs: tensor<8xi32>) -> tensor<1000x256xbf16> {
  %x = mxmoe.dequantize %q, %s offsets(%offs : tensor<8xi32>) {axis = 1 : i64}
      : tensor<1000x256xf8E4M3FN>, tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<1000x256xbf16>
  return %x : tensor<1000x256xbf16>
}

// A quantize/dequantize pair along a jagged, dynamic token axis.
// CHECK-LABEL: func.func @jagged_pair_dynamic(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<?x128xbf16>, %[[OFFS:[a-z0-9_]+]]: tensor<4xi32>)
// CHECK:         %[[Q:[a-z0-9_]+]], %[[S:[a-z0-9_]+]] = mxmoe.quantize %[[X]] offsets(%[[OFFS]] : tensor<4xi32>) {axis = 0 : i64}
// CHECK-SAME:      : tensor<?x128xbf16> -> tensor<128x?xf8E4M3FN>, tensor<128x?xf8E8M0FNU>
// CHECK-NEXT:    %[[D:[a-z0-9_]+]] = mxmoe.dequantize %[[Q]], %[[S]] offsets(%[[OFFS]] : tensor<4xi32>) {axis = 0 : i64}
// CHECK-SAME:      : tensor<128x?xf8E4M3FN>, tensor<128x?xf8E8M0FNU> -> tensor<?x128xbf16>
func.func @jagged_pair_dynamic(%x: tensor<?x128xbf16>, %offs: tensor<4xi32>) -> tensor<?x128xbf16> {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<4xi32>) {axis = 0 : i64}
      : tensor<?x128xbf16> -> tensor<128x?xf8E4M3FN>, tensor<128x?xf8E8M0FNU>
  %d = mxmoe.dequantize %q, %s offsets(%offs : tensor<4xi32>) {axis = 0 : i64}
      : tensor<128x?xf8E4M3FN>, tensor<128x?xf8E8M0FNU> -> tensor<?x128xbf16>
  return %d : tensor<?x128xbf16>
}
