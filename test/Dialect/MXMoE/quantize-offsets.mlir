// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// mxmoe.quantize with token-group `offsets` (2-D input only):
// * axis = 0 (jagged token axis, weight-gradient operands): data [K, Tp]
//   with Tp a multiple of 32 and Tp >= T; scales row-major [K, Tp/32] or
//   #mxmoe.scale_layout<blocked_128x4, per_k_group> [roundUp(K, 128), Qp]
//   with Qp a multiple of 4 and Qp >= roundUp(Tp/32, 4);
// * axis = 1 with blocked scales: the M-grouped layout, [Mp, roundUp(K/32, 4)]
//   with Mp a multiple of 128 and Mp >= roundUp(M, 128).

// Jagged token axis, row-major scales. T = 1000, G = 8:
// Tp = roundDown(1000 + 31*8, 32) = 1248 (the static bound), 1248/32 = 39.
// CHECK-LABEL: func.func @quantize_jagged_row_major(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<1000x256xbf16>, %[[OFFS:[a-z0-9_]+]]: tensor<8xi32>)
// CHECK:         %[[Q:[a-z0-9_]+]], %[[S:[a-z0-9_]+]] = mxmoe.quantize %[[X]] offsets(%[[OFFS]] : tensor<8xi32>) {axis = 0 : i64}
// CHECK-SAME:      : tensor<1000x256xbf16> -> tensor<256x1248xf8E4M3FN>, tensor<256x39xf8E8M0FNU>
// CHECK-NEXT:    return %[[Q]], %[[S]] : tensor<256x1248xf8E4M3FN>, tensor<256x39xf8E8M0FNU>
func.func @quantize_jagged_row_major(%x: tensor<1000x256xbf16>, %offs: tensor<8xi32>) -> (tensor<256x1248xf8E4M3FN>, tensor<256x39xf8E8M0FNU>) {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64}
      : tensor<1000x256xbf16> -> tensor<256x1248xf8E4M3FN>, tensor<256x39xf8E8M0FNU>
  return %q, %s : tensor<256x1248xf8E4M3FN>, tensor<256x39xf8E8M0FNU>
}

// Jagged token axis, per-K-group blocked scales. C = 39 scale columns, G = 8:
// the static bound of sum_g roundUp(k_g, 4) is roundDown(39 + 3*8, 4) = 60.
// CHECK-LABEL: func.func @quantize_jagged_per_k_group(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} offsets(%{{[a-z0-9_]+}} : tensor<8xi32>) {axis = 0 : i64}
// CHECK-SAME:      : tensor<1000x256xbf16> -> tensor<256x1248xf8E4M3FN>, tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
func.func @quantize_jagged_per_k_group(%x: tensor<1000x256xbf16>, %offs: tensor<8xi32>) -> tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>> {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64}
      : tensor<1000x256xbf16> -> tensor<256x1248xf8E4M3FN>, tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return %s : tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
}

// The smallest legal sizes: Tp = T = 1024 (every group a multiple of 32 is
// known at run time), per-K-group columns = roundUp(32, 4) = 32; K = 200
// rows are padded to 256.
// CHECK-LABEL: func.func @quantize_jagged_minimal_padding(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} offsets(%{{[a-z0-9_]+}} : tensor<4xi32>) {axis = 0 : i64, rounding = #mxmoe.rounding<even>}
// CHECK-SAME:      : tensor<1024x200xf32> -> tensor<200x1024xf8E5M2>, tensor<256x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
func.func @quantize_jagged_minimal_padding(%x: tensor<1024x200xf32>, %offs: tensor<4xi32>) -> tensor<256x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>> {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<4xi32>) {axis = 0 : i64, rounding = #mxmoe.rounding<even>}
      : tensor<1024x200xf32> -> tensor<200x1024xf8E5M2>, tensor<256x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return %s : tensor<256x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
}

// A jagged token axis does not need T to be a multiple of 32 (T = 100).
// CHECK-LABEL: func.func @quantize_jagged_unaligned_tokens(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} offsets(%{{[a-z0-9_]+}} : tensor<2xi32>) {axis = 0 : i64}
// CHECK-SAME:      : tensor<100x64xbf16> -> tensor<64x128xf8E4M3FN>, tensor<64x4xf8E8M0FNU>
func.func @quantize_jagged_unaligned_tokens(%x: tensor<100x64xbf16>, %offs: tensor<2xi32>) -> tensor<64x4xf8E8M0FNU> {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<2xi32>) {axis = 0 : i64}
      : tensor<100x64xbf16> -> tensor<64x128xf8E4M3FN>, tensor<64x4xf8E8M0FNU>
  return %s : tensor<64x4xf8E8M0FNU>
}

// M-grouped blocked scales (rowwise, axis = 1): M = 1000, G = 8, the static
// bound of the rows is roundDown(1000 + 127*8, 128) = 1920.
// CHECK-LABEL: func.func @quantize_m_grouped_blocked(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} offsets(%{{[a-z0-9_]+}} : tensor<8xi32>) {axis = 1 : i64}
// CHECK-SAME:      : tensor<1000x256xbf16> -> tensor<1000x256xf8E4M3FN>, tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @quantize_m_grouped_blocked(%x: tensor<1000x256xbf16>, %offs: tensor<8xi32>) -> tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 1 : i64}
      : tensor<1000x256xbf16> -> tensor<1000x256xf8E4M3FN>, tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %s : tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// M-grouped with the smallest row count roundUp(M, 128) = 1024 and an
// unaligned scale column count (C = 10 -> 12).
// CHECK-LABEL: func.func @quantize_m_grouped_minimal_rows(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} offsets(%{{[a-z0-9_]+}} : tensor<8xi32>) {axis = 1 : i64}
// CHECK-SAME:      : tensor<1000x320xf16> -> tensor<1000x320xf8E4M3FN>, tensor<1024x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @quantize_m_grouped_minimal_rows(%x: tensor<1000x320xf16>, %offs: tensor<8xi32>) -> tensor<1024x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 1 : i64}
      : tensor<1000x320xf16> -> tensor<1000x320xf8E4M3FN>, tensor<1024x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %s : tensor<1024x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// A dynamic number of groups (offsets tensor<?xi32>).
// CHECK-LABEL: func.func @quantize_dynamic_group_count(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} offsets(%{{[a-z0-9_]+}} : tensor<?xi32>) {axis = 0 : i64}
// CHECK-SAME:      : tensor<512x128xbf16> -> tensor<128x1024xf8E4M3FN>, tensor<128x36xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
func.func @quantize_dynamic_group_count(%x: tensor<512x128xbf16>, %offs: tensor<?xi32>) -> tensor<128x36xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>> {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<?xi32>) {axis = 0 : i64}
      : tensor<512x128xbf16> -> tensor<128x1024xf8E4M3FN>, tensor<128x36xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return %s : tensor<128x36xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
}
