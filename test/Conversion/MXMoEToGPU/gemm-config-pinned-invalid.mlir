// A configuration an op carries is checked when its kernel is built
// (convert-mxmoe-to-gpu, GemmConfigSelection.cpp checkGemmConfig): its
// strategy must be one of the target chip's, wgmma_fp8_promote_k128 needs
// MX128 scales, and the kernel must fit the chip's shared memory. (The
// attribute's own rules, e.g. tile_n per strategy: attrs-gemm-config-invalid
// in test/Dialect/MXMoE; sm_100a: gemm-config-pinned-sm100.mlir.)
// RUN: mxmoe-opt %s --split-input-file --verify-diagnostics --convert-mxmoe-to-gpu=chip=sm_90a

func.func @tcgen05_on_sm90(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
    %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
    %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  // expected-error @+1 {{mxmoe.gemm_config strategy tcgen05_mxf8f6f4 is for sm_100a, sm_103a, not for the target chip sm_90a}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = tcgen05_mxf8f6f4, tile_m = 128, tile_n = 128, stages = 4, ctas = 148>}
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}

// -----

// Scales without a tile: one scale per 1x32 block, which a promotion per
// 128 K would not apply.
func.func @k128_on_mx32(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
    %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
    %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  // expected-error @+1 {{mxmoe.gemm_config strategy wgmma_fp8_promote_k128 needs MX128 scales (both scale layouts with tile = [r, c], c a multiple of 128)}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 128, stages = 4, ctas = 132>}
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}

// -----

func.func @fp8_smem(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
    %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
    %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  // expected-error @+1 {{the grouped-GEMM configuration #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 128, stages = 8, ctas = 132> needs 354624 bytes of shared memory, over the 232448 of sm_90a; lower its stages}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 128, stages = 8, ctas = 132>}
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}

// -----

// The upcast's two bf16 buffers: 3 stages of tile N 128 are over.
func.func @upcast_smem(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
    %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
    %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  // expected-error @+1 {{the grouped-GEMM configuration #mxmoe.gemm_config<strategy = wgmma_bf16_upcast, tile_m = 128, tile_n = 128, stages = 3, ctas = 132> needs 233792 bytes of shared memory, over the 232448 of sm_90a; lower its stages}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_bf16_upcast, tile_m = 128, tile_n = 128, stages = 3, ctas = 132>}
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}

// -----

// tile_n 192 (an MX128 strategy value) on an MX128 op with f32 output: the
// 192-wide staged epilogue of f32 rows does not fit the shared memory.
func.func @k128_192_f32(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>,
    %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>,
    %offs: tensor<2xi32>) -> tensor<256x128xf32> {
  // expected-error @+1 {{mxmoe.gemm_config tile_n 192 is the tile of the sm_90a MX128 2D x 3D kernels with bf16 output}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 192, stages = 4, ctas = 132>}
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, tensor<2xi32>) -> tensor<256x128xf32>
  return %o : tensor<256x128xf32>
}

// -----

// cluster 2 on the MX128 weight gradient (2D x 2D): its tiles are not
// pairs of one expert's rows sharing a weight tile.
func.func @k128_cluster_wgrad(%a: tensor<256x1248xf8E4M3FN>, %as: tensor<256x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, %b: tensor<384x1248xf8E4M3FN>, %bs: tensor<384x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, %o: tensor<8xi32>) -> tensor<8x256x384xbf16> {
  // expected-error @+1 {{mxmoe.gemm_config cluster 2 is for the sm_90a MX128 2D x 3D kernels with bf16 output}}
  %r = mxmoe.grouped_matmul %a scales %as, %b scales %bs offsets %o
      {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 128, stages = 4, ctas = 132, cluster = 2>}
      : (tensor<256x1248xf8E4M3FN>, tensor<256x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, tensor<384x1248xf8E4M3FN>, tensor<384x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, tensor<8xi32>) -> tensor<8x256x384xbf16>
  return %r : tensor<8x256x384xbf16>
}
