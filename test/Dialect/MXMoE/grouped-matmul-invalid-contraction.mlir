// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.grouped_matmul contraction: lhs dim 1 == rhs last dim (K for 2D x 3D,
// the padded token axis T for 2D x 2D); with MX operands a multiple of 32.

// The rhs is [G, N, K] (contraction-contiguous), not [G, K, N].
func.func @rhs_g_k_n(%a: tensor<1000x256xbf16>, %w: tensor<8x256x128xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op contraction sizes differ: lhs has K = 256 but rhs has 128}}
  %o = mxmoe.grouped_matmul %a, %w offsets %offs : (tensor<1000x256xbf16>, tensor<8x256x128xbf16>, tensor<8xi32>) -> tensor<1000x256xbf16>
  return
}

// -----

// 2D x 2D: both operands must be stored with the same padded token axis.
func.func @token_axis_differs(%g: tensor<256x1248xbf16>, %x: tensor<512x1216xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op contraction sizes differ: lhs has T = 1248 but rhs has 1216}}
  %o = mxmoe.grouped_matmul %g, %x offsets %offs : (tensor<256x1248xbf16>, tensor<512x1216xbf16>, tensor<8xi32>) -> tensor<8x256x512xf32>
  return
}

// -----

func.func @mx_k_not_multiple_of_32(%a: tensor<64x200xf8E4M3FN>, %as: tensor<64x6xf8E8M0FNU>, %w: tensor<4x32x200xf8E4M3FN>, %ws: tensor<4x32x6xf8E8M0FNU>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op contraction size 200 is not a multiple of the MX block size 32}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs : (tensor<64x200xf8E4M3FN>, tensor<64x6xf8E8M0FNU>, tensor<4x32x200xf8E4M3FN>, tensor<4x32x6xf8E8M0FNU>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

// An MX 2D x 2D GEMM reads the padded token axis of a jagged quantize, not
// the raw token count.
func.func @mx_t_unpadded(%g: tensor<256x1000xf8E4M3FN>, %gs: tensor<256x31xf8E8M0FNU>, %x: tensor<512x1000xf8E4M3FN>, %xs: tensor<512x31xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op contraction size 1000 is not a multiple of the MX block size 32}}
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs : (tensor<256x1000xf8E4M3FN>, tensor<256x31xf8E8M0FNU>, tensor<512x1000xf8E4M3FN>, tensor<512x31xf8E8M0FNU>, tensor<8xi32>) -> tensor<8x256x512xf32>
  return
}
