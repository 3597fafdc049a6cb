// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// mxmoe.quantize with scale tiles (MX128): one scale per r x c tile of the
// data, written as MX scales (each 1x32 slot holds its tile's scale) or in
// the compact layout (one byte per tile). Tails are partial tiles: K = 2880
// is 22.5 x 128, so the last 1x128 tile is 64 wide and there are 23 tiles.

// CHECK-LABEL: func.func @rowwise_1x128_mx_scales(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
// CHECK-SAME:      : tensor<200x2880xbf16> -> tensor<200x2880xf8E4M3FN>, tensor<200x90xf8E8M0FNU>
func.func @rowwise_1x128_mx_scales(%x: tensor<200x2880xbf16>) -> tensor<200x90xf8E8M0FNU> {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<200x2880xbf16> -> tensor<200x2880xf8E4M3FN>, tensor<200x90xf8E8M0FNU>
  return %s : tensor<200x90xf8E8M0FNU>
}

// CHECK-LABEL: func.func @rowwise_1x128_compact(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
// CHECK-SAME:      : tensor<200x2880xbf16> -> tensor<200x2880xf8E4M3FN>, tensor<200x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128]>>
func.func @rowwise_1x128_compact(%x: tensor<200x2880xbf16>) -> tensor<200x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128]>> {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<200x2880xbf16> -> tensor<200x2880xf8E4M3FN>, tensor<200x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128]>>
  return %s : tensor<200x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128]>>
}

// The same tile with the swizzle fused: blocked [roundUp(200, 128), roundUp(10, 4)].
// CHECK-LABEL: func.func @rowwise_1x128_blocked(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64, rounding = #mxmoe.rounding<floor>, scale_tile = array<i64: 1, 128>}
// CHECK-SAME:      : tensor<200x320xf32> -> tensor<200x320xf8E5M2>, tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @rowwise_1x128_blocked(%x: tensor<200x320xf32>) -> tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64, rounding = #mxmoe.rounding<floor>, scale_tile = array<i64: 1, 128>}
      : tensor<200x320xf32> -> tensor<200x320xf8E5M2>, tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %s : tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// 128x128 weight tiles never cross experts: [16, ceil(200/128), ceil(2880/128)].
// CHECK-LABEL: func.func @weight_128x128_compact(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 2 : i64, scale_tile = array<i64: 128, 128>}
// CHECK-SAME:      : tensor<16x200x2880xbf16> -> tensor<16x200x2880xf8E4M3FN>, tensor<16x2x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
func.func @weight_128x128_compact(%w: tensor<16x200x2880xbf16>) -> tensor<16x2x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>> {
  %q, %s = mxmoe.quantize %w {axis = 2 : i64, scale_tile = array<i64: 128, 128>}
      : tensor<16x200x2880xbf16> -> tensor<16x200x2880xf8E4M3FN>, tensor<16x2x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
  return %s : tensor<16x2x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
}

// Along N (the input gradient's weight): data [E, K, N], the same 128x128
// blocks as along K, transposed; per-expert blocked MX scales.
// CHECK-LABEL: func.func @weight_128x128_along_n(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64, scale_tile = array<i64: 128, 128>}
// CHECK-SAME:      : tensor<4x256x192xbf16> -> tensor<4x192x256xf8E4M3FN>, tensor<4x256x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @weight_128x128_along_n(%w: tensor<4x256x192xbf16>) -> tensor<4x256x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %w {axis = 1 : i64, scale_tile = array<i64: 128, 128>}
      : tensor<4x256x192xbf16> -> tensor<4x192x256xf8E4M3FN>, tensor<4x256x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %s : tensor<4x256x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// A jagged token axis (the weight gradient's operands): 128-token windows
// restart at each group's start. M = 1000 tokens in 8 groups: data [64,
// 1248]; compact per_k_group [64, Wp], ceil(1000/128) = 8 <= Wp, and
// floor((1000 + 127*8) / 128) = 15 always fits.
// CHECK-LABEL: func.func @jagged_128_windows(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} offsets(%{{[a-z0-9_]+}} : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>}
// CHECK-SAME:      : tensor<1000x64xbf16> -> tensor<64x1248xf8E4M3FN>, tensor<64x15xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128], per_k_group>>
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} offsets(%{{[a-z0-9_]+}} : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>}
// CHECK-SAME:      : tensor<1000x64xbf16> -> tensor<64x1248xf8E4M3FN>, tensor<128x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
func.func @jagged_128_windows(%x: tensor<1000x64xbf16>, %offs: tensor<8xi32>) {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<1000x64xbf16> -> tensor<64x1248xf8E4M3FN>, tensor<64x15xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128], per_k_group>>
  %q2, %s2 = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<1000x64xbf16> -> tensor<64x1248xf8E4M3FN>, tensor<128x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return
}

// Dequantize reads compact scales (the tile comes from the encoding).
// CHECK-LABEL: func.func @dequantize_compact(
// CHECK:         mxmoe.dequantize %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {axis = 2 : i64}
// CHECK-SAME:      : tensor<16x200x2880xf8E4M3FN>, tensor<16x2x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>> -> tensor<16x200x2880xbf16>
func.func @dequantize_compact(%q: tensor<16x200x2880xf8E4M3FN>, %s: tensor<16x2x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>) -> tensor<16x200x2880xbf16> {
  %x = mxmoe.dequantize %q, %s {axis = 2 : i64}
      : tensor<16x200x2880xf8E4M3FN>, tensor<16x2x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>> -> tensor<16x200x2880xbf16>
  return %x : tensor<16x200x2880xbf16>
}
