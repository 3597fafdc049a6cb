// RUN: mxmoe-opt %s --split-input-file --mxmoe-expand-scaled-matmul=quantize-weights-once | FileCheck %s
// RUN: mxmoe-opt %s --split-input-file --mxmoe-expand-scaled-matmul=quantize-weights-once --mxmoe-pack-scales | FileCheck %s --check-prefix=PACKED
// RUN: mxmoe-opt %s --split-input-file --mxmoe-expand-scaled-matmul | FileCheck %s --check-prefix=TWICE

// quantize-weights-once: an MX128 grouped GEMM quantizes its weight once,
// in the forward (mxmoe.quantize_weight: the 128x128 tiles are the same
// blocks along K and along N), and the forward returns the transposed copy
// and its blocked scales, which input_grad takes instead of the weight.
// M = 1000 tokens in 8 groups, K = 2880 (a 64-wide last tile), N = 1024.

// CHECK-LABEL: func.func @moe(
// CHECK:         %[[F:.*]]:3 = call @layers.0.moe.experts.w13.forward(%arg0, %arg1, %arg2)
// CHECK:         return %[[F]]#0
// CHECK-LABEL: func.func @layers.0.moe.experts.w13.forward(
// CHECK-SAME:      -> (tensor<1000x1024xbf16>, tensor<8x2880x1024xf8E4M3FN>, tensor<8x2944x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>)
// CHECK:         %[[WQ:.*]], %[[WS:.*]], %[[WT:.*]], %[[WTS:.*]] = mxmoe.quantize_weight %arg1 {scale_tile = array<i64: 128, 128>} : tensor<8x1024x2880xbf16> -> tensor<8x1024x2880xf8E4M3FN>, tensor<8x1024x90xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [128, 128]>>, tensor<8x2880x1024xf8E4M3FN>, tensor<8x2880x32xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [128, 128]>>
// CHECK:         %[[WB:.*]] = mxmoe.swizzle_scales %[[WS]]
// CHECK:         %[[WTB:.*]] = mxmoe.swizzle_scales %[[WTS]]
// CHECK:         mxmoe.quantize %arg0 {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
// CHECK:         %[[Y:.*]] = mxmoe.grouped_matmul %{{.*}} scales %{{.*}}, %[[WQ]] scales %[[WB]] offsets %arg2
// CHECK:         return %[[Y]], %[[WT]], %[[WTB]]
// CHECK-LABEL: func.func @layers.0.moe.experts.w13.input_grad(
// CHECK-SAME:      %arg0: tensor<1000x1024xbf16>, %arg1: tensor<8x2880x1024xf8E4M3FN>, %arg2: tensor<8x2944x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, %arg3: tensor<8xi32>) -> tensor<1000x2880xbf16>
// CHECK-NOT:     mxmoe.quantize_weight
// CHECK:         mxmoe.quantize %arg0 {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
// CHECK:         mxmoe.grouped_matmul %{{.*}} scales %{{.*}}, %arg1 scales %arg2 offsets %arg3
// CHECK-LABEL: func.func @layers.0.moe.experts.w13.weight_grad(
// CHECK-SAME:      %arg0: tensor<1000x1024xbf16>, %arg1: tensor<1000x2880xbf16>, %arg2: tensor<8xi32>)

// The packed form: both swizzles fused into the quantize_weight.
// PACKED-LABEL: func.func @layers.0.moe.experts.w13.forward(
// PACKED:         mxmoe.quantize_weight %arg1 {scale_tile = array<i64: 128, 128>} : tensor<8x1024x2880xbf16> -> tensor<8x1024x2880xf8E4M3FN>, tensor<8x1024x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, tensor<8x2880x1024xf8E4M3FN>, tensor<8x2944x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>
// PACKED-NOT:     mxmoe.swizzle_scales

// Without the option: the weight is quantized along K in the forward and
// along N in input_grad.
// TWICE-LABEL: func.func @layers.0.moe.experts.w13.forward(
// TWICE-SAME:      -> tensor<1000x1024xbf16>
// TWICE-NOT:     mxmoe.quantize_weight
// TWICE-LABEL: func.func @layers.0.moe.experts.w13.input_grad(
// TWICE-SAME:      %arg1: tensor<8x1024x2880xbf16>
// TWICE:         mxmoe.quantize %arg1 {axis = 1 : i64, scale_tile = array<i64: 128, 128>}
func.func @moe(%x: tensor<1000x2880xbf16>, %w: tensor<8x1024x2880xbf16>, %o: tensor<8xi32>) -> tensor<1000x1024xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %o {fqn = "layers.0.moe.experts.w13", precision = #mxmoe.precision<mxfp8>, recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil, granularity = mx128>}
      : (tensor<1000x2880xbf16>, tensor<8x1024x2880xbf16>, tensor<8xi32>) -> tensor<1000x1024xbf16>
  return %y : tensor<1000x1024xbf16>
}

// -----

// An MX32 op keeps two quantizations (its 1x32 blocks along K and 32x1
// blocks along N are different blocks).
// CHECK-LABEL: func.func @layers.1.moe.experts.w13.forward(
// CHECK-SAME:      -> tensor<1000x1024xbf16>
// CHECK-NOT:     mxmoe.quantize_weight
// CHECK-LABEL: func.func @layers.1.moe.experts.w13.input_grad(
// CHECK-SAME:      %arg1: tensor<8x1024x2880xbf16>
// CHECK:         mxmoe.quantize %arg1 {axis = 1 : i64}
func.func @moe32(%x: tensor<1000x2880xbf16>, %w: tensor<8x1024x2880xbf16>, %o: tensor<8xi32>) -> tensor<1000x1024xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %o {fqn = "layers.1.moe.experts.w13", precision = #mxmoe.precision<mxfp8>, recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>}
      : (tensor<1000x2880xbf16>, tensor<8x1024x2880xbf16>, tensor<8xi32>) -> tensor<1000x1024xbf16>
  return %y : tensor<1000x1024xbf16>
}
