// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.quantize: axis in [0, rank) (no negative, Python-style axes), and
// not 0 for a 3-D [E, N, K] input (no scale blocks across experts).

func.func @axis_2_of_rank_2(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op axis 2 is out of range for a rank-2 input}}
  %q, %s = mxmoe.quantize %x {axis = 2 : i64} : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>
  return
}

// -----

func.func @axis_negative(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op axis -1 is out of range for a rank-2 input}}
  %q, %s = mxmoe.quantize %x {axis = -1 : i64} : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>
  return
}

// -----

func.func @axis_3_of_rank_3(%w: tensor<4x64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op axis 3 is out of range for a rank-3 input}}
  %q, %s = mxmoe.quantize %w {axis = 3 : i64} : tensor<4x64x64xbf16> -> tensor<4x64x64xf8E4M3FN>, tensor<4x64x2xf8E8M0FNU>
  return
}


// -----

// A 3-D [E, N, K] weight is quantized per expert; axis 0 would share a scale
// across 32 experts (even with the axis-moved-last data shape).
func.func @axis_0_of_rank_3(%w: tensor<64x64x128xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op 3-D [E, N, K] tensors are quantized along N (axis 1) or K (axis 2), not across experts (axis 0)}}
  %q, %s = mxmoe.quantize %w {axis = 0 : i64} : tensor<64x64x128xbf16> -> tensor<64x128x64xf8E4M3FN>, tensor<64x128x2xf8E8M0FNU>
  return
}
