// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu --split-input-file --verify-diagnostics

// More experts than the router kernel holds in one warp's registers.
func.func @router_too_many(%logits: tensor<8x2048xbf16>) -> (tensor<8x2xf32>, tensor<8x2xi32>) {
  // expected-error @+1 {{convert-mxmoe-to-gpu: the router kernel holds a row's experts in one warp's registers, at most 1024 experts; got 2048}}
  %w, %e = mxmoe.router_topk %logits {top_k = 2 : i64, score = #mxmoe.router_score<softmax>}
      : tensor<8x2048xbf16> -> tensor<8x2xf32>, tensor<8x2xi32>
  return %w, %e : tensor<8x2xf32>, tensor<8x2xi32>
}

// -----

// More experts than the sort kernel's shared-memory histograms hold.
func.func @sort_too_many(%e: tensor<64x2xi32>) -> (tensor<128xi32>, tensor<20000xi32>) {
  // expected-error @+1 {{convert-mxmoe-to-gpu: the sort kernel keeps one histogram of num_experts + 1 bins per warp in 48 KiB of shared memory, at most 12255 experts; got 20000}}
  %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 20000 : i64}
      : tensor<64x2xi32> -> tensor<128xi32>, tensor<20000xi32>
  return %idx, %offs : tensor<128xi32>, tensor<20000xi32>
}
