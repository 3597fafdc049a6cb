// RUN: mxmoe-opt %s --mxmoe-expand-scaled-matmul | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-expand-scaled-matmul --mxmoe-pack-scales | FileCheck %s --check-prefix=PACKED

// An mx128 recipe (#mxmoe.mx_recipe<..., granularity = mx128>): every GEMM
// operand is quantized along its own contraction axis with the recipe's
// scale tiles: activations and gradients [1, 128] (the weight gradient's
// operands along the jagged token axis, windows restarting at every group),
// weights [128, 128] (along K for the forward, along N for the input
// gradient: the same 128x128 blocks, so the same values transposed). Scales
// stay MX scales (each 1x32 slot holds its tile's scale) in the layouts the
// MX32 recipe uses, and their types record the tile (`tile = [r, c]` on the
// row-major and blocked layouts), from which the sm_90a GEMM lowering picks
// one promotion per 128 K. M = 1000 tokens in G = 8
// groups, K = 2880 (22.5 x 128: a 64-wide last tile), N = 1024.

// CHECK-LABEL: func.func @layers.0.moe.experts.w13.forward(
// CHECK: mxmoe.quantize %arg0 {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<1000x2880xbf16> -> tensor<1000x2880xf8E4M3FN>, tensor<1000x90xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
// CHECK: mxmoe.quantize %arg1 {axis = 2 : i64, scale_tile = array<i64: 128, 128>} : tensor<8x1024x2880xbf16> -> tensor<8x1024x2880xf8E4M3FN>, tensor<8x1024x90xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [128, 128]>>
// CHECK: mxmoe.grouped_matmul {{.*}} -> tensor<1000x1024xbf16>
// CHECK-LABEL: func.func @layers.0.moe.experts.w13.input_grad(
// CHECK: mxmoe.quantize %arg0 {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<1000x1024xbf16> -> tensor<1000x1024xf8E4M3FN>, tensor<1000x32xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
// CHECK: mxmoe.quantize %arg1 {axis = 1 : i64, scale_tile = array<i64: 128, 128>} : tensor<8x1024x2880xbf16> -> tensor<8x2880x1024xf8E4M3FN>, tensor<8x2880x32xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [128, 128]>>
// CHECK: mxmoe.grouped_matmul {{.*}} -> tensor<1000x2880xbf16>
// CHECK-LABEL: func.func @layers.0.moe.experts.w13.weight_grad(
// CHECK: mxmoe.quantize %arg0 offsets(%arg2 : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>} : tensor<1000x1024xbf16> -> tensor<1024x1248xf8E4M3FN>, tensor<1024x39xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
// CHECK: mxmoe.quantize %arg1 offsets(%arg2 : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>} : tensor<1000x2880xbf16> -> tensor<2880x1248xf8E4M3FN>, tensor<2880x39xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
// CHECK: mxmoe.grouped_matmul {{.*}} -> tensor<8x1024x2880xbf16>

// Scale packing keeps the tiles when it fuses the swizzles.
// PACKED-LABEL: func.func @layers.0.moe.experts.w13.forward(
// PACKED: mxmoe.quantize %arg0 offsets(%arg2 : tensor<8xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<1000x2880xbf16> -> tensor<1000x2880xf8E4M3FN>, tensor<1920x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
// PACKED: mxmoe.quantize %arg1 {axis = 2 : i64, scale_tile = array<i64: 128, 128>} : tensor<8x1024x2880xbf16> -> tensor<8x1024x2880xf8E4M3FN>, tensor<8x1024x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>
// PACKED-LABEL: func.func @layers.0.moe.experts.w13.weight_grad(
// PACKED: mxmoe.quantize %arg0 offsets(%arg2 : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>} : tensor<1000x1024xbf16> -> tensor<1024x1248xf8E4M3FN>, tensor<1024x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
func.func @moe(%x: tensor<1000x2880xbf16>, %w: tensor<8x1024x2880xbf16>, %o: tensor<8xi32>) -> tensor<1000x1024xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %o {fqn = "layers.0.moe.experts.w13", precision = #mxmoe.precision<mxfp8>, recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil, granularity = mx128>}
      : (tensor<1000x2880xbf16>, tensor<8x1024x2880xbf16>, tensor<8xi32>) -> tensor<1000x1024xbf16>
  return %y : tensor<1000x1024xbf16>
}
