// test/Integration/router_gpu.py: the routing-decision kernels
// (RouterTopK.cpp, SortByExpert.cpp) one configuration per function, with
// the routers of real models:
//  @qwen3:    softmax, top-8 of 128, renormalized; then the expert sort
//  @deepseek: sigmoid, correction bias, 8 groups / best 4, top-8 of 256,
//             renormalized, scaling factor 2.5 (f32 logits)
//  @llama4:   sigmoid, top-1 of 16, not renormalized
//  @odd:      softmax over 60 experts (not a multiple of 32), top-6, f16
//  @wide:     softmax, top-40 of 96 (more slots than lanes)
//  @sort_big: the sort alone, 32768 tokens x top-8 over 128 experts
//  @sort_odd: the sort alone, 1237 tokens x top-3 over 60 experts
//  @qwen3_grad, @deepseek_grad, @llama4_grad: mxmoe.router_topk_grad of
//             those routers (bf16 / f32 / f32 logits gradients)
// Build: mxmoe-compile test/Integration/router.mlir --chip sm_90a -o DIR
func.func @qwen3(%logits: tensor<1000x128xbf16>) -> (tensor<1000x8xf32>, tensor<1000x8xi32>, tensor<8000xi32>, tensor<128xi32>) {
  %w, %e = mxmoe.router_topk %logits {top_k = 8 : i64, score = #mxmoe.router_score<softmax>, renormalize}
      : tensor<1000x128xbf16> -> tensor<1000x8xf32>, tensor<1000x8xi32>
  %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 128 : i64} : tensor<1000x8xi32> -> tensor<8000xi32>, tensor<128xi32>
  return %w, %e, %idx, %offs : tensor<1000x8xf32>, tensor<1000x8xi32>, tensor<8000xi32>, tensor<128xi32>
}
func.func @deepseek(%logits: tensor<500x256xf32>, %bias: tensor<256xf32>) -> (tensor<500x8xf32>, tensor<500x8xi32>) {
  %w, %e = mxmoe.router_topk %logits bias %bias : tensor<256xf32> {top_k = 8 : i64, score = #mxmoe.router_score<sigmoid>, renormalize, scaling_factor = 2.5 : f64, num_groups = 8 : i64, topk_groups = 4 : i64}
      : tensor<500x256xf32> -> tensor<500x8xf32>, tensor<500x8xi32>
  return %w, %e : tensor<500x8xf32>, tensor<500x8xi32>
}
func.func @llama4(%logits: tensor<777x16xbf16>) -> (tensor<777x1xf32>, tensor<777x1xi32>) {
  %w, %e = mxmoe.router_topk %logits {top_k = 1 : i64, score = #mxmoe.router_score<sigmoid>}
      : tensor<777x16xbf16> -> tensor<777x1xf32>, tensor<777x1xi32>
  return %w, %e : tensor<777x1xf32>, tensor<777x1xi32>
}
func.func @odd(%logits: tensor<333x60xf16>) -> (tensor<333x6xf32>, tensor<333x6xi32>) {
  %w, %e = mxmoe.router_topk %logits {top_k = 6 : i64, score = #mxmoe.router_score<softmax>, renormalize}
      : tensor<333x60xf16> -> tensor<333x6xf32>, tensor<333x6xi32>
  return %w, %e : tensor<333x6xf32>, tensor<333x6xi32>
}
func.func @wide(%logits: tensor<64x96xf32>) -> (tensor<64x40xf32>, tensor<64x40xi32>) {
  %w, %e = mxmoe.router_topk %logits {top_k = 40 : i64, score = #mxmoe.router_score<softmax>}
      : tensor<64x96xf32> -> tensor<64x40xf32>, tensor<64x40xi32>
  return %w, %e : tensor<64x40xf32>, tensor<64x40xi32>
}
func.func @sort_big(%e: tensor<32768x8xi32>) -> (tensor<262144xi32>, tensor<128xi32>) {
  %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 128 : i64} : tensor<32768x8xi32> -> tensor<262144xi32>, tensor<128xi32>
  return %idx, %offs : tensor<262144xi32>, tensor<128xi32>
}
func.func @sort_odd(%e: tensor<1237x3xi32>) -> (tensor<3711xi32>, tensor<60xi32>) {
  %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 60 : i64} : tensor<1237x3xi32> -> tensor<3711xi32>, tensor<60xi32>
  return %idx, %offs : tensor<3711xi32>, tensor<60xi32>
}
func.func @qwen3_grad(%logits: tensor<1000x128xbf16>, %e: tensor<1000x8xi32>, %dw: tensor<1000x8xf32>) -> tensor<1000x128xbf16> {
  %dl = mxmoe.router_topk_grad %logits, %e, %dw {score = #mxmoe.router_score<softmax>, renormalize}
      : tensor<1000x128xbf16>, tensor<1000x8xi32>, tensor<1000x8xf32> -> tensor<1000x128xbf16>
  return %dl : tensor<1000x128xbf16>
}
func.func @deepseek_grad(%logits: tensor<500x256xf32>, %e: tensor<500x8xi32>, %dw: tensor<500x8xf32>) -> tensor<500x256xf32> {
  %dl = mxmoe.router_topk_grad %logits, %e, %dw {score = #mxmoe.router_score<sigmoid>, renormalize, scaling_factor = 2.5 : f64}
      : tensor<500x256xf32>, tensor<500x8xi32>, tensor<500x8xf32> -> tensor<500x256xf32>
  return %dl : tensor<500x256xf32>
}
func.func @llama4_grad(%logits: tensor<777x16xbf16>, %e: tensor<777x1xi32>, %dw: tensor<777x1xf32>) -> tensor<777x16xf32> {
  %dl = mxmoe.router_topk_grad %logits, %e, %dw {score = #mxmoe.router_score<sigmoid>}
      : tensor<777x16xbf16>, tensor<777x1xi32>, tensor<777x1xf32> -> tensor<777x16xf32>
  return %dl : tensor<777x16xf32>
}
