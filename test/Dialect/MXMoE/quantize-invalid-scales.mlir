// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.quantize scale shapes without offsets: row-major = data shape with
// the last dim divided by 32; blocked_128x4 = [roundUp(R, 128), roundUp(C, 4)]
// exactly (rank 3: per expert); per_k_group needs a jagged token axis.

// One scale per element instead of per 32 elements.
func.func @row_major_per_element(%x: tensor<64x128xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales must have shape [64, 4] (one row-major E8M0 scale per 32 elements along the contraction axis), got [64, 128]}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x128xbf16> -> tensor<64x128xf8E4M3FN>, tensor<64x128xf8E8M0FNU>
  return
}

// -----

// Columnwise scales follow the data ([K, M/32]), not the input.
func.func @row_major_columnwise_input_shape(%x: tensor<64x128xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales must have shape [128, 2] (one row-major E8M0 scale per 32 elements along the contraction axis), got [64, 4]}}
  %q, %s = mxmoe.quantize %x {axis = 0 : i64} : tensor<64x128xbf16> -> tensor<128x64xf8E4M3FN>, tensor<64x4xf8E8M0FNU>
  return
}

// -----

// 3-D row-major scales keep the expert dim.
func.func @row_major_3d_flattened(%w: tensor<4x64x128xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales must have shape [4, 64, 4] (one row-major E8M0 scale per 32 elements along the contraction axis), got [256, 4]}}
  %q, %s = mxmoe.quantize %w {axis = 2 : i64} : tensor<4x64x128xbf16> -> tensor<4x64x128xf8E4M3FN>, tensor<256x4xf8E8M0FNU>
  return
}

// -----

// An explicit row_major encoding follows the same rule.
func.func @row_major_explicit_encoding(%x: tensor<64x128xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales must have shape [64, 4] (one row-major E8M0 scale per 32 elements along the contraction axis), got [128, 4]}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x128xbf16> -> tensor<64x128xf8E4M3FN>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<row_major>>
  return
}

// -----

// Blocked scales pad the rows to 128.
func.func @blocked_rows_unpadded(%x: tensor<200x320xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales in the blocked_128x4 layout must have roundUp(R, 128) = 256 rows for R = 200 (rows padded to multiples of 128), got 200}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<200x320xbf16> -> tensor<200x320xf8E4M3FN>, tensor<200x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

// Without groups the padding is exact: more rows than roundUp(R, 128) is an
// error too.
func.func @blocked_rows_overpadded(%x: tensor<200x320xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales in the blocked_128x4 layout must have roundUp(R, 128) = 256 rows for R = 200 (rows padded to multiples of 128), got 384}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<200x320xbf16> -> tensor<200x320xf8E4M3FN>, tensor<384x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

// Blocked scales pad the columns to 4.
func.func @blocked_cols_unpadded(%x: tensor<200x320xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales in the blocked_128x4 layout must have roundUp(C, 4) = 12 columns for C = 10 scale columns (columns padded to multiples of 4), got 10}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<200x320xbf16> -> tensor<200x320xf8E4M3FN>, tensor<256x10xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

// Columnwise blocked scales are blocked over the data's rows (K), not the
// input's rows.
func.func @blocked_columnwise_rows(%x: tensor<320x200xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales in the blocked_128x4 layout must have roundUp(R, 128) = 256 rows for R = 200 (rows padded to multiples of 128), got 384}}
  %q, %s = mxmoe.quantize %x {axis = 0 : i64} : tensor<320x200xbf16> -> tensor<200x320xf8E4M3FN>, tensor<384x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

// 3-D blocked scales are [E, Rp, Cp], not PyTorch's flattened [E, Rp*Cp].
func.func @blocked_3d_flattened(%w: tensor<4x200x320xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales must have rank 3, got rank 2}}
  %q, %s = mxmoe.quantize %w {axis = 2 : i64} : tensor<4x200x320xbf16> -> tensor<4x200x320xf8E4M3FN>, tensor<4x3072xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

func.func @blocked_3d_experts(%w: tensor<4x200x320xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales must have 4 experts in dim 0, got 8}}
  %q, %s = mxmoe.quantize %w {axis = 2 : i64} : tensor<4x200x320xbf16> -> tensor<4x200x320xf8E4M3FN>, tensor<8x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

// 3-D blocked rows are checked per expert (dgrad: rows = K = 200).
func.func @blocked_3d_dgrad_rows(%w: tensor<4x320x200xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales in the blocked_128x4 layout must have roundUp(R, 128) = 256 rows for R = 200 (rows padded to multiples of 128), got 384}}
  %q, %s = mxmoe.quantize %w {axis = 1 : i64} : tensor<4x320x200xbf16> -> tensor<4x200x320xf8E4M3FN>, tensor<4x384x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

// per_k_group needs token-group offsets (a jagged token axis).
func.func @per_k_group_without_offsets(%x: tensor<256x128xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales cannot use the per_k_group layout here: per_k_group is for token groups along the contraction axis (mxmoe.quantize with offsets and axis = 0, or the 2D x 2D grouped matmul)}}
  %q, %s = mxmoe.quantize %x {axis = 0 : i64} : tensor<256x128xbf16> -> tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return
}
