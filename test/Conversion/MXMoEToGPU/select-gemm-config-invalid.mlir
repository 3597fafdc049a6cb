// mxmoe-select-gemm-config's options are convert-mxmoe-to-gpu's gemm-*
// options, checked by the same function (checkGemmOptions): an invalid
// value is an error when the pipeline is built, naming the pass, the
// option and its value, no module printed. The sm_90a shared-memory budget
// depends on each op's strategy and output: an op error, as in
// convert-mxmoe-to-gpu.
// RUN: not mxmoe-opt %s --mxmoe-select-gemm-config="chip=sm_90a gemm-tile-n=256" 2>&1 | FileCheck %s --check-prefix=TILE
// RUN: not mxmoe-opt %s --mxmoe-select-gemm-config="chip=sm_100a gemm-tile-n=96" 2>&1 | FileCheck %s --check-prefix=TILE100
// RUN: not mxmoe-opt %s --mxmoe-select-gemm-config="chip=sm_90a gemm-tile-n=192" 2>&1 | FileCheck %s --check-prefix=TILE192
// RUN: not mxmoe-opt %s --mxmoe-select-gemm-config="chip=sm_90a gemm-cluster=2" 2>&1 | FileCheck %s --check-prefix=CLUSTER2
// RUN: not mxmoe-opt %s --mxmoe-select-gemm-config="chip=sm_90a gemm-cluster=4" 2>&1 | FileCheck %s --check-prefix=CLUSTER4
// RUN: not mxmoe-opt %s --mxmoe-select-gemm-config="chip=sm_100a gemm-cluster=2" 2>&1 | FileCheck %s --check-prefix=CLUSTER100
// RUN: not mxmoe-opt %s --mxmoe-select-gemm-config="gemm-cluster=2 gemm-ctas=131" 2>&1 | FileCheck %s --check-prefix=CLUSTERODD
// RUN: not mxmoe-opt %s --mxmoe-select-gemm-config="gemm-stages=9" 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not mxmoe-opt %s --mxmoe-select-gemm-config="gemm-ctas=0" 2>&1 | FileCheck %s --check-prefix=CTAS
// RUN: not mxmoe-opt %s --mxmoe-select-gemm-config="chip=sm_100a gemm-stages=8" 2>&1 | FileCheck %s --check-prefix=SMEM100
// RUN: not mxmoe-opt %s --mxmoe-select-gemm-config="gemm-sm90-mma=int8" 2>&1 | FileCheck %s --check-prefix=MMA
// RUN: not mxmoe-opt %s --mxmoe-select-gemm-config="chip=sm_80" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not mxmoe-opt %s --mxmoe-select-gemm-config="gemm-stages=8" 2>&1 | FileCheck %s --check-prefix=SMEM
// RUN: not mxmoe-opt %s --mxmoe-select-gemm-config="gemm-tile-n=64 gemm-stages=6" 2>&1 | FileCheck %s --check-prefix=SMEMAUTO
// RUN: not mxmoe-opt %s --mxmoe-select-gemm-config="gemm-sm90-mma=bf16 gemm-stages=3" 2>&1 | FileCheck %s --check-prefix=SMEMUP
// TILE: <unknown>:0: error: mxmoe-select-gemm-config: gemm-tile-n must be 0 (auto), 64, 128 or 192 (sm_90a) or 0, 64, 128 or 256 (sm_100a, sm_103a), got 256
// TILE-NOT: mxmoe.grouped_matmul
// Tile N 192 is the MX128 2D x 3D bf16-output kernels' only (these are MX32).
// TILE192: error: 'mxmoe.grouped_matmul' op gemm-tile-n=192 is the tile of the sm_90a MX128 2D x 3D kernels with bf16 output (fp8 strategy); this grouped matmul needs 64 or 128 (or 0, auto)
// Clusters of two are the MX128 2D x 3D bf16-output kernels' only.
// CLUSTER2: error: 'mxmoe.grouped_matmul' op gemm-cluster=2 is for the sm_90a MX128 2D x 3D kernels with bf16 output (fp8 strategy); this grouped matmul needs 1 (or 0, auto)
// CLUSTER4: error: mxmoe-select-gemm-config: gemm-cluster must be 0 (auto), 1 or 2 (sm_90a) or 0 or 1 (sm_100a, sm_103a), got 4
// CLUSTER100: error: mxmoe-select-gemm-config: gemm-cluster must be 0 (auto), 1 or 2 (sm_90a) or 0 or 1 (sm_100a, sm_103a), got 2
// CLUSTERODD: error: mxmoe-select-gemm-config: gemm-cluster=2 needs an even gemm-ctas (whole clusters), got 131
// CLUSTERODD-NOT: mxmoe.grouped_matmul
// TILE100: error: mxmoe-select-gemm-config: gemm-tile-n must be 0 (auto), 64, 128 or 192 (sm_90a) or 0, 64, 128 or 256 (sm_100a, sm_103a), got 96
// STAGES: error: mxmoe-select-gemm-config: gemm-stages must be 0 (auto) or in [2, 8], got 9
// CTAS: error: mxmoe-select-gemm-config: gemm-ctas must be in [1, 2147483647] (the GPU's SM count, e.g. 132), got 0
// SMEM100: error: mxmoe-select-gemm-config: the grouped-GEMM configuration needs 271616 bytes of shared memory, over the 232448 of sm_100a; lower gemm-stages
// SMEM100-NOT: mxmoe.grouped_matmul
// MMA: for the --gemm-sm90-mma option: 'int8' is not one of: auto, fp8, bf16
// CHIP: for the --chip option: 'sm_80' is not one of: sm_90a, sm_100a, sm_103a
// SMEM: error: 'mxmoe.grouped_matmul' op the grouped-GEMM configuration needs 354624 bytes of shared memory, over the 232448 of sm_90a (fp8 kernel); lower gemm-stages
// SMEMUP: error: 'mxmoe.grouped_matmul' op the grouped-GEMM configuration needs 233792 bytes of shared memory, over the 232448 of sm_90a (bf16 upcast kernel); lower gemm-stages or choose gemm-sm90-mma=fp8
// The f32 output takes the upcast under auto: the diagnostic says so.
// SMEMAUTO: select-gemm-config-invalid.mlir:[[@LINE+15]]:8: error: 'mxmoe.grouped_matmul' op the grouped-GEMM configuration needs 253248 bytes of shared memory, over the 232448 of sm_90a (bf16 upcast kernel, chosen by gemm-sm90-mma=auto for the f32 output); lower gemm-stages or choose gemm-sm90-mma=fp8

func.func @bf16_out(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                    %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                    %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}

func.func @f32_out(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                   %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                   %offs: tensor<2xi32>) -> tensor<256x128xf32> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xf32>
  return %o : tensor<256x128xf32>
}
