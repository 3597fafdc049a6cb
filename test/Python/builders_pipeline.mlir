// The IR builders of python/mxmoe/builders.py emit, from the MoE fields of
// each target model's Hugging Face config, a layer the whole pipeline takes:
// policy (router kept in bf16), expansion of both expert GEMMs, tiled shared
// expert where the model has one, scale packing, kernels for both chips.
// RUN: env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders llama4_scout --tokens 4096 > %t.llama4.mlir
// RUN: mxmoe-opt %t.llama4.mlir --mxmoe-precision-policy --mxmoe-expand-scaled-matmul --mxmoe-tile-mlp --mxmoe-pack-scales 2>/dev/null | FileCheck %s --check-prefix=LLAMA4
// RUN: env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders deepseek_v3 --tokens 2048 --experts 32 > %t.dsv3.mlir
// RUN: mxmoe-opt %t.dsv3.mlir --mxmoe-precision-policy --mxmoe-expand-scaled-matmul --mxmoe-tile-mlp --mxmoe-pack-scales 2>/dev/null | FileCheck %s --check-prefix=DSV3
// RUN: env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders qwen3_30b_a3b --tokens 1024 > %t.qwen3.mlir
// RUN: rm -rf %t.out && mxmoe-compile %t.qwen3.mlir --chip sm_90a,sm_100a -o %t.out | FileCheck %s --check-prefix=QWEN3
// RUN: FileCheck %s --check-prefix=QWEN3M < %t.out/manifest.json
// RUN: env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders gpt_oss_20b --tokens 1024 --rounding floor > %t.gptoss.mlir
// RUN: FileCheck %s --check-prefix=GPTOSS < %t.gptoss.mlir
// RUN: mxmoe-opt %t.gptoss.mlir --mxmoe-precision-policy --mxmoe-expand-scaled-matmul 2>/dev/null | FileCheck %s --check-prefix=GPTOSSX
// Qwen2-MoE's shared expert has its own size (shared_expert_intermediate_size).
// RUN: echo '{"model_type": "qwen2_moe", "hidden_size": 2048, "moe_intermediate_size": 1408, "num_experts": 60, "num_experts_per_tok": 4, "shared_expert_intermediate_size": 5632}' > %t.qwen2.json
// RUN: env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders %t.qwen2.json --tokens 256 | FileCheck %s --check-prefix=QWEN2
// QWEN2: func.func @moe({{.*}}%shared_w13: tensor<11264x2048xbf16>, %shared_w2: tensor<2048x5632xbf16>)
// QWEN2: mxmoe.tiled_mlp shards = auto (%h, %shared_w13, %shared_w2)
// Bad input: a config without the expert count, a bad EP slice.
// RUN: echo '{"hidden_size": 64, "intermediate_size": 64, "num_experts_per_tok": 2}' > %t.bad.json
// RUN: not env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders %t.bad.json 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders qwen3_30b_a3b --experts 200 2>&1 | FileCheck %s --check-prefix=BADEP

// LLAMA4: func.func @moe(%{{.*}}: tensor<4096x5120xbf16>, %{{.*}}: tensor<16x5120xbf16>, %{{.*}}: tensor<4096x5120xbf16>, %{{.*}}: tensor<16xi32>, %{{.*}}: tensor<16x16384x5120xbf16>, %{{.*}}: tensor<16x5120x8192xbf16>
// LLAMA4: mxmoe.linear {{.*}}fqn = "layers.0.moe.router.gate", precision = #mxmoe.precision<bf16>
// LLAMA4: call @layers.0.moe.experts.w13.forward
// LLAMA4: call @layers.0.moe.experts.w2.forward
// LLAMA4: scf.for
// LLAMA4: func.func @layers.0.moe.experts.w13.forward
// LLAMA4: mxmoe.grouped_matmul
// LLAMA4: func.func @layers.0.moe.experts.w2.weight_grad

// 2048 tokens x top-8 x 32 / 256 local experts = 2048 routed rows.
// DSV3: func.func @moe(%{{.*}}: tensor<2048x7168xbf16>, %{{.*}}: tensor<256x7168xbf16>, %{{.*}}: tensor<2048x7168xbf16>, %{{.*}}: tensor<32xi32>, %{{.*}}: tensor<32x4096x7168xbf16>, %{{.*}}: tensor<32x7168x2048xbf16>
// DSV3: func.func @layers.0.moe.experts.w13.forward

// QWEN3: mxmoe-compile: {{.*}} (sm_90a, sm_100a)
// QWEN3M: "name": "layers_0_moe_experts_w13_forward__grouped_matmul_2",
// QWEN3M: "function": "layers.0.moe.experts.w2.weight_grad",

// GPTOSS: H=2880, I=2880, E=32 of 32, top-4, 1024 tokens -> 4096 routed rows
// GPTOSS: rounding = floor
// GPTOSSX: mxmoe.quantize {{.*}}rounding = #mxmoe.rounding<floor>

// BAD: error: cannot build the MoE layer from '{{.*}}bad.json': ValueError('config has none of the fields n_routed_experts, num_local_experts, num_experts
// BADEP: error: cannot build the MoE layer from 'qwen3_30b_a3b': ValueError('experts must be in [1, 128], got 200')
