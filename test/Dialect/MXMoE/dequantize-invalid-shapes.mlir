// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.dequantize shapes: the same rules as mxmoe.quantize with the result
// as the high-precision side (the messages name the result), including no
// axis 0 for a 3-D result.

func.func @result_rank_1(%q: tensor<64xf8E4M3FN>, %s: tensor<2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.dequantize' op expects a 2-D [M, K] or 3-D [E, N, K] result, got rank 1}}
  %x = mxmoe.dequantize %q, %s {axis = 0 : i64} : tensor<64xf8E4M3FN>, tensor<2xf8E8M0FNU> -> tensor<64xbf16>
  return
}

// -----

func.func @axis_out_of_range(%q: tensor<64x64xf8E4M3FN>, %s: tensor<64x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.dequantize' op axis 2 is out of range for a rank-2 result}}
  %x = mxmoe.dequantize %q, %s {axis = 2 : i64} : tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU> -> tensor<64x64xbf16>
  return
}

// -----

func.func @data_rank(%q: tensor<4x64x64xf8E4M3FN>, %s: tensor<4x64x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.dequantize' op data must have the result's rank 2, got rank 3}}
  %x = mxmoe.dequantize %q, %s {axis = 1 : i64} : tensor<4x64x64xf8E4M3FN>, tensor<4x64x2xf8E8M0FNU> -> tensor<256x64xbf16>
  return
}

// -----

func.func @axis_not_multiple_of_32(%q: tensor<64x48xf8E4M3FN>, %s: tensor<64x1xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.dequantize' op quantized axis 1 has size 48, which is not a multiple of the block size 32}}
  %x = mxmoe.dequantize %q, %s {axis = 1 : i64} : tensor<64x48xf8E4M3FN>, tensor<64x1xf8E8M0FNU> -> tensor<64x48xbf16>
  return
}

// -----

// Columnwise data [K, M] dequantizes to [M, K]; keeping [K, M] is an error.
func.func @columnwise_result_not_transposed(%q: tensor<128x64xf8E4M3FN>, %s: tensor<128x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.dequantize' op data shape [128, 64] must be the result shape [128, 64] with axis 0 moved last: expected [64, 128]}}
  %x = mxmoe.dequantize %q, %s {axis = 0 : i64} : tensor<128x64xf8E4M3FN>, tensor<128x2xf8E8M0FNU> -> tensor<128x64xbf16>
  return
}

// -----

func.func @row_major_scales(%q: tensor<64x128xf8E4M3FN>, %s: tensor<64x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.dequantize' op scales must have shape [64, 4] (one row-major E8M0 scale per 32 elements along the contraction axis), got [64, 2]}}
  %x = mxmoe.dequantize %q, %s {axis = 1 : i64} : tensor<64x128xf8E4M3FN>, tensor<64x2xf8E8M0FNU> -> tensor<64x128xbf16>
  return
}

// -----

func.func @blocked_scales_cols(%q: tensor<200x320xf8E4M3FN>, %s: tensor<256x10xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>) {
  // expected-error @+1 {{'mxmoe.dequantize' op scales in the blocked_128x4 layout must have roundUp(C, 4) = 12 columns for C = 10 scale columns (columns padded to multiples of 4), got 10}}
  %x = mxmoe.dequantize %q, %s {axis = 1 : i64} : tensor<200x320xf8E4M3FN>, tensor<256x10xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<200x320xbf16>
  return
}

// -----

func.func @blocked_scales_experts(%q: tensor<4x200x320xf8E4M3FN>, %s: tensor<2x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>) {
  // expected-error @+1 {{'mxmoe.dequantize' op scales must have 4 experts in dim 0, got 2}}
  %x = mxmoe.dequantize %q, %s {axis = 2 : i64} : tensor<4x200x320xf8E4M3FN>, tensor<2x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<4x200x320xbf16>
  return
}

// -----

func.func @axis_0_of_rank_3(%q: tensor<64x128x64xf8E4M3FN>, %s: tensor<64x128x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.dequantize' op 3-D [E, N, K] tensors are quantized along N (axis 1) or K (axis 2), not across experts (axis 0)}}
  %w = mxmoe.dequantize %q, %s {axis = 0 : i64} : tensor<64x128x64xf8E4M3FN>, tensor<64x128x2xf8E8M0FNU> -> tensor<64x64x128xbf16>
  return
}
