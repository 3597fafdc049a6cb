// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.swizzle_scales without offsets: row-major [R, C] <-> blocked
// [roundUp(R, 128), roundUp(C, 4)], 3-D per expert; messages name the
// blocked side ("result scales" or "source scales").

func.func @row_major_rank_1(%s: tensor<200xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op scales must be 2-D [R, C] or 3-D [E, R, C], got rank 1}}
  %b = mxmoe.swizzle_scales %s : tensor<200xf8E8M0FNU> -> tensor<256xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

func.func @row_major_rank_4(%s: tensor<2x4x200x10xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op scales must be 2-D [R, C] or 3-D [E, R, C], got rank 4}}
  %b = mxmoe.swizzle_scales %s : tensor<2x4x200x10xf8E8M0FNU> -> tensor<2x4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

// The blocked side keeps the rank (no PyTorch-style flattening).
func.func @blocked_rank(%s: tensor<4x200x10xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op result scales must have rank 3, got rank 2}}
  %b = mxmoe.swizzle_scales %s : tensor<4x200x10xf8E8M0FNU> -> tensor<4x3072xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

func.func @blocked_experts(%s: tensor<4x200x10xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op result scales must have 4 experts in dim 0, got 2}}
  %b = mxmoe.swizzle_scales %s : tensor<4x200x10xf8E8M0FNU> -> tensor<2x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

func.func @blocked_rows(%s: tensor<200x10xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op result scales in the blocked_128x4 layout must have roundUp(R, 128) = 256 rows for R = 200 (rows padded to multiples of 128), got 200}}
  %b = mxmoe.swizzle_scales %s : tensor<200x10xf8E8M0FNU> -> tensor<200x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

func.func @blocked_cols(%s: tensor<200x10xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op result scales in the blocked_128x4 layout must have roundUp(C, 4) = 12 columns for C = 10 scale columns (columns padded to multiples of 4), got 16}}
  %b = mxmoe.swizzle_scales %s : tensor<200x10xf8E8M0FNU> -> tensor<256x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

// From blocked: the row-major result determines the expected blocked shape.
func.func @from_blocked_rows(%b: tensor<384x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op source scales in the blocked_128x4 layout must have roundUp(R, 128) = 256 rows for R = 200 (rows padded to multiples of 128), got 384}}
  %s = mxmoe.swizzle_scales %b : tensor<384x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<200x10xf8E8M0FNU>
  return
}

// -----

// 3-D rows are padded per expert.
func.func @from_blocked_3d_rows(%b: tensor<4x200x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op source scales in the blocked_128x4 layout must have roundUp(R, 128) = 256 rows for R = 200 (rows padded to multiples of 128), got 200}}
  %s = mxmoe.swizzle_scales %b : tensor<4x200x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<4x200x10xf8E8M0FNU>
  return
}

// -----

// Overflow guard: roundUp(R, 128) of a dimension near INT64_MAX would wrap;
// dimensions above 2^48 are rejected before any padding arithmetic.
func.func @row_dim_too_large(%s: tensor<9223372036854775800x4xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op logical (row-major) scale dimension 9223372036854775800 of the result scales is too large (at most 2^48)}}
  %b = mxmoe.swizzle_scales %s : tensor<9223372036854775800x4xf8E8M0FNU> -> tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}
