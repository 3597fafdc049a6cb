// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="host-launch=false" | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_90a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm90a.ptx
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_100a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm100a.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm90a.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t.sm90a.ptx -o %t.sm90a.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}
// RUN: %if ptxas %{ %ptxas -arch=sm_100a -v %t.sm100a.ptx -o %t.sm100a.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}

// The routing ops lowered (Routing.cpp), run-time sizes bound as values:
// gather_rows (rows M, width H, tokens T, top_k) one thread per 16-byte run
// of a routed row (256 x 128 / 8 = 4096 threads, 16 CTAs); the combine one
// thread per run of a token row (64 x 16, 4 CTAs); the scores gradient one
// warp per (token, slot) (64 x 4 x 32 threads, 32 CTAs). Every kernel
// writes a status word (atomic max: 0 ran, 2 sizes, 3 routing indices).
// test/Integration/routing_gpu.py runs them on the GPU.

// CHECK-LABEL: func.func @dispatch_combine(
// CHECK:         mxmoe.gather_rows %arg0[%arg1] {mxmoe.grid = array<i64: 16, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@dispatch_combine__gather_rows_0, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<status>, #mxmoe.kernel_arg<value 256>, #mxmoe.kernel_arg<value 128>, #mxmoe.kernel_arg<value 64>, #mxmoe.kernel_arg<value 4>]
// CHECK:         mxmoe.invert_permutation %arg1 {mxmoe.grid = array<i64: 1, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@dispatch_combine__invert_permutation_1, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<status>, #mxmoe.kernel_arg<value 256>]
// CHECK:         mxmoe.combine_rows {{.*}} scaled_by %arg2 : tensor<64x4xf32> {mxmoe.grid = array<i64: 4, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@dispatch_combine__combine_rows_2, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<operand 2>, #mxmoe.kernel_arg<operand 3>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<status>, #mxmoe.kernel_arg<value 64>, #mxmoe.kernel_arg<value 128>, #mxmoe.kernel_arg<value 4>]
// CHECK:         mxmoe.gather_rows {{.*}} scaled_by %arg2 : tensor<64x4xf32> {mxmoe.grid = array<i64: 16, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@dispatch_combine__gather_rows_3, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<operand 2>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<status>, #mxmoe.kernel_arg<value 256>, #mxmoe.kernel_arg<value 128>, #mxmoe.kernel_arg<value 64>, #mxmoe.kernel_arg<value 4>]
// CHECK:         mxmoe.combine_scores_grad {{.*}} {mxmoe.grid = array<i64: 32, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@dispatch_combine__combine_scores_grad_4, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<operand 2>, #mxmoe.kernel_arg<operand 3>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<status>, #mxmoe.kernel_arg<value 64>, #mxmoe.kernel_arg<value 128>, #mxmoe.kernel_arg<value 4>]
// A row of 100 bf16 elements (200 bytes) is read in runs of 4 elements.
// CHECK-LABEL: func.func @odd_width(
// CHECK:         mxmoe.gather_rows {{.*}}mxmoe.grid = array<i64: 1, 1, 1>{{.*}}#mxmoe.kernel_arg<value 8>, #mxmoe.kernel_arg<value 100>, #mxmoe.kernel_arg<value 8>, #mxmoe.kernel_arg<value 1>]
// CHECK-LABEL: gpu.func @dispatch_combine__combine_scores_grad_4(
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK-LABEL: gpu.func @odd_width__gather_rows_0(
// CHECK:         vector.load {{.*}} : memref<?xbf16>, vector<4xbf16>

// PTX-LABEL: .entry dispatch_combine__combine_rows_2(
// PTX:         atom.global.max.s32 {{.*}}, 0;
// PTX:         ld.global.nc.v4.b32
// PTX-COUNT-8: fma.rn.f32
// PTX:         st.global.v4.b32
// PTX:         atom.global.max.s32 {{.*}}, 3;
// SPILLS-NOT: {{[1-9][0-9]*}} bytes spill stores

func.func @dispatch_combine(%x: tensor<64x128xbf16>, %idx: tensor<256xi32>, %w: tensor<64x4xf32>)
    -> (tensor<64x128xbf16>, tensor<256x128xbf16>, tensor<64x4xf32>) {
  %xr = mxmoe.gather_rows %x[%idx] {top_k = 4 : i64} : tensor<64x128xbf16>, tensor<256xi32> -> tensor<256x128xbf16>
  %inv = mxmoe.invert_permutation %idx : tensor<256xi32> -> tensor<256xi32>
  %out = mxmoe.combine_rows %xr, %idx, %inv scaled_by %w : tensor<64x4xf32> {top_k = 4 : i64}
      : tensor<256x128xbf16>, tensor<256xi32>, tensor<256xi32> -> tensor<64x128xbf16>
  %dr = mxmoe.gather_rows %out[%idx] scaled_by %w : tensor<64x4xf32> {top_k = 4 : i64} : tensor<64x128xbf16>, tensor<256xi32> -> tensor<256x128xbf16>
  %ds = mxmoe.combine_scores_grad %out, %xr, %idx, %inv {top_k = 4 : i64}
      : tensor<64x128xbf16>, tensor<256x128xbf16>, tensor<256xi32>, tensor<256xi32> -> tensor<64x4xf32>
  return %out, %dr, %ds : tensor<64x128xbf16>, tensor<256x128xbf16>, tensor<64x4xf32>
}

func.func @odd_width(%x: tensor<8x100xbf16>, %idx: tensor<8xi32>) -> tensor<8x100xbf16> {
  %xr = mxmoe.gather_rows %x[%idx] {top_k = 1 : i64} : tensor<8x100xbf16>, tensor<8xi32> -> tensor<8x100xbf16>
  return %xr : tensor<8x100xbf16>
}
