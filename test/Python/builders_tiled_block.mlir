// `mxmoe.builders --tiled-block` emits the whole MoE block of each target
// model as one mxmoe.tiled_mlp (issue 24 item 3): the family's router
// (DeepSeek-V3: sigmoid scores, correction bias, 8 groups of which 4 are
// kept, renormalized, scaled by 2.5; Llama4: sigmoid top-1 scaling the
// dispatched rows; Qwen3: softmax, renormalized per norm_topk_prob; gpt-oss:
// biased router, renormalized softmax), the expert sort, the routed
// experts (one mxmoe.swiglu_experts with routing: dispatch, SwiGLU and
// combine fused; Llama4's scaled dispatch as gather, two grouped GEMMs,
// SwiGLU and combine) and the shared expert. The
// whole pipeline takes it: static shard loops of 32K tokens (the auto
// rule), the GEMMs expanded per shard size, kernels for both chips.
// RUN: env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders deepseek_v3 --tokens 4096 --tiled-block > %t.dsv3.mlir
// RUN: FileCheck %s --check-prefix=DSV3 < %t.dsv3.mlir
// RUN: env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders llama4_scout --tokens 2048 --tiled-block --shards 2 > %t.scout.mlir
// RUN: FileCheck %s --check-prefix=SCOUT < %t.scout.mlir
// RUN: mxmoe-opt %t.scout.mlir --mxmoe-precision-policy --mxmoe-tile-mlp 2>/dev/null | FileCheck %s --check-prefix=SCOUT-LOOPS
// RUN: rm -rf %t.scoutout && mxmoe-compile %t.scout.mlir --chip sm_90a --recipe mx128 --programs-only -o %t.scoutout --toolkit %t/none > /dev/null
// RUN: FileCheck %s --check-prefix=SCOUT-PROGRAMS < %t.scoutout/manifest.json
// RUN: env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders qwen3_30b_a3b --tokens 65536 --tiled-block > %t.qwen3.mlir
// RUN: rm -rf %t.out && mxmoe-compile %t.qwen3.mlir --chip sm_90a,sm_100a --recipe mx128 -o %t.out --toolkit %t/none | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --check-prefix=QWEN3 < %t.out/manifest.json
// RUN: env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders gpt_oss_20b --tokens 1024 --tiled-block --shards 4 | mxmoe-compile - --chip sm_90a -o %t.gptoss --toolkit %t/none | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --check-prefix=GPTOSS-PROGRAMS < %t.gptoss/manifest.json
// RUN: not env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders qwen3_30b_a3b --tiled-block --layers 2 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders qwen3_30b_a3b --tiled-block --shards 0 2>&1 | FileCheck %s --check-prefix=BADSHARDS
// RUN: echo '{"model_type": "qwen2_moe", "hidden_size": 2048, "moe_intermediate_size": 1408, "num_experts": 60, "num_experts_per_tok": 4, "shared_expert_intermediate_size": 5632}' > %t.qwen2.json
// RUN: not env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders %t.qwen2.json --tiled-block 2>&1 | FileCheck %s --check-prefix=QWEN2
// RUN: env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders gpt_oss_20b --tokens 1024 --tiled-block | FileCheck %s --check-prefix=GPTOSS
// With --router-stats the block also returns the router's load-balancing
// statistics summed over shards (scores from router_topk, the sort's end
// offsets as f32), and forward and backward are still launch programs.
// RUN: env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders llama4_scout --tokens 2048 --tiled-block --shards 2 --router-stats > %t.stats.mlir
// RUN: FileCheck %s --check-prefix=STATS < %t.stats.mlir
// RUN: rm -rf %t.statsout && mxmoe-compile %t.stats.mlir --chip sm_90a --recipe mx128 --programs-only -o %t.statsout --toolkit %t/none > /dev/null
// RUN: FileCheck %s --check-prefix=STATS-PROGRAMS < %t.statsout/manifest.json
// RUN: not env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders qwen3_30b_a3b --router-stats 2>&1 | FileCheck %s --check-prefix=BADSTATS
// With --save-routing (Qwen3, top-8, 2 shards) the forward function
// returns the routing (weights, experts, the sort's indices and per-shard
// offsets) and the backward reads it, recomputing neither the top-k nor
// the sort: both are programs, and so is @moe, a call of the forward (the
// describer inlines it).
// RUN: env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders qwen3_30b_a3b --tokens 4096 --tiled-block --shards 2 --save-routing > %t.saved.mlir
// RUN: rm -rf %t.savedout && mxmoe-compile %t.saved.mlir --chip sm_90a --recipe mx128 --programs-only -o %t.savedout --toolkit %t/none > /dev/null
// RUN: FileCheck %s --check-prefix=SAVED < %t.savedout/manifest.json
// RUN: mxmoe-opt %t.saved.mlir --mxmoe-precision-policy --mxmoe-tile-mlp 2>/dev/null | FileCheck %s --check-prefix=SAVED-IR

// DSV3: func.func @moe(%h: tensor<4096x7168xbf16>, %router_w: tensor<256x7168xbf16>, %router_bias: tensor<256xf32>, %w13: tensor<256x4096x7168xbf16>, %w2: tensor<256x7168x2048xbf16>, %shared_w13: tensor<4096x7168xbf16>, %shared_w2: tensor<7168x2048xbf16>) -> tensor<4096x7168xbf16>
// DSV3: mxmoe.tiled_mlp shards = auto (%h, %router_w, %router_bias, %w13, %w2, %shared_w13, %shared_w2) {fqn = "layers.0.moe"}
// DSV3: mxmoe.router_topk %logits bias %rb : tensor<256xf32> {top_k = 8 : i64, score = #mxmoe.router_score<sigmoid>, renormalize, scaling_factor = 2.5, num_groups = 8 : i64, topk_groups = 4 : i64}
// DSV3: %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : tensor<?xi32>, tensor<?x8xf32>)
// DSV3-NEXT: {fqn = "layers.0.moe.experts"}
// The shared expert: a one-expert swiglu_experts over the shard's rows.
// DSV3: %soffs = tensor.from_elements %n32 : tensor<1xi32>
// DSV3: %so = mxmoe.swiglu_experts %xs, %s13, %s2, %soffs {fqn = "layers.0.moe.shared_expert"}
// DSV3-NEXT: : (tensor<?x7168xbf16>, tensor<1x4096x7168xbf16>, tensor<1x7168x2048xbf16>, tensor<1xi32>) -> tensor<?x7168xbf16>
// DSV3: %ys = arith.addf %y, %so
// DSV3: mxmoe.yield %ys

// SCOUT: mxmoe.router_topk %logits {top_k = 1 : i64, score = #mxmoe.router_score<sigmoid>}
// SCOUT: mxmoe.gather_rows %xs[%idx] scaled_by %wt : tensor<?x1xf32> {top_k = 1 : i64}
// SCOUT: %o = mxmoe.swiglu_experts %r, %ew13, %ew2, %offs {fqn = "layers.0.moe.experts"}
// SCOUT: mxmoe.combine_rows %o, %idx, %inv {top_k = 1 : i64}
// Scout's block (scaled dispatch, shared expert) compiles to launch
// programs in both directions.
// SCOUT-PROGRAMS: "functions_without_program": [],
// gpt-oss's biased router: the bias in the linear kernel, its gradient a
// row-sum kernel; both directions are programs.
// GPTOSS-PROGRAMS: "functions_without_program": [],
// GPTOSS-PROGRAMS-DAG: "name": "moe__linear_bf16_0"
// GPTOSS-PROGRAMS-DAG: "name": "layers_0_moe_backward__sum_rows_{{[0-9]+}}"
// SCOUT-LOOPS-LABEL: func.func @moe(
// SCOUT-LOOPS: scf.for
// SCOUT-LOOPS: call @layers.0.moe.experts.forward({{.*}}) : (tensor<1024x5120xbf16>, tensor<16x16384x5120xbf16>, tensor<16x5120x8192xbf16>, tensor<16xi32>) -> (tensor<1024x5120xbf16>, tensor<1024x16384xbf16>)
// SCOUT-LOOPS: call @layers.0.moe.shared_expert.forward
// SCOUT-LOOPS-LABEL: func.func @layers.0.moe.backward(
// SCOUT-LOOPS: call @layers.0.moe.shared_expert.backward
// SCOUT-LOOPS: call @layers.0.moe.experts.backward
// SCOUT-LOOPS: mxmoe.router_topk_grad

// LOG: mxmoe-compile: {{.*}} in {{[0-9.]+}} s
// QWEN3-DAG: "function": "layers.0.moe.experts.forward"
// QWEN3-DAG: "function": "layers.0.moe.experts.backward"
// QWEN3-DAG: "shard_tokens": 32768
// QWEN3-DAG: "name": "moe__router_topk_{{[0-9]+}}"
// The router's bf16 linear, its gradients and their transposes are kernels
// (LinearBf16.cpp): the forward and the backward are launch programs.
// QWEN3-DAG: "functions_without_program": [],
// QWEN3-DAG: "name": "moe__linear_bf16_0"
// QWEN3-DAG: "name": "layers_0_moe_backward__transpose_{{[0-9]+}}"
// QWEN3-DAG: "name": "layers_0_moe_backward__router_topk_grad_{{[0-9]+}}"
// BAD: --tiled-block builds one layer: drop --layers
// BADSHARDS: --shards must be auto or a positive count, got 0
// QWEN2: the Qwen2-MoE shared expert's sigmoid gate is not in the tiled block
// GPTOSS: func.func @moe(%h: tensor<1024x2880xbf16>, %router_w: tensor<32x2880xbf16>, %router_b: tensor<32xbf16>,
// GPTOSS: mxmoe.linear %xs, %rw bias %rlb
// GPTOSS: mxmoe.router_topk %logits {top_k = 4 : i64, score = #mxmoe.router_score<softmax>, renormalize}

// STATS: -> (tensor<2048x5120xbf16>, tensor<16xf32>, tensor<16xf32>)
// STATS: %y, %cum, %psum = mxmoe.tiled_mlp shards = 2 ({{.*}}) {fqn = "layers.0.moe", summed_results = 2}
// STATS: %wt, %e, %s = mxmoe.router_topk %logits {top_k = 1 : i64, score = #mxmoe.router_score<sigmoid>} : tensor<?x16xbf16> -> tensor<?x1xf32>, tensor<?x1xi32>, tensor<?x16xf32>
// STATS: %cum = arith.sitofp %offs
// STATS: %psum = linalg.reduce ins(%s : tensor<?x16xf32>)
// STATS: mxmoe.yield %ys, %cum, %psum : tensor<?x5120xbf16>, tensor<16xf32>, tensor<16xf32>
// STATS-PROGRAMS: "functions_without_program": [],
// BADSTATS: --router-stats and --save-routing need --tiled-block
// SAVED: "functions_without_program": [],
// SAVED: "function": "moe"
// SAVED: "function": "layers.0.moe.forward"
// SAVED-IR-LABEL: func.func @layers.0.moe.backward(
// SAVED-IR-SAME: %arg4: tensor<4096x8xf32>, %arg5: tensor<4096x8xi32>, %arg6: tensor<32768xi32>, %arg7: tensor<256xi32>
// SAVED-IR-NOT: mxmoe.router_topk %
// SAVED-IR-NOT: mxmoe.sort_by_expert
// SAVED-IR: return
// SAVED-IR-LABEL: func.func @layers.0.moe.forward(
// SAVED-IR-SAME: -> (tensor<4096x2048xbf16>, tensor<4096x8xf32>, tensor<4096x8xi32>, tensor<32768xi32>, tensor<256xi32>)
