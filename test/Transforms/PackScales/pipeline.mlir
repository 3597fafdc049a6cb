// The forward/backward pipeline on the Llama 4 Scout layer leaves no
// standalone swizzle kernel: every scale tensor is written blocked by its
// quantize kernel.
// RUN: mxmoe-opt %mxmoe_src_root/examples/llama4_scout_moe.mlir --mxmoe-precision-policy --mxmoe-expand-scaled-matmul --mxmoe-pack-scales --convert-mxmoe-to-gpu 2>/dev/null | FileCheck %s

// CHECK-NOT: mxmoe.swizzle_scales
// CHECK: gpu.module @mxmoe_kernels
// CHECK-NOT: swizzle_scales
// CHECK: gpu.func @layers.0.moe.experts.w13.forward__quantize_0
// CHECK-NOT: swizzle_scales
// CHECK: gpu.func @layers.0.moe.experts.w13.weight_grad__quantize_0
// CHECK-NOT: swizzle_scales
