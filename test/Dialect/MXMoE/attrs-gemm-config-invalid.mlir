// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// Parse and verifier errors of #mxmoe.gemm_config (MXMoEAttrs.cpp) and of
// the `mxmoe.gemm_config` attribute (MXMoEDialect.cpp).

// The strategies are named after the kernels' mxmoe.mma values.
// expected-error @+2 {{expected ::mlir::mxmoe::GemmStrategy to be one of: wgmma_fp8_promote, wgmma_bf16_upcast, wgmma_fp8_promote_k128, tcgen05_mxf8f6f4}}
// expected-error @+1 {{failed to parse MXMoE_GemmConfigAttr parameter 'strategy' which is to be a `::mlir::mxmoe::GemmStrategy`}}
func.func @unknown_strategy() attributes {c = #mxmoe.gemm_config<strategy = fp8_promote_k32, tile_m = 128, tile_n = 128, stages = 4, ctas = 132>} {
  return
}

// -----

// Every parameter but `cluster` is required.
// expected-error @+1 {{struct is missing required parameter: ctas}}
func.func @missing_parameter() attributes {c = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 128, stages = 4>} {
  return
}

// -----

// expected-error @+1 {{gemm_config tile_m must be 128 (the kernels' output tile has 128 rows), got 64}}
func.func @tile_m() attributes {c = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 64, tile_n = 128, stages = 4, ctas = 132>} {
  return
}

// -----

// tile_n 256 is tcgen05's only (wgmma's N is at most 256, but the sm_90a
// kernel's registers hold at most 192 columns per consumer: the MX128
// kernel's partial and accumulator).
// expected-error @+1 {{gemm_config tile_n must be 64, 128 or 192 for strategy wgmma_fp8_promote_k128 (sm_90a), got 256}}
func.func @tile_n_sm90() attributes {c = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 256, stages = 4, ctas = 132>} {
  return
}

// -----

// expected-error @+1 {{gemm_config tile_n must be 64 or 128 for strategy wgmma_bf16_upcast (sm_90a), got 96}}
func.func @tile_n_upcast() attributes {c = #mxmoe.gemm_config<strategy = wgmma_bf16_upcast, tile_m = 128, tile_n = 96, stages = 2, ctas = 132>} {
  return
}

// -----

// expected-error @+1 {{gemm_config tile_n must be 64, 128 or 256 for strategy tcgen05_mxf8f6f4 (sm_100a, sm_103a), got 512}}
func.func @tile_n_sm100() attributes {c = #mxmoe.gemm_config<strategy = tcgen05_mxf8f6f4, tile_m = 128, tile_n = 512, stages = 4, ctas = 132>} {
  return
}

// -----

// expected-error @+1 {{gemm_config stages must be in [2, 8] (pipeline stages of 128 K each), got 1}}
func.func @stages_low() attributes {c = #mxmoe.gemm_config<strategy = wgmma_bf16_upcast, tile_m = 128, tile_n = 128, stages = 1, ctas = 132>} {
  return
}

// -----

// 0 is gemm-stages' "auto", not a configuration.
// expected-error @+1 {{gemm_config stages must be in [2, 8] (pipeline stages of 128 K each), got 0}}
func.func @stages_auto() attributes {c = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 128, stages = 0, ctas = 132>} {
  return
}

// -----

// expected-error @+1 {{gemm_config stages must be in [2, 8] (pipeline stages of 128 K each), got 9}}
func.func @stages_high() attributes {c = #mxmoe.gemm_config<strategy = tcgen05_mxf8f6f4, tile_m = 128, tile_n = 128, stages = 9, ctas = 132>} {
  return
}

// -----

// expected-error @+1 {{gemm_config ctas must be in [1, 2147483647] (the persistent grid: the GPU's SM count, e.g. 132), got 0}}
func.func @ctas_zero() attributes {c = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 128, stages = 4, ctas = 0>} {
  return
}

// -----

// expected-error @+1 {{gemm_config ctas must be in [1, 2147483647] (the persistent grid: the GPU's SM count, e.g. 132), got 2147483648}}
func.func @ctas_grid_limit() attributes {c = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 128, stages = 4, ctas = 2147483648>} {
  return
}

// -----

// `mxmoe.gemm_config` configures a grouped GEMM's kernel: on another op it
// is an error, as is another attribute under that name.
func.func @not_a_grouped_matmul(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.gemm_config' configures a grouped-GEMM kernel: only mxmoe.grouped_matmul carries it}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64, mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 128, stages = 4, ctas = 132>} : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>
  return
}

// -----

func.func @wrong_type(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                      %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                      %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  // expected-error @+1 {{'mxmoe.gemm_config' has the wrong type: {stages = 3 : i64}}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs {mxmoe.gemm_config = {stages = 3}}
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}

// -----

// tile_n 192 is the MX128 strategy's only (the MX32 kernel's tf32
// scale-product operands do not fit beside a 192-column accumulator).
// expected-error @+1 {{gemm_config tile_n must be 64 or 128 for strategy wgmma_fp8_promote (sm_90a), got 192}}
func.func @tile_n_192_mx32() attributes {c = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 192, stages = 4, ctas = 132>} {
  return
}

// -----

// expected-error @+1 {{gemm_config cluster must be 1 or 2 (CTAs per thread-block cluster along M), got 4}}
func.func @cluster_4() attributes {c = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 128, stages = 4, ctas = 132, cluster = 4>} {
  return
}

// -----

// Weight tiles are multicast only by the MX128 kernel.
// expected-error @+1 {{gemm_config cluster 2 (weight tiles multicast to two CTAs) needs strategy wgmma_fp8_promote_k128, got wgmma_fp8_promote}}
func.func @cluster_mx32() attributes {c = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 128, stages = 4, ctas = 132, cluster = 2>} {
  return
}

// -----

// expected-error @+1 {{gemm_config cluster 2 needs an even number of ctas (whole clusters), got 131}}
func.func @cluster_odd_ctas() attributes {c = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 128, stages = 4, ctas = 131, cluster = 2>} {
  return
}
