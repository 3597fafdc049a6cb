// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// Verifier rules of mxmoe.quantize_weight (MXMoEMXOps.cpp:
// QuantizeWeightOp::verify; the shapes and layouts of each orientation are
// mxmoe.quantize's).

func.func @tile_not_square(%w: tensor<4x256x256xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize_weight' op scale_tile must be a square [t, t] (a tile is then the same block of the weight along K and along N, so one quantization serves both orientations), got [1, 128]}}
  %q, %s, %qt, %st = mxmoe.quantize_weight %w {scale_tile = array<i64: 1, 128>}
      : tensor<4x256x256xbf16> -> tensor<4x256x256xf8E4M3FN>, tensor<4x256x8xf8E8M0FNU>,
        tensor<4x256x256xf8E4M3FN>, tensor<4x256x8xf8E8M0FNU>
  return
}

// -----

func.func @tile_not_multiple_of_32(%w: tensor<4x256x256xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize_weight' op scale_tile must be [r, c] with r >= 1 rows and c a multiple of 32 along the quantized axis (one scale per r x c tile of the data), got [100, 100]}}
  %q, %s, %qt, %st = mxmoe.quantize_weight %w {scale_tile = array<i64: 100, 100>}
      : tensor<4x256x256xbf16> -> tensor<4x256x256xf8E4M3FN>, tensor<4x256x8xf8E8M0FNU>,
        tensor<4x256x256xf8E4M3FN>, tensor<4x256x8xf8E8M0FNU>
  return
}

// -----

func.func @n_not_multiple_of_32(%w: tensor<4x200x256xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize_weight' op quantized axis 1 has size 200, which is not a multiple of the block size 32}}
  %q, %s, %qt, %st = mxmoe.quantize_weight %w {scale_tile = array<i64: 128, 128>}
      : tensor<4x200x256xbf16> -> tensor<4x200x256xf8E4M3FN>, tensor<4x200x8xf8E8M0FNU>,
        tensor<4x256x200xf8E4M3FN>, tensor<4x256x7xf8E8M0FNU>
  return
}

// -----

func.func @transposed_not_transposed(%w: tensor<4x128x256xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize_weight' op transposed_data shape [4, 128, 256] must be the input shape [4, 128, 256] with axis 1 moved last: expected [4, 256, 128]}}
  %q, %s, %qt, %st = mxmoe.quantize_weight %w {scale_tile = array<i64: 128, 128>}
      : tensor<4x128x256xbf16> -> tensor<4x128x256xf8E4M3FN>, tensor<4x128x8xf8E8M0FNU>,
        tensor<4x128x256xf8E4M3FN>, tensor<4x256x4xf8E8M0FNU>
  return
}

// -----

func.func @transposed_scales_wrong(%w: tensor<4x128x256xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize_weight' op transposed_scales must have shape [4, 256, 4] (one row-major E8M0 scale per 32 elements along the contraction axis), got [4, 256, 8]}}
  %q, %s, %qt, %st = mxmoe.quantize_weight %w {scale_tile = array<i64: 128, 128>}
      : tensor<4x128x256xbf16> -> tensor<4x128x256xf8E4M3FN>, tensor<4x128x8xf8E8M0FNU>,
        tensor<4x256x128xf8E4M3FN>, tensor<4x256x8xf8E8M0FNU>
  return
}

// -----

func.func @element_types_differ(%w: tensor<4x128x256xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize_weight' op data and transposed_data must have the same element type, got 'f8E4M3FN' and 'f8E5M2'}}
  %q, %s, %qt, %st = mxmoe.quantize_weight %w {scale_tile = array<i64: 128, 128>}
      : tensor<4x128x256xbf16> -> tensor<4x128x256xf8E4M3FN>, tensor<4x128x8xf8E8M0FNU>,
        tensor<4x256x128xf8E5M2>, tensor<4x256x4xf8E8M0FNU>
  return
}

// -----

func.func @recorded_tile_differs(%w: tensor<4x128x256xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize_weight' op scales record tile = [1, 128] but the quantization's scale_tile is [128, 128]; they must be equal (or drop the scales' tile)}}
  %q, %s, %qt, %st = mxmoe.quantize_weight %w {scale_tile = array<i64: 128, 128>}
      : tensor<4x128x256xbf16> -> tensor<4x128x256xf8E4M3FN>, tensor<4x128x8xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>,
        tensor<4x256x128xf8E4M3FN>, tensor<4x256x4xf8E8M0FNU>
  return
}

// -----

func.func @rank_one(%w: tensor<256xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize_weight' op expects a 2-D [M, K] or 3-D [E, N, K] input, got rank 1}}
  %q, %s, %qt, %st = mxmoe.quantize_weight %w {scale_tile = array<i64: 128, 128>}
      : tensor<256xbf16> -> tensor<256xf8E4M3FN>, tensor<8xf8E8M0FNU>,
        tensor<256xf8E4M3FN>, tensor<8xf8E8M0FNU>
  return
}
