// Policy, expansion, then the quantize/swizzle lowering on the bundled
// Llama 4 Scout layer: every MX-level quantize and swizzle gets a kernel.
// RUN: mxmoe-opt %mxmoe_src_root/examples/llama4_scout_moe.mlir --mxmoe-precision-policy --mxmoe-expand-scaled-matmul --convert-mxmoe-to-gpu="host-launch=false" 2>/dev/null | FileCheck %s

// CHECK: func.func @attention
// CHECK: call @layers.0.attention.wq.forward
// CHECK: mxmoe.linear {{.*}}fqn = "layers.0.attention.wk", precision = #mxmoe.precision<bf16>
// CHECK: call @layers.0.attention.wo.forward
// CHECK: func.func @moe
// CHECK: call @layers.0.moe.experts.w13.forward
// CHECK: call @layers.0.moe.experts.w2.forward
// CHECK: func.func @layers.0.moe.experts.w13.forward
// CHECK: mxmoe.quantize %arg0 {axis = 1 : i64, mxmoe.grid = array<i64: 5120, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@layers_0_moe_experts_w13_forward__quantize_0, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<result 1>, #mxmoe.kernel_arg<value 1>, #mxmoe.kernel_arg<value 8192>, #mxmoe.kernel_arg<value 5120>, #mxmoe.kernel_arg<value 41943040>, #mxmoe.kernel_arg<value 5120>, #mxmoe.kernel_arg<value 1>, #mxmoe.kernel_arg<value 8192>, #mxmoe.kernel_arg<value 160>, #mxmoe.kernel_arg<value 8192>]}
// CHECK: mxmoe.swizzle_scales {{.*}}mxmoe.kernel = @mxmoe_kernels::@layers_0_moe_experts_w13_forward__swizzle_scales_1
// CHECK: func.func @layers.0.moe.experts.w2.weight_grad
// CHECK: gpu.module @mxmoe_kernels
// CHECK: gpu.func @layers_0_moe_experts_w13_forward__quantize_0(%{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = bf16}
