// sm_90a MX128 2D x 3D kernel in a cluster of two CTAs along M
// (#mxmoe.gemm_config cluster = 2, gemm-cluster=2): the tile walk pairs
// vertically adjacent 128-row tiles of one expert and N block (a group's
// row tiles rounded up to even: the padding tile loads its partner's rows
// again and writes nothing), and thread 33 of each CTA loads its half of
// every B tile into both CTAs (TMA .multicast::cluster, box tile_n / 2
// rows) once both CTAs' consumers released the slot (the cluster-free
// barrier, one arrival from each CTA). The cluster shape is part of the
// kernel (.reqnctapercluster). The loader thread and the consumers are
// those of the single-CTA kernel (no spills: their registers are at the
// limit).
// RUN: mxmoe-opt %s --split-input-file --convert-mxmoe-to-gpu=chip=sm_90a | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_90a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// CHECK-LABEL: func.func @fwd_cluster_n192(
// CHECK: gpu.func @fwd_cluster_n192__grouped_matmul_0(
// CHECK-SAME: box = array<i64: 128, 96>
// CHECK-SAME: mxmoe.mma = "wgmma_fp8_promote_k128"
// CHECK-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
// Prologue: the mbarriers of both CTAs are initialized before either
// multicasts (a cluster barrier).
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// Thread 33: the slot's release said to both CTAs, the wait for both, then
// this CTA's 96 rows of the B tile multicast to CTAs 0 and 1 (mask 3).
// CHECK: arith.cmpi eq, %thread_id_x, %c33
// CHECK: nvvm.read.ptx.sreg.cluster.ctarank
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive {{.*}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<3>
// CHECK: nvvm.mapa {{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: nvvm.mbarrier.arrive {{.*}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask
// No CTA exits before the other's last multicast and arrival.
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NEXT: gpu.return
// PTX-LABEL: .entry fwd_cluster_n192__grouped_matmul_0(
// PTX: .explicitcluster
// PTX-NEXT: .reqnctapercluster 2, 1, 1
// PTX-DAG: barrier.cluster.arrive;
// PTX-DAG: mapa.shared::cluster
// PTX-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3
// PTX-LABEL: .entry fwd_cluster_n128__grouped_matmul_0(
// PTX: .reqnctapercluster 2, 1, 1
// PTX-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// PTXAS: Compiling entry function 'fwd_cluster_n128__grouped_matmul_0' for 'sm_90a'
// PTXAS-NEXT: Function properties
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fwd_cluster_n192__grouped_matmul_0' for 'sm_90a'
// PTXAS-NEXT: Function properties
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
func.func @fwd_cluster_n192(%a: tensor<1000x2880xf8E4M3FN>, %as: tensor<1536x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, %b: tensor<4x320x2880xf8E4M3FN>, %bs: tensor<4x384x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, %o: tensor<4xi32>) -> tensor<1000x320xbf16> {
  %r = mxmoe.grouped_matmul %a scales %as, %b scales %bs offsets %o {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 192, stages = 4, ctas = 132, cluster = 2>} : (tensor<1000x2880xf8E4M3FN>, tensor<1536x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<4x320x2880xf8E4M3FN>, tensor<4x384x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, tensor<4xi32>) -> tensor<1000x320xbf16>
  return %r : tensor<1000x320xbf16>
}

// -----

// Tile N 128: 64 rows per CTA. The walk's row-tile count is rounded up to
// even (a padding tile clamps its rows to the group's last tile and its
// valid rows to 0).
// CHECK-LABEL: func.func @fwd_cluster_n128(
// CHECK: gpu.func @fwd_cluster_n128__grouped_matmul_0(
// CHECK-SAME: box = array<i64: 128, 64>
// CHECK-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
func.func @fwd_cluster_n128(%a: tensor<1000x256xf8E4M3FN>, %as: tensor<1536x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, %b: tensor<4x320x256xf8E4M3FN>, %bs: tensor<4x384x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, %o: tensor<4xi32>) -> tensor<1000x320xbf16> {
  %r = mxmoe.grouped_matmul %a scales %as, %b scales %bs offsets %o {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 128, stages = 4, ctas = 132, cluster = 2>} : (tensor<1000x256xf8E4M3FN>, tensor<1536x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<4x320x256xf8E4M3FN>, tensor<4x384x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, tensor<4xi32>) -> tensor<1000x320xbf16>
  return %r : tensor<1000x320xbf16>
}
