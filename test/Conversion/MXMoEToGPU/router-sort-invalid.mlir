// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu --split-input-file --verify-diagnostics

// More experts than the router kernel holds in one warp's registers.
func.func @router_too_many(%logits: tensor<8x2048xbf16>) -> (tensor<8x2xf32>, tensor<8x2xi32>) {
  // expected-error @+1 {{convert-mxmoe-to-gpu: the router kernels hold a row's experts and choices in one warp's registers: at most 1024 experts, top_k <= 64 and ceil(E / 32) * ceil(top_k / 32) <= 32; got E = 2048, top_k = 2}}
  %w, %e = mxmoe.router_topk %logits {top_k = 2 : i64, score = #mxmoe.router_score<softmax>}
      : tensor<8x2048xbf16> -> tensor<8x2xf32>, tensor<8x2xi32>
  return %w, %e : tensor<8x2xf32>, tensor<8x2xi32>
}

// -----

// E 1024 with top_k 64: 64 unrolled slot steps (ptxas spilled).
func.func @router_grad_too_wide(%logits: tensor<8x1024xbf16>, %e: tensor<8x64xi32>, %dw: tensor<8x64xf32>) -> tensor<8x1024xbf16> {
  // expected-error @+1 {{got E = 1024, top_k = 64}}
  %d = mxmoe.router_topk_grad %logits, %e, %dw {score = #mxmoe.router_score<softmax>}
      : tensor<8x1024xbf16>, tensor<8x64xi32>, tensor<8x64xf32> -> tensor<8x1024xbf16>
  return %d : tensor<8x1024xbf16>
}

// -----

// More experts than the sort kernel's shared-memory histograms hold.
func.func @sort_too_many(%e: tensor<64x2xi32>) -> (tensor<128xi32>, tensor<20000xi32>) {
  // expected-error @+1 {{convert-mxmoe-to-gpu: the sort kernel keeps one histogram of num_experts + 1 bins per warp in 48 KiB of shared memory, at most 12255 experts; got 20000}}
  %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 20000 : i64}
      : tensor<64x2xi32> -> tensor<128xi32>, tensor<20000xi32>
  return %idx, %offs : tensor<128xi32>, tensor<20000xi32>
}
