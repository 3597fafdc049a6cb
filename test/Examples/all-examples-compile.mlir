// Every bundled example verifies and compiles to PTX for both chips.
// RUN: rm -rf %t
// RUN: mxmoe-compile %mxmoe_src_root/examples/qwen3_30b_a3b_moe.mlir -o %t/qwen --toolkit %t/none | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --check-prefix=QWEN < %t/qwen/manifest.json
// RUN: mxmoe-compile %mxmoe_src_root/examples/gpt_oss_20b_moe.mlir -o %t/gptoss --toolkit %t/none | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --check-prefix=GPTOSS < %t/gptoss/manifest.json
// RUN: FileCheck %s --check-prefix=GPTOSS-POLICY < %t/gptoss/policy-report.json
// RUN: mxmoe-compile %mxmoe_src_root/examples/deepseek_v3_moe.mlir -o %t/dsv3 --toolkit %t/none | FileCheck %s --check-prefix=LOG
// RUN: mxmoe-compile %mxmoe_src_root/examples/qwen3_30b_a3b_tiled_moe.mlir -o %t/tiled --toolkit %t/none | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --check-prefix=TILED < %t/tiled/manifest.json

// LOG: mxmoe-compile: {{.*}} (sm_90a, sm_100a) in {{[0-9.]+}} s
// QWEN: "cubin": "not built: ptxas not found at {{.*}}/none/bin/ptxas",
// The gate/up and down projections' forward quantizations share one
// kernel (their sizes are run-time parameters).
// QWEN: "name": "layers_0_mlp_experts_gate_up_proj_forward__quantize_0",
// QWEN: "function": "layers.0.mlp.experts.down_proj.forward",
// The MXFP4 weight dequantization is a kernel of its own (4 bits per element:
// 32*5760*2880/2 bytes).
// GPTOSS: "bytes": 265420800,
// GPTOSS: "element_type": "i8",
// GPTOSS: "name": "mlp1__dequantize_0",
// GPTOSS: "op": "mxmoe.dequantize",
// GPTOSS-POLICY: "fqn": "block.0.mlp.router.gate",
// GPTOSS-POLICY: "precision": "bf16",

// The tiled MoE block: two static 32K-token shards, the experts block
// programs at 262144 routed rows per shard, the routing kernels of both
// loops.
// TILED: "name": "moe__router_topk_{{[0-9]+}}"
// TILED: "name": "layers_0_moe_backward__router_topk_grad_{{[0-9]+}}"
// TILED: "function": "layers.0.moe.experts.forward"
// TILED: "shard_tokens": 32768
