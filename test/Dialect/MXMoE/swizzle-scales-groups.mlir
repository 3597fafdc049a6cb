// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// mxmoe.swizzle_scales with group `offsets` (2-D scales only):
// * M-groups (plain blocked side): rows a multiple of 128, >= roundUp(M, 128);
//   columns roundUp(C, 4) exactly;
// * K-groups (per_k_group blocked side): rows roundUp(R, 128) exactly;
//   columns a multiple of 4, >= roundUp(Ct, 4).

// M-groups, row-major -> blocked. M = 1000, G = 8: static bound
// roundDown(1000 + 127*8, 128) = 1920 rows.
// CHECK-LABEL: func.func @swizzle_m_groups_to_blocked(
// CHECK-SAME:    %[[S:[a-z0-9_]+]]: tensor<1000x8xf8E8M0FNU>, %[[OFFS:[a-z0-9_]+]]: tensor<8xi32>)
// CHECK:         %[[B:[a-z0-9_]+]] = mxmoe.swizzle_scales %[[S]] offsets(%[[OFFS]] : tensor<8xi32>)
// CHECK-SAME:      : tensor<1000x8xf8E8M0FNU> -> tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK-NEXT:    return %[[B]]
func.func @swizzle_m_groups_to_blocked(%s: tensor<1000x8xf8E8M0FNU>, %offs: tensor<8xi32>) -> tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %b = mxmoe.swizzle_scales %s offsets(%offs : tensor<8xi32>)
      : tensor<1000x8xf8E8M0FNU> -> tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %b : tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// M-groups, blocked -> row-major, with the smallest row count (1024) and
// padded columns (C = 10 -> 12).
// CHECK-LABEL: func.func @swizzle_m_groups_from_blocked(
// CHECK:         mxmoe.swizzle_scales %{{[a-z0-9_]+}} offsets(%{{[a-z0-9_]+}} : tensor<8xi32>)
// CHECK-SAME:      : tensor<1024x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<1000x10xf8E8M0FNU>
func.func @swizzle_m_groups_from_blocked(%b: tensor<1024x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, %offs: tensor<8xi32>) -> tensor<1000x10xf8E8M0FNU> {
  %s = mxmoe.swizzle_scales %b offsets(%offs : tensor<8xi32>)
      : tensor<1024x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<1000x10xf8E8M0FNU>
  return %s : tensor<1000x10xf8E8M0FNU>
}

// K-groups, row-major -> per-K-group blocked. Ct = 39 scale columns, G = 8:
// static bound roundDown(39 + 3*8, 4) = 60 columns; R = 200 -> 256 rows.
// CHECK-LABEL: func.func @swizzle_k_groups_to_blocked(
// CHECK-SAME:    %[[S:[a-z0-9_]+]]: tensor<200x39xf8E8M0FNU>, %[[OFFS:[a-z0-9_]+]]: tensor<8xi32>)
// CHECK:         mxmoe.swizzle_scales %[[S]] offsets(%[[OFFS]] : tensor<8xi32>)
// CHECK-SAME:      : tensor<200x39xf8E8M0FNU> -> tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
func.func @swizzle_k_groups_to_blocked(%s: tensor<200x39xf8E8M0FNU>, %offs: tensor<8xi32>) -> tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>> {
  %b = mxmoe.swizzle_scales %s offsets(%offs : tensor<8xi32>)
      : tensor<200x39xf8E8M0FNU> -> tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return %b : tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
}

// K-groups, per-K-group blocked -> row-major, smallest column count
// roundUp(39, 4) = 40.
// CHECK-LABEL: func.func @swizzle_k_groups_from_blocked(
// CHECK:         mxmoe.swizzle_scales %{{[a-z0-9_]+}} offsets(%{{[a-z0-9_]+}} : tensor<8xi32>)
// CHECK-SAME:      : tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>> -> tensor<256x39xf8E8M0FNU>
func.func @swizzle_k_groups_from_blocked(%b: tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, %offs: tensor<8xi32>) -> tensor<256x39xf8E8M0FNU> {
  %s = mxmoe.swizzle_scales %b offsets(%offs : tensor<8xi32>)
      : tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>> -> tensor<256x39xf8E8M0FNU>
  return %s : tensor<256x39xf8E8M0FNU>
}

// Dynamic group count and dynamic dims on the grouped axis.
// CHECK-LABEL: func.func @swizzle_groups_dynamic(
// CHECK:         mxmoe.swizzle_scales %{{[a-z0-9_]+}} offsets(%{{[a-z0-9_]+}} : tensor<?xi32>)
// CHECK-SAME:      : tensor<?x16xf8E8M0FNU> -> tensor<?x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK:         mxmoe.swizzle_scales %{{[a-z0-9_]+}} offsets(%{{[a-z0-9_]+}} : tensor<?xi32>)
// CHECK-SAME:      : tensor<512x?xf8E8M0FNU> -> tensor<512x?xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
func.func @swizzle_groups_dynamic(%m: tensor<?x16xf8E8M0FNU>, %k: tensor<512x?xf8E8M0FNU>, %offs: tensor<?xi32>)
    -> (tensor<?x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<512x?xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>) {
  %bm = mxmoe.swizzle_scales %m offsets(%offs : tensor<?xi32>)
      : tensor<?x16xf8E8M0FNU> -> tensor<?x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  %bk = mxmoe.swizzle_scales %k offsets(%offs : tensor<?xi32>)
      : tensor<512x?xf8E8M0FNU> -> tensor<512x?xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return %bm, %bk : tensor<?x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<512x?xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
}

// Jagged quantize (row-major scales) then K-group swizzle, as the weight
// gradient prepares its operands.
// CHECK-LABEL: func.func @jagged_quantize_then_k_group_swizzle(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<1000x256xbf16>, %[[OFFS:[a-z0-9_]+]]: tensor<8xi32>)
// CHECK:         %[[Q:[a-z0-9_]+]], %[[S:[a-z0-9_]+]] = mxmoe.quantize %[[X]] offsets(%[[OFFS]] : tensor<8xi32>) {axis = 0 : i64}
// CHECK-SAME:      : tensor<1000x256xbf16> -> tensor<256x1248xf8E4M3FN>, tensor<256x39xf8E8M0FNU>
// CHECK-NEXT:    %[[B:[a-z0-9_]+]] = mxmoe.swizzle_scales %[[S]] offsets(%[[OFFS]] : tensor<8xi32>)
// CHECK-SAME:      : tensor<256x39xf8E8M0FNU> -> tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
func.func @jagged_quantize_then_k_group_swizzle(%x: tensor<1000x256xbf16>, %offs: tensor<8xi32>) -> tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>> {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64}
      : tensor<1000x256xbf16> -> tensor<256x1248xf8E4M3FN>, tensor<256x39xf8E8M0FNU>
  %b = mxmoe.swizzle_scales %s offsets(%offs : tensor<8xi32>)
      : tensor<256x39xf8E8M0FNU> -> tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return %b : tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
}
