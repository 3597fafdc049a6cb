// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.quantize rowwise (axis = 1) with offsets and blocked scales: the
// M-grouped layout, rows a multiple of 128 and >= roundUp(M, 128), columns
// exactly roundUp(K/32, 4).

func.func @rows_not_multiple_of_128(%x: tensor<1000x256xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales in the M-grouped blocked_128x4 layout must have a multiple of 128 rows (every group is padded to 128 rows), got 1000}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 1 : i64} : tensor<1000x256xbf16> -> tensor<1000x256xf8E4M3FN>, tensor<1000x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

func.func @rows_too_few(%x: tensor<1000x256xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales in the M-grouped blocked_128x4 layout need at least roundUp(M, 128) = 1024 rows for M = 1000, got 896}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 1 : i64} : tensor<1000x256xbf16> -> tensor<1000x256xf8E4M3FN>, tensor<896x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

// The columns are not grouped: exactly roundUp(C, 4).
func.func @cols_overpadded(%x: tensor<1000x320xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales in the blocked_128x4 layout must have roundUp(C, 4) = 12 columns for C = 10 scale columns (columns padded to multiples of 4), got 16}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 1 : i64} : tensor<1000x320xbf16> -> tensor<1000x320xf8E4M3FN>, tensor<1920x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

// Row groups are not K groups.
func.func @per_k_group_rowwise(%x: tensor<1000x256xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales cannot use the per_k_group layout here: per_k_group is for token groups along the contraction axis (mxmoe.quantize with offsets and axis = 0, or the 2D x 2D grouped matmul)}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 1 : i64} : tensor<1000x256xbf16> -> tensor<1000x256xf8E4M3FN>, tensor<1024x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return
}

// -----

// K is still quantized in whole blocks.
func.func @k_not_multiple_of_32(%x: tensor<1000x200xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op quantized axis 1 has size 200, which is not a multiple of the block size 32}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 1 : i64} : tensor<1000x200xbf16> -> tensor<1000x200xf8E4M3FN>, tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}
