// A routed MoE block as one mxmoe.tiled_mlp, for the launch programs with
// loop steps (test/Integration/tiled_block_gpu.py): per shard the router's
// softmax top-2 with renormalization, the sort by expert with the shard's
// offsets, and the routed SwiGLU experts (128 experts, H = I = 128). The
// hidden state is also the router's logits (E = H = 128), so every op of
// the shard body is a kernel: the bf16 router linear of a real block
// (mxmoe.builders --tiled-block) has none yet. Same block at 1 shard (the
// reference: one shard of all tokens), 2, 3 (334 + 333 + 333 tokens: a
// `.tail` loop), 8 shards, and 3 tokens in 4 shards.
//
//   build/bin/mxmoe-compile test/Integration/tiled_block.mlir --chip sm_90a --recipe mx128 -o .device/tb

func.func @b1(%h: tensor<1000x128xbf16>, %w13: tensor<128x256x128xbf16>, %w2: tensor<128x128x128xbf16>) -> tensor<1000x128xbf16> {
  %y = mxmoe.tiled_mlp shards = 1 (%h, %w13, %w2) {fqn = "blk1"}
      : (tensor<1000x128xbf16>, tensor<128x256x128xbf16>, tensor<128x128x128xbf16>) -> tensor<1000x128xbf16> {
  ^bb0(%xs: tensor<?x128xbf16>, %ew13: tensor<128x256x128xbf16>, %ew2: tensor<128x128x128xbf16>):
    %wt, %e = mxmoe.router_topk %xs {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x128xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 128 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<128xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "blk1.experts"}
        : (tensor<?x128xbf16>, tensor<128x256x128xbf16>, tensor<128x128x128xbf16>, tensor<128xi32>) -> tensor<?x128xbf16>
    mxmoe.yield %y : tensor<?x128xbf16>
  }
  return %y : tensor<1000x128xbf16>
}

func.func @b2(%h: tensor<1000x128xbf16>, %w13: tensor<128x256x128xbf16>, %w2: tensor<128x128x128xbf16>) -> tensor<1000x128xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%h, %w13, %w2) {fqn = "blk2"}
      : (tensor<1000x128xbf16>, tensor<128x256x128xbf16>, tensor<128x128x128xbf16>) -> tensor<1000x128xbf16> {
  ^bb0(%xs: tensor<?x128xbf16>, %ew13: tensor<128x256x128xbf16>, %ew2: tensor<128x128x128xbf16>):
    %wt, %e = mxmoe.router_topk %xs {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x128xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 128 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<128xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "blk2.experts"}
        : (tensor<?x128xbf16>, tensor<128x256x128xbf16>, tensor<128x128x128xbf16>, tensor<128xi32>) -> tensor<?x128xbf16>
    mxmoe.yield %y : tensor<?x128xbf16>
  }
  return %y : tensor<1000x128xbf16>
}

func.func @b3(%h: tensor<1000x128xbf16>, %w13: tensor<128x256x128xbf16>, %w2: tensor<128x128x128xbf16>) -> tensor<1000x128xbf16> {
  %y = mxmoe.tiled_mlp shards = 3 (%h, %w13, %w2) {fqn = "blk3"}
      : (tensor<1000x128xbf16>, tensor<128x256x128xbf16>, tensor<128x128x128xbf16>) -> tensor<1000x128xbf16> {
  ^bb0(%xs: tensor<?x128xbf16>, %ew13: tensor<128x256x128xbf16>, %ew2: tensor<128x128x128xbf16>):
    %wt, %e = mxmoe.router_topk %xs {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x128xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 128 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<128xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "blk3.experts"}
        : (tensor<?x128xbf16>, tensor<128x256x128xbf16>, tensor<128x128x128xbf16>, tensor<128xi32>) -> tensor<?x128xbf16>
    mxmoe.yield %y : tensor<?x128xbf16>
  }
  return %y : tensor<1000x128xbf16>
}

func.func @b8(%h: tensor<1000x128xbf16>, %w13: tensor<128x256x128xbf16>, %w2: tensor<128x128x128xbf16>) -> tensor<1000x128xbf16> {
  %y = mxmoe.tiled_mlp shards = 8 (%h, %w13, %w2) {fqn = "blk8"}
      : (tensor<1000x128xbf16>, tensor<128x256x128xbf16>, tensor<128x128x128xbf16>) -> tensor<1000x128xbf16> {
  ^bb0(%xs: tensor<?x128xbf16>, %ew13: tensor<128x256x128xbf16>, %ew2: tensor<128x128x128xbf16>):
    %wt, %e = mxmoe.router_topk %xs {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x128xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 128 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<128xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "blk8.experts"}
        : (tensor<?x128xbf16>, tensor<128x256x128xbf16>, tensor<128x128x128xbf16>, tensor<128xi32>) -> tensor<?x128xbf16>
    mxmoe.yield %y : tensor<?x128xbf16>
  }
  return %y : tensor<1000x128xbf16>
}

func.func @s1(%h: tensor<3x128xbf16>, %w13: tensor<128x256x128xbf16>, %w2: tensor<128x128x128xbf16>) -> tensor<3x128xbf16> {
  %y = mxmoe.tiled_mlp shards = 1 (%h, %w13, %w2) {fqn = "small1"}
      : (tensor<3x128xbf16>, tensor<128x256x128xbf16>, tensor<128x128x128xbf16>) -> tensor<3x128xbf16> {
  ^bb0(%xs: tensor<?x128xbf16>, %ew13: tensor<128x256x128xbf16>, %ew2: tensor<128x128x128xbf16>):
    %wt, %e = mxmoe.router_topk %xs {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x128xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 128 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<128xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "small1.experts"}
        : (tensor<?x128xbf16>, tensor<128x256x128xbf16>, tensor<128x128x128xbf16>, tensor<128xi32>) -> tensor<?x128xbf16>
    mxmoe.yield %y : tensor<?x128xbf16>
  }
  return %y : tensor<3x128xbf16>
}

func.func @s4(%h: tensor<3x128xbf16>, %w13: tensor<128x256x128xbf16>, %w2: tensor<128x128x128xbf16>) -> tensor<3x128xbf16> {
  %y = mxmoe.tiled_mlp shards = 4 (%h, %w13, %w2) {fqn = "small4"}
      : (tensor<3x128xbf16>, tensor<128x256x128xbf16>, tensor<128x128x128xbf16>) -> tensor<3x128xbf16> {
  ^bb0(%xs: tensor<?x128xbf16>, %ew13: tensor<128x256x128xbf16>, %ew2: tensor<128x128x128xbf16>):
    %wt, %e = mxmoe.router_topk %xs {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x128xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 128 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<128xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "small4.experts"}
        : (tensor<?x128xbf16>, tensor<128x256x128xbf16>, tensor<128x128x128xbf16>, tensor<128xi32>) -> tensor<?x128xbf16>
    mxmoe.yield %y : tensor<?x128xbf16>
  }
  return %y : tensor<3x128xbf16>
}
