// A routed MoE block with a real bf16 router linear as one
// mxmoe.tiled_mlp, for test/Integration/tiled_moe_block_gpu.py: per shard
// the router (x W_r^T: LinearBf16.cpp), softmax top-2 with
// renormalization, the sort by expert and the routed SwiGLU experts (16
// experts, H = I = 256); the backward's router input and weight gradients
// and the transposes are kernels too, so forward and backward are launch
// programs. 1 shard (the reference), 2, 3 (334 + 333 + 333 tokens: a
// `.tail` loop, the router weight gradient over 333 tokens) and 8 shards,
// and batch 2 ([2, 500, 256], 3 shards).
//
//   build/bin/mxmoe-compile test/Integration/tiled_moe_block.mlir --chip sm_90a --recipe mx128 -o .device/tmb

func.func @m1(%h: tensor<1000x256xbf16>, %rw: tensor<16x256xbf16>, %w13: tensor<16x512x256xbf16>, %w2: tensor<16x256x256xbf16>) -> tensor<1000x256xbf16> {
  %y = mxmoe.tiled_mlp shards = 1 (%h, %rw, %w13, %w2) {fqn = "mb1"}
      : (tensor<1000x256xbf16>, tensor<16x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>) -> tensor<1000x256xbf16> {
  ^bb0(%xs: tensor<?x256xbf16>, %r: tensor<16x256xbf16>, %ew13: tensor<16x512x256xbf16>, %ew2: tensor<16x256x256xbf16>):
    %logits = mxmoe.linear %xs, %r {fqn = "mb1.router", precision = #mxmoe.precision<bf16>}
        : (tensor<?x256xbf16>, tensor<16x256xbf16>) -> tensor<?x16xbf16>
    %wt, %e = mxmoe.router_topk %logits {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x16xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 16 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<16xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "mb1.experts"}
        : (tensor<?x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>, tensor<16xi32>) -> tensor<?x256xbf16>
    mxmoe.yield %y : tensor<?x256xbf16>
  }
  return %y : tensor<1000x256xbf16>
}

func.func @m2(%h: tensor<1000x256xbf16>, %rw: tensor<16x256xbf16>, %w13: tensor<16x512x256xbf16>, %w2: tensor<16x256x256xbf16>) -> tensor<1000x256xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%h, %rw, %w13, %w2) {fqn = "mb2"}
      : (tensor<1000x256xbf16>, tensor<16x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>) -> tensor<1000x256xbf16> {
  ^bb0(%xs: tensor<?x256xbf16>, %r: tensor<16x256xbf16>, %ew13: tensor<16x512x256xbf16>, %ew2: tensor<16x256x256xbf16>):
    %logits = mxmoe.linear %xs, %r {fqn = "mb2.router", precision = #mxmoe.precision<bf16>}
        : (tensor<?x256xbf16>, tensor<16x256xbf16>) -> tensor<?x16xbf16>
    %wt, %e = mxmoe.router_topk %logits {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x16xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 16 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<16xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "mb2.experts"}
        : (tensor<?x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>, tensor<16xi32>) -> tensor<?x256xbf16>
    mxmoe.yield %y : tensor<?x256xbf16>
  }
  return %y : tensor<1000x256xbf16>
}

func.func @m3(%h: tensor<1000x256xbf16>, %rw: tensor<16x256xbf16>, %w13: tensor<16x512x256xbf16>, %w2: tensor<16x256x256xbf16>) -> tensor<1000x256xbf16> {
  %y = mxmoe.tiled_mlp shards = 3 (%h, %rw, %w13, %w2) {fqn = "mb3"}
      : (tensor<1000x256xbf16>, tensor<16x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>) -> tensor<1000x256xbf16> {
  ^bb0(%xs: tensor<?x256xbf16>, %r: tensor<16x256xbf16>, %ew13: tensor<16x512x256xbf16>, %ew2: tensor<16x256x256xbf16>):
    %logits = mxmoe.linear %xs, %r {fqn = "mb3.router", precision = #mxmoe.precision<bf16>}
        : (tensor<?x256xbf16>, tensor<16x256xbf16>) -> tensor<?x16xbf16>
    %wt, %e = mxmoe.router_topk %logits {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x16xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 16 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<16xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "mb3.experts"}
        : (tensor<?x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>, tensor<16xi32>) -> tensor<?x256xbf16>
    mxmoe.yield %y : tensor<?x256xbf16>
  }
  return %y : tensor<1000x256xbf16>
}

func.func @m8(%h: tensor<1000x256xbf16>, %rw: tensor<16x256xbf16>, %w13: tensor<16x512x256xbf16>, %w2: tensor<16x256x256xbf16>) -> tensor<1000x256xbf16> {
  %y = mxmoe.tiled_mlp shards = 8 (%h, %rw, %w13, %w2) {fqn = "mb8"}
      : (tensor<1000x256xbf16>, tensor<16x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>) -> tensor<1000x256xbf16> {
  ^bb0(%xs: tensor<?x256xbf16>, %r: tensor<16x256xbf16>, %ew13: tensor<16x512x256xbf16>, %ew2: tensor<16x256x256xbf16>):
    %logits = mxmoe.linear %xs, %r {fqn = "mb8.router", precision = #mxmoe.precision<bf16>}
        : (tensor<?x256xbf16>, tensor<16x256xbf16>) -> tensor<?x16xbf16>
    %wt, %e = mxmoe.router_topk %logits {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x16xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 16 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<16xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "mb8.experts"}
        : (tensor<?x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>, tensor<16xi32>) -> tensor<?x256xbf16>
    mxmoe.yield %y : tensor<?x256xbf16>
  }
  return %y : tensor<1000x256xbf16>
}

// Batch 2: [2, 500, 256] flattened into the token axis (T = 1000), 3 shards.
func.func @mbatch(%h: tensor<2x500x256xbf16>, %rw: tensor<16x256xbf16>, %w13: tensor<16x512x256xbf16>, %w2: tensor<16x256x256xbf16>) -> tensor<2x500x256xbf16> {
  %y = mxmoe.tiled_mlp shards = 3 (%h, %rw, %w13, %w2) {fqn = "mbb"}
      : (tensor<2x500x256xbf16>, tensor<16x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>) -> tensor<2x500x256xbf16> {
  ^bb0(%xs: tensor<?x256xbf16>, %r: tensor<16x256xbf16>, %ew13: tensor<16x512x256xbf16>, %ew2: tensor<16x256x256xbf16>):
    %logits = mxmoe.linear %xs, %r {fqn = "mbb.router", precision = #mxmoe.precision<bf16>}
        : (tensor<?x256xbf16>, tensor<16x256xbf16>) -> tensor<?x16xbf16>
    %wt, %e = mxmoe.router_topk %logits {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x16xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 16 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<16xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "mbb.experts"}
        : (tensor<?x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>, tensor<16xi32>) -> tensor<?x256xbf16>
    mxmoe.yield %y : tensor<?x256xbf16>
  }
  return %y : tensor<2x500x256xbf16>
}
