// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu=host-launch=false | FileCheck %s

// Elementwise arith / math ops on tensors inside a static shard loop
// (mxmoe.shard_tokens) become one SIMT kernel each (Elementwise.cpp): f32
// compute, 8 bf16 (16 bytes) per thread, splat constants folded into the
// kernel, pointers without noalias (a loop's gradient sum runs in place).
// Outside shard loops, and for floats wider than 32 bits, they stay on the
// host.

// CHECK-LABEL: func.func @sums(
// CHECK: arith.addf %{{.*}}, %{{.*}} : tensor<64x32xbf16>
// CHECK: scf.for
// CHECK: arith.addf %{{.*}}, %{{.*}} {mxmoe.grid = array<i64: 1, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@sums__addf_0, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<value 2048>]}
// CHECK: arith.mulf %{{.*}}, %{{.*}} {mxmoe.grid = array<i64: 1, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@sums__mulf_1, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<value 2048>]}
// CHECK: arith.addf %{{.*}}, %{{.*}} : tensor<64x32xf64>
// CHECK: gpu.func @sums__addf_0(%{{.*}}: !llvm.ptr {mxmoe.element_type = bf16}, %{{.*}}: !llvm.ptr {mxmoe.element_type = bf16}, %{{.*}}: !llvm.ptr {mxmoe.element_type = bf16}, %{{.*}}: i64 {mxmoe.scalar = "elements"}) kernel
// CHECK-COUNT-2: vector.load {{.*}} vector<8xbf16>
// CHECK-COUNT-8: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: vector.store {{.*}} vector<8xbf16>
// CHECK: gpu.func @sums__mulf_1(%{{.*}}: !llvm.ptr {mxmoe.element_type = bf16}, %{{.*}}: !llvm.ptr {mxmoe.element_type = bf16}, %{{.*}}: i64 {mxmoe.scalar = "elements"}) kernel
// CHECK: arith.constant 2.000000e+00 : f32

func.func @sums(%x: tensor<64x32xbf16>, %g: tensor<64x32xbf16>, %d: tensor<64x32xf64>) -> (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %two = arith.constant dense<2.0> : tensor<64x32xbf16>
  %outside = arith.addf %x, %g : tensor<64x32xbf16>
  %r:2 = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %x, %b = %d) -> (tensor<64x32xbf16>, tensor<64x32xf64>) {
    %s = arith.addf %a, %g : tensor<64x32xbf16>
    %t = arith.mulf %s, %two : tensor<64x32xbf16>
    %u = arith.addf %b, %b : tensor<64x32xf64>
    scf.yield %t, %u : tensor<64x32xbf16>, tensor<64x32xf64>
  } {mxmoe.shard_tokens = 32 : i64}
  return %outside, %r#0, %r#1 : tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xf64>
}
