// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// Verifier rules of mxmoe.quantize's scale_tile and of compact scales
// (MXMoEVerifiers.cpp: verifyScaleTile, verifyCompactScaleShape).

func.func @tile_not_multiple_of_32(%x: tensor<64x256xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scale_tile must be [r, c] with r >= 1 rows and c a multiple of 32 along the quantized axis (one scale per r x c tile of the data), got [1, 100]}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64, scale_tile = array<i64: 1, 100>}
      : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
  return
}

// -----

func.func @tile_zero_rows(%x: tensor<64x256xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scale_tile must be [r, c] with r >= 1 rows and c a multiple of 32 along the quantized axis (one scale per r x c tile of the data), got [0, 128]}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64, scale_tile = array<i64: 0, 128>}
      : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
  return
}

// -----

func.func @tile_three_entries(%x: tensor<64x256xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scale_tile must have two entries [r, c], got 3}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64, scale_tile = array<i64: 1, 128, 1>}
      : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
  return
}

// -----

func.func @multi_row_tile_with_groups(%x: tensor<1000x64xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op scale_tile [128, 128] has more than one row, which token groups (offsets) do not allow: multi-row tiles are for weights; quantize activations and gradients with [1, c] tiles}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 128, 128>}
      : tensor<1000x64xbf16> -> tensor<64x1248xf8E4M3FN>, tensor<64x39xf8E8M0FNU>
  return
}

// -----

func.func @compact_tile_mismatch(%x: tensor<64x256xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op compact scales have tile = [128, 128] but the quantization's scale_tile is [1, 128]; they must be equal}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, tensor<1x2xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
  return
}

// -----

// Without scale_tile the tile is [1, 32], which a compact [1, 128] layout contradicts.
func.func @compact_without_scale_tile(%x: tensor<64x256xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op compact scales have tile = [1, 128] but the quantization's scale_tile is [1, 32]; they must be equal}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64}
      : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, tensor<64x2xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128]>>
  return
}

// -----

func.func @compact_shape(%x: tensor<64x2880xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op compact scales must have shape [64, 23] (one E8M0 byte per [1, 128] tile of the data [64, 2880]), got [64, 22]}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<64x2880xbf16> -> tensor<64x2880xf8E4M3FN>, tensor<64x22xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128]>>
  return
}

// -----

func.func @compact_weight_shape(%w: tensor<4x200x256xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op compact scales must have shape [4, 2, 2] (one E8M0 byte per [128, 128] tile of the data [4, 200, 256]), got [4, 1, 2]}}
  %q, %s = mxmoe.quantize %w {axis = 2 : i64, scale_tile = array<i64: 128, 128>}
      : tensor<4x200x256xbf16> -> tensor<4x200x256xf8E4M3FN>, tensor<4x1x2xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
  return
}

// -----

func.func @compact_jagged_needs_per_k_group(%x: tensor<1000x64xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op compact scales along a jagged token axis must be per_k_group (windows restart at every group)}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<1000x64xbf16> -> tensor<64x1248xf8E4M3FN>, tensor<64x15xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128]>>
  return
}

// -----

func.func @compact_per_k_group_without_groups(%x: tensor<64x256xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op per_k_group compact scales need token groups along the quantized axis (offsets with axis = 0)}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, tensor<64x2xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128], per_k_group>>
  return
}

// -----

func.func @compact_jagged_too_few_windows(%x: tensor<1000x64xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op per_k_group compact scales need at least ceil(T / 128) = 8 window columns for T = 1000 tokens, got 7}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<1000x64xbf16> -> tensor<64x1248xf8E4M3FN>, tensor<64x7xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128], per_k_group>>
  return
}

// -----

func.func @compact_jagged_too_many_windows(%x: tensor<100x64xbf16>, %offs: tensor<2xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op per_k_group compact scales have 6 window columns, more than the 5 32-token blocks of the padded token axis (every window holds at least one)}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<2xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<100x64xbf16> -> tensor<64x160xf8E4M3FN>, tensor<64x6xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128], per_k_group>>
  return
}

// -----

func.func @compact_m_grouped(%x: tensor<1000x256xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op offsets have no effect on rowwise MX data with row-major or compact scales; remove them, or use blocked_128x4 scales for the M-grouped layout}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<1000x256xbf16> -> tensor<1000x256xf8E4M3FN>, tensor<1000x2xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128]>>
  return
}

// -----

// Compact scales feed quantize and dequantize only; the GEMM and the swizzle
// take MX scales (whose 1x32 slots hold the tile's scale).
func.func @swizzle_compact(%s: tensor<64x2xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128]>>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op source cannot be in the compact layout here (one byte per scale tile: only mxmoe.quantize writes it and mxmoe.dequantize reads it); use row-major or blocked_128x4 scales, whose 1x32 slots hold the tile's scale}}
  %b = mxmoe.swizzle_scales %s
      : tensor<64x2xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128]>> -> tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

// Row-major and blocked scales may record the tile their 1x32 slots share;
// it must be the quantization's.
func.func @blocked_tile_mismatch(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales record tile = [1, 64] but the quantization's scale_tile is [1, 128]; they must be equal (or drop the scales' tile)}}
  %d, %s = mxmoe.quantize %x {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<128x256xbf16> -> tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 64]>>
  return
}

// -----

// Without scale_tile the quantization is MX32 ([1, 32]): a recorded [1, 128]
// tile would be a false promise.
func.func @row_major_tile_without_scale_tile(%x: tensor<128x256xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales record tile = [1, 128] but the quantization's scale_tile is [1, 32]; they must be equal (or drop the scales' tile)}}
  %d, %s = mxmoe.quantize %x {axis = 1 : i64}
      : tensor<128x256xbf16> -> tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
  return
}
