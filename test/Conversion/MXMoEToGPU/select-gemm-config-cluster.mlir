// gemm-cluster=2 puts the sm_90a MX128 2D x 3D bf16-output kernels in
// clusters of two CTAs along M (weight tiles multicast; the only kind it
// fits: other kinds are errors, select-gemm-config-invalid.mlir,
// gemm-config-pinned-invalid.mlir); auto (0) keeps 1 (the cluster kernel
// was 2-2.6x slower on its first run, bench/RESULTS.md). `cluster` prints
// only when not 1.
// RUN: mxmoe-opt %s --mxmoe-select-gemm-config="chip=sm_90a gemm-cluster=2 gemm-tile-n=128" | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-select-gemm-config="chip=sm_90a gemm-cluster=2" | FileCheck %s --check-prefix=WIDE
// RUN: mxmoe-opt %s --mxmoe-select-gemm-config | FileCheck %s --check-prefix=AUTO

// CHECK-LABEL: func.func @mx128_fwd(
// CHECK: {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 128, stages = 4, ctas = 132, cluster = 2>}
// WIDE-LABEL: func.func @mx128_fwd(
// WIDE: {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 192, stages = 4, ctas = 132, cluster = 2>}
// AUTO-LABEL: func.func @mx128_fwd(
// AUTO: {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 192, stages = 4, ctas = 132>}
func.func @mx128_fwd(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>,
    %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>,
    %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}
