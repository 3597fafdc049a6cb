// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// mxmoe.router_topk and mxmoe.sort_by_expert (MXMoEOps.td), with the
// routers of the five model families the op covers (Hugging Face
// transformers' modeling files), at 64 tokens.

// Qwen3-MoE (128 experts, top-8, norm_topk_prob) and the routed-row order
// of its choices.
// CHECK-LABEL: func.func @qwen3(
// CHECK:         %[[W:.*]], %[[E:.*]] = mxmoe.router_topk %arg0 {renormalize, score = #mxmoe.router_score<softmax>, top_k = 8 : i64} : tensor<64x128xbf16> -> tensor<64x8xf32>, tensor<64x8xi32>
// CHECK:         %{{.*}}, %{{.*}} = mxmoe.sort_by_expert %[[E]] {num_experts = 128 : i64} : tensor<64x8xi32> -> tensor<512xi32>, tensor<128xi32>
func.func @qwen3(%logits: tensor<64x128xbf16>) -> (tensor<64x8xf32>, tensor<512xi32>, tensor<128xi32>) {
  %w, %e = mxmoe.router_topk %logits {top_k = 8 : i64, score = #mxmoe.router_score<softmax>, renormalize}
      : tensor<64x128xbf16> -> tensor<64x8xf32>, tensor<64x8xi32>
  %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 128 : i64}
      : tensor<64x8xi32> -> tensor<512xi32>, tensor<128xi32>
  return %w, %idx, %offs : tensor<64x8xf32>, tensor<512xi32>, tensor<128xi32>
}

// Llama 4 Scout (16 experts, top-1, sigmoid of the selected logit).
// CHECK-LABEL: func.func @llama4(
// CHECK:         mxmoe.router_topk %arg0 {score = #mxmoe.router_score<sigmoid>, top_k = 1 : i64} : tensor<64x16xbf16> -> tensor<64x1xf32>, tensor<64x1xi32>
func.func @llama4(%logits: tensor<64x16xbf16>) -> (tensor<64x1xf32>, tensor<64x1xi32>) {
  %w, %e = mxmoe.router_topk %logits {top_k = 1 : i64, score = #mxmoe.router_score<sigmoid>}
      : tensor<64x16xbf16> -> tensor<64x1xf32>, tensor<64x1xi32>
  return %w, %e : tensor<64x1xf32>, tensor<64x1xi32>
}

// DeepSeek-V3 (256 experts, top-8, sigmoid, correction bias, 8 groups of
// which 4 stay, normalized, scaled by 2.5).
// CHECK-LABEL: func.func @deepseek_v3(
// CHECK:         mxmoe.router_topk %arg0 bias %arg1 : tensor<256xf32> {num_groups = 8 : i64, renormalize, scaling_factor = 2.500000e+00 : f64, score = #mxmoe.router_score<sigmoid>, top_k = 8 : i64, topk_groups = 4 : i64} : tensor<64x256xf32> -> tensor<64x8xf32>, tensor<64x8xi32>
func.func @deepseek_v3(%logits: tensor<64x256xf32>, %bias: tensor<256xf32>) -> (tensor<64x8xf32>, tensor<64x8xi32>) {
  %w, %e = mxmoe.router_topk %logits bias %bias : tensor<256xf32>
      {top_k = 8 : i64, score = #mxmoe.router_score<sigmoid>, renormalize,
       scaling_factor = 2.5 : f64, num_groups = 8 : i64, topk_groups = 4 : i64}
      : tensor<64x256xf32> -> tensor<64x8xf32>, tensor<64x8xi32>
  return %w, %e : tensor<64x8xf32>, tensor<64x8xi32>
}

// gpt-oss-20b (32 experts, top-4, softmax over the selected logits) with
// a dynamic token count.
// CHECK-LABEL: func.func @gpt_oss_dynamic(
// CHECK:         %{{.*}}, %[[E:.*]] = mxmoe.router_topk %arg0 {renormalize, score = #mxmoe.router_score<softmax>, top_k = 4 : i64} : tensor<?x32xbf16> -> tensor<?x4xf32>, tensor<?x4xi32>
// CHECK:         mxmoe.sort_by_expert %[[E]] {num_experts = 32 : i64} : tensor<?x4xi32> -> tensor<?xi32>, tensor<32xi32>
func.func @gpt_oss_dynamic(%logits: tensor<?x32xbf16>) -> (tensor<?xi32>, tensor<32xi32>) {
  %w, %e = mxmoe.router_topk %logits {top_k = 4 : i64, score = #mxmoe.router_score<softmax>, renormalize}
      : tensor<?x32xbf16> -> tensor<?x4xf32>, tensor<?x4xi32>
  %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 32 : i64}
      : tensor<?x4xi32> -> tensor<?xi32>, tensor<32xi32>
  return %idx, %offs : tensor<?xi32>, tensor<32xi32>
}

// The router's reverse-mode rule (Qwen3-MoE: softmax, renormalized; the
// logits' gradient in their bf16).
// CHECK-LABEL: func.func @qwen3_grad(
// CHECK:         mxmoe.router_topk_grad %arg0, %arg1, %arg2 {renormalize, score = #mxmoe.router_score<softmax>} : tensor<64x128xbf16>, tensor<64x8xi32>, tensor<64x8xf32> -> tensor<64x128xbf16>
func.func @qwen3_grad(%logits: tensor<64x128xbf16>, %e: tensor<64x8xi32>, %dw: tensor<64x8xf32>) -> tensor<64x128xbf16> {
  %dl = mxmoe.router_topk_grad %logits, %e, %dw {score = #mxmoe.router_score<softmax>, renormalize}
      : tensor<64x128xbf16>, tensor<64x8xi32>, tensor<64x8xf32> -> tensor<64x128xbf16>
  return %dl : tensor<64x128xbf16>
}

// The scores of every expert for a load-balancing loss (Qwen3-MoE's
// router_aux_loss), and the gradient rule with their gradient: one [E]
// row for every token (the gradient of their sum over tokens) or [T, E].
// CHECK-LABEL: func.func @qwen3_scores(
// CHECK:         mxmoe.router_topk %arg0 {renormalize, score = #mxmoe.router_score<softmax>, top_k = 8 : i64} : tensor<64x128xbf16> -> tensor<64x8xf32>, tensor<64x8xi32>, tensor<64x128xf32>
// CHECK:         mxmoe.router_topk_grad %arg0, %{{.*}}, %arg1 scores_grad %arg2 : tensor<128xf32> {renormalize, score = #mxmoe.router_score<softmax>} : tensor<64x128xbf16>, tensor<64x8xi32>, tensor<64x8xf32> -> tensor<64x128xbf16>
// CHECK:         mxmoe.router_topk_grad %arg0, %{{.*}}, %arg1 scores_grad %arg3 : tensor<64x128xf32> {score = #mxmoe.router_score<sigmoid>} : tensor<64x128xbf16>, tensor<64x8xi32>, tensor<64x8xf32> -> tensor<64x128xf32>
func.func @qwen3_scores(%logits: tensor<64x128xbf16>, %dw: tensor<64x8xf32>, %dsum: tensor<128xf32>, %ds: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x128xbf16>, tensor<64x128xf32>) {
  %w, %e, %s = mxmoe.router_topk %logits {top_k = 8 : i64, score = #mxmoe.router_score<softmax>, renormalize}
      : tensor<64x128xbf16> -> tensor<64x8xf32>, tensor<64x8xi32>, tensor<64x128xf32>
  %dl = mxmoe.router_topk_grad %logits, %e, %dw scores_grad %dsum : tensor<128xf32> {score = #mxmoe.router_score<softmax>, renormalize}
      : tensor<64x128xbf16>, tensor<64x8xi32>, tensor<64x8xf32> -> tensor<64x128xbf16>
  %dl2 = mxmoe.router_topk_grad %logits, %e, %dw scores_grad %ds : tensor<64x128xf32> {score = #mxmoe.router_score<sigmoid>}
      : tensor<64x128xbf16>, tensor<64x8xi32>, tensor<64x8xf32> -> tensor<64x128xf32>
  return %s, %dl, %dl2 : tensor<64x128xf32>, tensor<64x128xbf16>, tensor<64x128xf32>
}
