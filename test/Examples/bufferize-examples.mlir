// Every bundled example, as mxmoe-compile's model.mlir has it (the
// kernel stage of --mxmoe-default-pipeline: ops annotated with their
// kernels), bufferizes with upstream's one-shot-bufferize into launches
// on buffers: no mxmoe op and no tensor is left. Before it, the
// high-precision linears (the routers) become linalg
// (mxmoe-linear-to-linalg) and elementwise arith on tensors linalg.generic
// (convert-elementwise-to-linalg); shard loops yield new buffers
// (allow-return-allocs-from-loops).
// DEFINE: %{bufferize} = --mxmoe-linear-to-linalg --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map allow-return-allocs-from-loops"
// RUN: mxmoe-opt %mxmoe_src_root/examples/qwen3_30b_a3b_moe.mlir --mxmoe-default-pipeline="chip=sm_90a until=kernels" 2>/dev/null | mxmoe-opt %{bufferize} | FileCheck %s --check-prefix=QWEN --implicit-check-not="tensor<" --implicit-check-not="= mxmoe."
// RUN: mxmoe-opt %mxmoe_src_root/examples/llama4_scout_moe.mlir --mxmoe-default-pipeline="chip=sm_90a until=kernels" 2>/dev/null | mxmoe-opt %{bufferize} | FileCheck %s --check-prefix=SCOUT --implicit-check-not="tensor<" --implicit-check-not="= mxmoe."
// RUN: mxmoe-opt %mxmoe_src_root/examples/gpt_oss_20b_moe.mlir --mxmoe-default-pipeline="chip=sm_90a until=kernels" 2>/dev/null | mxmoe-opt %{bufferize} | FileCheck %s --check-prefix=GPTOSS --implicit-check-not="tensor<" --implicit-check-not="= mxmoe."
// RUN: mxmoe-opt %mxmoe_src_root/examples/deepseek_v3_moe.mlir --mxmoe-default-pipeline="chip=sm_100a until=kernels" 2>/dev/null | mxmoe-opt %{bufferize} | FileCheck %s --check-prefix=DSV3 --implicit-check-not="tensor<" --implicit-check-not="= mxmoe."

// RUN: mxmoe-opt %mxmoe_src_root/examples/qwen3_30b_a3b_tiled_moe.mlir --mxmoe-default-pipeline="chip=sm_90a until=kernels" 2>/dev/null | mxmoe-opt %{bufferize} | FileCheck %s --check-prefix=TILED --implicit-check-not="tensor<" --implicit-check-not="= mxmoe."

// QWEN-COUNT-18: gpu.launch_func
// QWEN-NOT: gpu.launch_func
// SCOUT-COUNT-54: gpu.launch_func
// SCOUT-NOT: gpu.launch_func
// GPTOSS-COUNT-10: gpu.launch_func
// GPTOSS-NOT: gpu.launch_func
// DSV3-COUNT-81: gpu.launch_func
// DSV3-NOT: gpu.launch_func
// The tiled MoE block: its shard loops' routing kernels, the expanded
// GEMM functions' kernels and the private copy of the experts' backward
// whose weight-gradient GEMMs accumulate (mxmoe-accumulate-in-gemm).
// TILED: scf.for
// TILED: gpu.launch_func @mxmoe_kernels::@moe__router_topk_{{[0-9]+}}
// TILED-COUNT-42: gpu.launch_func
// TILED-NOT: gpu.launch_func
