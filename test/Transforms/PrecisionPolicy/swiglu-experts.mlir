// RUN: mxmoe-opt %s --mxmoe-precision-policy="recipe=auto chips=sm_90a" 2>/dev/null | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-precision-policy="recipe=auto chips=sm_90a report=- remarks=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: mxmoe-opt %s --mxmoe-precision-policy -o /dev/null 2>&1 | FileCheck %s --check-prefix=LEGAL

// mxmoe.swiglu_experts is a precision-policy candidate like
// mxmoe.scaled_grouped_matmul: one decision (and one recipe) for both of
// its GEMMs, reported with N = I and K = H (each GEMM's dimensions are
// multiples of these: w13 is [2I, H], w2 [H, I]).

// CHECK-LABEL: func.func @layer
// CHECK: mxmoe.swiglu_experts {{.*}} {fqn = "layers.0.mlp.experts", precision = #mxmoe.precision<mxfp8>, recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil, granularity = mx128>}
// REPORT: "K": 2048
// REPORT: "M": 8192
// REPORT: "N": 768
// REPORT: "fqn": "layers.0.mlp.experts"
// REPORT: "groups": 128
// REPORT: "op": "mxmoe.swiglu_experts"
// REPORT: "precision": "mxfp8"
// REPORT: "recipe": "mx128"
// A routed-experts block kept in bf16 by its shape (I = 40 is no multiple
// of 32) is a warning.
// LEGAL: warning: mxmoe-precision-policy: routed-expert GEMM 'odd.experts' stays bf16 (rule legality
func.func @layer(%x: tensor<8192x2048xbf16>, %w13: tensor<128x1536x2048xbf16>, %w2: tensor<128x2048x768xbf16>, %offs: tensor<128xi32>) -> tensor<8192x2048xbf16> {
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offs {fqn = "layers.0.mlp.experts"}
      : (tensor<8192x2048xbf16>, tensor<128x1536x2048xbf16>, tensor<128x2048x768xbf16>, tensor<128xi32>) -> tensor<8192x2048xbf16>
  return %y : tensor<8192x2048xbf16>
}

func.func @odd(%x: tensor<64x256xbf16>, %w13: tensor<2x80x256xbf16>, %w2: tensor<2x256x40xbf16>, %offs: tensor<2xi32>) -> tensor<64x256xbf16> {
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offs {fqn = "odd.experts"}
      : (tensor<64x256xbf16>, tensor<2x80x256xbf16>, tensor<2x256x40xbf16>, tensor<2xi32>) -> tensor<64x256xbf16>
  return %y : tensor<64x256xbf16>
}
