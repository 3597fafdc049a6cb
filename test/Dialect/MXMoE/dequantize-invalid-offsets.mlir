// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.dequantize with offsets: the inverse of the grouped mxmoe.quantize
// layouts, with the same rules.

func.func @offsets_3d(%q: tensor<4x64x128xf8E4M3FN>, %s: tensor<4x64x4xf8E8M0FNU>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.dequantize' op offsets are only supported for a 2-D result (token groups along dim 0)}}
  %x = mxmoe.dequantize %q, %s offsets(%offs : tensor<4xi32>) {axis = 2 : i64} : tensor<4x64x128xf8E4M3FN>, tensor<4x64x4xf8E8M0FNU> -> tensor<4x64x128xbf16>
  return
}

// -----

func.func @offsets_rank_2(%q: tensor<256x1248xf8E4M3FN>, %s: tensor<256x39xf8E8M0FNU>, %offs: tensor<8x1xi32>) {
  // expected-error @+1 {{'mxmoe.dequantize' op offsets must be a 1-D tensor of i32 group end offsets, got 'tensor<8x1xi32>'}}
  %x = mxmoe.dequantize %q, %s offsets(%offs : tensor<8x1xi32>) {axis = 0 : i64} : tensor<256x1248xf8E4M3FN>, tensor<256x39xf8E8M0FNU> -> tensor<1000x256xbf16>
  return
}

// -----

func.func @offsets_rowwise_row_major(%q: tensor<1000x256xf8E4M3FN>, %s: tensor<1000x8xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.dequantize' op offsets have no effect on rowwise MX data with row-major or compact scales; remove them, or use blocked_128x4 scales for the M-grouped layout}}
  %x = mxmoe.dequantize %q, %s offsets(%offs : tensor<8xi32>) {axis = 1 : i64} : tensor<1000x256xf8E4M3FN>, tensor<1000x8xf8E8M0FNU> -> tensor<1000x256xbf16>
  return
}

// -----

func.func @padded_axis_not_multiple_of_32(%q: tensor<256x1000xf8E4M3FN>, %s: tensor<256x31xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.dequantize' op the padded token axis of the data (1000) must be a multiple of 32 (every token group is padded to whole 32-blocks)}}
  %x = mxmoe.dequantize %q, %s offsets(%offs : tensor<8xi32>) {axis = 0 : i64} : tensor<256x1000xf8E4M3FN>, tensor<256x31xf8E8M0FNU> -> tensor<1000x256xbf16>
  return
}

// -----

// The result cannot have more tokens than the data stores.
func.func @padded_axis_too_short(%q: tensor<256x960xf8E4M3FN>, %s: tensor<256x30xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.dequantize' op the padded token axis of the data (960) is shorter than the 1000 tokens of the result}}
  %x = mxmoe.dequantize %q, %s offsets(%offs : tensor<8xi32>) {axis = 0 : i64} : tensor<256x960xf8E4M3FN>, tensor<256x30xf8E8M0FNU> -> tensor<1000x256xbf16>
  return
}

// -----

func.func @jagged_plain_blocked(%q: tensor<256x1248xf8E4M3FN>, %s: tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.dequantize' op scales with groups along the contraction (token) axis must use #mxmoe.scale_layout<blocked_128x4, per_k_group>}}
  %x = mxmoe.dequantize %q, %s offsets(%offs : tensor<8xi32>) {axis = 0 : i64} : tensor<256x1248xf8E4M3FN>, tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<1000x256xbf16>
  return
}

// -----

func.func @m_grouped_rows(%q: tensor<1000x256xf8E4M3FN>, %s: tensor<1000x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.dequantize' op scales in the M-grouped blocked_128x4 layout must have a multiple of 128 rows (every group is padded to 128 rows), got 1000}}
  %x = mxmoe.dequantize %q, %s offsets(%offs : tensor<8xi32>) {axis = 1 : i64} : tensor<1000x256xf8E4M3FN>, tensor<1000x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<1000x256xbf16>
  return
}

// -----

func.func @offsets_zero_groups(%q: tensor<64x64xf8E4M3FN>, %s: tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, %offs: tensor<0xi32>) {
  // expected-error @+1 {{'mxmoe.dequantize' op offsets must have at least one entry (one end offset per group), got 'tensor<0xi32>'}}
  %x = mxmoe.dequantize %q, %s offsets(%offs : tensor<0xi32>) {axis = 1 : i64} : tensor<64x64xf8E4M3FN>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<64x64xbf16>
  return
}
