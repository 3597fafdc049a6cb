// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.swizzle_scales converts between row-major and blocked_128x4: exactly
// one side is blocked; per_k_group needs offsets.

func.func @neither_blocked(%s: tensor<200x10xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op exactly one of source and result must be in the blocked_128x4 layout (this op converts between row-major and blocked), got neither}}
  %b = mxmoe.swizzle_scales %s : tensor<200x10xf8E8M0FNU> -> tensor<256x12xf8E8M0FNU>
  return
}

// -----

// An explicit row_major encoding is still row-major.
func.func @neither_blocked_explicit_row_major(%s: tensor<200x10xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op exactly one of source and result must be in the blocked_128x4 layout (this op converts between row-major and blocked), got neither}}
  %b = mxmoe.swizzle_scales %s : tensor<200x10xf8E8M0FNU> -> tensor<200x10xf8E8M0FNU, #mxmoe.scale_layout<row_major>>
  return
}

// -----

func.func @both_blocked(%s: tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op exactly one of source and result must be in the blocked_128x4 layout (this op converts between row-major and blocked), got both}}
  %b = mxmoe.swizzle_scales %s : tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

// Converting between the two blocked variants is not a swizzle either.
func.func @blocked_to_per_k_group(%s: tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op exactly one of source and result must be in the blocked_128x4 layout (this op converts between row-major and blocked), got both}}
  %b = mxmoe.swizzle_scales %s offsets(%offs : tensor<4xi32>) : tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<256x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return
}

// -----

func.func @per_k_group_result_without_offsets(%s: tensor<256x39xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op result scales cannot use the per_k_group layout here: per_k_group is for token groups along the contraction axis (mxmoe.quantize with offsets and axis = 0, or the 2D x 2D grouped matmul)}}
  %b = mxmoe.swizzle_scales %s : tensor<256x39xf8E8M0FNU> -> tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return
}

// -----

func.func @per_k_group_source_without_offsets(%b: tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op source scales cannot use the per_k_group layout here: per_k_group is for token groups along the contraction axis (mxmoe.quantize with offsets and axis = 0, or the 2D x 2D grouped matmul)}}
  %s = mxmoe.swizzle_scales %b : tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>> -> tensor<256x39xf8E8M0FNU>
  return
}

// -----

// A swizzle keeps the tile its source records (MX128); it cannot add one.
func.func @tile_added(%s: tensor<256x40xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op result scales record tile = [1, 128] but the source scales record none; a swizzle keeps the source's tile}}
  %b = mxmoe.swizzle_scales %s : tensor<256x40xf8E8M0FNU> -> tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  return
}

// -----

func.func @tile_changed(%s: tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 64]>>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op result scales record tile = [1, 128] but the source scales record another; a swizzle keeps the source's tile}}
  %b = mxmoe.swizzle_scales %s : tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 64]>> -> tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  return
}
