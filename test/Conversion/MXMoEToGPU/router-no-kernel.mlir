// The routing front end (mxmoe.router_topk, mxmoe.sort_by_expert) has no
// GPU kernel yet: convert-mxmoe-to-gpu says so once, at the first, with
// the count, and leaves the ops as they are.
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu=chip=sm_90a --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @route(
// CHECK: mxmoe.router_topk
// CHECK: mxmoe.sort_by_expert
func.func @route(%logits: tensor<64x16xbf16>) -> (tensor<64x2xf32>, tensor<128xi32>, tensor<16xi32>) {
  // expected-warning @+1 {{no GPU kernel implements 'mxmoe.router_topk' yet: 2 routing op(s) (mxmoe.router_topk, mxmoe.sort_by_expert) stay as they are; compute the routing outside the compiled program (e.g. in PyTorch) and pass its indices and offsets}}
  %w, %e = mxmoe.router_topk %logits {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
      : tensor<64x16xbf16> -> tensor<64x2xf32>, tensor<64x2xi32>
  %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 16 : i64}
      : tensor<64x2xi32> -> tensor<128xi32>, tensor<16xi32>
  return %w, %idx, %offs : tensor<64x2xf32>, tensor<128xi32>, tensor<16xi32>
}
