// sm_100a lowering of mxmoe.grouped_matmul (MXFP8, blocked scales): the
// tcgen05 kernel (TMA warp, single-thread MMA issuer with block-scaled
// tcgen05.mma and tcgen05.cp of the scale atoms into TMEM, 4 epilogue warps
// reading TMEM with tcgen05.ld). No Blackwell GPU is reachable: the PTX is
// checked here and assembled by ptxas for sm_100a (no spills); the SASS
// instruction counts are checked on the device (test/Integration).
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu=chip=sm_100a | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_100a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.n128.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.n128.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_100a -v %t.n128.ptx -o %t.n128.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// Every tile configuration: N = 64, 128, 256.
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="chip=sm_100a gemm-tile-n=256 gemm-stages=4" | FileCheck %s --check-prefix=N256
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="chip=sm_100a gemm-tile-n=256" | mxmoe-opt --mxmoe-to-nvvm=chip=sm_100a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.n256.ptx
// RUN: FileCheck %s --check-prefix=PTX256 < %t.n256.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_100a -v %t.n256.ptx -o %t.n256.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="chip=sm_100a gemm-tile-n=64 gemm-stages=6" | FileCheck %s --check-prefix=N64
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="chip=sm_100a gemm-tile-n=64 gemm-stages=6" | mxmoe-opt --mxmoe-to-nvvm=chip=sm_100a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.n64.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_100a -v %t.n64.ptx -o %t.n64.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// Over budget: 8 stages of N = 256 need 410880 bytes of shared memory.
// RUN: not mxmoe-opt %s --convert-mxmoe-to-gpu="chip=sm_100a gemm-tile-n=256 gemm-stages=8" 2>&1 | FileCheck %s --check-prefix=BUDGET
// BUDGET: the grouped-GEMM configuration needs {{[0-9]+}} bytes of shared memory, over the 232448 of sm_100a; lower gemm-stages

// CHECK-LABEL: func.func @fwd(
// CHECK: mxmoe.grouped_matmul {{.*}}mxmoe.kernel = @mxmoe_kernels::@fwd__grouped_matmul_0
// CHECK: gpu.func @fwd__grouped_matmul_0(
// CHECK-SAME: !nvgpu.tensormap.descriptor<tensor = memref<128x128xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none> {llvm.noalias, mxmoe.element_type = f8E4M3FN, mxmoe.tensor_map = {box = array<i64: 128, 128>, data_type = "uint8", oob_fill = "zero", operand = "lhs", swizzle = "128B"}}
// CHECK-SAME: i64 {mxmoe.scalar = "b_scale_cols"})
// CHECK-SAME: known_block_size = array<i32: 192, 1, 1>
// CHECK-SAME: mxmoe.dynamic_smem = 136448 : i64
// CHECK-SAME: mxmoe.tmem_columns = 256 : i64
// CHECK: nvvm.tcgen05.alloc
// CHECK: nvvm.tcgen05.relinquish_alloc_permit
// CHECK: nvgpu.tma.fence.descriptor
// CHECK: nvgpu.tma.fence.descriptor
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK: nvvm.tcgen05.cp %{{.*}}, %{{.*}} {multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>}
// Instruction descriptors: e4m3 x e4m3, UE8M0, M 128, N 128, sfa/sfb id k
// for block k of the stage: 0x08A00000 | k << 29 | k << 4.
// CHECK: %[[D0:.*]] = arith.constant 144703488 : i32
// CHECK: nvvm.tcgen05.mma.block_scale {{.*}}, %[[D0]], {{.*}} {blockScale = #nvvm.tcgen05_mma_block_scale<block32>, ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.block_scale_kind<mxf8f6f4>}
// CHECK: arith.constant 681574416 : i32
// CHECK: arith.constant 1218445344 : i32
// CHECK: arith.constant 1755316272 : i32
// CHECK: nvvm.tcgen05.commit
// CHECK: nvvm.tcgen05.commit
// CHECK: nvvm.tcgen05.ld {{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<32xi32>
// CHECK: nvvm.tcgen05.wait <load>
// CHECK: nvvm.tcgen05.dealloc
// e5m2 rhs in the weight-gradient kernel: B type code 1 at bits 10-12.
// CHECK: gpu.func @wgrad__grouped_matmul_0(
// CHECK: arith.constant 144704512 : i32

// N256: mxmoe.dynamic_smem = 206080 : i64
// N256-SAME: mxmoe.tmem_columns = 512 : i64
// N256: arith.constant 146800640 : i32
// N64: mxmoe.dynamic_smem = 154880 : i64
// N64-SAME: mxmoe.tmem_columns = 128 : i64
// N64: arith.constant 143654912 : i32

// PTX: .target sm_100a
// PTX-LABEL: .visible .entry fwd__grouped_matmul_0(
// PTX-DAG: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
// PTX-DAG: fence.proxy.tensormap::generic.acquire.sys [%rd{{[0-9]+}}], 128;
// PTX-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
// PTX-DAG: tcgen05.cp.cta_group::1.32x128b.warpx4
// PTX-DAG: tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32
// PTX-DAG: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// PTX-DAG: tcgen05.ld.sync.aligned.32x32b.x32.b32
// PTX-DAG: tcgen05.wait::ld.sync.aligned
// PTX-DAG: tcgen05.dealloc.cta_group::1.sync.aligned.b32
// PTX-LABEL: .visible .entry wgrad__grouped_matmul_0(
// PTX: tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32

// Two SFB atoms per stage at N = 256.
// PTX256-LABEL: .visible .entry fwd__grouped_matmul_0(
// PTX256-COUNT-3: tcgen05.cp.cta_group::1.32x128b.warpx4

// ptxas assembles both kernels with no spill and no stack (the kernels
// carry .minnctapersm 1 next to .maxntid; the 8-byte spill the 2D x 2D
// kernel had at N <= 128 without it is gone).
// PTXAS-NOT: {{[1-9][0-9]*}} bytes stack frame
// PTXAS: Function properties for {{(fwd|wgrad)}}__grouped_matmul_0
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Function properties for {{(fwd|wgrad)}}__grouped_matmul_0
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
