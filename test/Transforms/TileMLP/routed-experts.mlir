// RUN: mxmoe-opt %s --mxmoe-tile-mlp | FileCheck %s
// RUN: not mxmoe-opt %s --mxmoe-tile-mlp=static-shards=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=DYN
// The block compiles: kernels for the routing ops of both loops and the
// expanded GEMM functions' launch programs.
// RUN: rm -rf %t && mxmoe-compile %s --chip sm_90a -o %t --toolkit %t/none > /dev/null 2>&1
// RUN: FileCheck %s --check-prefix=COMPILE < %t/manifest.json
// COMPILE-DAG: "name": "moe__router_topk_0"
// COMPILE-DAG: "name": "moe__sort_by_expert_1"
// COMPILE-DAG: "name": "moe_backward__router_topk_grad_8"
// COMPILE-DAG: "name": "moe_backward__combine_scores_grad_5"
// COMPILE-DAG: "function": "moe.w13.weight_grad"
// COMPILE-DAG: "function": "moe.w2.input_grad"
// COMPILE-DAG: "shard_tokens": 32

// The whole routed MoE block in a shard body (issue 24): bf16 router,
// top-k, expert sort with the offsets computed in the body, gather, the
// experts' two MX grouped GEMMs around a SwiGLU, weighted combine. In a
// static shard loop each scaled_grouped_matmul becomes a call of its
// expanded `<fqn>.forward` (64 routed rows per 32-token shard), and the
// backward recompute differentiates it through `<fqn>.input_grad` (dy, w,
// offsets) and `<fqn>.weight_grad` (dy, x, offsets): the same functions
// mxmoe-expand-scaled-matmul creates outside tiled MLPs.

// CHECK-LABEL: func.func @moe(
// CHECK: scf.for
// CHECK: %[[W:.*]], %[[E:.*]] = mxmoe.router_topk %{{.*}} {renormalize, score = #mxmoe.router_score<softmax>, top_k = 2 : i64} : tensor<32x4xbf16> -> tensor<32x2xf32>, tensor<32x2xi32>
// CHECK: %[[IDX:.*]], %[[OFFS:.*]] = mxmoe.sort_by_expert %[[E]] {num_experts = 4 : i64} : tensor<32x2xi32> -> tensor<64xi32>, tensor<4xi32>
// CHECK: %[[R:.*]] = mxmoe.gather_rows %{{.*}}[%[[IDX]]] {top_k = 2 : i64} : tensor<32x32xbf16>, tensor<64xi32> -> tensor<64x32xbf16>
// CHECK: func.call @moe.w13.forward(%[[R]], %{{.*}}, %[[OFFS]]) : (tensor<64x32xbf16>, tensor<4x64x32xbf16>, tensor<4xi32>) -> tensor<64x64xbf16>
// CHECK: func.call @moe.w2.forward(%{{.*}}, %{{.*}}, %[[OFFS]]) : (tensor<64x32xbf16>, tensor<4x32x32xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
// CHECK: mxmoe.combine_rows %{{.*}}, %[[IDX]], %{{.*}} scaled_by %[[W]]

// CHECK-LABEL: func.func @moe.backward(
// CHECK: scf.for
// CHECK: %{{[^,]*}}, %[[BOFFS:[^ ]*]] = mxmoe.sort_by_expert
// CHECK: %[[X13:.*]] = mxmoe.gather_rows
// CHECK: %[[ACT:.*]] = arith.mulf
// CHECK: func.call @moe.w2.forward(%[[ACT]], %{{.*}}, %[[BOFFS]])
// The routed rows' gradient: dy gathered and scaled by the weights.
// CHECK: %[[DO:.*]] = mxmoe.gather_rows %{{.*}}[%{{.*}}] scaled_by %{{.*}} : tensor<32x2xf32> {top_k = 2 : i64}
// CHECK: mxmoe.combine_scores_grad
// CHECK: func.call @moe.w2.input_grad(%[[DO]], %{{.*}}, %[[BOFFS]]) : (tensor<64x32xbf16>, tensor<4x32x32xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
// CHECK: func.call @moe.w2.weight_grad(%[[DO]], %[[ACT]], %[[BOFFS]]) : (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<4xi32>) -> tensor<4x32x32xbf16>
// dh = [d gate | d up], the SwiGLU's backward in the body's arith ops.
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 32] [64, 32] [1, 1] : tensor<64x32xbf16> into tensor<64x64xbf16>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [64, 32] [1, 1] : tensor<64x32xbf16> into tensor<64x64xbf16>
// CHECK: %[[DH:.*]] = arith.addf %{{.*}}, %{{.*}} : tensor<64x64xbf16>
// CHECK: func.call @moe.w13.input_grad(%[[DH]], %{{.*}}, %[[BOFFS]]) : (tensor<64x64xbf16>, tensor<4x64x32xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
// CHECK: func.call @moe.w13.weight_grad(%[[DH]], %[[X13]], %[[BOFFS]]) : (tensor<64x64xbf16>, tensor<64x32xbf16>, tensor<4xi32>) -> tensor<4x64x32xbf16>
// CHECK: mxmoe.combine_rows
// CHECK: mxmoe.router_topk_grad
// CHECK: scf.yield

// The expanded functions: MX quantizations and mxmoe.grouped_matmul.
// CHECK-LABEL: func.func @moe.w13.forward(%{{.*}}: tensor<64x32xbf16>, %{{.*}}: tensor<4x64x32xbf16>, %{{.*}}: tensor<4xi32>) -> tensor<64x64xbf16> attributes {mxmoe.fqn = "moe.w13", mxmoe.pass = "forward"}
// CHECK: mxmoe.grouped_matmul
// CHECK-LABEL: func.func @moe.w13.input_grad(
// CHECK-LABEL: func.func @moe.w13.weight_grad(%{{.*}}: tensor<64x64xbf16>, %{{.*}}: tensor<64x32xbf16>, %{{.*}}: tensor<4xi32>) -> tensor<4x64x32xbf16>
// CHECK: mxmoe.grouped_matmul {{.*}} -> tensor<4x64x32xbf16>
// CHECK-LABEL: func.func @moe.w2.forward(
// CHECK-LABEL: func.func @moe.w2.input_grad(
// CHECK-LABEL: func.func @moe.w2.weight_grad(

// A run-time shard loop cannot expand the GEMMs (static shapes).
// DYN: error: 'mxmoe.scaled_grouped_matmul' op mxmoe-tile-mlp backward: a grouped GEMM in a tiled_mlp body is differentiated through its expanded input_grad / weight_grad functions, which need an MX precision and a static shard loop (static-shards, static token count)

func.func @moe(%x: tensor<64x32xbf16>, %wg: tensor<4x32xbf16>, %w13: tensor<4x64x32xbf16>, %w2: tensor<4x32x32xbf16>) -> tensor<64x32xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%x, %wg, %w13, %w2) {fqn = "moe"}
      : (tensor<64x32xbf16>, tensor<4x32xbf16>, tensor<4x64x32xbf16>, tensor<4x32x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>, %g: tensor<4x32xbf16>, %a: tensor<4x64x32xbf16>, %b: tensor<4x32x32xbf16>):
    %l = mxmoe.linear %xs, %g {fqn = "moe.gate", precision = #mxmoe.precision<bf16>} : (tensor<?x32xbf16>, tensor<4x32xbf16>) -> tensor<?x4xbf16>
    %wt, %e = mxmoe.router_topk %l {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x4xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 4 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<4xi32>
    %r = mxmoe.gather_rows %xs[%idx] {top_k = 2 : i64} : tensor<?x32xbf16>, tensor<?xi32> -> tensor<?x32xbf16>
    %h = mxmoe.scaled_grouped_matmul %r, %a, %offs {fqn = "moe.w13", precision = #mxmoe.precision<mxfp8>}
        : (tensor<?x32xbf16>, tensor<4x64x32xbf16>, tensor<4xi32>) -> tensor<?x64xbf16>
    %c0 = arith.constant 0 : index
    %rows = tensor.dim %h, %c0 : tensor<?x64xbf16>
    %gate = tensor.extract_slice %h[0, 0] [%rows, 32] [1, 1] : tensor<?x64xbf16> to tensor<?x32xbf16>
    %up = tensor.extract_slice %h[0, 32] [%rows, 32] [1, 1] : tensor<?x64xbf16> to tensor<?x32xbf16>
    %one = arith.constant 1.0 : bf16
    %ones = tensor.splat %one[%rows] : tensor<?x32xbf16>
    %ng = arith.negf %gate : tensor<?x32xbf16>
    %ex = math.exp %ng : tensor<?x32xbf16>
    %den = arith.addf %ones, %ex : tensor<?x32xbf16>
    %silu = arith.divf %gate, %den : tensor<?x32xbf16>
    %act = arith.mulf %silu, %up : tensor<?x32xbf16>
    %o = mxmoe.scaled_grouped_matmul %act, %b, %offs {fqn = "moe.w2", precision = #mxmoe.precision<mxfp8>}
        : (tensor<?x32xbf16>, tensor<4x32x32xbf16>, tensor<4xi32>) -> tensor<?x32xbf16>
    %inv = mxmoe.invert_permutation %idx : tensor<?xi32> -> tensor<?xi32>
    %out = mxmoe.combine_rows %o, %idx, %inv scaled_by %wt : tensor<?x2xf32> {top_k = 2 : i64}
        : tensor<?x32xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32xbf16>
    mxmoe.yield %out : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}
