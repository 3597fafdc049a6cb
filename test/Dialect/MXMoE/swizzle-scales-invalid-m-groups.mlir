// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.swizzle_scales with offsets and a plain blocked side (M-groups):
// rows a multiple of 128 and >= roundUp(M, 128); columns roundUp(C, 4).

func.func @rows_not_multiple_of_128(%s: tensor<1000x8xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op result scales in the M-grouped blocked_128x4 layout must have a multiple of 128 rows (every group is padded to 128 rows), got 1900}}
  %b = mxmoe.swizzle_scales %s offsets(%offs : tensor<8xi32>) : tensor<1000x8xf8E8M0FNU> -> tensor<1900x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

func.func @rows_too_few(%s: tensor<1000x8xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op result scales in the M-grouped blocked_128x4 layout need at least roundUp(M, 128) = 1024 rows for M = 1000, got 128}}
  %b = mxmoe.swizzle_scales %s offsets(%offs : tensor<8xi32>) : tensor<1000x8xf8E8M0FNU> -> tensor<128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

func.func @from_blocked_rows_too_few(%b: tensor<896x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op source scales in the M-grouped blocked_128x4 layout need at least roundUp(M, 128) = 1024 rows for M = 1000, got 896}}
  %s = mxmoe.swizzle_scales %b offsets(%offs : tensor<8xi32>) : tensor<896x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<1000x8xf8E8M0FNU>
  return
}

// -----

// M-groups do not pad the columns per group.
func.func @cols(%s: tensor<1000x10xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op result scales in the blocked_128x4 layout must have roundUp(C, 4) = 12 columns for C = 10 scale columns (columns padded to multiples of 4), got 10}}
  %b = mxmoe.swizzle_scales %s offsets(%offs : tensor<8xi32>) : tensor<1000x10xf8E8M0FNU> -> tensor<1920x10xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}
