// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.quantize along a jagged token axis (axis = 0 with offsets): data
// [K, Tp] with Tp a multiple of 32 and Tp >= T; scales row-major [K, Tp/32]
// or per_k_group blocked [roundUp(K, 128), Qp], Qp a multiple of 4 and
// >= roundUp(Tp/32, 4).

func.func @padded_axis_not_multiple_of_32(%x: tensor<1000x256xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op the padded token axis of the data (1000) must be a multiple of 32 (every token group is padded to whole 32-blocks)}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64} : tensor<1000x256xbf16> -> tensor<256x1000xf8E4M3FN>, tensor<256x31xf8E8M0FNU>
  return
}

// -----

func.func @padded_axis_too_short(%x: tensor<1000x256xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op the padded token axis of the data (960) is shorter than the 1000 tokens of the input}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64} : tensor<1000x256xbf16> -> tensor<256x960xf8E4M3FN>, tensor<256x30xf8E8M0FNU>
  return
}

// -----

// The non-token dims still have to match.
func.func @jagged_data_rows(%x: tensor<1000x256xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op data shape [128, 1248] must be the input shape [1000, 256] with axis 0 moved last: expected [256, 1248]}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64} : tensor<1000x256xbf16> -> tensor<128x1248xf8E4M3FN>, tensor<128x39xf8E8M0FNU>
  return
}

// -----

// Row-major jagged scales follow the padded extent Tp/32 = 39, not T/32.
func.func @jagged_row_major_scales(%x: tensor<1000x256xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales must have shape [256, 39] (one row-major E8M0 scale per 32 elements along the contraction axis), got [256, 31]}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64} : tensor<1000x256xbf16> -> tensor<256x1248xf8E4M3FN>, tensor<256x31xf8E8M0FNU>
  return
}

// -----

// Plain blocked scales cannot hold per-group K blocks.
func.func @jagged_plain_blocked(%x: tensor<1000x256xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales with groups along the contraction (token) axis must use #mxmoe.scale_layout<blocked_128x4, per_k_group>}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64} : tensor<1000x256xbf16> -> tensor<256x1248xf8E4M3FN>, tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

func.func @per_k_group_cols_not_multiple_of_4(%x: tensor<1000x256xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales in the per_k_group blocked_128x4 layout must have a multiple of 4 columns (every group is padded to 4 scale columns), got 42}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64} : tensor<1000x256xbf16> -> tensor<256x1248xf8E4M3FN>, tensor<256x42xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return
}

// -----

func.func @per_k_group_cols_too_few(%x: tensor<1000x256xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales in the per_k_group blocked_128x4 layout need at least roundUp(C, 4) = 40 columns for C = 39 scale columns, got 36}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64} : tensor<1000x256xbf16> -> tensor<256x1248xf8E4M3FN>, tensor<256x36xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return
}

// -----

// The rows of per-K-group scales are padded exactly like plain blocked ones.
func.func @per_k_group_rows(%x: tensor<1000x200xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales in the blocked_128x4 layout must have roundUp(R, 128) = 256 rows for R = 200 (rows padded to multiples of 128), got 200}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64} : tensor<1000x200xbf16> -> tensor<200x1248xf8E4M3FN>, tensor<200x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return
}
