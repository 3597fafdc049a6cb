// sm_100a / sm_103a: a pinned tcgen05 configuration gives the tcgen05
// kernel of its tile N, stages and CTAs; a wgmma (sm_90a) strategy or a
// kernel over the chip's shared memory is an op error.
// RUN: not mxmoe-opt %s --split-input-file --convert-mxmoe-to-gpu=chip=sm_100a 2>/dev/null | FileCheck %s
// RUN: not mxmoe-opt %s --split-input-file --convert-mxmoe-to-gpu=chip=sm_100a 2>&1 >/dev/null | FileCheck %s --check-prefix=ERR
// RUN: not mxmoe-opt %s --split-input-file --convert-mxmoe-to-gpu=chip=sm_103a 2>/dev/null | FileCheck %s --check-prefix=SM103
// RUN: not mxmoe-opt %s --split-input-file --convert-mxmoe-to-gpu=chip=sm_103a 2>&1 >/dev/null | FileCheck %s --check-prefix=ERR103

// ERR: error: 'mxmoe.grouped_matmul' op mxmoe.gemm_config strategy wgmma_fp8_promote is for sm_90a, not for the target chip sm_100a
// ERR: error: 'mxmoe.grouped_matmul' op the grouped-GEMM configuration #mxmoe.gemm_config<strategy = tcgen05_mxf8f6f4, tile_m = 128, tile_n = 256, stages = 8, ctas = 148> needs 410880 bytes of shared memory, over the 232448 of sm_100a; lower its stages
// ERR103: error: 'mxmoe.grouped_matmul' op mxmoe.gemm_config strategy wgmma_fp8_promote is for sm_90a, not for the target chip sm_103a
// ERR103: error: 'mxmoe.grouped_matmul' op the grouped-GEMM configuration #mxmoe.gemm_config<strategy = tcgen05_mxf8f6f4, tile_m = 128, tile_n = 256, stages = 8, ctas = 148> needs 410880 bytes of shared memory, over the 232448 of sm_103a; lower its stages

// Tile N 64, 3 stages: 78080 bytes of shared memory, 128 TMEM columns
// (64 accumulator + 3 x 8 scale columns = 88, allocated as a power of two).
// CHECK-LABEL: func.func @pinned(
// CHECK: gpu.func @pinned__grouped_matmul_0(
// CHECK-SAME: mxmoe.block = array<i64: 192, 1, 1>, mxmoe.dynamic_smem = 78080 : i64, mxmoe.grid = array<i64: 148, 1, 1>, mxmoe.mma = "tcgen05_mxf8f6f4", mxmoe.tmem_columns = 128 : i64
// SM103-LABEL: func.func @pinned(
// SM103: gpu.func @pinned__grouped_matmul_0(
// SM103-SAME: mxmoe.dynamic_smem = 78080 : i64, mxmoe.grid = array<i64: 148, 1, 1>, mxmoe.mma = "tcgen05_mxf8f6f4"

func.func @pinned(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
    %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
    %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = tcgen05_mxf8f6f4, tile_m = 128, tile_n = 64, stages = 3, ctas = 148>}
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}

// -----

func.func @wgmma_on_sm100(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
    %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
    %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 128, stages = 4, ctas = 132>}
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}

// -----

func.func @tcgen05_smem(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
    %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
    %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = tcgen05_mxf8f6f4, tile_m = 128, tile_n = 256, stages = 8, ctas = 148>}
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}
