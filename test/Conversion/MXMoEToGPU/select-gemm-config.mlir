// mxmoe-select-gemm-config: every grouped GEMM that gets a kernel carries
// its #mxmoe.gemm_config afterwards, chosen as convert-mxmoe-to-gpu chooses
// (strategy from the chip, gemm-sm90-mma, the output type and the scales;
// stages 4, or 2 for the bf16 upcast, unless gemm-stages is set); an op
// that carries one keeps it, an op without a kernel gets none.
// RUN: mxmoe-opt %s --mxmoe-select-gemm-config | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-select-gemm-config="chip=sm_90a gemm-sm90-mma=fp8" | FileCheck %s --check-prefix=FP8
// RUN: mxmoe-opt %s --mxmoe-select-gemm-config="chip=sm_90a gemm-sm90-mma=bf16 gemm-tile-n=64 gemm-stages=3 gemm-ctas=114" | FileCheck %s --check-prefix=BF16
// RUN: mxmoe-opt %s --mxmoe-select-gemm-config="chip=sm_100a gemm-tile-n=256" | FileCheck %s --check-prefix=SM100
// RUN: mxmoe-opt %s --mxmoe-select-gemm-config="chip=sm_103a gemm-stages=6 gemm-ctas=148" | FileCheck %s --check-prefix=SM103
// The selection is idempotent (every op then carries a configuration).
// RUN: mxmoe-opt %s --mxmoe-select-gemm-config | mxmoe-opt --mxmoe-select-gemm-config="chip=sm_90a gemm-sm90-mma=bf16" | FileCheck %s

// bf16 output, MX32 scales.
// CHECK-LABEL: func.func @bf16_out(
// CHECK:   mxmoe.grouped_matmul {{.*}} {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 128, stages = 4, ctas = 132>}
// FP8-LABEL: func.func @bf16_out(
// FP8:   {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 128, stages = 4, ctas = 132>}
// BF16-LABEL: func.func @bf16_out(
// BF16:   {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_bf16_upcast, tile_m = 128, tile_n = 64, stages = 3, ctas = 114>}
// SM100-LABEL: func.func @bf16_out(
// SM100:   {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = tcgen05_mxf8f6f4, tile_m = 128, tile_n = 256, stages = 4, ctas = 132>}
// SM103-LABEL: func.func @bf16_out(
// SM103:   {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = tcgen05_mxf8f6f4, tile_m = 128, tile_n = 128, stages = 6, ctas = 148>}
func.func @bf16_out(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                    %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                    %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}

// f32 output: auto takes the exact bf16 upcast (2 stages).
// CHECK-LABEL: func.func @f32_out(
// CHECK:   {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_bf16_upcast, tile_m = 128, tile_n = 128, stages = 2, ctas = 132>}
// FP8-LABEL: func.func @f32_out(
// FP8:   {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 128, stages = 4, ctas = 132>}
// BF16-LABEL: func.func @f32_out(
// BF16:   {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_bf16_upcast, tile_m = 128, tile_n = 64, stages = 3, ctas = 114>}
// SM100-LABEL: func.func @f32_out(
// SM100:   {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = tcgen05_mxf8f6f4, tile_m = 128, tile_n = 256, stages = 4, ctas = 132>}
func.func @f32_out(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                   %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                   %offs: tensor<2xi32>) -> tensor<256x128xf32> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xf32>
  return %o : tensor<256x128xf32>
}

// MX128 scale tiles (1x128 activation, 128x128 weight): promotion per
// 128 K on sm_90a's fp8 strategy, tile N 192 by default for this kind
// (2D x 3D, bf16 output: select-gemm-config-tile192.mlir); tcgen05 reads
// them as MX scales.
// CHECK-LABEL: func.func @mx128(
// CHECK:   {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 192, stages = 4, ctas = 132>}
// FP8-LABEL: func.func @mx128(
// FP8:   {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 192, stages = 4, ctas = 132>}
// BF16-LABEL: func.func @mx128(
// BF16:   {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_bf16_upcast, tile_m = 128, tile_n = 64, stages = 3, ctas = 114>}
// SM100-LABEL: func.func @mx128(
// SM100:   {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = tcgen05_mxf8f6f4, tile_m = 128, tile_n = 256, stages = 4, ctas = 132>}
func.func @mx128(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>,
                 %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>,
                 %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>,
         tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}

// MX128 with f32 output: auto keeps the upcast (the fp8 wgmma's internal
// accumulation misses f32 accuracy).
// CHECK-LABEL: func.func @mx128_f32_out(
// CHECK:   {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_bf16_upcast, tile_m = 128, tile_n = 128, stages = 2, ctas = 132>}
// FP8-LABEL: func.func @mx128_f32_out(
// FP8:   {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 128, stages = 4, ctas = 132>}
func.func @mx128_f32_out(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>,
                         %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>,
                         %offs: tensor<2xi32>) -> tensor<256x128xf32> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>,
         tensor<2xi32>) -> tensor<256x128xf32>
  return %o : tensor<256x128xf32>
}

// A pinned configuration stays, whatever the options.
// CHECK-LABEL: func.func @pinned(
// CHECK:   {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 64, stages = 3, ctas = 8>}
// BF16-LABEL: func.func @pinned(
// BF16:   {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 64, stages = 3, ctas = 8>}
// SM100-LABEL: func.func @pinned(
// SM100:   {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 64, stages = 3, ctas = 8>}
func.func @pinned(%a: tensor<256x256xf8E4M3FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                  %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                  %offs: tensor<2xi32>) -> tensor<256x128xf32> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      {mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote, tile_m = 128, tile_n = 64, stages = 3, ctas = 8>}
      : (tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xf32>
  return %o : tensor<256x128xf32>
}

// No kernel, no configuration: bf16 operands (left to torch._grouped_mm),
// and an empty GEMM (zero tokens: convert-mxmoe-to-gpu gives its empty
// result without a kernel).
// CHECK-LABEL: func.func @no_kernel(
// CHECK-NOT: mxmoe.gemm_config
// CHECK: return
func.func @no_kernel(%a: tensor<256x256xbf16>, %w: tensor<2x128x256xbf16>, %offs: tensor<2xi32>,
                     %e: tensor<0x256xf8E4M3FN>, %es: tensor<0x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                     %f: tensor<2x128x256xf8E4M3FN>, %fs: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>)
    -> (tensor<256x128xbf16>, tensor<0x128xbf16>) {
  %o = mxmoe.grouped_matmul %a, %w offsets %offs
      : (tensor<256x256xbf16>, tensor<2x128x256xbf16>, tensor<2xi32>) -> tensor<256x128xbf16>
  %z = mxmoe.grouped_matmul %e scales %es, %f scales %fs offsets %offs
      : (tensor<0x256xf8E4M3FN>, tensor<0x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<0x128xbf16>
  return %o, %z : tensor<256x128xbf16>, tensor<0x128xbf16>
}
