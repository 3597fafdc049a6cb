// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// mxmoe.quantize with the swizzle fused into the quantization: scales in
// #mxmoe.scale_layout<blocked_128x4>, shape [roundUp(R, 128), roundUp(C, 4)]
// (rank 3: [E, roundUp(R, 128), roundUp(C, 4)]) for row-major scales [R, C].

// R = 200, C = 320/32 = 10 -> [256, 12] (ScaleLayoutTest.cpp worked example).
// CHECK-LABEL: func.func @quantize_blocked_padded(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<200x320xbf16>)
// CHECK:         %[[Q:[a-z0-9_]+]], %[[S:[a-z0-9_]+]] = mxmoe.quantize %[[X]] {axis = 1 : i64}
// CHECK-SAME:      : tensor<200x320xbf16> -> tensor<200x320xf8E4M3FN>, tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK-NEXT:    return %[[S]] : tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @quantize_blocked_padded(%x: tensor<200x320xbf16>) -> tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64}
      : tensor<200x320xbf16> -> tensor<200x320xf8E4M3FN>, tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %s : tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// Tile-aligned shapes need no padding: R = 8192, C = 160.
// CHECK-LABEL: func.func @quantize_blocked_aligned(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64}
// CHECK-SAME:      : tensor<8192x5120xbf16> -> tensor<8192x5120xf8E4M3FN>, tensor<8192x160xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @quantize_blocked_aligned(%x: tensor<8192x5120xbf16>) -> tensor<8192x160xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64}
      : tensor<8192x5120xbf16> -> tensor<8192x5120xf8E4M3FN>, tensor<8192x160xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %s : tensor<8192x160xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// A tiny matrix still takes one whole 128x4 atom: R = 3, C = 2 -> [128, 4].
// CHECK-LABEL: func.func @quantize_blocked_one_atom(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64}
// CHECK-SAME:      : tensor<3x64xf32> -> tensor<3x64xf8E4M3FN>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @quantize_blocked_one_atom(%x: tensor<3x64xf32>) -> tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64}
      : tensor<3x64xf32> -> tensor<3x64xf8E4M3FN>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %s : tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// Columnwise into blocked scales: data [200, 320] is the transpose of the
// [320, 200] input; the blocked scales cover the data's rows.
// CHECK-LABEL: func.func @quantize_blocked_columnwise(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 0 : i64}
// CHECK-SAME:      : tensor<320x200xbf16> -> tensor<200x320xf8E4M3FN>, tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @quantize_blocked_columnwise(%x: tensor<320x200xbf16>) -> tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %x {axis = 0 : i64}
      : tensor<320x200xbf16> -> tensor<200x320xf8E4M3FN>, tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %s : tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// 3-D expert weights, blocked per expert: [E, Rp, Cp].
// CHECK-LABEL: func.func @quantize_blocked_3d(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 2 : i64}
// CHECK-SAME:      : tensor<4x200x320xbf16> -> tensor<4x200x320xf8E4M3FN>, tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @quantize_blocked_3d(%w: tensor<4x200x320xbf16>) -> tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %w {axis = 2 : i64}
      : tensor<4x200x320xbf16> -> tensor<4x200x320xf8E4M3FN>, tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %s : tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// 3-D weights [E, N, K] = [4, 320, 200] quantized along N (dgrad) with fused
// blocking: data [E, K, N] = [4, 200, 320], scales blocked over (K rows,
// N/32 columns) = [4, 256, 12].
// CHECK-LABEL: func.func @quantize_blocked_3d_axis1_dgrad(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64}
// CHECK-SAME:      : tensor<4x320x200xbf16> -> tensor<4x200x320xf8E4M3FN>, tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @quantize_blocked_3d_axis1_dgrad(%w: tensor<4x320x200xbf16>) -> tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %w {axis = 1 : i64}
      : tensor<4x320x200xbf16> -> tensor<4x200x320xf8E4M3FN>, tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %s : tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// MXFP4 data into blocked scales with floor rounding.
// CHECK-LABEL: func.func @quantize_blocked_mxfp4(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64, rounding = #mxmoe.rounding<floor>}
// CHECK-SAME:      : tensor<130x160xbf16> -> tensor<130x160xf4E2M1FN>, tensor<256x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @quantize_blocked_mxfp4(%x: tensor<130x160xbf16>) -> tensor<256x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64, rounding = #mxmoe.rounding<floor>}
      : tensor<130x160xbf16> -> tensor<130x160xf4E2M1FN>, tensor<256x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %s : tensor<256x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}
