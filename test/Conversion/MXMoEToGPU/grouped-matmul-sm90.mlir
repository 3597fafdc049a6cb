// sm_90a lowering of mxmoe.grouped_matmul (MXFP8, blocked scales): one
// persistent warp-specialized wgmma kernel per op, the op annotated (the
// launcher builds the TMA descriptors), never replaced by a launch.
// The default strategy (gemm-sm90-mma=auto) is fp8 wgmma with per-block
// promotion for bf16 outputs and the exact bf16 upcast for f32 outputs.
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu=chip=sm_90a | FileCheck %s
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="chip=sm_90a gemm-sm90-mma=fp8" | FileCheck %s --check-prefix=FP8
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="chip=sm_90a gemm-sm90-mma=bf16" | FileCheck %s --check-prefix=BF16
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="chip=sm_90a gemm-tile-n=64 gemm-stages=6 gemm-ctas=114 gemm-sm90-mma=fp8" | FileCheck %s --check-prefix=CFG
// RUN: not mxmoe-opt %s --convert-mxmoe-to-gpu="chip=sm_90a gemm-tile-n=64 gemm-stages=6" 2>&1 | FileCheck %s --check-prefix=AUTOSMEM
// AUTOSMEM: error: 'mxmoe.grouped_matmul' op the grouped-GEMM configuration needs 253248 bytes of shared memory, over the 232448 of sm_90a (bf16 upcast kernel, chosen by gemm-sm90-mma=auto for the f32 output); lower gemm-stages or choose gemm-sm90-mma=fp8
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_90a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// CHECK-LABEL: func.func @fwd(
// The sizes are run-time parameters: the op binds M, N, K, G and the scale
// extents (lhs rows, cols; rhs rows, cols of one expert) after the pointers.
// CHECK: mxmoe.grouped_matmul {{.*}}mxmoe.kernel = @mxmoe_kernels::@fwd__grouped_matmul_0, mxmoe.kernel_args = [#mxmoe.kernel_arg<tensor_map 0>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<tensor_map 2>, #mxmoe.kernel_arg<operand 3>, #mxmoe.kernel_arg<operand 4>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<status>, #mxmoe.kernel_arg<value 1000>, #mxmoe.kernel_arg<value 320>, #mxmoe.kernel_arg<value 2880>, #mxmoe.kernel_arg<value 4>, #mxmoe.kernel_arg<value 1536>, #mxmoe.kernel_arg<value 92>, #mxmoe.kernel_arg<value 384>, #mxmoe.kernel_arg<value 92>]
// CHECK: gpu.module @mxmoe_kernels
// CHECK: llvm.mlir.global external @__mxmoe_dynamic_smem() {addr_space = 3 : i32, alignment = 1024 : i64}
// CHECK: gpu.func @fwd__grouped_matmul_0(
// CHECK-SAME: %{{.*}}: !nvgpu.tensormap.descriptor<tensor = memref<128x128xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none> {llvm.noalias, mxmoe.element_type = f8E4M3FN, mxmoe.tensor_map = {box = array<i64: 128, 128>, data_type = "uint8", oob_fill = "zero", operand = "lhs", swizzle = "128B"}}
// CHECK-SAME: !llvm.ptr<1> {llvm.noalias, mxmoe.element_type = f8E8M0FNU}
// CHECK-SAME: %{{.*}}: !nvgpu.tensormap.descriptor<tensor = memref<128x128xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none> {llvm.noalias, mxmoe.element_type = f8E4M3FN, mxmoe.tensor_map = {box = array<i64: 128, 128>, data_type = "uint8", oob_fill = "zero", operand = "rhs"
// CHECK-SAME: !llvm.ptr<1> {llvm.noalias, mxmoe.element_type = i32}
// CHECK-SAME: !llvm.ptr<1> {llvm.noalias, mxmoe.element_type = bf16}
// CHECK-SAME: !llvm.ptr<1> {llvm.noalias, mxmoe.element_type = i32}
// CHECK-SAME: i64 {mxmoe.scalar = "m"}, %{{.*}}: i64 {mxmoe.scalar = "n"}, %{{.*}}: i64 {mxmoe.scalar = "k"}, %{{.*}}: i64 {mxmoe.scalar = "groups"}, %{{.*}}: i64 {mxmoe.scalar = "a_scale_rows"}, %{{.*}}: i64 {mxmoe.scalar = "a_scale_cols"}, %{{.*}}: i64 {mxmoe.scalar = "b_scale_rows"}, %{{.*}}: i64 {mxmoe.scalar = "b_scale_cols"})
// CHECK-SAME: known_block_size = array<i32: 384, 1, 1>
// CHECK-SAME: mxmoe.block = array<i64: 384, 1, 1>, mxmoe.dynamic_smem = 178496 : i64, mxmoe.grid = array<i64: 132, 1, 1>, mxmoe.mma = "wgmma_fp8_promote"
// The scale tables start as zeros (async-proxy fence before the CTA
// barrier).
// CHECK: llvm.store {{.*}} : vector<4xi32>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// Thread 0 validates the sizes (signed: 1 <= G, K and 0 <= M, N, each
// below 2^31), then the offsets, and initializes the mbarrier ring.
// CHECK: %[[LIM:.*]] = arith.constant 2147483648 : index
// CHECK: arith.cmpi sge, %{{.*}}, %{{.*}} : index
// CHECK: arith.cmpi slt, %{{.*}}, %[[LIM]] : index
// CHECK: scf.if
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// Loader warpgroup: TMA tiles and the scale atoms on the stage's barrier.
// CHECK: nvvm.setmaxregister decrease 40
// The loader thread acquires both tensor maps (in global memory, written by
// the launcher's copy) for the tensormap proxy before its first TMA load
// (upstream's nvgpu.tma.fence.descriptor on the typed parameter).
// CHECK: nvgpu.tma.fence.descriptor %{{.*}} : <tensor = memref<128x128xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
// CHECK: nvgpu.tma.fence.descriptor
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// Thread 32 of the loader warpgroup publishes each tile's record (kBlocks,
// atom row, valid rows / columns, output base) in a 2-entry ring.
// CHECK: arith.cmpi eq, %thread_id_x, %c32 : index
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive
// Threads 64-127 decode each stage's scales into its tf32 tables once the
// stage's data landed (32-bit atom loads, 16-byte sbT rows), fence them
// for the async proxy and arrive on the stage's decoded barrier.
// CHECK: arith.cmpi sge, %thread_id_x, %c64 : index
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> i32
// CHECK: llvm.store {{.*}} : vector<4xf32>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// CHECK: nvvm.mbarrier.arrive
// Consumers: read the tile record; per stage wait for the decoded
// barrier, then per MX block a tf32 wgmma m64n128k8 computes the scale
// product S = sa (x) sb and an fp8 wgmma m64n128k32 the partial P, both
// fresh (scale-d zero), then acc += P * S. K = 2880 is not a multiple of
// 128, so each block runs behind a branch.
// CHECK: nvvm.setmaxregister increase 232
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> i32
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: nvvm.barrier id
// CHECK: scf.if
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 8>, D[<f32>, <zero>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 32>, D[<f32>, <zero>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-64: llvm.intr.fma
// CHECK: nvvm.mbarrier.arrive
// The f32-output weight gradient gets the bf16 upcast: 2 fp8 stages + two
// bf16 buffers (2 x 64 KiB); e4m3 / e5m2 -> f16 by cvt, times 2^(e-127) in
// fp32, rounded to bf16 (exact), then 8 bf16 wgmma k16 per stage
// accumulating in place (scale-d one), after the async-proxy fence and the
// 256-thread consumer barrier.
// CHECK: gpu.func @wgrad__grouped_matmul_0(
// CHECK-SAME: mxmoe.element_type = f8E5M2
// CHECK-SAME: mxmoe.element_type = f32
// CHECK-SAME: mxmoe.dynamic_smem = 200000 : i64
// CHECK-SAME: mxmoe.mma = "wgmma_bf16_upcast"
// CHECK: nvvm.convert.f8x2.to.f16x2 {{.*}}(f8E4M3FN)
// CHECK: arith.truncf {{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK: nvvm.convert.f8x2.to.f16x2 {{.*}}(f8E5M2)
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id = {{.*}} number_of_threads = {{.*}}
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-7: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: gpu.func @scout__grouped_matmul_0(
// The Scout shape (K = 5120 = 40 full stages) runs the four blocks of a
// stage unconditionally.
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 8>
// CHECK-NOT: scf.if
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 32>

// CFG: mxmoe.dynamic_smem = 211264 : i64, mxmoe.grid = array<i64: 114, 1, 1>
// CFG: nvvm.setmaxregister decrease 88
// CFG: nvvm.setmaxregister increase 208
// CFG: <m = 64, n = 64, k = 8>, D[<f32>, <zero>], A[<tf32>
// CFG: <m = 64, n = 64, k = 32>, D[<f32>, <zero>]

// FP8-LABEL: gpu.func @wgrad__grouped_matmul_0(
// FP8-SAME: mxmoe.dynamic_smem = 178496 : i64
// FP8-SAME: mxmoe.mma = "wgmma_fp8_promote"
// The setmaxnreg split stays within the 384 x 168 registers of the CTA
// (a larger request would wait forever): the 2D x 2D loader gets 56, the
// consumers 224.
// FP8: nvvm.setmaxregister decrease 56
// FP8: nvvm.setmaxregister increase 224
// FP8: nvvm.wgmma.mma_async {{.*}} A[<e4m3>, <one>, <row>], B[<e5m2>, <one>, <col>]

// BF16-LABEL: gpu.func @fwd__grouped_matmul_0(
// BF16-SAME: mxmoe.mma = "wgmma_bf16_upcast"
// BF16: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>

// PTX: .extern .shared .align 1024 .b8 __mxmoe_dynamic_smem[];
// PTX-LABEL: .visible .entry fwd__grouped_matmul_0(
// PTX-DAG: .maxntid 384, 1, 1
// PTX-DAG: mbarrier.init.shared.b64
// PTX-DAG: .minnctapersm 1
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 40
// PTX-DAG: fence.proxy.tensormap::generic.acquire.sys [%rd{{[0-9]+}}], 128;
// PTX-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 232
// PTX-DAG: wgmma.fence.sync.aligned
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// PTX-DAG: wgmma.commit_group.sync.aligned
// PTX-DAG: wgmma.wait_group.sync.aligned 0
// PTX-LABEL: .visible .entry wgrad__grouped_matmul_0(
// PTX: cvt.rn.f16x2.e4m3x2
// PTX: cvt.rn.bf16x2.f32
// PTX: fence.proxy.async.shared::cta
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-LABEL: .visible .entry scout__grouped_matmul_0(
// PTX: wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32
// PTX: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3

// ptxas accepts every kernel without serializing the wgmmas, honours the
// setmaxnreg rebalancing (the kernels carry .minnctapersm 1; without it
// ptxas warns C7508 "setmaxnreg ignored; unable to determine register
// count at entry", caps every warp at 168 registers and the consumers
// spill) and reports no spill and no stack.
// PTXAS-NOT: wgmma.mma_async instructions are serialized
// PTXAS-NOT: setmaxnreg' ignored
// PTXAS-NOT: {{[1-9][0-9]*}} bytes stack frame
// PTXAS: Function properties for {{(scout|fwd|wgrad)}}__grouped_matmul_0
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Function properties for {{(scout|fwd|wgrad)}}__grouped_matmul_0
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Function properties for {{(scout|fwd|wgrad)}}__grouped_matmul_0
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

func.func @fwd(%a: tensor<1000x2880xf8E4M3FN>, %as: tensor<1536x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
               %w: tensor<4x320x2880xf8E4M3FN>, %ws: tensor<4x384x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
               %offs: tensor<4xi32>) -> tensor<1000x320xbf16> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<1000x2880xf8E4M3FN>, tensor<1536x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<4x320x2880xf8E4M3FN>, tensor<4x384x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<4xi32>) -> tensor<1000x320xbf16>
  return %o : tensor<1000x320xbf16>
}

func.func @wgrad(%g: tensor<256x1056xf8E4M3FN>, %gs: tensor<256x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
                 %x: tensor<384x1056xf8E5M2>, %xs: tensor<384x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
                 %offs: tensor<4xi32>) -> tensor<4x256x384xf32> {
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<256x1056xf8E4M3FN>, tensor<256x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
         tensor<384x1056xf8E5M2>, tensor<384x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
         tensor<4xi32>) -> tensor<4x256x384xf32>
  return %o : tensor<4x256x384xf32>
}

func.func @scout(%a: tensor<16384x5120xf8E4M3FN>, %as: tensor<18432x160xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                 %w: tensor<16x8192x5120xf8E4M3FN>, %ws: tensor<16x8192x160xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                 %offs: tensor<16xi32>) -> tensor<16384x8192xbf16> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<16384x5120xf8E4M3FN>, tensor<18432x160xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<16x8192x5120xf8E4M3FN>, tensor<16x8192x160xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<16xi32>) -> tensor<16384x8192xbf16>
  return %o : tensor<16384x8192xbf16>
}
