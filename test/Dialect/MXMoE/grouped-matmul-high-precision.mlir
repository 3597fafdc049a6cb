// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// mxmoe.grouped_matmul with high-precision operands (bf16/f16/f32, same type
// on both sides) and no scales: no `scales` keyword is printed and the
// contraction size need not be a multiple of 32.

// bf16 2D x 3D -> 2D.
// CHECK-LABEL: func.func @gmm_bf16_2d_3d(
// CHECK-SAME:    %[[A:[a-z0-9_]+]]: tensor<1000x200xbf16>, %[[W:[a-z0-9_]+]]: tensor<4x64x200xbf16>, %[[OFFS:[a-z0-9_]+]]: tensor<4xi32>)
// CHECK:         %[[O:[a-z0-9_]+]] = mxmoe.grouped_matmul %[[A]], %[[W]] offsets %[[OFFS]]
// CHECK-SAME:      : (tensor<1000x200xbf16>, tensor<4x64x200xbf16>, tensor<4xi32>) -> tensor<1000x64xbf16>
// CHECK-NEXT:    return %[[O]] : tensor<1000x64xbf16>
func.func @gmm_bf16_2d_3d(%a: tensor<1000x200xbf16>, %w: tensor<4x64x200xbf16>, %offs: tensor<4xi32>) -> tensor<1000x64xbf16> {
  %o = mxmoe.grouped_matmul %a, %w offsets %offs
      : (tensor<1000x200xbf16>, tensor<4x64x200xbf16>, tensor<4xi32>) -> tensor<1000x64xbf16>
  return %o : tensor<1000x64xbf16>
}

// bf16 2D x 2D -> 3D with an f32 result (weight gradient in bf16).
// CHECK-LABEL: func.func @gmm_bf16_2d_2d(
// CHECK:         mxmoe.grouped_matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} offsets %{{[a-z0-9_]+}}
// CHECK-SAME:      : (tensor<64x1000xbf16>, tensor<200x1000xbf16>, tensor<4xi32>) -> tensor<4x64x200xf32>
func.func @gmm_bf16_2d_2d(%g: tensor<64x1000xbf16>, %x: tensor<200x1000xbf16>, %offs: tensor<4xi32>) -> tensor<4x64x200xf32> {
  %o = mxmoe.grouped_matmul %g, %x offsets %offs
      : (tensor<64x1000xbf16>, tensor<200x1000xbf16>, tensor<4xi32>) -> tensor<4x64x200xf32>
  return %o : tensor<4x64x200xf32>
}

// f16 and f32 operands.
// CHECK-LABEL: func.func @gmm_f16_f32(
// CHECK:         mxmoe.grouped_matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} offsets %{{[a-z0-9_]+}}
// CHECK-SAME:      : (tensor<96x48xf16>, tensor<3x16x48xf16>, tensor<3xi32>) -> tensor<96x16xf32>
// CHECK:         mxmoe.grouped_matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} offsets %{{[a-z0-9_]+}}
// CHECK-SAME:      : (tensor<96x48xf32>, tensor<3x16x48xf32>, tensor<3xi32>) -> tensor<96x16xbf16>
func.func @gmm_f16_f32(%a16: tensor<96x48xf16>, %w16: tensor<3x16x48xf16>,
                       %a32: tensor<96x48xf32>, %w32: tensor<3x16x48xf32>, %offs: tensor<3xi32>) -> (tensor<96x16xf32>, tensor<96x16xbf16>) {
  %o16 = mxmoe.grouped_matmul %a16, %w16 offsets %offs : (tensor<96x48xf16>, tensor<3x16x48xf16>, tensor<3xi32>) -> tensor<96x16xf32>
  %o32 = mxmoe.grouped_matmul %a32, %w32 offsets %offs : (tensor<96x48xf32>, tensor<3x16x48xf32>, tensor<3xi32>) -> tensor<96x16xbf16>
  return %o16, %o32 : tensor<96x16xf32>, tensor<96x16xbf16>
}

// Dynamic shapes everywhere.
// CHECK-LABEL: func.func @gmm_bf16_dynamic(
// CHECK:         mxmoe.grouped_matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} offsets %{{[a-z0-9_]+}}
// CHECK-SAME:      : (tensor<?x?xbf16>, tensor<?x?x?xbf16>, tensor<?xi32>) -> tensor<?x?xbf16>
func.func @gmm_bf16_dynamic(%a: tensor<?x?xbf16>, %w: tensor<?x?x?xbf16>, %offs: tensor<?xi32>) -> tensor<?x?xbf16> {
  %o = mxmoe.grouped_matmul %a, %w offsets %offs : (tensor<?x?xbf16>, tensor<?x?x?xbf16>, tensor<?xi32>) -> tensor<?x?xbf16>
  return %o : tensor<?x?xbf16>
}
