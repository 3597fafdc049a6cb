// A model of several equal layers (mxmoe.builders --layers: @moe_<i>, fqns
// layers.<i>.*) compiles to one kernel per configuration: the one-layer
// model's kernels, same names and PTX, each serving every layer's ops.
// RUN: env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders qwen3_30b_a3b --tokens 1024 --layers 1 > %t.1.mlir
// RUN: env PYTHONPATH=%mxmoe_src_root/python %python -m mxmoe.builders qwen3_30b_a3b --tokens 1024 --layers 3 > %t.3.mlir
// RUN: rm -rf %t.1 %t.3
// RUN: mxmoe-compile %t.1.mlir --chip sm_90a,sm_100a --toolkit %t.nowhere -o %t.1 2>/dev/null
// RUN: mxmoe-compile %t.3.mlir --chip sm_90a,sm_100a --toolkit %t.nowhere -o %t.3 --timing 2> %t.timing
// RUN: %python %S/Inputs/kernel_summary.py %t.3/manifest.json | FileCheck %s
// RUN: cmp %t.1/sm_90a/kernels.ptx %t.3/sm_90a/kernels.ptx
// RUN: cmp %t.1/sm_100a/kernels.ptx %t.3/sm_100a/kernels.ptx
// RUN: FileCheck %s --check-prefix=TIMING < %t.timing

// CHECK: sm_90a layers_0_moe_experts_w13_forward__quantize_0: uses per layer 0:4 1:4 2:4
// CHECK-NEXT: sm_90a layers_0_moe_experts_w13_forward__quantize_1: uses per layer 0:2 1:2 2:2
// CHECK-NEXT: sm_90a layers_0_moe_experts_w13_forward__grouped_matmul_2: uses per layer 0:4 1:4 2:4
// CHECK-NEXT: sm_90a layers_0_moe_experts_w13_input_grad__quantize_1: uses per layer 0:2 1:2 2:2
// CHECK-NEXT: sm_90a layers_0_moe_experts_w13_weight_grad__quantize_0: uses per layer 0:4 1:4 2:4
// CHECK-NEXT: sm_90a layers_0_moe_experts_w13_weight_grad__grouped_matmul_2: uses per layer 0:2 1:2 2:2
// CHECK-NEXT: sm_100a layers_0_moe_experts_w13_forward__quantize_0: uses per layer 0:4 1:4 2:4
// CHECK: kernels per chip: sm_90a 6, sm_100a 6

// --timing: one tree over the whole compile, every stage named.
// TIMING: Execution time report
// TIMING: parse
// TIMING: model passes
// TIMING-NEXT: MXMoEPrecisionPolicy
// TIMING: sm_90a
// TIMING-NEXT: clone
// TIMING-NEXT: kernel passes
// TIMING-NEXT: MXMoESelectGemmConfig
// TIMING-NEXT: ConvertMXMoEToGPU
// TIMING-NEXT: MXMoEDedupeKernels
// TIMING: PTX passes
// TIMING: GpuModuleToBinaryPass
// TIMING-NEXT: ptxas
// TIMING: sm_100a
// TIMING: manifest and header
// TIMING-NEXT: write outputs
// TIMING: Total
// TIMING-NOT: Execution time report
