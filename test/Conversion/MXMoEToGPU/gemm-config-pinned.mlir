// A grouped GEMM's kernel is built for its mxmoe.gemm_config: a pinned
// configuration (a user's, a test's) wins over the pass options, which
// configure only the ops without one (the selection of
// mxmoe-select-gemm-config, run by convert-mxmoe-to-gpu itself when that
// pass did not). Ops share a kernel when their configurations and kinds
// are equal, whether selected or pinned.
// RUN: mxmoe-opt %s --split-input-file --convert-mxmoe-to-gpu=chip=sm_90a | FileCheck %s
// RUN: mxmoe-opt %s --split-input-file --mxmoe-select-gemm-config="chip=sm_90a gemm-stages=5 gemm-sm90-mma=fp8" --convert-mxmoe-to-gpu="chip=sm_90a gemm-stages=5 gemm-sm90-mma=fp8" | FileCheck %s --check-prefix=PIPE

// Pinned 3 stages of tile N 64, 8 CTAs and the fp8 strategy on an f32
// output (auto would take the bf16 upcast with 2 stages of tile N 128):
// shared memory 3 x (25600 stage bytes + 9216 bytes of scale tables) +
// 2368 = 106816 (4 stages: 141632).
// CHECK-LABEL: func.func @pinned_stages(
// CHECK:   mxmoe.grouped_matmul {{.*}}mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 64, stages = 3, ctas = 8>, mxmoe.kernel = @mxmoe_kernels::@pinned_stages__grouped_matmul_0,
// CHECK: gpu.func @pinned_stages__grouped_matmul_0(
// CHECK-SAME: mxmoe.block = array<i64: 384, 1, 1>, mxmoe.dynamic_smem = 106816 : i64, mxmoe.grid = array<i64: 8, 1, 1>, mxmoe.mma = "wgmma_fp8_promote"
// PIPE-LABEL: func.func @pinned_stages(
// PIPE: gpu.func @pinned_stages__grouped_matmul_0(
// PIPE-SAME: mxmoe.dynamic_smem = 106816 : i64, mxmoe.grid = array<i64: 8, 1, 1>, mxmoe.mma = "wgmma_fp8_promote"
func.func @pinned_stages(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                         %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                         %offs: tensor<2xi32>) -> tensor<256x128xf32> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 64, stages = 3, ctas = 8>}
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xf32>
  return %o : tensor<256x128xf32>
}

// -----

// %0 has no configuration (the default selection: fp8, tile N 128, 4
// stages, 132 CTAs); %1 pins exactly that one and shares %0's kernel; %2
// pins the bf16 upcast on a bf16 output and gets a kernel of its own.
// With mxmoe-select-gemm-config{gemm-stages=5} first, %0 gets 5 stages and
// no longer shares with %1.
// CHECK-LABEL: func.func @shared(
// CHECK: mxmoe.grouped_matmul {{.*}}{mxmoe.kernel = @mxmoe_kernels::@shared__grouped_matmul_0,
// CHECK: mxmoe.grouped_matmul {{.*}}mxmoe.kernel = @mxmoe_kernels::@shared__grouped_matmul_0,
// CHECK: mxmoe.grouped_matmul {{.*}}mxmoe.kernel = @mxmoe_kernels::@shared__grouped_matmul_2,
// CHECK: gpu.func @shared__grouped_matmul_0(
// CHECK-SAME: mxmoe.dynamic_smem = 178496 : i64, mxmoe.grid = array<i64: 132, 1, 1>, mxmoe.mma = "wgmma_fp8_promote"
// CHECK: gpu.func @shared__grouped_matmul_2(
// CHECK-SAME: mxmoe.mma = "wgmma_bf16_upcast"
// CHECK-NOT: gpu.func
// PIPE-LABEL: func.func @shared(
// PIPE: mxmoe.grouped_matmul {{.*}}{mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 128, stages = 5, ctas = 132>, mxmoe.kernel = @mxmoe_kernels::@shared__grouped_matmul_0,
// PIPE: mxmoe.grouped_matmul {{.*}}{mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 128, stages = 4, ctas = 132>, mxmoe.kernel = @mxmoe_kernels::@shared__grouped_matmul_1,
// PIPE: mxmoe.grouped_matmul {{.*}}mxmoe.kernel = @mxmoe_kernels::@shared__grouped_matmul_2,
// PIPE: gpu.func @shared__grouped_matmul_0(
// PIPE-SAME: mxmoe.dynamic_smem = 222528 : i64
// PIPE: gpu.func @shared__grouped_matmul_1(
// PIPE-SAME: mxmoe.dynamic_smem = 178496 : i64
// PIPE: gpu.func @shared__grouped_matmul_2(
// PIPE-SAME: mxmoe.mma = "wgmma_bf16_upcast"
func.func @shared(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                  %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                  %offs: tensor<2xi32>) -> (tensor<256x128xbf16>, tensor<256x128xbf16>, tensor<256x128xbf16>) {
  %0 = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xbf16>
  %1 = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 128, stages = 4, ctas = 132>}
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xbf16>
  %2 = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_bf16_upcast, tile_m = 128, tile_n = 64, stages = 3, ctas = 132>}
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xbf16>
  return %0, %1, %2 : tensor<256x128xbf16>, tensor<256x128xbf16>, tensor<256x128xbf16>
}
