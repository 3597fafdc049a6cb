// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// Round-trip of mxmoe.grouped_matmul, 2D x 2D -> 3D (weight gradient, groups
// along the contraction/token axis) with MX operands:
//   lhs [M', T] + scales, rhs [N', T] + scales, offsets [G] -> [G, M', N'].
// T is the padded token axis written by a jagged mxmoe.quantize.

// Row-major scales [R, T/32]; T = 1248 (T/32 = 39).
// CHECK-LABEL: func.func @gmm_k_grouped_row_major(
// CHECK-SAME:    %[[G:[a-z0-9_]+]]: tensor<256x1248xf8E5M2>, %[[GS:[a-z0-9_]+]]: tensor<256x39xf8E8M0FNU>,
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<512x1248xf8E4M3FN>, %[[XS:[a-z0-9_]+]]: tensor<512x39xf8E8M0FNU>, %[[OFFS:[a-z0-9_]+]]: tensor<8xi32>)
// CHECK:         %[[O:[a-z0-9_]+]] = mxmoe.grouped_matmul %[[G]] scales %[[GS]], %[[X]] scales %[[XS]] offsets %[[OFFS]]
// CHECK-SAME:      : (tensor<256x1248xf8E5M2>, tensor<256x39xf8E8M0FNU>, tensor<512x1248xf8E4M3FN>, tensor<512x39xf8E8M0FNU>, tensor<8xi32>) -> tensor<8x256x512xf32>
// CHECK-NEXT:    return %[[O]] : tensor<8x256x512xf32>
func.func @gmm_k_grouped_row_major(%g: tensor<256x1248xf8E5M2>, %gs: tensor<256x39xf8E8M0FNU>,
                                   %x: tensor<512x1248xf8E4M3FN>, %xs: tensor<512x39xf8E8M0FNU>,
                                   %offs: tensor<8xi32>) -> tensor<8x256x512xf32> {
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<256x1248xf8E5M2>, tensor<256x39xf8E8M0FNU>, tensor<512x1248xf8E4M3FN>, tensor<512x39xf8E8M0FNU>, tensor<8xi32>) -> tensor<8x256x512xf32>
  return %o : tensor<8x256x512xf32>
}

// Per-K-group blocked scales, [roundUp(R, 128), Qp] with Qp = 60 (the static
// bound roundDown(39 + 3*8, 4)); M' = 200 rows are padded to 256.
// CHECK-LABEL: func.func @gmm_k_grouped_per_k_group(
// CHECK:         mxmoe.grouped_matmul %{{[a-z0-9_]+}} scales %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} scales %{{[a-z0-9_]+}} offsets %{{[a-z0-9_]+}}
// CHECK-SAME:      : (tensor<200x1248xf8E4M3FN>, tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<512x1248xf8E4M3FN>, tensor<512x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<8xi32>) -> tensor<8x200x512xbf16>
func.func @gmm_k_grouped_per_k_group(%g: tensor<200x1248xf8E4M3FN>, %gs: tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
                                     %x: tensor<512x1248xf8E4M3FN>, %xs: tensor<512x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
                                     %offs: tensor<8xi32>) -> tensor<8x200x512xbf16> {
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<200x1248xf8E4M3FN>, tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<512x1248xf8E4M3FN>,
         tensor<512x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<8xi32>) -> tensor<8x200x512xbf16>
  return %o : tensor<8x200x512xbf16>
}

// The smallest per-K-group column count roundUp(T/32, 4) = 40, and a row-major
// rhs next to a blocked lhs.
// CHECK-LABEL: func.func @gmm_k_grouped_minimal_columns(
// CHECK:         mxmoe.grouped_matmul
// CHECK-SAME:      : (tensor<128x1248xf8E4M3FN>, tensor<128x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<64x1248xf8E4M3FN>, tensor<64x39xf8E8M0FNU>, tensor<8xi32>) -> tensor<8x128x64xf32>
func.func @gmm_k_grouped_minimal_columns(%g: tensor<128x1248xf8E4M3FN>, %gs: tensor<128x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
                                         %x: tensor<64x1248xf8E4M3FN>, %xs: tensor<64x39xf8E8M0FNU>,
                                         %offs: tensor<8xi32>) -> tensor<8x128x64xf32> {
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<128x1248xf8E4M3FN>, tensor<128x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<64x1248xf8E4M3FN>,
         tensor<64x39xf8E8M0FNU>, tensor<8xi32>) -> tensor<8x128x64xf32>
  return %o : tensor<8x128x64xf32>
}

// Dynamic token axis and dynamic group count.
// CHECK-LABEL: func.func @gmm_k_grouped_dynamic(
// CHECK:         mxmoe.grouped_matmul
// CHECK-SAME:      : (tensor<256x?xf8E4M3FN>, tensor<256x?xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<512x?xf8E4M3FN>, tensor<512x?xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<?xi32>) -> tensor<?x256x512xf32>
func.func @gmm_k_grouped_dynamic(%g: tensor<256x?xf8E4M3FN>, %gs: tensor<256x?xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
                                 %x: tensor<512x?xf8E4M3FN>, %xs: tensor<512x?xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
                                 %offs: tensor<?xi32>) -> tensor<?x256x512xf32> {
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<256x?xf8E4M3FN>, tensor<256x?xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<512x?xf8E4M3FN>,
         tensor<512x?xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<?xi32>) -> tensor<?x256x512xf32>
  return %o : tensor<?x256x512xf32>
}
