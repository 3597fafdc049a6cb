// RUN: mxmoe-opt %s --mxmoe-tile-mlp | FileCheck %s
// RUN: rm -rf %t && mxmoe-compile %s --chip sm_90a --recipe mx128 -o %t --toolkit %t/none > /dev/null 2>&1
// RUN: FileCheck %s --check-prefix=COMPILE < %t/manifest.json
// RUN: mxmoe-opt %s --mxmoe-expand-scaled-matmul=quantize-weights-once -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONCE
// ONCE: remark: mxmoe-expand-scaled-matmul: blk.experts is inside mxmoe.tiled_mlp; it is not expanded here (mxmoe-tile-mlp expands it per shard size when the split is static); quantize-weights-once does not apply to it

// The routed experts as one mxmoe.swiglu_experts (dispatch, w13, SwiGLU,
// w2, weighted combine: the SwiGLU and the gathers fused into the
// quantize kernels) in a shard body. Its token rows are dynamic in the
// body; a static shard loop expands it per shard size into
// `<fqn>.forward` (out, h, y) and `<fqn>.backward`, and the backward
// recompute calls the latter with the forward's h and y: dx, dw13, dw2 and
// the scores' gradient, which flows into the router through
// mxmoe.router_topk_grad.

// CHECK-LABEL: func.func @blk(
// CHECK: scf.for
// CHECK: %{{[^,]*}}, %[[OFFS:[^ ]*]] = mxmoe.sort_by_expert
// CHECK: func.call @blk.experts.forward(%{{.*}}, %{{.*}}, %{{.*}}, %[[OFFS]], %{{.*}}, %{{.*}}) : (tensor<32x32xbf16>, tensor<4x64x32xbf16>, tensor<4x32x32xbf16>, tensor<4xi32>, tensor<64xi32>, tensor<32x2xf32>) -> (tensor<32x32xbf16>, tensor<64x64xbf16>, tensor<64x32xbf16>)
// CHECK-LABEL: func.func @blk.backward(
// CHECK: %[[FWD:.*]]:3 = func.call @blk.experts.forward(
// CHECK: %[[BWD:.*]]:4 = func.call @blk.experts.backward(%{{.*}}, %{{.*}}, %[[FWD]]#1, %[[FWD]]#2, %{{.*}}) : (tensor<32x32xbf16>, tensor<32x32xbf16>, tensor<64x64xbf16>, tensor<64x32xbf16>, tensor<4x64x32xbf16>, tensor<4x32x32xbf16>, tensor<4xi32>, tensor<64xi32>, tensor<32x2xf32>) -> (tensor<32x32xbf16>, tensor<4x64x32xbf16>, tensor<4x32x32xbf16>, tensor<32x2xf32>)
// CHECK: mxmoe.router_topk_grad %{{.*}}, %{{.*}}, %[[BWD]]#3
// CHECK: arith.addf %{{.*}}, %[[BWD]]#1 : tensor<4x64x32xbf16>
// CHECK: arith.addf %{{.*}}, %[[BWD]]#2 : tensor<4x32x32xbf16>
// CHECK-LABEL: func.func @blk.experts.forward(
// CHECK-LABEL: func.func @blk.experts.backward(

// COMPILE-DAG: "function": "blk.experts.forward"
// COMPILE-DAG: "function": "blk.experts.backward"
// COMPILE-DAG: "name": "blk__router_topk_{{[0-9]+}}"
// COMPILE-DAG: "shard_tokens": 32
// The shard loops' bf16 router linear and its gradients are kernels
// (LinearBf16.cpp), so launch programs replay both loops.
// COMPILE-DAG: "functions_without_program": [],
// COMPILE-DAG: "name": "blk__linear_bf16_0"

func.func @blk(%x: tensor<64x32xbf16>, %wg: tensor<4x32xbf16>, %w13: tensor<4x64x32xbf16>, %w2: tensor<4x32x32xbf16>) -> tensor<64x32xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%x, %wg, %w13, %w2) {fqn = "blk"}
      : (tensor<64x32xbf16>, tensor<4x32xbf16>, tensor<4x64x32xbf16>, tensor<4x32x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>, %g: tensor<4x32xbf16>, %a: tensor<4x64x32xbf16>, %b: tensor<4x32x32xbf16>):
    %l = mxmoe.linear %xs, %g {fqn = "blk.gate", precision = #mxmoe.precision<bf16>} : (tensor<?x32xbf16>, tensor<4x32xbf16>) -> tensor<?x4xbf16>
    %wt, %e = mxmoe.router_topk %l {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x4xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 4 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<4xi32>
    %o = mxmoe.swiglu_experts %xs, %a, %b, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>) {fqn = "blk.experts", precision = #mxmoe.precision<mxfp8>}
        : (tensor<?x32xbf16>, tensor<4x64x32xbf16>, tensor<4x32x32xbf16>, tensor<4xi32>) -> tensor<?x32xbf16>
    mxmoe.yield %o : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}
