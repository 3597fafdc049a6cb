// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// mxmoe.requantize: MX (1x32) data to one scale per scale tile by exponent
// shifts, e.g. MXFP8 checkpoint weights to MX128 [128, 128] tiles. Tails
// are partial tiles (N = 200, K = 2880).

// CHECK-LABEL: func.func @weights_compact(
// CHECK:         mxmoe.requantize %{{.*}}, %{{.*}} {scale_tile = array<i64: 128, 128>}
// CHECK-SAME:      : tensor<4x200x2880xf8E4M3FN>, tensor<4x200x90xf8E8M0FNU> -> tensor<4x200x2880xf8E4M3FN>, tensor<4x2x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
func.func @weights_compact(%q: tensor<4x200x2880xf8E4M3FN>, %s: tensor<4x200x90xf8E8M0FNU>) -> tensor<4x2x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>> {
  %q2, %s2 = mxmoe.requantize %q, %s {scale_tile = array<i64: 128, 128>}
      : tensor<4x200x2880xf8E4M3FN>, tensor<4x200x90xf8E8M0FNU>
      -> tensor<4x200x2880xf8E4M3FN>, tensor<4x2x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
  return %s2 : tensor<4x2x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
}

// Row-major MX scales recording the tile (each 1x32 slot holds its tile's
// byte), 1x128 tiles, e5m2.
// CHECK-LABEL: func.func @rows_row_major(
// CHECK:         mxmoe.requantize %{{.*}}, %{{.*}} {scale_tile = array<i64: 1, 128>}
// CHECK-SAME:      -> tensor<64x256xf8E5M2>, tensor<64x8xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
func.func @rows_row_major(%q: tensor<64x256xf8E5M2>, %s: tensor<64x8xf8E8M0FNU>) -> tensor<64x256xf8E5M2> {
  %q2, %s2 = mxmoe.requantize %q, %s {scale_tile = array<i64: 1, 128>}
      : tensor<64x256xf8E5M2>, tensor<64x8xf8E8M0FNU>
      -> tensor<64x256xf8E5M2>, tensor<64x8xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
  return %q2 : tensor<64x256xf8E5M2>
}
