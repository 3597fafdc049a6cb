// RUN: rm -rf %t && mxmoe-compile %s --chip sm_90a --recipe mx128 -o %t --toolkit %t/none > /dev/null 2>&1
// RUN: %python %S/Inputs/print_programs.py %t/manifest.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t/manifest.json

// A routed MoE block whose shard body is all kernels (the hidden state is
// also the router's logits: E = H = 128) becomes one launch program per
// direction with loop steps (lib/Target/ManifestPrograms.cpp): 40 tokens
// in 3 shards of 14 + 13 + 13 rows (a main loop of one shard, a `.tail`
// loop of two); the router and sort kernels and the experts' inlined
// kernels run per shard on row views (offset_bytes + iteration_bytes:
// 14 x 128 x 2 = 3584 bytes, then 13 x 256 = 3328); the weight
// quantizations are loop-invariant, hoisted before the first loop and
// reused by the `.tail` loop (its equal steps dropped); the
// backward's weight-gradient GEMMs add into zero-filled accumulators in
// place (`accumulate`, mxmoe-accumulate-in-gemm: no addf kernel), and dx
// is written per shard (every row once: dx is not zero-filled).

// CHECK: blk steps=[b_experts_forward__quantize_1, b_experts_forward__quantize_1, loop x1[blk__router_topk_0@0+3584, blk__sort_by_expert_1, b_experts_forward__quantize_0@0+3584, {{.*}}, b_experts_forward__combine_rows_7@0+3584], loop x2[blk__router_topk_0@3584+3328, blk__sort_by_expert_1, b_experts_tail_forward__quantize_0@3584+3328, {{.*}}, b_experts_forward__combine_rows_7@3584+3328]] returns=[buffer 0 [40, 128] bf16]
// CHECK: b.backward steps=[b_experts_forward__quantize_1, b_experts_forward__quantize_1, b_experts_backward__quantize_4, b_experts_backward__quantize_4, loop x1[blk__router_topk_0@0+3584, {{.*}}, b_experts_forward__grouped_matmul_2, b_experts_forward__invert_permutation_6, b_experts_backward__combine_scores_grad_1@0+3584, {{.*}}, b_experts_backward_accumulate__grouped_matmul_7, {{.*}}, b_experts_backward_accumulate__grouped_matmul_7, {{.*}}, b_backward__router_topk_grad_2@0+3584, b_backward__addf_3@0+3584], loop x2[{{.*}}, b_backward__addf_3@3584+3328]] returns=[buffer 2 [40, 128] bf16, buffer 0 [128, 256, 128] bf16, buffer 1 [128, 128, 128] bf16]
// The recomputed forward's combined output is read by nothing in the
// backward: its combine (and the inverse permutation only it reads) are
// dropped, their buffers zero bytes.
// JSON-DAG: "unused": "written by a step that nothing reads (dropped)"
// JSON-DAG: "unused": "an equal loop-invariant step computed it before"
// JSON-DAG: "functions_without_program": []
// JSON-DAG: "alignment": "16-byte aligned buffers; an output may be an input (elementwise, in place)"

func.func @blk(%h: tensor<40x128xbf16>, %w13: tensor<128x256x128xbf16>, %w2: tensor<128x128x128xbf16>) -> tensor<40x128xbf16> {
  %y = mxmoe.tiled_mlp shards = 3 (%h, %w13, %w2) {fqn = "b"}
      : (tensor<40x128xbf16>, tensor<128x256x128xbf16>, tensor<128x128x128xbf16>) -> tensor<40x128xbf16> {
  ^bb0(%xs: tensor<?x128xbf16>, %ew13: tensor<128x256x128xbf16>, %ew2: tensor<128x128x128xbf16>):
    %wt, %e = mxmoe.router_topk %xs {top_k = 2 : i64, score = #mxmoe.router_score<softmax>, renormalize}
        : tensor<?x128xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 128 : i64} : tensor<?x2xi32> -> tensor<?xi32>, tensor<128xi32>
    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x2xf32>)
        {fqn = "b.experts"}
        : (tensor<?x128xbf16>, tensor<128x256x128xbf16>, tensor<128x128x128xbf16>, tensor<128xi32>) -> tensor<?x128xbf16>
    mxmoe.yield %y : tensor<?x128xbf16>
  }
  return %y : tensor<40x128xbf16>
}
