// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.quantize `offsets`: 2-D input only, a 1-D i32 tensor, and only where
// they change the layout (axis 0, or axis 1 with blocked scales).

// 3-D per-expert weights are not token-grouped.
func.func @offsets_3d_input(%w: tensor<4x64x128xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op offsets are only supported for a 2-D input (token groups along dim 0)}}
  %q, %s = mxmoe.quantize %w offsets(%offs : tensor<4xi32>) {axis = 2 : i64} : tensor<4x64x128xbf16> -> tensor<4x64x128xf8E4M3FN>, tensor<4x64x4xf8E8M0FNU>
  return
}

// -----

func.func @offsets_i64(%x: tensor<1000x256xbf16>, %offs: tensor<8xi64>) {
  // expected-error @+1 {{'mxmoe.quantize' op offsets must be a 1-D tensor of i32 group end offsets, got 'tensor<8xi64>'}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi64>) {axis = 0 : i64} : tensor<1000x256xbf16> -> tensor<256x1248xf8E4M3FN>, tensor<256x39xf8E8M0FNU>
  return
}

// -----

func.func @offsets_scalar(%x: tensor<1000x256xbf16>, %offs: tensor<i32>) {
  // expected-error @+1 {{'mxmoe.quantize' op offsets must be a 1-D tensor of i32 group end offsets, got 'tensor<i32>'}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<i32>) {axis = 0 : i64} : tensor<1000x256xbf16> -> tensor<256x1248xf8E4M3FN>, tensor<256x39xf8E8M0FNU>
  return
}

// -----

// Index-typed offsets are not the i32 convention either.
func.func @offsets_index(%x: tensor<1000x256xbf16>, %offs: tensor<8xindex>) {
  // expected-error @+1 {{'mxmoe.quantize' op offsets must be a 1-D tensor of i32 group end offsets, got 'tensor<8xindex>'}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xindex>) {axis = 1 : i64} : tensor<1000x256xbf16> -> tensor<1000x256xf8E4M3FN>, tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

// Rowwise with row-major scales: the groups would not change anything.
func.func @offsets_rowwise_row_major(%x: tensor<1000x256xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op offsets have no effect on rowwise MX data with row-major or compact scales; remove them, or use blocked_128x4 scales for the M-grouped layout}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 1 : i64} : tensor<1000x256xbf16> -> tensor<1000x256xf8E4M3FN>, tensor<1000x8xf8E8M0FNU>
  return
}

// -----

// ... also with an explicit row_major encoding.
func.func @offsets_rowwise_explicit_row_major(%x: tensor<1000x256xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op offsets have no effect on rowwise MX data with row-major or compact scales; remove them, or use blocked_128x4 scales for the M-grouped layout}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 1 : i64} : tensor<1000x256xbf16> -> tensor<1000x256xf8E4M3FN>, tensor<1000x8xf8E8M0FNU, #mxmoe.scale_layout<row_major>>
  return
}

// -----

// The offsets type is written inside the parentheses.
func.func @offsets_type_missing(%x: tensor<1000x256xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{expected ':'}}
  %q, %s = mxmoe.quantize %x offsets(%offs) {axis = 0 : i64} : tensor<1000x256xbf16> -> tensor<256x1248xf8E4M3FN>, tensor<256x39xf8E8M0FNU>
  return
}

// -----

// Zero groups: the GPU kernels index the group table at G - 1 (found while
// triaging the fuzzer's dynamic-group-count crash).
func.func @offsets_zero_groups(%x: tensor<64x64xbf16>, %offs: tensor<0xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op offsets must have at least one entry (one end offset per group), got 'tensor<0xi32>'}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<0xi32>) {axis = 1 : i64}
      : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FN>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

// Constant token-group offsets past the input's tokens (jagged axis 0).
func.func @constant_offsets_past_tokens(%x: tensor<300x96xbf16>) {
  %offs = arith.constant dense<[100, 200, 301]> : tensor<3xi32>
  // expected-error @+1 {{'mxmoe.quantize' op constant offsets must not pass the 300 grouped rows: entry 2 is 301}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<3xi32>) {axis = 0 : i64}
      : tensor<300x96xbf16> -> tensor<96x384xf8E4M3FN>, tensor<96x12xf8E8M0FNU>
  return
}
