// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// Round-trip of mxmoe.scaled_grouped_matmul: x [M, K] routed rows, W [G, N, K]
// expert weights, offsets [G] i32 end offsets, result [M, N].

// No recipe: the default MXFP8 RCEIL recipe applies and nothing is printed.
// CHECK-LABEL: func.func @sgmm_default_recipe(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<8192x5120xbf16>, %[[W:[a-z0-9_]+]]: tensor<16x8192x5120xbf16>, %[[OFFS:[a-z0-9_]+]]: tensor<16xi32>)
// CHECK:         %[[Y:[a-z0-9_]+]] = mxmoe.scaled_grouped_matmul %[[X]], %[[W]], %[[OFFS]] {fqn = "layers.0.feed_forward.experts.w1"}
// CHECK-SAME:      : (tensor<8192x5120xbf16>, tensor<16x8192x5120xbf16>, tensor<16xi32>) -> tensor<8192x8192xbf16>
// CHECK-NEXT:    return %[[Y]] : tensor<8192x8192xbf16>
func.func @sgmm_default_recipe(%x: tensor<8192x5120xbf16>, %w: tensor<16x8192x5120xbf16>, %offs: tensor<16xi32>) -> tensor<8192x8192xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "layers.0.feed_forward.experts.w1"}
      : (tensor<8192x5120xbf16>, tensor<16x8192x5120xbf16>, tensor<16xi32>) -> tensor<8192x8192xbf16>
  return %y : tensor<8192x8192xbf16>
}

// Explicit recipe and precision.
// CHECK-LABEL: func.func @sgmm_recipe_precision(
// CHECK:         mxmoe.scaled_grouped_matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "layers.0.feed_forward.experts.w2", precision = #mxmoe.precision<mxfp8>, recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>}
// CHECK-SAME:      : (tensor<8192x8192xbf16>, tensor<16x5120x8192xbf16>, tensor<16xi32>) -> tensor<8192x5120xbf16>
func.func @sgmm_recipe_precision(%h: tensor<8192x8192xbf16>, %w2: tensor<16x5120x8192xbf16>, %offs: tensor<16xi32>) -> tensor<8192x5120xbf16> {
  %y = mxmoe.scaled_grouped_matmul %h, %w2, %offs {fqn = "layers.0.feed_forward.experts.w2",
      recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>, precision = #mxmoe.precision<mxfp8>}
      : (tensor<8192x8192xbf16>, tensor<16x5120x8192xbf16>, tensor<16xi32>) -> tensor<8192x5120xbf16>
  return %y : tensor<8192x5120xbf16>
}

// mxfp8 with E5M2 elements and floor rounding.
// CHECK-LABEL: func.func @sgmm_mxfp8_e5m2(
// CHECK:         mxmoe.scaled_grouped_matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "experts.w3", precision = #mxmoe.precision<mxfp8>, recipe = #mxmoe.mx_recipe<f8E5M2, block_size = 32, rounding = floor>}
// CHECK-SAME:      : (tensor<512x256xbf16>, tensor<4x128x256xbf16>, tensor<4xi32>) -> tensor<512x128xbf16>
func.func @sgmm_mxfp8_e5m2(%x: tensor<512x256xbf16>, %w: tensor<4x128x256xbf16>, %offs: tensor<4xi32>) -> tensor<512x128xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "experts.w3", precision = #mxmoe.precision<mxfp8>,
      recipe = #mxmoe.mx_recipe<f8E5M2, block_size = 32, rounding = floor>}
      : (tensor<512x256xbf16>, tensor<4x128x256xbf16>, tensor<4xi32>) -> tensor<512x128xbf16>
  return %y : tensor<512x128xbf16>
}

// MXFP4 (E2M1).
// CHECK-LABEL: func.func @sgmm_mxfp4(
// CHECK:         mxmoe.scaled_grouped_matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "experts.w1", precision = #mxmoe.precision<mxfp4>, recipe = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = even>}
// CHECK-SAME:      : (tensor<512x256xbf16>, tensor<4x128x256xbf16>, tensor<4xi32>) -> tensor<512x128xbf16>
func.func @sgmm_mxfp4(%x: tensor<512x256xbf16>, %w: tensor<4x128x256xbf16>, %offs: tensor<4xi32>) -> tensor<512x128xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "experts.w1", precision = #mxmoe.precision<mxfp4>,
      recipe = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = even>}
      : (tensor<512x256xbf16>, tensor<4x128x256xbf16>, tensor<4xi32>) -> tensor<512x128xbf16>
  return %y : tensor<512x128xbf16>
}

// An f32 result of bf16 operands.
// CHECK-LABEL: func.func @sgmm_f32_result(
// CHECK:         mxmoe.scaled_grouped_matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "experts.w2"}
// CHECK-SAME:      : (tensor<1024x128xbf16>, tensor<8x64x128xbf16>, tensor<8xi32>) -> tensor<1024x64xf32>
func.func @sgmm_f32_result(%x: tensor<1024x128xbf16>, %w: tensor<8x64x128xbf16>, %offs: tensor<8xi32>) -> tensor<1024x64xf32> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "experts.w2"}
      : (tensor<1024x128xbf16>, tensor<8x64x128xbf16>, tensor<8xi32>) -> tensor<1024x64xf32>
  return %y : tensor<1024x64xf32>
}

// f32 operands and a bf16 precision override: M, N, K need not be multiples
// of 32 in bf16.
// CHECK-LABEL: func.func @sgmm_bf16_precision(
// CHECK:         mxmoe.scaled_grouped_matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "experts.w1", precision = #mxmoe.precision<bf16>}
// CHECK-SAME:      : (tensor<100x72xf32>, tensor<3x40x72xf32>, tensor<3xi32>) -> tensor<100x40xf32>
func.func @sgmm_bf16_precision(%x: tensor<100x72xf32>, %w: tensor<3x40x72xf32>, %offs: tensor<3xi32>) -> tensor<100x40xf32> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "experts.w1", precision = #mxmoe.precision<bf16>}
      : (tensor<100x72xf32>, tensor<3x40x72xf32>, tensor<3xi32>) -> tensor<100x40xf32>
  return %y : tensor<100x40xf32>
}

// Dynamic token count, dynamic expert count (offsets tensor<?xi32>).
// CHECK-LABEL: func.func @sgmm_dynamic(
// CHECK:         mxmoe.scaled_grouped_matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "experts.w1", precision = #mxmoe.precision<mxfp8>}
// CHECK-SAME:      : (tensor<?x256xbf16>, tensor<?x512x256xbf16>, tensor<?xi32>) -> tensor<?x512xbf16>
func.func @sgmm_dynamic(%x: tensor<?x256xbf16>, %w: tensor<?x512x256xbf16>, %offs: tensor<?xi32>) -> tensor<?x512xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "experts.w1", precision = #mxmoe.precision<mxfp8>}
      : (tensor<?x256xbf16>, tensor<?x512x256xbf16>, tensor<?xi32>) -> tensor<?x512xbf16>
  return %y : tensor<?x512xbf16>
}

// One expert (G = 1) with f16 operands.
// CHECK-LABEL: func.func @sgmm_single_expert_f16(
// CHECK:         mxmoe.scaled_grouped_matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "experts.w1"}
// CHECK-SAME:      : (tensor<64x64xf16>, tensor<1x32x64xf16>, tensor<1xi32>) -> tensor<64x32xf32>
func.func @sgmm_single_expert_f16(%x: tensor<64x64xf16>, %w: tensor<1x32x64xf16>, %offs: tensor<1xi32>) -> tensor<64x32xf32> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "experts.w1"}
      : (tensor<64x64xf16>, tensor<1x32x64xf16>, tensor<1xi32>) -> tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}
