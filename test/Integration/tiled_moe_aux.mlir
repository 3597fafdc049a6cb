// A routed MoE block whose mxmoe.tiled_mlp also returns the router's
// load-balancing statistics as summed results (`summed_results = 2`), for
// test/Integration/tiled_moe_aux_gpu.py: per shard the bf16 router, softmax
// top-2 with renormalization and the full scores (`mxmoe.router_topk`'s
// third result), the sort by expert and the routed SwiGLU experts (16
// experts, H = I = 256); per expert the shard's end offsets as f32 (their
// sum over shards is the cumulative choice count) and the sum over its
// tokens of the scores (a linalg.reduce over dim 0: the row-sum kernel).
// The backward takes the gradient of the score sums into
// mxmoe.router_topk_grad (`scores_grad`, one [E] row for every token).
// 1, 2, 3 (a `.tail` loop), 4 and 8 shards; `s<N>` (1, 2, 4 shards) the
// same block with `save_routing`: `@"sb<N>.forward"` also returns the
// router's weights and experts [1000, 2], which `sb<N>.backward` reads
// instead of recomputing the choice. (Their rows are 8 bytes: a launch
// program views a shard's rows only at 16-byte offsets, so with top_k = 2
// the shards must start at even tokens; 3 or 8 shards of 1000 tokens do
// not, and those functions are listed without a program.)
//
//   build/bin/mxmoe-compile test/Integration/tiled_moe_aux.mlir --chip sm_90a --recipe mx128 -o .device/tma

func.func @a1(%h: tensor<1000x256xbf16>, %rw: tensor<16x256xbf16>, %w13: tensor<16x512x256xbf16>, %w2: tensor<16x256x256xbf16>) -> (tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>) {
  %y, %cum, %psum = mxmoe.tiled_mlp shards = 1 (%h, %rw, %w13, %w2) {fqn = "ab1", summed_results = 2}
      : (tensor<1000x256xbf16>, tensor<16x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>) -> (tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%xs: tensor<?x256xbf16>, %r: tensor<16x256xbf16>, %ew13: tensor<16x512x256xbf16>, %ew2: tensor<16x256x256xbf16>):
    %logits = mxmoe.linear %xs, %r {fqn = "ab1.router", precision = #mxmoe.precision<bf16>}
        : (tensor<?x256xbf16>, tensor<16x256xbf16>) -> tensor<?x16xbf16>
    %wt, %e, %s = mxmoe.router_topk %logits {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x16xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>, tensor<?x16xf32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 16 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<16xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "ab1.experts"}
        : (tensor<?x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>, tensor<16xi32>) -> tensor<?x256xbf16>
    %cum = arith.sitofp %offs : tensor<16xi32> to tensor<16xf32>
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<16xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<16xf32>) -> tensor<16xf32>
    %psum = linalg.reduce ins(%s : tensor<?x16xf32>) outs(%init : tensor<16xf32>) dimensions = [0]
      (%a: f32, %b: f32) {
        %t = arith.addf %a, %b : f32
        linalg.yield %t : f32
      }
    mxmoe.yield %y, %cum, %psum : tensor<?x256xbf16>, tensor<16xf32>, tensor<16xf32>
  }
  return %y, %cum, %psum : tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>
}

func.func @a2(%h: tensor<1000x256xbf16>, %rw: tensor<16x256xbf16>, %w13: tensor<16x512x256xbf16>, %w2: tensor<16x256x256xbf16>) -> (tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>) {
  %y, %cum, %psum = mxmoe.tiled_mlp shards = 2 (%h, %rw, %w13, %w2) {fqn = "ab2", summed_results = 2}
      : (tensor<1000x256xbf16>, tensor<16x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>) -> (tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%xs: tensor<?x256xbf16>, %r: tensor<16x256xbf16>, %ew13: tensor<16x512x256xbf16>, %ew2: tensor<16x256x256xbf16>):
    %logits = mxmoe.linear %xs, %r {fqn = "ab2.router", precision = #mxmoe.precision<bf16>}
        : (tensor<?x256xbf16>, tensor<16x256xbf16>) -> tensor<?x16xbf16>
    %wt, %e, %s = mxmoe.router_topk %logits {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x16xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>, tensor<?x16xf32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 16 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<16xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "ab2.experts"}
        : (tensor<?x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>, tensor<16xi32>) -> tensor<?x256xbf16>
    %cum = arith.sitofp %offs : tensor<16xi32> to tensor<16xf32>
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<16xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<16xf32>) -> tensor<16xf32>
    %psum = linalg.reduce ins(%s : tensor<?x16xf32>) outs(%init : tensor<16xf32>) dimensions = [0]
      (%a: f32, %b: f32) {
        %t = arith.addf %a, %b : f32
        linalg.yield %t : f32
      }
    mxmoe.yield %y, %cum, %psum : tensor<?x256xbf16>, tensor<16xf32>, tensor<16xf32>
  }
  return %y, %cum, %psum : tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>
}

func.func @a3(%h: tensor<1000x256xbf16>, %rw: tensor<16x256xbf16>, %w13: tensor<16x512x256xbf16>, %w2: tensor<16x256x256xbf16>) -> (tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>) {
  %y, %cum, %psum = mxmoe.tiled_mlp shards = 3 (%h, %rw, %w13, %w2) {fqn = "ab3", summed_results = 2}
      : (tensor<1000x256xbf16>, tensor<16x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>) -> (tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%xs: tensor<?x256xbf16>, %r: tensor<16x256xbf16>, %ew13: tensor<16x512x256xbf16>, %ew2: tensor<16x256x256xbf16>):
    %logits = mxmoe.linear %xs, %r {fqn = "ab3.router", precision = #mxmoe.precision<bf16>}
        : (tensor<?x256xbf16>, tensor<16x256xbf16>) -> tensor<?x16xbf16>
    %wt, %e, %s = mxmoe.router_topk %logits {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x16xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>, tensor<?x16xf32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 16 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<16xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "ab3.experts"}
        : (tensor<?x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>, tensor<16xi32>) -> tensor<?x256xbf16>
    %cum = arith.sitofp %offs : tensor<16xi32> to tensor<16xf32>
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<16xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<16xf32>) -> tensor<16xf32>
    %psum = linalg.reduce ins(%s : tensor<?x16xf32>) outs(%init : tensor<16xf32>) dimensions = [0]
      (%a: f32, %b: f32) {
        %t = arith.addf %a, %b : f32
        linalg.yield %t : f32
      }
    mxmoe.yield %y, %cum, %psum : tensor<?x256xbf16>, tensor<16xf32>, tensor<16xf32>
  }
  return %y, %cum, %psum : tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>
}

func.func @a4(%h: tensor<1000x256xbf16>, %rw: tensor<16x256xbf16>, %w13: tensor<16x512x256xbf16>, %w2: tensor<16x256x256xbf16>) -> (tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>) {
  %y, %cum, %psum = mxmoe.tiled_mlp shards = 4 (%h, %rw, %w13, %w2) {fqn = "ab4", summed_results = 2}
      : (tensor<1000x256xbf16>, tensor<16x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>) -> (tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%xs: tensor<?x256xbf16>, %r: tensor<16x256xbf16>, %ew13: tensor<16x512x256xbf16>, %ew2: tensor<16x256x256xbf16>):
    %logits = mxmoe.linear %xs, %r {fqn = "ab4.router", precision = #mxmoe.precision<bf16>}
        : (tensor<?x256xbf16>, tensor<16x256xbf16>) -> tensor<?x16xbf16>
    %wt, %e, %s = mxmoe.router_topk %logits {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x16xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>, tensor<?x16xf32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 16 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<16xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "ab4.experts"}
        : (tensor<?x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>, tensor<16xi32>) -> tensor<?x256xbf16>
    %cum = arith.sitofp %offs : tensor<16xi32> to tensor<16xf32>
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<16xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<16xf32>) -> tensor<16xf32>
    %psum = linalg.reduce ins(%s : tensor<?x16xf32>) outs(%init : tensor<16xf32>) dimensions = [0]
      (%a: f32, %b: f32) {
        %t = arith.addf %a, %b : f32
        linalg.yield %t : f32
      }
    mxmoe.yield %y, %cum, %psum : tensor<?x256xbf16>, tensor<16xf32>, tensor<16xf32>
  }
  return %y, %cum, %psum : tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>
}

func.func @a8(%h: tensor<1000x256xbf16>, %rw: tensor<16x256xbf16>, %w13: tensor<16x512x256xbf16>, %w2: tensor<16x256x256xbf16>) -> (tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>) {
  %y, %cum, %psum = mxmoe.tiled_mlp shards = 8 (%h, %rw, %w13, %w2) {fqn = "ab8", summed_results = 2}
      : (tensor<1000x256xbf16>, tensor<16x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>) -> (tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%xs: tensor<?x256xbf16>, %r: tensor<16x256xbf16>, %ew13: tensor<16x512x256xbf16>, %ew2: tensor<16x256x256xbf16>):
    %logits = mxmoe.linear %xs, %r {fqn = "ab8.router", precision = #mxmoe.precision<bf16>}
        : (tensor<?x256xbf16>, tensor<16x256xbf16>) -> tensor<?x16xbf16>
    %wt, %e, %s = mxmoe.router_topk %logits {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x16xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>, tensor<?x16xf32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 16 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<16xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "ab8.experts"}
        : (tensor<?x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>, tensor<16xi32>) -> tensor<?x256xbf16>
    %cum = arith.sitofp %offs : tensor<16xi32> to tensor<16xf32>
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<16xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<16xf32>) -> tensor<16xf32>
    %psum = linalg.reduce ins(%s : tensor<?x16xf32>) outs(%init : tensor<16xf32>) dimensions = [0]
      (%a: f32, %b: f32) {
        %t = arith.addf %a, %b : f32
        linalg.yield %t : f32
      }
    mxmoe.yield %y, %cum, %psum : tensor<?x256xbf16>, tensor<16xf32>, tensor<16xf32>
  }
  return %y, %cum, %psum : tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>
}

func.func @s1(%h: tensor<1000x256xbf16>, %rw: tensor<16x256xbf16>, %w13: tensor<16x512x256xbf16>, %w2: tensor<16x256x256xbf16>) -> (tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>) {
  %y, %cum, %psum = mxmoe.tiled_mlp shards = 1 (%h, %rw, %w13, %w2) {fqn = "sb1", summed_results = 2, save_routing}
      : (tensor<1000x256xbf16>, tensor<16x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>) -> (tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%xs: tensor<?x256xbf16>, %r: tensor<16x256xbf16>, %ew13: tensor<16x512x256xbf16>, %ew2: tensor<16x256x256xbf16>):
    %logits = mxmoe.linear %xs, %r {fqn = "sb1.router", precision = #mxmoe.precision<bf16>}
        : (tensor<?x256xbf16>, tensor<16x256xbf16>) -> tensor<?x16xbf16>
    %wt, %e, %s = mxmoe.router_topk %logits {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x16xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>, tensor<?x16xf32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 16 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<16xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "sb1.experts"}
        : (tensor<?x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>, tensor<16xi32>) -> tensor<?x256xbf16>
    %cum = arith.sitofp %offs : tensor<16xi32> to tensor<16xf32>
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<16xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<16xf32>) -> tensor<16xf32>
    %psum = linalg.reduce ins(%s : tensor<?x16xf32>) outs(%init : tensor<16xf32>) dimensions = [0]
      (%a: f32, %b: f32) {
        %t = arith.addf %a, %b : f32
        linalg.yield %t : f32
      }
    mxmoe.yield %y, %cum, %psum : tensor<?x256xbf16>, tensor<16xf32>, tensor<16xf32>
  }
  return %y, %cum, %psum : tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>
}

func.func @s2(%h: tensor<1000x256xbf16>, %rw: tensor<16x256xbf16>, %w13: tensor<16x512x256xbf16>, %w2: tensor<16x256x256xbf16>) -> (tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>) {
  %y, %cum, %psum = mxmoe.tiled_mlp shards = 2 (%h, %rw, %w13, %w2) {fqn = "sb2", summed_results = 2, save_routing}
      : (tensor<1000x256xbf16>, tensor<16x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>) -> (tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%xs: tensor<?x256xbf16>, %r: tensor<16x256xbf16>, %ew13: tensor<16x512x256xbf16>, %ew2: tensor<16x256x256xbf16>):
    %logits = mxmoe.linear %xs, %r {fqn = "sb2.router", precision = #mxmoe.precision<bf16>}
        : (tensor<?x256xbf16>, tensor<16x256xbf16>) -> tensor<?x16xbf16>
    %wt, %e, %s = mxmoe.router_topk %logits {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x16xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>, tensor<?x16xf32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 16 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<16xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "sb2.experts"}
        : (tensor<?x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>, tensor<16xi32>) -> tensor<?x256xbf16>
    %cum = arith.sitofp %offs : tensor<16xi32> to tensor<16xf32>
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<16xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<16xf32>) -> tensor<16xf32>
    %psum = linalg.reduce ins(%s : tensor<?x16xf32>) outs(%init : tensor<16xf32>) dimensions = [0]
      (%a: f32, %b: f32) {
        %t = arith.addf %a, %b : f32
        linalg.yield %t : f32
      }
    mxmoe.yield %y, %cum, %psum : tensor<?x256xbf16>, tensor<16xf32>, tensor<16xf32>
  }
  return %y, %cum, %psum : tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>
}

func.func @s4(%h: tensor<1000x256xbf16>, %rw: tensor<16x256xbf16>, %w13: tensor<16x512x256xbf16>, %w2: tensor<16x256x256xbf16>) -> (tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>) {
  %y, %cum, %psum = mxmoe.tiled_mlp shards = 4 (%h, %rw, %w13, %w2) {fqn = "sb4", summed_results = 2, save_routing}
      : (tensor<1000x256xbf16>, tensor<16x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>) -> (tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%xs: tensor<?x256xbf16>, %r: tensor<16x256xbf16>, %ew13: tensor<16x512x256xbf16>, %ew2: tensor<16x256x256xbf16>):
    %logits = mxmoe.linear %xs, %r {fqn = "sb4.router", precision = #mxmoe.precision<bf16>}
        : (tensor<?x256xbf16>, tensor<16x256xbf16>) -> tensor<?x16xbf16>
    %wt, %e, %s = mxmoe.router_topk %logits {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x16xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>, tensor<?x16xf32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 16 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<16xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "sb4.experts"}
        : (tensor<?x256xbf16>, tensor<16x512x256xbf16>, tensor<16x256x256xbf16>, tensor<16xi32>) -> tensor<?x256xbf16>
    %cum = arith.sitofp %offs : tensor<16xi32> to tensor<16xf32>
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<16xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<16xf32>) -> tensor<16xf32>
    %psum = linalg.reduce ins(%s : tensor<?x16xf32>) outs(%init : tensor<16xf32>) dimensions = [0]
      (%a: f32, %b: f32) {
        %t = arith.addf %a, %b : f32
        linalg.yield %t : f32
      }
    mxmoe.yield %y, %cum, %psum : tensor<?x256xbf16>, tensor<16xf32>, tensor<16xf32>
  }
  return %y, %cum, %psum : tensor<1000x256xbf16>, tensor<16xf32>, tensor<16xf32>
}
