// RUN: mxmoe-opt %s --split-input-file --convert-mxmoe-to-gpu=host-launch=false | FileCheck %s

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

// -----

// An f32 gradient accumulator (grad_accumulator = f32): the shard's bf16
// gradient extended in the loop, the sum rounded back after it; both casts
// are kernels (f32 in registers, one rounding for truncf).
// CHECK-LABEL: func.func @casts(
// CHECK: scf.for
// CHECK: arith.extf %{{.*}} {mxmoe.grid = array<i64: 2, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@casts__extf_{{[0-9]+}}
// CHECK: arith.addf %{{.*}} {mxmoe.grid
// CHECK: arith.truncf %{{.*}} {mxmoe.grid = array<i64: 2, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@casts__truncf_{{[0-9]+}}
// CHECK: gpu.func @casts__extf_{{[0-9]+}}(%{{.*}}: !llvm.ptr {mxmoe.element_type = bf16}, %{{.*}}: !llvm.ptr {mxmoe.element_type = f32}
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK-NOT: arith.extf %{{.*}} : f32
// CHECK: gpu.func @casts__truncf_{{[0-9]+}}(%{{.*}}: !llvm.ptr {mxmoe.element_type = f32}, %{{.*}}: !llvm.ptr {mxmoe.element_type = bf16}
// CHECK-COUNT-4: arith.truncf %{{.*}} : f32 to bf16
func.func @casts(%g: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant dense<0.0> : tensor<64x32xf32>
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %z) -> (tensor<64x32xf32>) {
    %e = arith.extf %g : tensor<64x32xbf16> to tensor<64x32xf32>
    %s = arith.addf %a, %e : tensor<64x32xf32>
    scf.yield %s : tensor<64x32xf32>
  } {mxmoe.shard_tokens = 32 : i64}
  %t = arith.truncf %r : tensor<64x32xf32> to tensor<64x32xbf16>
  return %t : tensor<64x32xbf16>
}

// -----

// An integer-to-float conversion (a router's per-expert end offsets summed
// over shards as f32 counts) is a kernel: the i32 loaded as it is, one
// sitofp per element.
// CHECK-LABEL: func.func @counts(
// CHECK: scf.for
// CHECK: arith.sitofp %{{.*}} {mxmoe.grid = array<i64: 1, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@counts__sitofp_{{[0-9]+}}
// CHECK: gpu.func @counts__sitofp_{{[0-9]+}}(%{{.*}}: !llvm.ptr {mxmoe.element_type = i32}, %{{.*}}: !llvm.ptr {mxmoe.element_type = f32}
// CHECK: vector.load {{.*}} vector<4xi32>
// CHECK-COUNT-4: arith.sitofp %{{.*}} : i32 to f32
func.func @counts(%offs: tensor<16xi32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant dense<0.0> : tensor<16xf32>
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %z) -> (tensor<16xf32>) {
    %f = arith.sitofp %offs : tensor<16xi32> to tensor<16xf32>
    %s = arith.addf %a, %f : tensor<16xf32>
    scf.yield %s : tensor<16xf32>
  } {mxmoe.shard_tokens = 32 : i64}
  return %r : tensor<16xf32>
}
