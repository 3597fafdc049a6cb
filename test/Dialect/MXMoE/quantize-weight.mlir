// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// mxmoe.quantize_weight: one square-tile quantization of a weight, written
// along K ([E, N, K], the forward's) and along N ([E, K, N], the input
// gradient's); each scale result in its own layout. Partial tiles at the
// tails: N = 224 and K = 2880 are not multiples of 128.

// CHECK-LABEL: func.func @experts_row_major(
// CHECK:         mxmoe.quantize_weight %{{[a-z0-9_]+}} {scale_tile = array<i64: 128, 128>}
// CHECK-SAME:      : tensor<4x224x2880xbf16> -> tensor<4x224x2880xf8E4M3FN>, tensor<4x224x90xf8E8M0FNU>, tensor<4x2880x224xf8E4M3FN>, tensor<4x2880x7xf8E8M0FNU>
func.func @experts_row_major(%w: tensor<4x224x2880xbf16>) -> tensor<4x2880x224xf8E4M3FN> {
  %q, %s, %qt, %st = mxmoe.quantize_weight %w {scale_tile = array<i64: 128, 128>}
      : tensor<4x224x2880xbf16> -> tensor<4x224x2880xf8E4M3FN>, tensor<4x224x90xf8E8M0FNU>,
        tensor<4x2880x224xf8E4M3FN>, tensor<4x2880x7xf8E8M0FNU>
  return %qt : tensor<4x2880x224xf8E4M3FN>
}

// Blocked scales for both GEMMs (per expert [roundUp(rows, 128),
// roundUp(cols / 32, 4)]), FLOOR rounding, e5m2.
// CHECK-LABEL: func.func @experts_blocked(
// CHECK:         mxmoe.quantize_weight %{{[a-z0-9_]+}} {rounding = #mxmoe.rounding<floor>, scale_tile = array<i64: 128, 128>}
// CHECK-SAME:      tensor<2x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>
// CHECK-SAME:      tensor<2x384x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @experts_blocked(%w: tensor<2x160x384xf32>) -> tensor<2x384x160xf8E5M2> {
  %q, %s, %qt, %st = mxmoe.quantize_weight %w {rounding = #mxmoe.rounding<floor>, scale_tile = array<i64: 128, 128>}
      : tensor<2x160x384xf32> -> tensor<2x160x384xf8E5M2>,
        tensor<2x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>,
        tensor<2x384x160xf8E5M2>, tensor<2x384x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %qt : tensor<2x384x160xf8E5M2>
}

// A 2-D weight with compact scales (one byte per 128x128 tile):
// [ceil(N/128), ceil(K/128)] and [ceil(K/128), ceil(N/128)].
// CHECK-LABEL: func.func @linear_compact(
// CHECK:         mxmoe.quantize_weight %{{[a-z0-9_]+}} {scale_tile = array<i64: 128, 128>}
// CHECK-SAME:      : tensor<320x96xbf16> -> tensor<320x96xf8E4M3FN>, tensor<3x1xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>, tensor<96x320xf8E4M3FN>, tensor<1x3xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
func.func @linear_compact(%w: tensor<320x96xbf16>) -> tensor<96x320xf8E4M3FN> {
  %q, %s, %qt, %st = mxmoe.quantize_weight %w {scale_tile = array<i64: 128, 128>}
      : tensor<320x96xbf16> -> tensor<320x96xf8E4M3FN>,
        tensor<3x1xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>,
        tensor<96x320xf8E4M3FN>, tensor<1x3xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
  return %qt : tensor<96x320xf8E4M3FN>
}
