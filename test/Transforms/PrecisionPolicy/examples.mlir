// Default policy on the bundled real-dimension examples.
// RUN: mxmoe-opt %mxmoe_src_root/examples/llama4_scout_moe.mlir --mxmoe-precision-policy 2>&1 >/dev/null | FileCheck %s --check-prefix=SCOUT
// RUN: mxmoe-opt %mxmoe_src_root/examples/deepseek_v3_moe.mlir --mxmoe-precision-policy 2>&1 >/dev/null | FileCheck %s --check-prefix=DSV3

// SCOUT: layers.0.attention.wq -> mxfp8 (rule default
// SCOUT: layers.0.attention.wk -> bf16 (rule exclude
// SCOUT: layers.0.attention.wv -> bf16 (rule exclude
// SCOUT: layers.0.attention.wo -> mxfp8 (rule default
// SCOUT: layers.0.moe.router.gate -> bf16 (rule exclude
// SCOUT: layers.0.moe.experts.w13 -> mxfp8 (rule default
// SCOUT: layers.0.moe.experts.w2 -> mxfp8 (rule default
// SCOUT: layers.0.moe.shared_expert.w13 -> mxfp8 (rule default
// SCOUT: layers.0.moe.shared_expert.w2 -> mxfp8 (rule default
// SCOUT: output -> bf16 (rule exclude

// DSV3: layers.3.attention.wq_a -> mxfp8 (rule default
// DSV3: layers.3.attention.wq_b -> mxfp8 (rule default
// DSV3: layers.3.attention.wkv_a -> mxfp8 (rule default
// DSV3: layers.3.attention.wkv_b -> mxfp8 (rule default
// DSV3: layers.3.attention.wo -> mxfp8 (rule default
// DSV3: layers.3.moe.router.gate -> bf16 (rule exclude: fqn matches exclude pattern 'router.gate')
// DSV3: layers.3.moe.experts.w13 -> mxfp8 (rule default
// DSV3: layers.3.moe.experts.w2 -> mxfp8 (rule default
// DSV3: layers.3.moe.shared_experts.w13 -> mxfp8 (rule default
// DSV3: layers.3.moe.shared_experts.w2 -> mxfp8 (rule default
// DSV3: output -> bf16 (rule exclude
