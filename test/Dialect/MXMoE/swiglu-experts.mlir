// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// mxmoe.swiglu_experts: the routed experts' w13 grouped GEMM, SwiGLU and w2
// grouped GEMM as one model-level op (MXMoEOps.td). M = 1000 routed rows,
// E = 8 experts, H = 256, I = 384 (w13 is [E, 2I, H]).

// CHECK-LABEL: func.func @experts(
// CHECK:         %{{.*}} = mxmoe.swiglu_experts %arg0, %arg1, %arg2, %arg3 {fqn = "layers.0.mlp.experts"}
// CHECK-SAME:      : (tensor<1000x256xbf16>, tensor<8x768x256xbf16>, tensor<8x256x384xbf16>, tensor<8xi32>) -> tensor<1000x256xbf16>
func.func @experts(%x: tensor<1000x256xbf16>, %w13: tensor<8x768x256xbf16>,
                   %w2: tensor<8x256x384xbf16>, %offs: tensor<8xi32>) -> tensor<1000x256xbf16> {
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offs {fqn = "layers.0.mlp.experts"}
      : (tensor<1000x256xbf16>, tensor<8x768x256xbf16>, tensor<8x256x384xbf16>, tensor<8xi32>) -> tensor<1000x256xbf16>
  return %y : tensor<1000x256xbf16>
}

// The recipe and precision attributes, as on mxmoe.scaled_grouped_matmul.
// CHECK-LABEL: func.func @recipe(
// CHECK:         mxmoe.swiglu_experts {{.*}} {fqn = "e", precision = #mxmoe.precision<mxfp8>, recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = floor, granularity = mx128>}
func.func @recipe(%x: tensor<1000x256xbf16>, %w13: tensor<8x768x256xbf16>,
                  %w2: tensor<8x256x384xbf16>, %offs: tensor<8xi32>) -> tensor<1000x256xbf16> {
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offs {fqn = "e", precision = #mxmoe.precision<mxfp8>, recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = floor, granularity = mx128>}
      : (tensor<1000x256xbf16>, tensor<8x768x256xbf16>, tensor<8x256x384xbf16>, tensor<8xi32>) -> tensor<1000x256xbf16>
  return %y : tensor<1000x256xbf16>
}

// With routing: the whole routed block (T = 250 tokens, top-4, M = 1000
// routed rows), dispatch and combine included.
// CHECK-LABEL: func.func @routed(
// CHECK:         mxmoe.swiglu_experts %arg0, %arg1, %arg2, %arg3 routing(%arg4, %arg5 : tensor<1000xi32>, tensor<250x4xf32>) {fqn = "r"}
// CHECK-SAME:      : (tensor<250x256xbf16>, tensor<8x768x256xbf16>, tensor<8x256x384xbf16>, tensor<8xi32>) -> tensor<250x256xbf16>
func.func @routed(%x: tensor<250x256xbf16>, %w13: tensor<8x768x256xbf16>, %w2: tensor<8x256x384xbf16>, %offs: tensor<8xi32>, %idx: tensor<1000xi32>, %s: tensor<250x4xf32>) -> tensor<250x256xbf16> {
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offs routing(%idx, %s : tensor<1000xi32>, tensor<250x4xf32>) {fqn = "r"}
      : (tensor<250x256xbf16>, tensor<8x768x256xbf16>, tensor<8x256x384xbf16>, tensor<8xi32>) -> tensor<250x256xbf16>
  return %y : tensor<250x256xbf16>
}
