// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// #mxmoe.gemm_config<strategy = S, tile_m = 128, tile_n = N, stages = P,
// ctas = C>: every strategy with its tiles, standalone and as the
// `mxmoe.gemm_config` of a grouped GEMM.

// CHECK-LABEL: func.func @strategies()
// CHECK-SAME:    c0 = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 128, stages = 4, ctas = 132>
// CHECK-SAME:    c1 = #mxmoe.gemm_config<strategy = wgmma_bf16_upcast, tile_m = 128, tile_n = 64, stages = 2, ctas = 132>
// CHECK-SAME:    c2 = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 128, stages = 5, ctas = 114>
// CHECK-SAME:    c3 = #mxmoe.gemm_config<strategy = tcgen05_mxf8f6f4, tile_m = 128, tile_n = 256, stages = 8, ctas = 148>
func.func @strategies() attributes {
    c0 = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 128, stages = 4, ctas = 132>,
    c1 = #mxmoe.gemm_config<strategy = wgmma_bf16_upcast, tile_m = 128, tile_n = 64, stages = 2, ctas = 132>,
    c2 = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 128, stages = 5, ctas = 114>,
    c3 = #mxmoe.gemm_config<strategy = tcgen05_mxf8f6f4, tile_m = 128, tile_n = 256, stages = 8, ctas = 148>} {
  return
}

// `cluster` (default 1) prints only when not 1.
// CHECK-LABEL: func.func @cluster()
// CHECK-SAME:    c0 = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 192, stages = 4, ctas = 132, cluster = 2>
// CHECK-SAME:    c1 = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 128, stages = 4, ctas = 132>}
func.func @cluster() attributes {
    c0 = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 192, stages = 4, ctas = 132, cluster = 2>,
    c1 = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 128, stages = 4, ctas = 132, cluster = 1>} {
  return
}

// The parameters may come in any order; they print in the declared one.
// CHECK-LABEL: func.func @any_order()
// CHECK-SAME:    attributes {c = #mxmoe.gemm_config<strategy = tcgen05_mxf8f6f4, tile_m = 128, tile_n = 64, stages = 2, ctas = 1>}
func.func @any_order() attributes {c = #mxmoe.gemm_config<ctas = 1, stages = 2, tile_n = 64, tile_m = 128, strategy = tcgen05_mxf8f6f4>} {
  return
}

// On the op it configures.
// CHECK-LABEL: func.func @on_grouped_matmul(
// CHECK:         mxmoe.grouped_matmul {{.*}} {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 64, stages = 3, ctas = 8>}
func.func @on_grouped_matmul(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                             %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                             %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 64, stages = 3, ctas = 8>}
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}
