// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// Verifier rules of mxmoe.requantize (MXMoEMXOps.cpp: RequantizeOp::verify).

func.func @fp4_data(%q: tensor<64x256xf4E2M1FN>, %s: tensor<64x8xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.requantize' op requantize supports FP8 data (f8E4M3FN, f8E5M2), got 'f4E2M1FN'}}
  %q2, %s2 = mxmoe.requantize %q, %s {scale_tile = array<i64: 1, 128>}
      : tensor<64x256xf4E2M1FN>, tensor<64x8xf8E8M0FNU> -> tensor<64x256xf4E2M1FN>, tensor<64x8xf8E8M0FNU>
  return
}

// -----

func.func @tile_not_multiple_of_32(%q: tensor<64x256xf8E4M3FN>, %s: tensor<64x8xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.requantize' op scale_tile must be [r, c] with r >= 1 rows and c a multiple of 32 along the quantized axis (one scale per r x c tile of the data), got [1, 100]}}
  %q2, %s2 = mxmoe.requantize %q, %s {scale_tile = array<i64: 1, 100>}
      : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
  return
}

// -----

func.func @input_scales_tiled(%q: tensor<64x256xf8E4M3FN>, %s: tensor<64x8xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>) {
  // expected-error @+1 {{'mxmoe.requantize' op scales must be row-major 1x32 MX scales (no layout or tile), got 'tensor<64x8xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>'}}
  %q2, %s2 = mxmoe.requantize %q, %s {scale_tile = array<i64: 1, 128>}
      : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
  return
}

// -----

func.func @input_scales_shape(%q: tensor<64x256xf8E4M3FN>, %s: tensor<64x4xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.requantize' op scales must have shape [64, 8] (one per 1x32 block of the data), got [64, 4]}}
  %q2, %s2 = mxmoe.requantize %q, %s {scale_tile = array<i64: 1, 128>}
      : tensor<64x256xf8E4M3FN>, tensor<64x4xf8E8M0FNU> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
  return
}

// -----

func.func @result_type(%q: tensor<64x256xf8E4M3FN>, %s: tensor<64x8xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.requantize' op tiled_data must have the data's type 'tensor<64x256xf8E4M3FN>', got 'tensor<64x256xf8E5M2>'}}
  %q2, %s2 = mxmoe.requantize %q, %s {scale_tile = array<i64: 1, 128>}
      : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU> -> tensor<64x256xf8E5M2>, tensor<64x8xf8E8M0FNU>
  return
}

// -----

func.func @blocked_result(%q: tensor<64x256xf8E4M3FN>, %s: tensor<64x8xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.requantize' op tiled_scales are row-major or compact; convert row-major ones with mxmoe.swizzle_scales}}
  %q2, %s2 = mxmoe.requantize %q, %s {scale_tile = array<i64: 1, 128>}
      : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU> -> tensor<64x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

func.func @compact_shape(%q: tensor<4x200x2880xf8E4M3FN>, %s: tensor<4x200x90xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.requantize' op compact scales must have shape [4, 2, 23] (one E8M0 byte per [128, 128] tile of the data [4, 200, 2880]), got [4, 2, 22]}}
  %q2, %s2 = mxmoe.requantize %q, %s {scale_tile = array<i64: 128, 128>}
      : tensor<4x200x2880xf8E4M3FN>, tensor<4x200x90xf8E8M0FNU>
      -> tensor<4x200x2880xf8E4M3FN>, tensor<4x2x22xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
  return
}

// -----

func.func @recorded_tile(%q: tensor<64x256xf8E4M3FN>, %s: tensor<64x8xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.requantize' op scales record tile = [1, 64] but the quantization's scale_tile is [1, 128]; they must be equal (or drop the scales' tile)}}
  %q2, %s2 = mxmoe.requantize %q, %s {scale_tile = array<i64: 1, 128>}
      : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 64]>>
  return
}
