// RUN: mxmoe-opt %s --split-input-file --verify-diagnostics

// One case per rule of the mxmoe.router_topk, router_topk_grad and sort_by_expert
// verifiers (MXMoERoutingOps.cpp).

func.func @top_k_zero(%l: tensor<64x16xbf16>) {
  // expected-error @+1 {{top_k must be >= 1, got 0}}
  %w, %e = mxmoe.router_topk %l {top_k = 0 : i64, score = #mxmoe.router_score<softmax>}
      : tensor<64x16xbf16> -> tensor<64x0xf32>, tensor<64x0xi32>
  return
}

// -----

func.func @top_k_over_experts(%l: tensor<64x16xbf16>) {
  // expected-error @+1 {{top_k = 17 exceeds the experts E = 16}}
  %w, %e = mxmoe.router_topk %l {top_k = 17 : i64, score = #mxmoe.router_score<softmax>}
      : tensor<64x16xbf16> -> tensor<64x17xf32>, tensor<64x17xi32>
  return
}

// -----

func.func @logits_rank(%l: tensor<16xbf16>) {
  // expected-error @+1 {{logits must be [T, E], got rank 1}}
  %w, %e = mxmoe.router_topk %l {top_k = 2 : i64, score = #mxmoe.router_score<softmax>}
      : tensor<16xbf16> -> tensor<1x2xf32>, tensor<1x2xi32>
  return
}

// -----

func.func @bias_extent(%l: tensor<64x16xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{bias must have dim 0 = the experts E = 16, got 8}}
  %w, %e = mxmoe.router_topk %l bias %b : tensor<8xf32> {top_k = 2 : i64, score = #mxmoe.router_score<sigmoid>}
      : tensor<64x16xf32> -> tensor<64x2xf32>, tensor<64x2xi32>
  return
}

// -----

func.func @bias_type(%l: tensor<64x16xf32>, %b: tensor<16xbf16>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit float values, but got 'tensor<16xbf16>'}}
  %w, %e = mxmoe.router_topk %l bias %b : tensor<16xbf16> {top_k = 2 : i64, score = #mxmoe.router_score<sigmoid>}
      : tensor<64x16xf32> -> tensor<64x2xf32>, tensor<64x2xi32>
  return
}

// -----

func.func @scaling_factor(%l: tensor<64x16xbf16>) {
  // expected-error @+1 {{scaling_factor must be finite and > 0, got 0}}
  %w, %e = mxmoe.router_topk %l {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, scaling_factor = 0.0 : f64}
      : tensor<64x16xbf16> -> tensor<64x2xf32>, tensor<64x2xi32>
  return
}

// -----

func.func @groups_alone(%l: tensor<64x256xf32>) {
  // expected-error @+1 {{num_groups and topk_groups come together (group-limited routing)}}
  %w, %e = mxmoe.router_topk %l {top_k = 8 : i64, score = #mxmoe.router_score<sigmoid>, num_groups = 8 : i64}
      : tensor<64x256xf32> -> tensor<64x8xf32>, tensor<64x8xi32>
  return
}

// -----

func.func @groups_divide(%l: tensor<64x256xf32>) {
  // expected-error @+1 {{num_groups = 7 must be >= 1 and divide the experts E = 256}}
  %w, %e = mxmoe.router_topk %l {top_k = 8 : i64, score = #mxmoe.router_score<sigmoid>, num_groups = 7 : i64, topk_groups = 4 : i64}
      : tensor<64x256xf32> -> tensor<64x8xf32>, tensor<64x8xi32>
  return
}

// -----

func.func @groups_kept(%l: tensor<64x256xf32>) {
  // expected-error @+1 {{topk_groups must be in [1, num_groups = 8], got 9}}
  %w, %e = mxmoe.router_topk %l {top_k = 8 : i64, score = #mxmoe.router_score<sigmoid>, num_groups = 8 : i64, topk_groups = 9 : i64}
      : tensor<64x256xf32> -> tensor<64x8xf32>, tensor<64x8xi32>
  return
}

// -----

func.func @groups_too_few_experts(%l: tensor<64x256xf32>) {
  // expected-error @+1 {{top_k = 40 exceeds the experts of the kept groups (1 x 32)}}
  %w, %e = mxmoe.router_topk %l {top_k = 40 : i64, score = #mxmoe.router_score<sigmoid>, num_groups = 8 : i64, topk_groups = 1 : i64}
      : tensor<64x256xf32> -> tensor<64x40xf32>, tensor<64x40xi32>
  return
}

// -----

func.func @weights_shape(%l: tensor<64x16xbf16>) {
  // expected-error @+1 {{weights must have dim 1 = top_k = 2, got 3}}
  %w, %e = mxmoe.router_topk %l {top_k = 2 : i64, score = #mxmoe.router_score<softmax>}
      : tensor<64x16xbf16> -> tensor<64x3xf32>, tensor<64x2xi32>
  return
}

// -----

func.func @experts_tokens(%l: tensor<64x16xbf16>) {
  // expected-error @+1 {{experts must have dim 0 = the tokens T = 64, got 32}}
  %w, %e = mxmoe.router_topk %l {top_k = 2 : i64, score = #mxmoe.router_score<softmax>}
      : tensor<64x16xbf16> -> tensor<64x2xf32>, tensor<32x2xi32>
  return
}

// -----

func.func @score_kind(%l: tensor<64x16xbf16>) {
  // expected-error @+2 {{expected ::mlir::mxmoe::RouterScore to be one of: softmax, sigmoid}}
  // expected-error @+1 {{failed to parse MXMoE_RouterScoreAttr parameter 'value'}}
  %w, %e = mxmoe.router_topk %l {top_k = 2 : i64, score = #mxmoe.router_score<relu>}
      : tensor<64x16xbf16> -> tensor<64x2xf32>, tensor<64x2xi32>
  return
}

// -----

func.func @sort_rank(%e: tensor<128xi32>) {
  // expected-error @+1 {{experts must be [T, top_k], got rank 1}}
  %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 16 : i64}
      : tensor<128xi32> -> tensor<128xi32>, tensor<16xi32>
  return
}

// -----

func.func @sort_num_experts(%e: tensor<64x2xi32>) {
  // expected-error @+1 {{num_experts must be >= 1, got 0}}
  %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 0 : i64}
      : tensor<64x2xi32> -> tensor<128xi32>, tensor<0xi32>
  return
}

// -----

func.func @sort_indices(%e: tensor<64x2xi32>) {
  // expected-error @+1 {{indices must have dim 0 = the routed rows M = 128, got 64}}
  %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 16 : i64}
      : tensor<64x2xi32> -> tensor<64xi32>, tensor<16xi32>
  return
}

// -----

func.func @sort_offsets(%e: tensor<64x2xi32>) {
  // expected-error @+1 {{offsets must have dim 0 = num_experts = 16, got 8}}
  %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 16 : i64}
      : tensor<64x2xi32> -> tensor<128xi32>, tensor<8xi32>
  return
}

// -----

func.func @grad_wrong_topk(%logits: tensor<64x16xbf16>, %e: tensor<64x2xi32>, %dw: tensor<64x4xf32>) -> tensor<64x16xbf16> {
  // expected-error @+1 {{weights_grad must have dim 1 = top_k = 2, got 4}}
  %dl = mxmoe.router_topk_grad %logits, %e, %dw {score = #mxmoe.router_score<softmax>}
      : tensor<64x16xbf16>, tensor<64x2xi32>, tensor<64x4xf32> -> tensor<64x16xbf16>
  return %dl : tensor<64x16xbf16>
}

// -----

func.func @grad_wrong_result(%logits: tensor<64x16xbf16>, %e: tensor<64x2xi32>, %dw: tensor<64x2xf32>) -> tensor<64x8xbf16> {
  // expected-error @+1 {{result must have dim 1 = the experts E = 16, got 8}}
  %dl = mxmoe.router_topk_grad %logits, %e, %dw {score = #mxmoe.router_score<softmax>}
      : tensor<64x16xbf16>, tensor<64x2xi32>, tensor<64x2xf32> -> tensor<64x8xbf16>
  return %dl : tensor<64x8xbf16>
}

// -----

func.func @grad_topk_over_experts(%logits: tensor<64x16xbf16>, %e: tensor<64x17xi32>, %dw: tensor<64x17xf32>) -> tensor<64x16xbf16> {
  // expected-error @+1 {{top_k = 17 exceeds the experts E = 16}}
  %dl = mxmoe.router_topk_grad %logits, %e, %dw {score = #mxmoe.router_score<sigmoid>}
      : tensor<64x16xbf16>, tensor<64x17xi32>, tensor<64x17xf32> -> tensor<64x16xbf16>
  return %dl : tensor<64x16xbf16>
}

// -----

func.func @grad_bad_scaling(%logits: tensor<64x16xbf16>, %e: tensor<64x2xi32>, %dw: tensor<64x2xf32>) -> tensor<64x16xbf16> {
  // expected-error @+1 {{scaling_factor must be finite and > 0, got -1}}
  %dl = mxmoe.router_topk_grad %logits, %e, %dw {score = #mxmoe.router_score<softmax>, scaling_factor = -1.0 : f64}
      : tensor<64x16xbf16>, tensor<64x2xi32>, tensor<64x2xf32> -> tensor<64x16xbf16>
  return %dl : tensor<64x16xbf16>
}

// -----

func.func @grad_experts_rank(%logits: tensor<64x16xbf16>, %e: tensor<128xi32>, %dw: tensor<64x2xf32>) -> tensor<64x16xbf16> {
  // expected-error @+1 {{experts must be [T, top_k], got rank 1}}
  %dl = mxmoe.router_topk_grad %logits, %e, %dw {score = #mxmoe.router_score<softmax>}
      : tensor<64x16xbf16>, tensor<128xi32>, tensor<64x2xf32> -> tensor<64x16xbf16>
  return %dl : tensor<64x16xbf16>
}

// -----

func.func @grad_logits_rank(%logits: tensor<1024xbf16>, %e: tensor<64x2xi32>, %dw: tensor<64x2xf32>) -> tensor<64x16xbf16> {
  // expected-error @+1 {{logits must be [T, E], got rank 1}}
  %dl = mxmoe.router_topk_grad %logits, %e, %dw {score = #mxmoe.router_score<softmax>}
      : tensor<1024xbf16>, tensor<64x2xi32>, tensor<64x2xf32> -> tensor<64x16xbf16>
  return %dl : tensor<64x16xbf16>
}

// -----

func.func @grad_experts_tokens(%logits: tensor<64x16xbf16>, %e: tensor<32x2xi32>, %dw: tensor<64x2xf32>) -> tensor<64x16xbf16> {
  // expected-error @+1 {{experts must have dim 0 = the tokens T = 64, got 32}}
  %dl = mxmoe.router_topk_grad %logits, %e, %dw {score = #mxmoe.router_score<softmax>}
      : tensor<64x16xbf16>, tensor<32x2xi32>, tensor<64x2xf32> -> tensor<64x16xbf16>
  return %dl : tensor<64x16xbf16>
}

// -----

func.func @grad_result_tokens(%logits: tensor<64x16xbf16>, %e: tensor<64x2xi32>, %dw: tensor<64x2xf32>) -> tensor<32x16xbf16> {
  // expected-error @+1 {{result must have dim 0 = the tokens T = 64, got 32}}
  %dl = mxmoe.router_topk_grad %logits, %e, %dw {score = #mxmoe.router_score<softmax>}
      : tensor<64x16xbf16>, tensor<64x2xi32>, tensor<64x2xf32> -> tensor<32x16xbf16>
  return %dl : tensor<32x16xbf16>
}

// -----

func.func @grad_topk_zero(%logits: tensor<64x16xbf16>, %e: tensor<64x0xi32>, %dw: tensor<64x0xf32>) -> tensor<64x16xbf16> {
  // expected-error @+1 {{top_k must be >= 1, got 0}}
  %dl = mxmoe.router_topk_grad %logits, %e, %dw {score = #mxmoe.router_score<softmax>}
      : tensor<64x16xbf16>, tensor<64x0xi32>, tensor<64x0xf32> -> tensor<64x16xbf16>
  return %dl : tensor<64x16xbf16>
}

// -----

func.func @scores_width(%l: tensor<64x16xbf16>) {
  // expected-error @+1 {{scores must have dim 1 = the experts E = 16, got 8}}
  %w, %e, %s = mxmoe.router_topk %l {top_k = 2 : i64, score = #mxmoe.router_score<softmax>}
      : tensor<64x16xbf16> -> tensor<64x2xf32>, tensor<64x2xi32>, tensor<64x8xf32>
  return
}

// -----

func.func @scores_tokens(%l: tensor<64x16xbf16>) {
  // expected-error @+1 {{scores must have dim 0 = the tokens T = 64, got 32}}
  %w, %e, %s = mxmoe.router_topk %l {top_k = 2 : i64, score = #mxmoe.router_score<softmax>}
      : tensor<64x16xbf16> -> tensor<64x2xf32>, tensor<64x2xi32>, tensor<32x16xf32>
  return
}

// -----

func.func @scores_grad_row(%l: tensor<64x16xbf16>, %e: tensor<64x2xi32>, %dw: tensor<64x2xf32>, %ds: tensor<8xf32>) {
  // expected-error @+1 {{scores_grad must have dim 0 = the experts E (one row for every token) = 16, got 8}}
  %g = mxmoe.router_topk_grad %l, %e, %dw scores_grad %ds : tensor<8xf32> {score = #mxmoe.router_score<softmax>}
      : tensor<64x16xbf16>, tensor<64x2xi32>, tensor<64x2xf32> -> tensor<64x16xbf16>
  return
}

// -----

func.func @scores_grad_rank(%l: tensor<64x16xbf16>, %e: tensor<64x2xi32>, %dw: tensor<64x2xf32>, %ds: tensor<2x64x16xf32>) {
  // expected-error @+1 {{scores_grad must be [T, E] or [E], got rank 3}}
  %g = mxmoe.router_topk_grad %l, %e, %dw scores_grad %ds : tensor<2x64x16xf32> {score = #mxmoe.router_score<softmax>}
      : tensor<64x16xbf16>, tensor<64x2xi32>, tensor<64x2xf32> -> tensor<64x16xbf16>
  return
}
