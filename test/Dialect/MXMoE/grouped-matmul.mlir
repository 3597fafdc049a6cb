// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// Round-trip of mxmoe.grouped_matmul, 2D x 3D -> 2D (forward / input
// gradient, groups along M) with MX operands:
//   lhs [M, K] + scales, rhs [G, N, K] + scales, offsets [G] -> [M, N].

// Row-major scales: lhs [M, K/32], rhs [G, N, K/32].
// CHECK-LABEL: func.func @gmm_mxfp8_row_major(
// CHECK-SAME:    %[[A:[a-z0-9_]+]]: tensor<8192x5120xf8E4M3FN>, %[[AS:[a-z0-9_]+]]: tensor<8192x160xf8E8M0FNU>,
// CHECK-SAME:    %[[W:[a-z0-9_]+]]: tensor<16x1024x5120xf8E4M3FN>, %[[WS:[a-z0-9_]+]]: tensor<16x1024x160xf8E8M0FNU>, %[[OFFS:[a-z0-9_]+]]: tensor<16xi32>)
// CHECK:         %[[O:[a-z0-9_]+]] = mxmoe.grouped_matmul %[[A]] scales %[[AS]], %[[W]] scales %[[WS]] offsets %[[OFFS]]
// CHECK-SAME:      : (tensor<8192x5120xf8E4M3FN>, tensor<8192x160xf8E8M0FNU>, tensor<16x1024x5120xf8E4M3FN>, tensor<16x1024x160xf8E8M0FNU>, tensor<16xi32>) -> tensor<8192x1024xbf16>
// CHECK-NEXT:    return %[[O]] : tensor<8192x1024xbf16>
func.func @gmm_mxfp8_row_major(%a: tensor<8192x5120xf8E4M3FN>, %as: tensor<8192x160xf8E8M0FNU>,
                               %w: tensor<16x1024x5120xf8E4M3FN>, %ws: tensor<16x1024x160xf8E8M0FNU>,
                               %offs: tensor<16xi32>) -> tensor<8192x1024xbf16> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<8192x5120xf8E4M3FN>, tensor<8192x160xf8E8M0FNU>, tensor<16x1024x5120xf8E4M3FN>,
         tensor<16x1024x160xf8E8M0FNU>, tensor<16xi32>) -> tensor<8192x1024xbf16>
  return %o : tensor<8192x1024xbf16>
}

// Blocked scales: lhs M-grouped [Mp, roundUp(K/32, 4)] with Mp the static
// bound roundDown(1000 + 127*8, 128) = 1920; rhs per expert
// [G, roundUp(N, 128), roundUp(K/32, 4)] = [8, 384, 8].
// CHECK-LABEL: func.func @gmm_mxfp8_blocked(
// CHECK:         mxmoe.grouped_matmul %{{[a-z0-9_]+}} scales %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} scales %{{[a-z0-9_]+}} offsets %{{[a-z0-9_]+}}
// CHECK-SAME:      : (tensor<1000x256xf8E4M3FN>, tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8x320x256xf8E4M3FN>, tensor<8x384x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8xi32>) -> tensor<1000x320xbf16>
func.func @gmm_mxfp8_blocked(%a: tensor<1000x256xf8E4M3FN>, %as: tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                             %w: tensor<8x320x256xf8E4M3FN>, %ws: tensor<8x384x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                             %offs: tensor<8xi32>) -> tensor<1000x320xbf16> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<1000x256xf8E4M3FN>, tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8x320x256xf8E4M3FN>,
         tensor<8x384x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8xi32>) -> tensor<1000x320xbf16>
  return %o : tensor<1000x320xbf16>
}

// The smallest M-grouped row count, roundUp(M, 128) = 1024, and padded scale
// columns (K/32 = 10 -> 12).
// CHECK-LABEL: func.func @gmm_blocked_minimal_rows(
// CHECK:         mxmoe.grouped_matmul
// CHECK-SAME:      : (tensor<1000x320xf8E4M3FN>, tensor<1024x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<4x128x320xf8E4M3FN>, tensor<4x128x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<4xi32>) -> tensor<1000x128xbf16>
func.func @gmm_blocked_minimal_rows(%a: tensor<1000x320xf8E4M3FN>, %as: tensor<1024x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                                    %w: tensor<4x128x320xf8E4M3FN>, %ws: tensor<4x128x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                                    %offs: tensor<4xi32>) -> tensor<1000x128xbf16> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<1000x320xf8E4M3FN>, tensor<1024x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<4x128x320xf8E4M3FN>,
         tensor<4x128x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<4xi32>) -> tensor<1000x128xbf16>
  return %o : tensor<1000x128xbf16>
}

// Mixed MX element types (E4M3 activations x E5M2 gradients) and an f32
// result.
// CHECK-LABEL: func.func @gmm_mixed_e4m3_e5m2_f32(
// CHECK:         mxmoe.grouped_matmul
// CHECK-SAME:      : (tensor<512x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU>, tensor<4x128x256xf8E5M2>, tensor<4x128x8xf8E8M0FNU>, tensor<4xi32>) -> tensor<512x128xf32>
func.func @gmm_mixed_e4m3_e5m2_f32(%a: tensor<512x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU>,
                                   %w: tensor<4x128x256xf8E5M2>, %ws: tensor<4x128x8xf8E8M0FNU>,
                                   %offs: tensor<4xi32>) -> tensor<512x128xf32> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<512x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU>, tensor<4x128x256xf8E5M2>, tensor<4x128x8xf8E8M0FNU>, tensor<4xi32>) -> tensor<512x128xf32>
  return %o : tensor<512x128xf32>
}

// MXFP4 x MXFP4 and MXFP6 (E2M3) x MXFP6 (E3M2).
// CHECK-LABEL: func.func @gmm_mxfp4_mxfp6(
// CHECK:         mxmoe.grouped_matmul
// CHECK-SAME:      : (tensor<256x128xf4E2M1FN>, tensor<256x4xf8E8M0FNU>, tensor<2x64x128xf4E2M1FN>, tensor<2x64x4xf8E8M0FNU>, tensor<2xi32>) -> tensor<256x64xbf16>
// CHECK:         mxmoe.grouped_matmul
// CHECK-SAME:      : (tensor<256x128xf6E2M3FN>, tensor<256x4xf8E8M0FNU>, tensor<2x64x128xf6E3M2FN>, tensor<2x64x4xf8E8M0FNU>, tensor<2xi32>) -> tensor<256x64xbf16>
func.func @gmm_mxfp4_mxfp6(%a4: tensor<256x128xf4E2M1FN>, %w4: tensor<2x64x128xf4E2M1FN>,
                           %a6: tensor<256x128xf6E2M3FN>, %w6: tensor<2x64x128xf6E3M2FN>,
                           %as: tensor<256x4xf8E8M0FNU>, %ws: tensor<2x64x4xf8E8M0FNU>, %offs: tensor<2xi32>) -> (tensor<256x64xbf16>, tensor<256x64xbf16>) {
  %o4 = mxmoe.grouped_matmul %a4 scales %as, %w4 scales %ws offsets %offs
      : (tensor<256x128xf4E2M1FN>, tensor<256x4xf8E8M0FNU>, tensor<2x64x128xf4E2M1FN>, tensor<2x64x4xf8E8M0FNU>, tensor<2xi32>) -> tensor<256x64xbf16>
  %o6 = mxmoe.grouped_matmul %a6 scales %as, %w6 scales %ws offsets %offs
      : (tensor<256x128xf6E2M3FN>, tensor<256x4xf8E8M0FNU>, tensor<2x64x128xf6E3M2FN>, tensor<2x64x4xf8E8M0FNU>, tensor<2xi32>) -> tensor<256x64xbf16>
  return %o4, %o6 : tensor<256x64xbf16>, tensor<256x64xbf16>
}

// Layouts are chosen per operand: row-major lhs scales with blocked rhs
// scales.
// CHECK-LABEL: func.func @gmm_mixed_layouts(
// CHECK:         mxmoe.grouped_matmul
// CHECK-SAME:      : (tensor<512x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU>, tensor<4x200x256xf8E4M3FN>, tensor<4x256x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<4xi32>) -> tensor<512x200xbf16>
func.func @gmm_mixed_layouts(%a: tensor<512x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU>,
                             %w: tensor<4x200x256xf8E4M3FN>, %ws: tensor<4x256x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                             %offs: tensor<4xi32>) -> tensor<512x200xbf16> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<512x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU>, tensor<4x200x256xf8E4M3FN>,
         tensor<4x256x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<4xi32>) -> tensor<512x200xbf16>
  return %o : tensor<512x200xbf16>
}

// Dynamic token count and dynamic group count.
// CHECK-LABEL: func.func @gmm_dynamic(
// CHECK:         mxmoe.grouped_matmul
// CHECK-SAME:      : (tensor<?x256xf8E4M3FN>, tensor<?x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<?x128x256xf8E4M3FN>, tensor<?x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<?xi32>) -> tensor<?x128xbf16>
func.func @gmm_dynamic(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                       %w: tensor<?x128x256xf8E4M3FN>, %ws: tensor<?x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                       %offs: tensor<?xi32>) -> tensor<?x128xbf16> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<?x256xf8E4M3FN>, tensor<?x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<?x128x256xf8E4M3FN>,
         tensor<?x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<?xi32>) -> tensor<?x128xbf16>
  return %o : tensor<?x128xbf16>
}
