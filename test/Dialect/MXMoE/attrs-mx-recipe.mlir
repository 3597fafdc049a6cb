// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// #mxmoe.mx_recipe<element, block_size = 32, rounding = mode> with every MX
// element type and every rounding mode.

// CHECK-LABEL: func.func @mx_recipe_elements()
// CHECK-SAME:    attributes {
// CHECK-SAME:    r0 = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>,
// CHECK-SAME:    r1 = #mxmoe.mx_recipe<f8E5M2, block_size = 32, rounding = rceil>,
// CHECK-SAME:    r2 = #mxmoe.mx_recipe<f6E2M3FN, block_size = 32, rounding = rceil>,
// CHECK-SAME:    r3 = #mxmoe.mx_recipe<f6E3M2FN, block_size = 32, rounding = rceil>,
// CHECK-SAME:    r4 = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = rceil>}
func.func @mx_recipe_elements() attributes {
    r0 = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>,
    r1 = #mxmoe.mx_recipe<f8E5M2, block_size = 32, rounding = rceil>,
    r2 = #mxmoe.mx_recipe<f6E2M3FN, block_size = 32, rounding = rceil>,
    r3 = #mxmoe.mx_recipe<f6E3M2FN, block_size = 32, rounding = rceil>,
    r4 = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = rceil>} {
  return
}

// CHECK-LABEL: func.func @mx_recipe_roundings()
// CHECK-SAME:    attributes {
// CHECK-SAME:    r0 = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = floor>,
// CHECK-SAME:    r1 = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>,
// CHECK-SAME:    r2 = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = ceil>,
// CHECK-SAME:    r3 = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = even>}
func.func @mx_recipe_roundings() attributes {
    r0 = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = floor>,
    r1 = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>,
    r2 = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = ceil>,
    r3 = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = even>} {
  return
}

// A recipe on each op kind that takes one.
// CHECK-LABEL: func.func @mx_recipe_on_ops(
// CHECK:         mxmoe.linear %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "dense", recipe = #mxmoe.mx_recipe<f6E2M3FN, block_size = 32, rounding = even>}
// CHECK:         mxmoe.scaled_grouped_matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "experts", recipe = #mxmoe.mx_recipe<f8E5M2, block_size = 32, rounding = ceil>}
func.func @mx_recipe_on_ops(%x: tensor<64x64xbf16>, %w: tensor<64x64xbf16>, %we: tensor<2x64x64xbf16>, %offs: tensor<2xi32>) {
  %a = mxmoe.linear %x, %w {fqn = "dense", recipe = #mxmoe.mx_recipe<f6E2M3FN, block_size = 32, rounding = even>}
      : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  %b = mxmoe.scaled_grouped_matmul %x, %we, %offs {fqn = "experts", recipe = #mxmoe.mx_recipe<f8E5M2, block_size = 32, rounding = ceil>}
      : (tensor<64x64xbf16>, tensor<2x64x64xbf16>, tensor<2xi32>) -> tensor<64x64xbf16>
  return
}

// The optional granularity: mx32 is the default and is not printed; mx128
// (1x128 / 128x128 scale tiles) is.
// CHECK-LABEL: func.func @mx_recipe_granularity()
// CHECK-SAME:    attributes {
// CHECK-SAME:    r0 = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>,
// CHECK-SAME:    r1 = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil, granularity = mx128>,
// CHECK-SAME:    r2 = #mxmoe.mx_recipe<f8E5M2, block_size = 32, rounding = floor, granularity = mx128>}
func.func @mx_recipe_granularity() attributes {
    r0 = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil, granularity = mx32>,
    r1 = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil, granularity = mx128>,
    r2 = #mxmoe.mx_recipe<f8E5M2, block_size = 32, rounding = floor, granularity = mx128>} {
  return
}
