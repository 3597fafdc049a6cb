// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="host-launch=false" | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_90a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm90a.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm90a.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t.sm90a.ptx -o %t.sm90a.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}

// mxmoe.sort_by_expert lowered (SortByExpert.cpp): one CTA whatever the
// entry count (a run-time value, 64 x 2 = 128 here): 32 warps at 16
// experts (32 x 17 histogram bins in shared memory), warp segments
// counted with shared-memory atomics, the histograms scanned by the CTA
// (shuffle up), the segments scattered in order with match.any.sync. The
// status word is raised to 4 by an expert id outside [0, 16).
// test/Integration/router_gpu.py runs it on the GPU.

// CHECK-LABEL: func.func @sort(
// CHECK:         mxmoe.sort_by_expert %arg0 {mxmoe.grid = array<i64: 1, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@sort__sort_by_expert_0, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<result 1>, #mxmoe.kernel_arg<status>, #mxmoe.kernel_arg<value 128>]
// CHECK-LABEL: gpu.func @sort__sort_by_expert_0(
// CHECK-SAME:      workgroup(%{{.*}} : memref<544xi32, #gpu.address_space<workgroup>> {{{.*}}}, %{{.*}} : memref<32xi32, #gpu.address_space<workgroup>> {{{.*}}})
// CHECK-SAME:      known_block_size = array<i32: 1024, 1, 1>
// CHECK:         memref.atomic_rmw addi
// CHECK:         memref.atomic_rmw maxs
// CHECK-COUNT-5: gpu.shuffle  up
// CHECK:         nvvm.match.sync  any
// CHECK:         nvvm.read.ptx.sreg.lanemask.lt
// CHECK:         llvm.intr.ctpop
// CHECK:         nvvm.bar.warp.sync

// PTX-LABEL: .entry sort__sort_by_expert_0(
// PTX:         .maxntid 1024, 1, 1
// PTX:         atom.shared.add.u32
// PTX:         atom.global.max.s32 {{.*}}, 4;
// PTX:         match.any.sync.b32
// PTX:         popc.b32
// SPILLS-NOT: {{[1-9][0-9]*}} bytes spill stores

func.func @sort(%e: tensor<64x2xi32>) -> (tensor<128xi32>, tensor<16xi32>) {
  %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 16 : i64}
      : tensor<64x2xi32> -> tensor<128xi32>, tensor<16xi32>
  return %idx, %offs : tensor<128xi32>, tensor<16xi32>
}

// 3000 experts: 48 KiB hold 4 warps' histograms (3001 bins each): a
// 128-thread CTA.
// CHECK-LABEL: gpu.func @many__sort_by_expert_0(
// CHECK-SAME:      known_block_size = array<i32: 128, 1, 1>
func.func @many(%e: tensor<64x2xi32>) -> (tensor<128xi32>, tensor<3000xi32>) {
  %idx, %offs = mxmoe.sort_by_expert %e {num_experts = 3000 : i64}
      : tensor<64x2xi32> -> tensor<128xi32>, tensor<3000xi32>
  return %idx, %offs : tensor<128xi32>, tensor<3000xi32>
}
