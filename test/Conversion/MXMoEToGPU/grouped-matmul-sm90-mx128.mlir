// sm_90a lowering of mxmoe.grouped_matmul on MX128 operands (both scale
// types record a tile with c a multiple of 128): the fp8 strategy chains a
// stage's four k32 wgmmas into one fp32 partial and promotes it once per
// 128 K (mxmoe.mma = "wgmma_fp8_promote_k128"); row (2D x 3D: times the
// tile's rhs scale) and column (2D x 2D) scales are decoded into a per-stage
// fp32 table, no tf32 scale-product wgmma. Scales without a tile, or with
// c = 32 or 64, keep the per-block promotion of the exact MX32 path.
// RUN: mxmoe-opt %s --split-input-file --convert-mxmoe-to-gpu=chip=sm_90a | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_90a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// K = 2880 (22.5 x 128): the last stage runs two live blocks. Tile N 192
// (pinned, as auto chooses it for this kind; the 128 one, pinned too, is
// @fwd_k2880_n128 below): the rhs box is 192 rows and a tile spans two
// 128-row blocks of N.
// CHECK-LABEL: func.func @fwd_k2880(
// CHECK: gpu.func @fwd_k2880__grouped_matmul_0(
// CHECK-SAME: box = array<i64: 128, 192>
// CHECK-SAME: mxmoe.mma = "wgmma_fp8_promote_k128"
// Decoder (threads 64-127): the second block's scale byte (its stage atom's
// byte 0, or the first block's past the expert's last block) loaded from
// global memory before the stage's wait; then per row one 32-bit atom
// load, byte 0 decoded, times each block's rhs scale, stored as fp32 (the
// second block's at +512); then the decoded barrier.
// CHECK: arith.cmpi sge, %thread_id_x, %c64 : index
// CHECK: arith.select
// CHECK: llvm.load {{.*}} : !llvm.ptr<1> -> i8
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: arith.mulf
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK: arith.mulf
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK: nvvm.mbarrier.arrive
// Consumers: a full stage is four chained k32 wgmmas (scale-d 0, then 1),
// one commit and one wait; no tf32 wgmma.
// CHECK-NOT: <tf32>
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 192, k = 32>, D[<f32>, <zero>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 192, k = 32>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 192, k = 32>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 192, k = 32>, D[<f32>, <one>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// The partial stages: three, two, then one live block.
// CHECK: D[<f32>, <zero>]
// CHECK: D[<f32>, <one>]
// CHECK: D[<f32>, <one>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK: D[<f32>, <zero>]
// CHECK: D[<f32>, <one>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK: D[<f32>, <zero>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// Then (after every MMA variant) the stage's scales (read after the wgmmas at tile N 192): columns
// 64-127 take the first block's row scales when the tile starts a block
// (bAtomRow 0), else the second's.
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK: arith.cmpi eq
// CHECK: arith.select
// CHECK: arith.select
// Every consumer thread releases the slot, then one FFMA per element.
// CHECK: nvvm.mbarrier.arrive
// CHECK-COUNT-64: llvm.intr.fma
// Epilogue (N % 8 == 0): wait until the warpgroup's previous row copies
// read the staging rows, stage the fragment, fence for the async proxy,
// one bulk copy per valid row; the predicated direct stores otherwise.
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: nvvm.cp.async.bulk.global.shared.cta
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK: } else {
// CHECK: llvm.store {{.*}} : vector<2xbf16>, !llvm.ptr<1>
// After the tile loop the row copies complete before the CTA ends.
// CHECK: nvvm.cp.async.bulk.wait_group 0
// CHECK-NOT: {read}
// CHECK-NOT: <tf32>
// PTX-LABEL: .entry fwd_k2880__grouped_matmul_0(
// PTX: wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3
// PTX-NOT: wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32
// PTX-LABEL: .entry wgrad__grouped_matmul_0(
// PTX-NOT: wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32
// PTX-LABEL: .entry mixed__grouped_matmul_0(
// No spills (ptxas lists the kernels last to first).
// PTXAS: Compiling entry function 'wgrad__grouped_matmul_0' for 'sm_90a'
// PTXAS-NEXT: Function properties
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'fwd_k2880__grouped_matmul_0' for 'sm_90a'
// PTXAS-NEXT: Function properties
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
func.func @fwd_k2880(%a: tensor<1000x2880xf8E4M3FN>, %as: tensor<1536x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, %b: tensor<4x320x2880xf8E4M3FN>, %bs: tensor<4x384x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, %o: tensor<4xi32>) -> tensor<1000x320xbf16> {
  %r = mxmoe.grouped_matmul %a scales %as, %b scales %bs offsets %o {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 192, stages = 4, ctas = 132>} : (tensor<1000x2880xf8E4M3FN>, tensor<1536x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<4x320x2880xf8E4M3FN>, tensor<4x384x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, tensor<4xi32>) -> tensor<1000x320xbf16>
  return %r : tensor<1000x320xbf16>
}

// -----

// Weight gradient: 1x128 token windows on both operands; row scales times
// column scales (one FMUL per element), then the FFMA.
// CHECK-LABEL: func.func @wgrad(
// CHECK: gpu.func @wgrad__grouped_matmul_0(
// CHECK-SAME: mxmoe.mma = "wgmma_fp8_promote_k128"
// CHECK: arith.cmpi sge, %thread_id_x, %c64 : index
// CHECK-NOT: arith.mulf
// CHECK: nvvm.mbarrier.arrive
// CHECK: llvm.load {{.*}} -> vector<2xf32>
// CHECK-COUNT-64: arith.mulf
// CHECK: nvvm.wgmma.mma_async {{.*}} D[<f32>, <zero>]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-64: llvm.intr.fma
func.func @wgrad(%a: tensor<256x1248xf8E4M3FN>, %as: tensor<256x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, %b: tensor<384x1248xf8E4M3FN>, %bs: tensor<384x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, %o: tensor<8xi32>) -> tensor<8x256x384xbf16> {
  %r = mxmoe.grouped_matmul %a scales %as, %b scales %bs offsets %o : (tensor<256x1248xf8E4M3FN>, tensor<256x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, tensor<384x1248xf8E4M3FN>, tensor<384x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, tensor<8xi32>) -> tensor<8x256x384xbf16>
  return %r : tensor<8x256x384xbf16>
}

// -----

// One operand without a tile (or c = 64): the exact per-block promotion.
// CHECK-LABEL: func.func @mixed(
// CHECK: gpu.func @mixed__grouped_matmul_0(
// CHECK-SAME: mxmoe.mma = "wgmma_fp8_promote"
// CHECK: <tf32>
func.func @mixed(%a: tensor<1000x256xf8E4M3FN>, %as: tensor<1536x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 64]>>, %b: tensor<4x320x256xf8E4M3FN>, %bs: tensor<4x384x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, %o: tensor<4xi32>) -> tensor<1000x320xbf16> {
  %r = mxmoe.grouped_matmul %a scales %as, %b scales %bs offsets %o : (tensor<1000x256xf8E4M3FN>, tensor<1536x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 64]>>, tensor<4x320x256xf8E4M3FN>, tensor<4x384x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, tensor<4xi32>) -> tensor<1000x320xbf16>
  return %r : tensor<1000x320xbf16>
}

// -----

// f32 output: gemm-sm90-mma=auto keeps the exact bf16 upcast (the fp8
// wgmma's internal accumulation gives ~2e-4 normwise error).
// CHECK-LABEL: func.func @f32_out(
// CHECK: gpu.func @f32_out__grouped_matmul_0(
// CHECK-SAME: mxmoe.mma = "wgmma_bf16_upcast"
func.func @f32_out(%a: tensor<1000x256xf8E4M3FN>, %as: tensor<1536x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, %b: tensor<4x320x256xf8E4M3FN>, %bs: tensor<4x384x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, %o: tensor<4xi32>) -> tensor<1000x320xf32> {
  %r = mxmoe.grouped_matmul %a scales %as, %b scales %bs offsets %o : (tensor<1000x256xf8E4M3FN>, tensor<1536x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<4x320x256xf8E4M3FN>, tensor<4x384x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, tensor<4xi32>) -> tensor<1000x320xf32>
  return %r : tensor<1000x320xf32>
}

// -----

// The same GEMM at tile N 128 (auto): one rhs scale byte per stage (no
// global load of a second block's), m64n128 wgmmas.
// CHECK-LABEL: func.func @fwd_k2880_n128(
// CHECK: gpu.func @fwd_k2880_n128__grouped_matmul_0(
// CHECK-SAME: box = array<i64: 128, 128>
// CHECK-NOT: llvm.load {{.*}} : !llvm.ptr<1> -> i8
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 32>, D[<f32>, <zero>]
func.func @fwd_k2880_n128(%a: tensor<1000x2880xf8E4M3FN>, %as: tensor<1536x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, %b: tensor<4x320x2880xf8E4M3FN>, %bs: tensor<4x384x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, %o: tensor<4xi32>) -> tensor<1000x320xbf16> {
  %r = mxmoe.grouped_matmul %a scales %as, %b scales %bs offsets %o {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 128, stages = 4, ctas = 132>} : (tensor<1000x2880xf8E4M3FN>, tensor<1536x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<4x320x2880xf8E4M3FN>, tensor<4x384x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, tensor<4xi32>) -> tensor<1000x320xbf16>
  return %r : tensor<1000x320xbf16>
}
