// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.quantize shapes: input rank 2 or 3; data = input with `axis` moved
// last; the quantized axis a multiple of 32 (verifyMXQuantization).

func.func @input_rank_1(%x: tensor<64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op expects a 2-D [M, K] or 3-D [E, N, K] input, got rank 1}}
  %q, %s = mxmoe.quantize %x {axis = 0 : i64} : tensor<64xbf16> -> tensor<64xf8E4M3FN>, tensor<2xf8E8M0FNU>
  return
}

// -----

func.func @input_rank_4(%x: tensor<2x4x64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op expects a 2-D [M, K] or 3-D [E, N, K] input, got rank 4}}
  %q, %s = mxmoe.quantize %x {axis = 3 : i64} : tensor<2x4x64x64xbf16> -> tensor<2x4x64x64xf8E4M3FN>, tensor<2x4x64x2xf8E8M0FNU>
  return
}

// -----

func.func @data_rank(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op data must have the input's rank 2, got rank 3}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xbf16> -> tensor<64x2x32xf8E4M3FN>, tensor<64x2xf8E8M0FNU>
  return
}

// -----

// Without offsets the quantized axis is whole 32-blocks.
func.func @rowwise_not_multiple_of_32(%x: tensor<64x100xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op quantized axis 1 has size 100, which is not a multiple of the block size 32}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x100xbf16> -> tensor<64x100xf8E4M3FN>, tensor<64x3xf8E8M0FNU>
  return
}

// -----

// Columnwise along a token axis that is not a multiple of 32 needs offsets
// (a jagged, padded token axis).
func.func @columnwise_not_multiple_of_32(%x: tensor<48x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op quantized axis 0 has size 48, which is not a multiple of the block size 32}}
  %q, %s = mxmoe.quantize %x {axis = 0 : i64} : tensor<48x64xbf16> -> tensor<64x48xf8E4M3FN>, tensor<64x1xf8E8M0FNU>
  return
}

// -----

// Columnwise data is the transpose of the input.
func.func @columnwise_data_not_transposed(%x: tensor<64x128xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op data shape [64, 128] must be the input shape [64, 128] with axis 0 moved last: expected [128, 64]}}
  %q, %s = mxmoe.quantize %x {axis = 0 : i64} : tensor<64x128xbf16> -> tensor<64x128xf8E4M3FN>, tensor<64x4xf8E8M0FNU>
  return
}

// -----

// Rowwise data keeps the input's shape.
func.func @rowwise_data_transposed(%x: tensor<64x128xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op data shape [128, 64] must be the input shape [64, 128] with axis 1 moved last: expected [64, 128]}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x128xbf16> -> tensor<128x64xf8E4M3FN>, tensor<128x2xf8E8M0FNU>
  return
}

// -----

// 3-D weights quantized along N (dgrad): data [E, K, N], not [E, N, K].
func.func @dgrad_data_not_permuted(%w: tensor<4x64x128xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op data shape [4, 64, 128] must be the input shape [4, 64, 128] with axis 1 moved last: expected [4, 128, 64]}}
  %q, %s = mxmoe.quantize %w {axis = 1 : i64} : tensor<4x64x128xbf16> -> tensor<4x64x128xf8E4M3FN>, tensor<4x64x4xf8E8M0FNU>
  return
}

// -----

// Dynamic dims print as '?'.
func.func @data_shape_dynamic(%x: tensor<?x128xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op data shape [?, 64] must be the input shape [?, 128] with axis 1 moved last: expected [?, 128]}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<?x128xbf16> -> tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>
  return
}
