// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="host-launch=false" | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_90a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm90a.ptx
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_100a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm100a.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm90a.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t.sm90a.ptx -o %t.sm90a.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}
// RUN: %if ptxas %{ %ptxas -arch=sm_100a -v %t.sm100a.ptx -o %t.sm100a.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}

// mxmoe.router_topk lowered (RouterTopK.cpp): one warp per token row, the
// token count a run-time value (64 tokens x 32 lanes = 2048 threads, 8
// CTAs of 256); logits, (bias,) weights, experts; no status word (nothing
// to reject: a NaN key ranks last, its weights stay NaN). The row's
// softmax maximum and sum are xor butterflies (5 shuffles each), top_k
// rounds of a 64-bit (key, expert) argmax (two shuffles per step), one
// index shuffle per round for the winner's score. exp is MLIR's
// polynomial approximation (no math calls left). The sigmoid router with
// groups merges each group's top two keys (8 groups x 5 steps x 2).
// test/Integration/router_gpu.py runs them on the GPU.

// CHECK-LABEL: func.func @qwen3(
// CHECK:         mxmoe.router_topk %arg0 {mxmoe.grid = array<i64: 8, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@qwen3__router_topk_0, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<result 1>, #mxmoe.kernel_arg<value 64>]
// CHECK-LABEL: func.func @deepseek(
// CHECK:         mxmoe.router_topk %arg0 bias %arg1 {{.*}}mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<result 1>, #mxmoe.kernel_arg<value 32>]
// CHECK-LABEL: func.func @qwen3_grad(
// CHECK:         mxmoe.router_topk_grad %arg0, %arg1, %arg2 {mxmoe.grid = array<i64: 8, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@qwen3_grad__router_topk_grad_0, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<operand 2>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<status>, #mxmoe.kernel_arg<value 64>]
// With the full scores (a load-balancing loss's input) the forward also
// writes them, and the gradient reads one [E] row of their gradient.
// CHECK-LABEL: func.func @qwen3_scores(
// CHECK:         mxmoe.router_topk %arg0 {{.*}}mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<result 1>, #mxmoe.kernel_arg<result 2>, #mxmoe.kernel_arg<value 64>]
// CHECK:         mxmoe.router_topk_grad %arg0, %{{.*}}, %arg1 scores_grad %arg2 : tensor<128xf32> {{.*}}mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<operand 2>, #mxmoe.kernel_arg<operand 3>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<status>, #mxmoe.kernel_arg<value 64>]
// CHECK-LABEL: gpu.func @qwen3__router_topk_0(
// CHECK-SAME:      %{{.*}}: !llvm.ptr {{{.*}}mxmoe.element_type = bf16}
// CHECK-SAME:      %{{.*}}: i64 {mxmoe.scalar = "tokens"})
// CHECK-COUNT-5: gpu.shuffle  xor {{.*}} : f32
// CHECK-NOT:     math.exp
// CHECK-COUNT-5: gpu.shuffle  xor {{.*}} : f32
// CHECK-COUNT-10: gpu.shuffle  xor {{.*}} : i32
// CHECK:         gpu.shuffle  idx {{.*}} : f32
// CHECK-LABEL: gpu.func @deepseek__router_topk_0(
// CHECK-COUNT-80: gpu.shuffle  xor {{.*}} : f32
// CHECK-COUNT-10: gpu.shuffle  xor {{.*}} : i32

// PTX-LABEL: .entry qwen3__router_topk_0(
// PTX:         .maxntid 256, 1, 1
// PTX:         shfl.sync.bfly.b32
// PTX:         div.rn.f32
// PTX:         shfl.sync.idx.b32
// PTX:         st.global.b32
// PTX-NOT:     call
// PTX-LABEL: .entry deepseek__router_topk_0(
// SPILLS-NOT: {{[1-9][0-9]*}} bytes spill stores

// mxmoe.router_topk_grad (the same file): one warp per row, the scores
// recomputed from the logits, each choice's score fetched from its lane
// (k rounds of two index shuffles), the renormalization's two sums and the
// softmax Jacobian's dot product as butterflies, dL/dw_j and e_j broadcast
// per slot; an expert id outside [0, E) raises the status to 4.
// PTX-LABEL: .entry qwen3_grad__router_topk_grad_0(
// PTX:         atom.global.max.s32 {{.*}}, 4;
// PTX:         shfl.sync.idx.b32
// PTX:         shfl.sync.bfly.b32
// PTX:         cvt.rn.bf16.f32
// PTX-NOT:     call

func.func @qwen3(%logits: tensor<64x128xbf16>) -> (tensor<64x8xf32>, tensor<64x8xi32>) {
  %w, %e = mxmoe.router_topk %logits {top_k = 8 : i64, score = #mxmoe.router_score<softmax>, renormalize}
      : tensor<64x128xbf16> -> tensor<64x8xf32>, tensor<64x8xi32>
  return %w, %e : tensor<64x8xf32>, tensor<64x8xi32>
}

func.func @deepseek(%logits: tensor<32x256xf32>, %bias: tensor<256xf32>) -> (tensor<32x8xf32>, tensor<32x8xi32>) {
  %w, %e = mxmoe.router_topk %logits bias %bias : tensor<256xf32> {top_k = 8 : i64, score = #mxmoe.router_score<sigmoid>, renormalize, scaling_factor = 2.5 : f64, num_groups = 8 : i64, topk_groups = 4 : i64}
      : tensor<32x256xf32> -> tensor<32x8xf32>, tensor<32x8xi32>
  return %w, %e : tensor<32x8xf32>, tensor<32x8xi32>
}

func.func @qwen3_grad(%logits: tensor<64x128xbf16>, %e: tensor<64x8xi32>, %dw: tensor<64x8xf32>) -> tensor<64x128xbf16> {
  %dl = mxmoe.router_topk_grad %logits, %e, %dw {score = #mxmoe.router_score<softmax>, renormalize}
      : tensor<64x128xbf16>, tensor<64x8xi32>, tensor<64x8xf32> -> tensor<64x128xbf16>
  return %dl : tensor<64x128xbf16>
}

// The scores' forward stores and the gradient's loads of the [E] row.
// PTX-LABEL: .entry qwen3_scores__router_topk_{{[0-9]+}}(
// PTX:         st.global.b32
// PTX-LABEL: .entry qwen3_scores__router_topk_grad_{{[0-9]+}}(
// PTX:         shfl.sync.bfly.b32
// PTX-NOT:     call

func.func @qwen3_scores(%logits: tensor<64x128xbf16>, %dw: tensor<64x8xf32>, %dsum: tensor<128xf32>) -> (tensor<64x128xf32>, tensor<64x128xbf16>) {
  %w, %e, %s = mxmoe.router_topk %logits {top_k = 8 : i64, score = #mxmoe.router_score<softmax>, renormalize}
      : tensor<64x128xbf16> -> tensor<64x8xf32>, tensor<64x8xi32>, tensor<64x128xf32>
  %dl = mxmoe.router_topk_grad %logits, %e, %dw scores_grad %dsum : tensor<128xf32> {score = #mxmoe.router_score<softmax>, renormalize}
      : tensor<64x128xbf16>, tensor<64x8xi32>, tensor<64x8xf32> -> tensor<64x128xbf16>
  return %s, %dl : tensor<64x128xf32>, tensor<64x128xbf16>
}
