// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// Round-trip of mxmoe.swizzle_scales without offsets: row-major [R, C] <->
// blocked [roundUp(R, 128), roundUp(C, 4)], and per expert [E, R, C] <->
// [E, roundUp(R, 128), roundUp(C, 4)].

// To blocked, with padding (torchao to_blocked: R = 200, C = 10 -> 256 x 12).
// CHECK-LABEL: func.func @swizzle_to_blocked(
// CHECK-SAME:    %[[S:[a-z0-9_]+]]: tensor<200x10xf8E8M0FNU>)
// CHECK:         %[[B:[a-z0-9_]+]] = mxmoe.swizzle_scales %[[S]]
// CHECK-SAME:      : tensor<200x10xf8E8M0FNU> -> tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK-NEXT:    return %[[B]] : tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @swizzle_to_blocked(%s: tensor<200x10xf8E8M0FNU>) -> tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %b = mxmoe.swizzle_scales %s : tensor<200x10xf8E8M0FNU> -> tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %b : tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// From blocked back to row-major (padding dropped).
// CHECK-LABEL: func.func @swizzle_from_blocked(
// CHECK:         mxmoe.swizzle_scales %{{[a-z0-9_]+}}
// CHECK-SAME:      : tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<200x10xf8E8M0FNU>
func.func @swizzle_from_blocked(%b: tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>) -> tensor<200x10xf8E8M0FNU> {
  %s = mxmoe.swizzle_scales %b : tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<200x10xf8E8M0FNU>
  return %s : tensor<200x10xf8E8M0FNU>
}

// Tile-aligned: same shape on both sides; an explicit row_major encoding on
// the row-major side.
// CHECK-LABEL: func.func @swizzle_aligned_explicit_row_major(
// CHECK:         mxmoe.swizzle_scales %{{[a-z0-9_]+}}
// CHECK-SAME:      : tensor<8192x160xf8E8M0FNU, #mxmoe.scale_layout<row_major>> -> tensor<8192x160xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @swizzle_aligned_explicit_row_major(%s: tensor<8192x160xf8E8M0FNU, #mxmoe.scale_layout<row_major>>) -> tensor<8192x160xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %b = mxmoe.swizzle_scales %s : tensor<8192x160xf8E8M0FNU, #mxmoe.scale_layout<row_major>> -> tensor<8192x160xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %b : tensor<8192x160xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// 3-D per-expert scales, both directions.
// CHECK-LABEL: func.func @swizzle_3d(
// CHECK-SAME:    %[[S:[a-z0-9_]+]]: tensor<4x200x10xf8E8M0FNU>)
// CHECK:         %[[B:[a-z0-9_]+]] = mxmoe.swizzle_scales %[[S]]
// CHECK-SAME:      : tensor<4x200x10xf8E8M0FNU> -> tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK-NEXT:    %[[R:[a-z0-9_]+]] = mxmoe.swizzle_scales %[[B]]
// CHECK-SAME:      : tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<4x200x10xf8E8M0FNU>
// CHECK-NEXT:    return %[[R]] : tensor<4x200x10xf8E8M0FNU>
func.func @swizzle_3d(%s: tensor<4x200x10xf8E8M0FNU>) -> tensor<4x200x10xf8E8M0FNU> {
  %b = mxmoe.swizzle_scales %s : tensor<4x200x10xf8E8M0FNU> -> tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  %r = mxmoe.swizzle_scales %b : tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<4x200x10xf8E8M0FNU>
  return %r : tensor<4x200x10xf8E8M0FNU>
}

// Dynamic dims are compatible with any padded size.
// CHECK-LABEL: func.func @swizzle_dynamic(
// CHECK:         mxmoe.swizzle_scales %{{[a-z0-9_]+}}
// CHECK-SAME:      : tensor<?x10xf8E8M0FNU> -> tensor<?x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK:         mxmoe.swizzle_scales %{{[a-z0-9_]+}}
// CHECK-SAME:      : tensor<?x?x?xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<8x200x10xf8E8M0FNU>
func.func @swizzle_dynamic(%s: tensor<?x10xf8E8M0FNU>, %b3: tensor<?x?x?xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>)
    -> (tensor<?x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8x200x10xf8E8M0FNU>) {
  %b = mxmoe.swizzle_scales %s : tensor<?x10xf8E8M0FNU> -> tensor<?x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  %r = mxmoe.swizzle_scales %b3 : tensor<?x?x?xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<8x200x10xf8E8M0FNU>
  return %b, %r : tensor<?x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8x200x10xf8E8M0FNU>
}

// quantize (row-major) then swizzle == the unfused form of a blocked quantize.
// CHECK-LABEL: func.func @quantize_then_swizzle(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<200x320xbf16>)
// CHECK:         %[[Q:[a-z0-9_]+]], %[[S:[a-z0-9_]+]] = mxmoe.quantize %[[X]] {axis = 1 : i64}
// CHECK-SAME:      : tensor<200x320xbf16> -> tensor<200x320xf8E4M3FN>, tensor<200x10xf8E8M0FNU>
// CHECK-NEXT:    %[[B:[a-z0-9_]+]] = mxmoe.swizzle_scales %[[S]]
// CHECK-SAME:      : tensor<200x10xf8E8M0FNU> -> tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @quantize_then_swizzle(%x: tensor<200x320xbf16>) -> tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<200x320xbf16> -> tensor<200x320xf8E4M3FN>, tensor<200x10xf8E8M0FNU>
  %b = mxmoe.swizzle_scales %s : tensor<200x10xf8E8M0FNU> -> tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %b : tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// MX128 scales keep their recorded tile through the swizzle (or drop it).
// CHECK-LABEL: func.func @swizzle_keeps_tile(
// CHECK: mxmoe.swizzle_scales %{{.*}} : tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>> -> tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
// CHECK: mxmoe.swizzle_scales %{{.*}} : tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>> -> tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @swizzle_keeps_tile(%s: tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>) {
  %b = mxmoe.swizzle_scales %s : tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>> -> tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  %c = mxmoe.swizzle_scales %s : tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>> -> tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}
