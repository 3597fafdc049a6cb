// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.swizzle_scales with offsets and a per_k_group blocked side
// (K-groups): rows exactly roundUp(R, 128); columns a multiple of 4 and
// >= roundUp(Ct, 4).

func.func @cols_not_multiple_of_4(%s: tensor<256x39xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op result scales in the per_k_group blocked_128x4 layout must have a multiple of 4 columns (every group is padded to 4 scale columns), got 39}}
  %b = mxmoe.swizzle_scales %s offsets(%offs : tensor<8xi32>) : tensor<256x39xf8E8M0FNU> -> tensor<256x39xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return
}

// -----

func.func @cols_too_few(%s: tensor<256x39xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op result scales in the per_k_group blocked_128x4 layout need at least roundUp(C, 4) = 40 columns for C = 39 scale columns, got 32}}
  %b = mxmoe.swizzle_scales %s offsets(%offs : tensor<8xi32>) : tensor<256x39xf8E8M0FNU> -> tensor<256x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return
}

// -----

func.func @from_blocked_cols_too_few(%b: tensor<256x36xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op source scales in the per_k_group blocked_128x4 layout need at least roundUp(C, 4) = 40 columns for C = 39 scale columns, got 36}}
  %s = mxmoe.swizzle_scales %b offsets(%offs : tensor<8xi32>) : tensor<256x36xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>> -> tensor<256x39xf8E8M0FNU>
  return
}

// -----

// K-groups do not group rows: the row count is exact.
func.func @rows_not_exact(%s: tensor<200x39xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op result scales in the blocked_128x4 layout must have roundUp(R, 128) = 256 rows for R = 200 (rows padded to multiples of 128), got 384}}
  %b = mxmoe.swizzle_scales %s offsets(%offs : tensor<8xi32>) : tensor<200x39xf8E8M0FNU> -> tensor<384x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return
}
