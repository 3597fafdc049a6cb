// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// Round-trip of mxmoe.linear: y = x W^T (+ bias), x [..., K], W [N, K].

// CHECK-LABEL: func.func @linear_no_bias(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<8192x5120xbf16>, %[[W:[a-z0-9_]+]]: tensor<1024x5120xbf16>)
// CHECK:         %[[Y:[a-z0-9_]+]] = mxmoe.linear %[[X]], %[[W]] {fqn = "layers.0.attention.wk"}
// CHECK-SAME:      : (tensor<8192x5120xbf16>, tensor<1024x5120xbf16>) -> tensor<8192x1024xbf16>
// CHECK-NEXT:    return %[[Y]] : tensor<8192x1024xbf16>
func.func @linear_no_bias(%x: tensor<8192x5120xbf16>, %w: tensor<1024x5120xbf16>) -> tensor<8192x1024xbf16> {
  %y = mxmoe.linear %x, %w {fqn = "layers.0.attention.wk"}
      : (tensor<8192x5120xbf16>, tensor<1024x5120xbf16>) -> tensor<8192x1024xbf16>
  return %y : tensor<8192x1024xbf16>
}

// The optional bias is printed after the `bias` keyword and its type last in
// the operand type list.
// CHECK-LABEL: func.func @linear_bias(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<256x64xbf16>, %[[W:[a-z0-9_]+]]: tensor<16x64xbf16>, %[[B:[a-z0-9_]+]]: tensor<16xbf16>)
// CHECK:         mxmoe.linear %[[X]], %[[W]] bias %[[B]] {fqn = "layers.0.moe.router.gate"}
// CHECK-SAME:      : (tensor<256x64xbf16>, tensor<16x64xbf16>, tensor<16xbf16>) -> tensor<256x16xbf16>
func.func @linear_bias(%x: tensor<256x64xbf16>, %w: tensor<16x64xbf16>, %b: tensor<16xbf16>) -> tensor<256x16xbf16> {
  %y = mxmoe.linear %x, %w bias %b {fqn = "layers.0.moe.router.gate"}
      : (tensor<256x64xbf16>, tensor<16x64xbf16>, tensor<16xbf16>) -> tensor<256x16xbf16>
  return %y : tensor<256x16xbf16>
}

// Rank-3 input [B, S, K]: the leading dims are tokens and carry over.
// CHECK-LABEL: func.func @linear_3d_input(
// CHECK:         mxmoe.linear %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "layers.3.attention.wo"}
// CHECK-SAME:      : (tensor<2x4096x512xbf16>, tensor<768x512xbf16>) -> tensor<2x4096x768xbf16>
func.func @linear_3d_input(%x: tensor<2x4096x512xbf16>, %w: tensor<768x512xbf16>) -> tensor<2x4096x768xbf16> {
  %y = mxmoe.linear %x, %w {fqn = "layers.3.attention.wo"}
      : (tensor<2x4096x512xbf16>, tensor<768x512xbf16>) -> tensor<2x4096x768xbf16>
  return %y : tensor<2x4096x768xbf16>
}

// Rank-4 input: any rank >= 2 is accepted.
// CHECK-LABEL: func.func @linear_4d_input(
// CHECK:         mxmoe.linear %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "vision.patch_embed"}
// CHECK-SAME:      : (tensor<2x3x16x64xf32>, tensor<32x64xf32>) -> tensor<2x3x16x32xf32>
func.func @linear_4d_input(%x: tensor<2x3x16x64xf32>, %w: tensor<32x64xf32>) -> tensor<2x3x16x32xf32> {
  %y = mxmoe.linear %x, %w {fqn = "vision.patch_embed"}
      : (tensor<2x3x16x64xf32>, tensor<32x64xf32>) -> tensor<2x3x16x32xf32>
  return %y : tensor<2x3x16x32xf32>
}

// precision + recipe (MXFP8, E4M3, RCEIL), both attributes printed in the
// attribute dictionary in alphabetical order.
// CHECK-LABEL: func.func @linear_mxfp8_recipe(
// CHECK:         mxmoe.linear %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "layers.0.attention.wq", precision = #mxmoe.precision<mxfp8>, recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>}
// CHECK-SAME:      : (tensor<8192x5120xbf16>, tensor<5120x5120xbf16>) -> tensor<8192x5120xbf16>
func.func @linear_mxfp8_recipe(%x: tensor<8192x5120xbf16>, %w: tensor<5120x5120xbf16>) -> tensor<8192x5120xbf16> {
  %y = mxmoe.linear %x, %w {fqn = "layers.0.attention.wq", precision = #mxmoe.precision<mxfp8>,
                            recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>}
      : (tensor<8192x5120xbf16>, tensor<5120x5120xbf16>) -> tensor<8192x5120xbf16>
  return %y : tensor<8192x5120xbf16>
}

// mxfp8 may also use E5M2 elements.
// CHECK-LABEL: func.func @linear_mxfp8_e5m2(
// CHECK:         mxmoe.linear %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "layers.1.feed_forward.w2", precision = #mxmoe.precision<mxfp8>, recipe = #mxmoe.mx_recipe<f8E5M2, block_size = 32, rounding = floor>}
// CHECK-SAME:      : (tensor<128x256xbf16>, tensor<64x256xbf16>) -> tensor<128x64xbf16>
func.func @linear_mxfp8_e5m2(%x: tensor<128x256xbf16>, %w: tensor<64x256xbf16>) -> tensor<128x64xbf16> {
  %y = mxmoe.linear %x, %w {fqn = "layers.1.feed_forward.w2", precision = #mxmoe.precision<mxfp8>,
                            recipe = #mxmoe.mx_recipe<f8E5M2, block_size = 32, rounding = floor>}
      : (tensor<128x256xbf16>, tensor<64x256xbf16>) -> tensor<128x64xbf16>
  return %y : tensor<128x64xbf16>
}

// MXFP4 with bias.
// CHECK-LABEL: func.func @linear_mxfp4(
// CHECK:         mxmoe.linear %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} bias %{{[a-z0-9_]+}} {fqn = "layers.2.feed_forward.w3", precision = #mxmoe.precision<mxfp4>, recipe = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = even>}
// CHECK-SAME:      : (tensor<64x128xbf16>, tensor<96x128xbf16>, tensor<96xbf16>) -> tensor<64x96xbf16>
func.func @linear_mxfp4(%x: tensor<64x128xbf16>, %w: tensor<96x128xbf16>, %b: tensor<96xbf16>) -> tensor<64x96xbf16> {
  %y = mxmoe.linear %x, %w bias %b {fqn = "layers.2.feed_forward.w3", precision = #mxmoe.precision<mxfp4>,
                                    recipe = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = even>}
      : (tensor<64x128xbf16>, tensor<96x128xbf16>, tensor<96xbf16>) -> tensor<64x96xbf16>
  return %y : tensor<64x96xbf16>
}

// precision bf16 (kept out of MX by the user) places no divisibility
// constraint on K or N.
// CHECK-LABEL: func.func @linear_bf16_precision(
// CHECK:         mxmoe.linear %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "output", precision = #mxmoe.precision<bf16>}
// CHECK-SAME:      : (tensor<4x100xbf16>, tensor<1000x100xbf16>) -> tensor<4x1000xbf16>
func.func @linear_bf16_precision(%x: tensor<4x100xbf16>, %w: tensor<1000x100xbf16>) -> tensor<4x1000xbf16> {
  %y = mxmoe.linear %x, %w {fqn = "output", precision = #mxmoe.precision<bf16>}
      : (tensor<4x100xbf16>, tensor<1000x100xbf16>) -> tensor<4x1000xbf16>
  return %y : tensor<4x1000xbf16>
}

// A recipe without precision is kept as is (the policy decides later).
// CHECK-LABEL: func.func @linear_recipe_only(
// CHECK:         mxmoe.linear %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "layers.0.attention.wv", recipe = #mxmoe.mx_recipe<f6E3M2FN, block_size = 32, rounding = ceil>}
// CHECK-SAME:      : (tensor<64x64xf16>, tensor<32x64xf16>) -> tensor<64x32xf16>
func.func @linear_recipe_only(%x: tensor<64x64xf16>, %w: tensor<32x64xf16>) -> tensor<64x32xf16> {
  %y = mxmoe.linear %x, %w {fqn = "layers.0.attention.wv",
                            recipe = #mxmoe.mx_recipe<f6E3M2FN, block_size = 32, rounding = ceil>}
      : (tensor<64x64xf16>, tensor<32x64xf16>) -> tensor<64x32xf16>
  return %y : tensor<64x32xf16>
}

// The result element type may differ from the operands' (f32 output of
// bf16 operands).
// CHECK-LABEL: func.func @linear_f32_result(
// CHECK:         mxmoe.linear %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "output"}
// CHECK-SAME:      : (tensor<8x64xbf16>, tensor<128x64xbf16>) -> tensor<8x128xf32>
func.func @linear_f32_result(%x: tensor<8x64xbf16>, %w: tensor<128x64xbf16>) -> tensor<8x128xf32> {
  %y = mxmoe.linear %x, %w {fqn = "output"}
      : (tensor<8x64xbf16>, tensor<128x64xbf16>) -> tensor<8x128xf32>
  return %y : tensor<8x128xf32>
}

// Dynamic token and feature dims.
// CHECK-LABEL: func.func @linear_dynamic(
// CHECK:         mxmoe.linear %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} bias %{{[a-z0-9_]+}} {fqn = "layers.0.shared_expert.w1", precision = #mxmoe.precision<mxfp8>}
// CHECK-SAME:      : (tensor<?x?xbf16>, tensor<?x?xbf16>, tensor<?xbf16>) -> tensor<?x?xbf16>
func.func @linear_dynamic(%x: tensor<?x?xbf16>, %w: tensor<?x?xbf16>, %b: tensor<?xbf16>) -> tensor<?x?xbf16> {
  %y = mxmoe.linear %x, %w bias %b {fqn = "layers.0.shared_expert.w1", precision = #mxmoe.precision<mxfp8>}
      : (tensor<?x?xbf16>, tensor<?x?xbf16>, tensor<?xbf16>) -> tensor<?x?xbf16>
  return %y : tensor<?x?xbf16>
}
