// RUN: mxmoe-opt %s --mxmoe-tile-mlp="static-shards=false" --split-input-file --verify-diagnostics | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-tile-mlp="backward=false static-shards=false" --split-input-file --verify-diagnostics 2>&1 | FileCheck %s --check-prefix=NOBWD

// A linear with bias inside the shard body: per shard, dx = dy W (a linear
// with W^T), dW = dy^T x (a linear contracting over the shard's tokens),
// db = sum over tokens; both gradient linears keep the op's precision, so
// the MX expansion quantizes each along its own contraction axis. dW and
// db are summed over shards in f32 (grad_accumulator) and returned in bf16.
// CHECK-LABEL: func.func @layers.0.mlp.backward(%{{.*}}: tensor<300x64xbf16>, %{{.*}}: tensor<96x64xbf16>, %{{.*}}: tensor<96xbf16>, %{{.*}}: tensor<300x96xbf16>) -> (tensor<300x64xbf16>, tensor<96x64xbf16>, tensor<96xbf16>)
// CHECK-SAME: mxmoe.fqn = "layers.0.mlp", mxmoe.pass = "backward"
// CHECK: %[[WT:.*]] = linalg.transpose ins(%arg1 : tensor<96x64xbf16>)
// CHECK: scf.for {{.*}} iter_args(%[[DX:.*]] = %{{.*}}, %[[DW:.*]] = %{{.*}}, %[[DB:.*]] = %{{.*}}) -> (tensor<300x64xbf16>, tensor<96x64xf32>, tensor<96xf32>)
// CHECK:   %[[XS:.*]] = tensor.extract_slice %arg0
// CHECK:   %[[DYS:.*]] = tensor.extract_slice %arg3
// CHECK:   %[[GX:.*]] = mxmoe.linear %[[DYS]], %[[WT]] {fqn = "layers.0.mlp.w1.input_grad", precision = #mxmoe.precision<mxfp8>}
// CHECK:   %[[DYT:.*]] = linalg.transpose ins(%[[DYS]]
// CHECK:   %[[XT:.*]] = linalg.transpose ins(%[[XS]]
// CHECK:   %[[GW:.*]] = mxmoe.linear %[[DYT]], %[[XT]] {fqn = "layers.0.mlp.w1.weight_grad", precision = #mxmoe.precision<mxfp8>} : (tensor<96x?xbf16>, tensor<64x?xbf16>) -> tensor<96x64xbf16>
// CHECK:   %[[GB:.*]] = linalg.reduce ins(%[[DYS]] : tensor<?x96xbf16>)
// CHECK:   tensor.insert_slice %[[GX]] into %[[DX]]
// CHECK:   %[[GW32:.*]] = arith.extf %[[GW]] : tensor<96x64xbf16> to tensor<96x64xf32>
// CHECK:   arith.addf %[[DW]], %[[GW32]] : tensor<96x64xf32>
// CHECK:   %[[GB32:.*]] = arith.extf %[[GB]]
// CHECK:   arith.addf %[[DB]], %[[GB32]] : tensor<96xf32>
// CHECK: } {mxmoe.tiled_mlp_backward = "layers.0.mlp", mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
// CHECK: arith.truncf %{{.*}} : tensor<96x64xf32> to tensor<96x64xbf16>
// CHECK: arith.truncf %{{.*}} : tensor<96xf32> to tensor<96xbf16>
// NOBWD-NOT: backward
func.func @mlp(%x: tensor<300x64xbf16>, %w: tensor<96x64xbf16>, %b: tensor<96xbf16>) -> tensor<300x96xbf16> {
  %y = mxmoe.tiled_mlp shards = 7 (%x, %w, %b) {fqn = "layers.0.mlp", grad_accumulator = f32}
      : (tensor<300x64xbf16>, tensor<96x64xbf16>, tensor<96xbf16>) -> tensor<300x96xbf16> {
  ^bb0(%xs: tensor<?x64xbf16>, %ww: tensor<96x64xbf16>, %bb: tensor<96xbf16>):
    %o = mxmoe.linear %xs, %ww bias %bb {fqn = "layers.0.mlp.w1", precision = #mxmoe.precision<mxfp8>}
        : (tensor<?x64xbf16>, tensor<96x64xbf16>, tensor<96xbf16>) -> tensor<?x96xbf16>
    mxmoe.yield %o : tensor<?x96xbf16>
  }
  return %y : tensor<300x96xbf16>
}

// -----

// Without grad_accumulator the parameter's own type accumulates.
// CHECK-LABEL: func.func @plain.backward
// CHECK: scf.for {{.*}} -> (tensor<64x32xbf16>, tensor<32x32xbf16>)
// CHECK-NOT: arith.extf
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @plain(%x: tensor<64x32xbf16>, %w: tensor<32x32xbf16>) -> tensor<64x32xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w) {fqn = "plain"} : (tensor<64x32xbf16>, tensor<32x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>, %ww: tensor<32x32xbf16>):
    %o = mxmoe.linear %xs, %ww {fqn = "plain.w"} : (tensor<?x32xbf16>, tensor<32x32xbf16>) -> tensor<?x32xbf16>
    mxmoe.yield %o : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

// The router inside the shard body (issue 24: the tiled MoE block): the
// router linear, then mxmoe.router_topk; its weights' gradient goes back to
// the logits through mxmoe.router_topk_grad at the shard's recomputed
// choice (the experts carry no gradient), then through the linear. The
// expert sort in the body carries none either.
// CHECK-LABEL: func.func @router.backward(
// CHECK: scf.for
// CHECK:   %[[L:.*]] = mxmoe.linear {{.*}}fqn = "router.gate"
// CHECK:   %{{.*}}, %[[E:.*]] = mxmoe.router_topk %[[L]] {renormalize, score = #mxmoe.router_score<softmax>, top_k = 2 : i64}
// CHECK:   %[[DL:.*]] = mxmoe.router_topk_grad %[[L]], %[[E]], %{{.*}} {renormalize, score = #mxmoe.router_score<softmax>} : tensor<?x8xbf16>, tensor<?x2xi32>, tensor<?x2xf32> -> tensor<?x8xbf16>
// CHECK:   mxmoe.linear %[[DL]], {{.*}}fqn = "router.gate.input_grad"
// CHECK: } {mxmoe.tiled_mlp_backward = "router"
func.func @router(%x: tensor<64x32xbf16>, %w: tensor<8x32xbf16>) -> tensor<64x2xf32> {
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w) {fqn = "router"} : (tensor<64x32xbf16>, tensor<8x32xbf16>) -> tensor<64x2xf32> {
  ^bb0(%xs: tensor<?x32xbf16>, %ww: tensor<8x32xbf16>):
    %l = mxmoe.linear %xs, %ww {fqn = "router.gate"} : (tensor<?x32xbf16>, tensor<8x32xbf16>) -> tensor<?x8xbf16>
    %wt, %e = mxmoe.router_topk %l {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x8xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 8 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<8xi32>
    mxmoe.yield %wt : tensor<?x2xf32>
  }
  return %y : tensor<64x2xf32>
}

// -----

// A router's load-balancing statistics as summed results (the scores'
// sums over tokens and the end offsets as f32): the forward adds each
// shard's part; the backward hands every shard the whole [E] gradient of
// the score sums, which mxmoe.router_topk_grad reads as its scores_grad
// row beside the weights' gradient; the counts have none.
// CHECK-LABEL: func.func @router_stats(
// CHECK: scf.for
// CHECK:   arith.sitofp %{{.*}} : tensor<8xi32> to tensor<8xf32>
// CHECK:   linalg.reduce
// CHECK:   arith.addf %{{.*}}, %{{.*}} : tensor<8xf32>
// CHECK:   arith.addf %{{.*}}, %{{.*}} : tensor<8xf32>
// CHECK-LABEL: func.func @router_stats.backward(
// CHECK-SAME:    %{{.*}}: tensor<64x2xf32>, %{{.*}}: tensor<8xf32>, %[[DS:.*]]: tensor<8xf32>)
// CHECK: scf.for
// CHECK:   %[[L:.*]] = mxmoe.linear {{.*}}fqn = "router_stats.gate"
// CHECK:   %{{.*}}, %[[E:.*]], %{{.*}} = mxmoe.router_topk %[[L]]
// CHECK:   mxmoe.router_topk_grad %[[L]], %[[E]], %{{.*}} scores_grad %[[DS]] : tensor<8xf32> {renormalize, score = #mxmoe.router_score<softmax>}
// CHECK-NOT: linalg.broadcast
// CHECK: } {mxmoe.tiled_mlp_backward = "router_stats"
func.func @router_stats(%x: tensor<64x32xbf16>, %w: tensor<8x32xbf16>) -> (tensor<64x2xf32>, tensor<8xf32>, tensor<8xf32>) {
  %y, %cum, %psum = mxmoe.tiled_mlp shards = 2 (%x, %w) {fqn = "router_stats", summed_results = 2}
      : (tensor<64x32xbf16>, tensor<8x32xbf16>) -> (tensor<64x2xf32>, tensor<8xf32>, tensor<8xf32>) {
  ^bb0(%xs: tensor<?x32xbf16>, %ww: tensor<8x32xbf16>):
    %l = mxmoe.linear %xs, %ww {fqn = "router_stats.gate"} : (tensor<?x32xbf16>, tensor<8x32xbf16>) -> tensor<?x8xbf16>
    %wt, %e, %s = mxmoe.router_topk %l {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x8xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>, tensor<?x8xf32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 8 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<8xi32>
    %cum = arith.sitofp %offs : tensor<8xi32> to tensor<8xf32>
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<8xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8xf32>) -> tensor<8xf32>
    %psum = linalg.reduce ins(%s : tensor<?x8xf32>) outs(%init : tensor<8xf32>) dimensions = [0]
      (%a: f32, %b: f32) {
        %t = arith.addf %a, %b : f32
        linalg.yield %t : f32
      }
    mxmoe.yield %wt, %cum, %psum : tensor<?x2xf32>, tensor<8xf32>, tensor<8xf32>
  }
  return %y, %cum, %psum : tensor<64x2xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// save_routing: the forward loops move into @"<fqn>.forward", which also
// returns the router's weights and experts over all tokens; the op becomes
// a call of it. The backward takes them after the parameters and reads the
// shard's rows of them: no router_topk is recomputed (the logits are, for
// router_topk_grad, which gets the saved experts; here y is the weights,
// so the saved weights and the sort go unread and are dropped).
// CHECK-LABEL: func.func @saved(
// CHECK:   %[[C:.*]]:3 = call @saved.forward(%arg0, %arg1) : (tensor<64x32xbf16>, tensor<8x32xbf16>) -> (tensor<64x2xf32>, tensor<64x2xf32>, tensor<64x2xi32>)
// CHECK:   return %[[C]]#0
// CHECK-LABEL: func.func @saved.backward(
// CHECK-SAME:    %{{.*}}: tensor<64x32xbf16>, %{{.*}}: tensor<8x32xbf16>, %{{.*}}: tensor<64x2xf32>, %[[SE:.*]]: tensor<64x2xi32>, %{{.*}}: tensor<64x2xf32>)
// CHECK: scf.for
// CHECK:   %[[E:.*]] = tensor.extract_slice %[[SE]]
// CHECK:   %[[L:.*]] = mxmoe.linear {{.*}}fqn = "saved.gate"
// CHECK-NOT: mxmoe.router_topk %
// CHECK:   mxmoe.router_topk_grad %[[L]], %[[E]], %{{.*}} {renormalize
// CHECK: } {mxmoe.tiled_mlp_backward = "saved"
// CHECK-LABEL: func.func @saved.forward(
// CHECK: scf.for
// CHECK:   %[[FW:.*]], %[[FE:.*]] = mxmoe.router_topk
// CHECK:   tensor.insert_slice %[[FW]]
// CHECK:   tensor.insert_slice %[[FW]]
// CHECK:   tensor.insert_slice %[[FE]]
func.func @saved(%x: tensor<64x32xbf16>, %w: tensor<8x32xbf16>) -> tensor<64x2xf32> {
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w) {fqn = "saved", save_routing} : (tensor<64x32xbf16>, tensor<8x32xbf16>) -> tensor<64x2xf32> {
  ^bb0(%xs: tensor<?x32xbf16>, %ww: tensor<8x32xbf16>):
    %l = mxmoe.linear %xs, %ww {fqn = "saved.gate"} : (tensor<?x32xbf16>, tensor<8x32xbf16>) -> tensor<?x8xbf16>
    %wt, %e = mxmoe.router_topk %l {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x8xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 8 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<8xi32>
    mxmoe.yield %wt : tensor<?x2xf32>
  }
  return %y : tensor<64x2xf32>
}

// -----

// A routed block in the shard body (router, top-k, expert sort, dispatch,
// a per-row stand-in for the experts, weighted combine): each shard's
// backward takes the combine's gradient to the routed rows (gather_rows of
// dy, times the scores) and to the scores (combine_scores_grad), the
// scores' gradient to the logits (router_topk_grad), and the dispatch's
// gradient back to the token rows (combine_rows through the inverse).
// CHECK-LABEL: func.func @routed.backward(
// CHECK: scf.for
// CHECK:   %[[IDX:.*]], %{{.*}} = mxmoe.sort_by_expert
// CHECK:   %[[R:.*]] = mxmoe.gather_rows %{{.*}}[%[[IDX]]] {top_k = 2 : i64}
// CHECK:   %[[H:.*]] = arith.mulf %[[R]], %[[R]]
// CHECK:   %[[INV:.*]] = mxmoe.invert_permutation %[[IDX]]
// CHECK:   mxmoe.gather_rows %{{.*}}[%[[IDX]]] scaled_by %[[W:.*]] : tensor<?x2xf32> {top_k = 2 : i64}
// CHECK:   %[[DW:.*]] = mxmoe.combine_scores_grad %{{.*}}, %[[H]], %[[IDX]], %[[INV]] {top_k = 2 : i64} : tensor<?x32xbf16>, tensor<?x32xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x2xf32>
// CHECK:   mxmoe.invert_permutation %[[IDX]]
// CHECK:   mxmoe.combine_rows
// CHECK:   mxmoe.router_topk_grad %{{.*}}, %{{.*}}, %[[DW]]
// CHECK: } {mxmoe.tiled_mlp_backward = "routed"
func.func @routed(%x: tensor<64x32xbf16>, %w: tensor<8x32xbf16>) -> tensor<64x32xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w) {fqn = "routed"} : (tensor<64x32xbf16>, tensor<8x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>, %ww: tensor<8x32xbf16>):
    %l = mxmoe.linear %xs, %ww {fqn = "routed.gate"} : (tensor<?x32xbf16>, tensor<8x32xbf16>) -> tensor<?x8xbf16>
    %wt, %e = mxmoe.router_topk %l {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x8xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 8 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<8xi32>
    %r = mxmoe.gather_rows %xs[%idx] {top_k = 2 : i64} : tensor<?x32xbf16>, tensor<?xi32> -> tensor<?x32xbf16>
    %h = arith.mulf %r, %r : tensor<?x32xbf16>
    %inv = mxmoe.invert_permutation %idx : tensor<?xi32> -> tensor<?xi32>
    %o = mxmoe.combine_rows %h, %idx, %inv scaled_by %wt : tensor<?x2xf32> {top_k = 2 : i64}
        : tensor<?x32xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32xbf16>
    mxmoe.yield %o : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

// The scores applied at the dispatch instead (gather_rows scaled_by): the
// combine's gradient gathers dy to the routed rows (unscaled), the token
// rows' gradient is combine_rows of those scaled by the scores, and the
// scores' gradient is combine_scores_grad of the token rows and the routed
// rows' gradient (the scaled forward gather itself is not recomputed:
// nothing in the backward reads it).
// CHECK-LABEL: func.func @routed_scaled_dispatch.backward(
// CHECK: scf.for
// CHECK:   %[[XS:.*]] = tensor.extract_slice %arg0
// CHECK:   %[[W:.*]], %{{.*}} = mxmoe.router_topk
// CHECK:   %[[IDX:.*]], %{{.*}} = mxmoe.sort_by_expert
// CHECK:   %[[GR:.*]] = mxmoe.gather_rows %{{.*}}[%[[IDX]]] {top_k = 2 : i64}
// CHECK:   %[[INV:.*]] = mxmoe.invert_permutation %[[IDX]]
// CHECK:   mxmoe.combine_rows %[[GR]], %[[IDX]], %[[INV]] scaled_by %[[W]] : tensor<?x2xf32>
// CHECK:   %[[DW:.*]] = mxmoe.combine_scores_grad %[[XS]], %[[GR]], %[[IDX]], %[[INV]]
// CHECK:   mxmoe.router_topk_grad %{{.*}}, %{{.*}}, %[[DW]]
func.func @routed_scaled_dispatch(%x: tensor<64x32xbf16>, %w: tensor<8x32xbf16>) -> tensor<64x32xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w) {fqn = "routed_scaled_dispatch"} : (tensor<64x32xbf16>, tensor<8x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>, %ww: tensor<8x32xbf16>):
    %l = mxmoe.linear %xs, %ww {fqn = "routed_scaled_dispatch.gate"} : (tensor<?x32xbf16>, tensor<8x32xbf16>) -> tensor<?x8xbf16>
    %wt, %e = mxmoe.router_topk %l {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x8xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 8 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<8xi32>
    %r = mxmoe.gather_rows %xs[%idx] scaled_by %wt : tensor<?x2xf32> {top_k = 2 : i64} : tensor<?x32xbf16>, tensor<?xi32> -> tensor<?x32xbf16>
    %inv = mxmoe.invert_permutation %idx : tensor<?xi32> -> tensor<?xi32>
    %o = mxmoe.combine_rows %r, %idx, %inv {top_k = 2 : i64}
        : tensor<?x32xbf16>, tensor<?xi32>, tensor<?xi32> -> tensor<?x32xbf16>
    mxmoe.yield %o : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}
