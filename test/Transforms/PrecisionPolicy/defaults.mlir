// RUN: mxmoe-opt %s --mxmoe-precision-policy --verify-diagnostics | FileCheck %s

// Default rules on Llama 4 Scout shapes (hidden 5120, 16 experts of 8192,
// attention 40 x 128 query / 8 x 128 kv heads, vocabulary 202048).

// CHECK-LABEL: func.func @scout
func.func @scout(%x: tensor<8192x5120xbf16>, %wq: tensor<5120x5120xbf16>,
                 %wk: tensor<1024x5120xbf16>, %router: tensor<16x5120xbf16>,
                 %routed: tensor<8192x5120xbf16>, %offs: tensor<16xi32>,
                 %w13: tensor<16x16384x5120xbf16>, %head: tensor<202048x5120xbf16>) {
  // CHECK: mxmoe.linear {{.*}} {fqn = "layers.0.attention.wq", precision = #mxmoe.precision<mxfp8>, recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>}
  // expected-remark @+1 {{mxmoe-precision-policy: layers.0.attention.wq -> mxfp8 (rule default: passes every rule)}}
  %q = mxmoe.linear %x, %wq {fqn = "layers.0.attention.wq"} : (tensor<8192x5120xbf16>, tensor<5120x5120xbf16>) -> tensor<8192x5120xbf16>
  // CHECK: mxmoe.linear {{.*}} {fqn = "layers.0.attention.wk", precision = #mxmoe.precision<bf16>}
  // expected-remark @+1 {{mxmoe-precision-policy: layers.0.attention.wk -> bf16 (rule exclude: fqn matches exclude pattern 'attention.wk')}}
  %k = mxmoe.linear %x, %wk {fqn = "layers.0.attention.wk"} : (tensor<8192x5120xbf16>, tensor<1024x5120xbf16>) -> tensor<8192x1024xbf16>
  // CHECK: mxmoe.linear {{.*}} {fqn = "layers.0.moe.router.gate", precision = #mxmoe.precision<bf16>}
  // expected-remark @+1 {{mxmoe-precision-policy: layers.0.moe.router.gate -> bf16 (rule exclude: fqn matches exclude pattern 'router.gate')}}
  %l = mxmoe.linear %x, %router {fqn = "layers.0.moe.router.gate"} : (tensor<8192x5120xbf16>, tensor<16x5120xbf16>) -> tensor<8192x16xbf16>
  // CHECK: mxmoe.scaled_grouped_matmul {{.*}} {fqn = "layers.0.moe.experts.w13", precision = #mxmoe.precision<mxfp8>, recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>}
  // expected-remark @+1 {{mxmoe-precision-policy: layers.0.moe.experts.w13 -> mxfp8 (rule default: passes every rule)}}
  %h = mxmoe.scaled_grouped_matmul %routed, %w13, %offs {fqn = "layers.0.moe.experts.w13"} : (tensor<8192x5120xbf16>, tensor<16x16384x5120xbf16>, tensor<16xi32>) -> tensor<8192x16384xbf16>
  // CHECK: mxmoe.linear {{.*}} {fqn = "output", precision = #mxmoe.precision<bf16>}
  // expected-remark @+1 {{mxmoe-precision-policy: output -> bf16 (rule exclude: fqn matches exclude pattern 'output')}}
  %o = mxmoe.linear %x, %head {fqn = "output"} : (tensor<8192x5120xbf16>, tensor<202048x5120xbf16>) -> tensor<8192x202048xbf16>
  return
}

// Pattern matching is by whole dot-separated components.
// CHECK-LABEL: func.func @components
func.func @components(%x: tensor<64x64xbf16>, %w: tensor<64x64xbf16>) {
  // CHECK: {fqn = "layers.0.outputs", precision = #mxmoe.precision<mxfp8>
  // expected-remark @+1 {{layers.0.outputs -> mxfp8 (rule default}}
  %a = mxmoe.linear %x, %w {fqn = "layers.0.outputs"} : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  // CHECK: {fqn = "model.lm_head", precision = #mxmoe.precision<bf16>}
  // expected-remark @+1 {{model.lm_head -> bf16 (rule exclude: fqn matches exclude pattern 'lm_head')}}
  %b = mxmoe.linear %x, %w {fqn = "model.lm_head"} : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  // CHECK: {fqn = "layers.7.attention.wv.lora", precision = #mxmoe.precision<bf16>}
  // expected-remark @+1 {{layers.7.attention.wv.lora -> bf16 (rule exclude: fqn matches exclude pattern 'attention.wv')}}
  %c = mxmoe.linear %x, %w {fqn = "layers.7.attention.wv.lora"} : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  return
}

// A precision set by the user wins over every rule.
// CHECK-LABEL: func.func @user
func.func @user(%x: tensor<64x64xbf16>, %w: tensor<64x64xbf16>) {
  // CHECK: {fqn = "output", precision = #mxmoe.precision<mxfp8>}
  // expected-remark @+1 {{output -> mxfp8 (rule user: precision set on the op)}}
  %a = mxmoe.linear %x, %w {fqn = "output", precision = #mxmoe.precision<mxfp8>} : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  // CHECK: {fqn = "layers.0.attention.wq", precision = #mxmoe.precision<bf16>}
  // expected-remark @+1 {{layers.0.attention.wq -> bf16 (rule user: precision set on the op)}}
  %b = mxmoe.linear %x, %w {fqn = "layers.0.attention.wq", precision = #mxmoe.precision<bf16>} : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  return
}

// Hugging Face names of the router and attention k/v are default excludes
// too; gate_proj (the MLP's gate, not the router) is not.
// CHECK-LABEL: func.func @hf_names
func.func @hf_names(%x: tensor<4096x2048xbf16>, %r: tensor<128x2048xbf16>, %w: tensor<512x2048xbf16>) {
  // expected-remark @+1 {{layers.0.mlp.gate -> bf16 (rule exclude: fqn matches exclude pattern 'mlp.gate')}}
  %a = mxmoe.linear %x, %r {fqn = "layers.0.mlp.gate"} : (tensor<4096x2048xbf16>, tensor<128x2048xbf16>) -> tensor<4096x128xbf16>
  // expected-remark @+1 {{layers.0.block_sparse_moe.gate -> bf16 (rule exclude: fqn matches exclude pattern 'block_sparse_moe.gate')}}
  %b = mxmoe.linear %x, %r {fqn = "layers.0.block_sparse_moe.gate"} : (tensor<4096x2048xbf16>, tensor<128x2048xbf16>) -> tensor<4096x128xbf16>
  // expected-remark @+1 {{layers.0.mlp.router -> bf16 (rule exclude: fqn matches exclude pattern 'mlp.router')}}
  %c = mxmoe.linear %x, %r {fqn = "layers.0.mlp.router"} : (tensor<4096x2048xbf16>, tensor<128x2048xbf16>) -> tensor<4096x128xbf16>
  // expected-remark @+1 {{layers.0.feed_forward.router -> bf16 (rule exclude: fqn matches exclude pattern 'feed_forward.router')}}
  %g = mxmoe.linear %x, %r {fqn = "layers.0.feed_forward.router"} : (tensor<4096x2048xbf16>, tensor<128x2048xbf16>) -> tensor<4096x128xbf16>
  // expected-remark @+1 {{layers.0.self_attn.k_proj -> bf16 (rule exclude: fqn matches exclude pattern 'self_attn.k_proj')}}
  %d = mxmoe.linear %x, %w {fqn = "layers.0.self_attn.k_proj"} : (tensor<4096x2048xbf16>, tensor<512x2048xbf16>) -> tensor<4096x512xbf16>
  // expected-remark @+1 {{layers.0.self_attn.v_proj -> bf16 (rule exclude: fqn matches exclude pattern 'self_attn.v_proj')}}
  %e = mxmoe.linear %x, %w {fqn = "layers.0.self_attn.v_proj"} : (tensor<4096x2048xbf16>, tensor<512x2048xbf16>) -> tensor<4096x512xbf16>
  // expected-remark @+1 {{layers.0.mlp.gate_proj -> mxfp8 (rule default: passes every rule)}}
  %f = mxmoe.linear %x, %w {fqn = "layers.0.mlp.gate_proj"} : (tensor<4096x2048xbf16>, tensor<512x2048xbf16>) -> tensor<4096x512xbf16>
  return
}
