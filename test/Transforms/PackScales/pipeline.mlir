// The forward/backward pipeline on the Llama 4 Scout layer leaves no
// standalone swizzle kernel: every scale tensor is written blocked by its
// quantize kernel.
// RUN: mxmoe-opt %mxmoe_src_root/examples/llama4_scout_moe.mlir --mxmoe-precision-policy --mxmoe-expand-scaled-matmul --mxmoe-pack-scales --convert-mxmoe-to-gpu 2>/dev/null | FileCheck %s

// CHECK-NOT: mxmoe.swizzle_scales
// CHECK: gpu.module @mxmoe_kernels
// CHECK-NOT: swizzle_scales
// CHECK: gpu.func @layers_0_moe_experts_w13_forward__quantize_0
// CHECK-NOT: swizzle_scales
// CHECK: gpu.func @layers_0_moe_experts_w13_weight_grad__quantize_0
// CHECK-NOT: swizzle_scales

// The whole layer's kernels (named after dotted fqns) assemble for both
// chips: kernel names are sanitised to PTX identifiers.
// RUN: mxmoe-opt %mxmoe_src_root/examples/llama4_scout_moe.mlir --mxmoe-precision-policy --mxmoe-expand-scaled-matmul --mxmoe-pack-scales --mxmoe-to-nvvm=chip=sm_90a 2>/dev/null | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm90a.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm90a.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t.sm90a.ptx -o %t.sm90a.cubin %}
// RUN: mxmoe-opt %mxmoe_src_root/examples/llama4_scout_moe.mlir --mxmoe-precision-policy --mxmoe-expand-scaled-matmul --mxmoe-pack-scales --mxmoe-to-nvvm=chip=sm_100a 2>/dev/null | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm100a.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_100a %t.sm100a.ptx -o %t.sm100a.cubin %}
// PTX-COUNT-24: .visible .entry layers_0_{{(moe_experts_w13|moe_experts_w2|attention_wq|attention_wo)}}_{{(forward|input_grad|weight_grad)}}__quantize_{{[01]}}(
