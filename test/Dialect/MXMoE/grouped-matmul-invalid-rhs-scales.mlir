// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.grouped_matmul 2D x 3D, rhs scales: row-major [G, N, K/32], or
// blocked per expert [G, roundUp(N, 128), roundUp(K/32, 4)] exactly.
// Here G = 8, N = 320, K = 256 (K/32 = 8); the lhs scales are valid.

// Scales of the transposed (dgrad) weight do not fit the forward GEMM.
func.func @row_major_shape(%a: tensor<1000x256xf8E4M3FN>, %as: tensor<1000x8xf8E8M0FNU>,
                           %w: tensor<8x320x256xf8E4M3FN>, %ws: tensor<8x256x10xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op rhs scales must have shape [8, 320, 8] (one row-major E8M0 scale per 32 elements along the contraction axis), got [8, 256, 10]}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<1000x256xf8E4M3FN>, tensor<1000x8xf8E8M0FNU>, tensor<8x320x256xf8E4M3FN>, tensor<8x256x10xf8E8M0FNU>, tensor<8xi32>) -> tensor<1000x320xbf16>
  return
}

// -----

// PyTorch's 2-D (G, Rp*Cp) form of 3-D operand scales is not accepted: the
// type keeps [G, Rp, Cp].
func.func @blocked_flattened(%a: tensor<1000x256xf8E4M3FN>, %as: tensor<1000x8xf8E8M0FNU>,
                             %w: tensor<8x320x256xf8E4M3FN>, %ws: tensor<8x3072xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op rhs scales must have rank 3, got rank 2}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<1000x256xf8E4M3FN>, tensor<1000x8xf8E8M0FNU>, tensor<8x320x256xf8E4M3FN>, tensor<8x3072xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8xi32>) -> tensor<1000x320xbf16>
  return
}

// -----

func.func @blocked_experts(%a: tensor<1000x256xf8E4M3FN>, %as: tensor<1000x8xf8E8M0FNU>,
                           %w: tensor<8x320x256xf8E4M3FN>, %ws: tensor<4x384x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op rhs scales must have 8 experts in dim 0, got 4}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<1000x256xf8E4M3FN>, tensor<1000x8xf8E8M0FNU>, tensor<8x320x256xf8E4M3FN>, tensor<4x384x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8xi32>) -> tensor<1000x320xbf16>
  return
}

// -----

// B-side scales are padded to 128 rows per expert (N = 320 -> 384).
func.func @blocked_rows(%a: tensor<1000x256xf8E4M3FN>, %as: tensor<1000x8xf8E8M0FNU>,
                        %w: tensor<8x320x256xf8E4M3FN>, %ws: tensor<8x320x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op rhs scales in the blocked_128x4 layout must have roundUp(R, 128) = 384 rows for R = 320 (rows padded to multiples of 128), got 320}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<1000x256xf8E4M3FN>, tensor<1000x8xf8E8M0FNU>, tensor<8x320x256xf8E4M3FN>, tensor<8x320x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8xi32>) -> tensor<1000x320xbf16>
  return
}

// -----

// Per-expert rhs scales are not M-grouped: a padded-up row count is wrong.
func.func @blocked_rows_overpadded(%a: tensor<1000x256xf8E4M3FN>, %as: tensor<1000x8xf8E8M0FNU>,
                                   %w: tensor<8x320x256xf8E4M3FN>, %ws: tensor<8x512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op rhs scales in the blocked_128x4 layout must have roundUp(R, 128) = 384 rows for R = 320 (rows padded to multiples of 128), got 512}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<1000x256xf8E4M3FN>, tensor<1000x8xf8E8M0FNU>, tensor<8x320x256xf8E4M3FN>, tensor<8x512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8xi32>) -> tensor<1000x320xbf16>
  return
}

// -----

// K = 320 (10 scale columns -> 12).
func.func @blocked_cols(%a: tensor<1000x320xf8E4M3FN>, %as: tensor<1000x10xf8E8M0FNU>,
                        %w: tensor<8x128x320xf8E4M3FN>, %ws: tensor<8x128x10xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op rhs scales in the blocked_128x4 layout must have roundUp(C, 4) = 12 columns for C = 10 scale columns (columns padded to multiples of 4), got 10}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<1000x320xf8E4M3FN>, tensor<1000x10xf8E8M0FNU>, tensor<8x128x320xf8E4M3FN>, tensor<8x128x10xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8xi32>) -> tensor<1000x128xbf16>
  return
}

// -----

func.func @per_k_group(%a: tensor<1000x256xf8E4M3FN>, %as: tensor<1000x8xf8E8M0FNU>,
                       %w: tensor<8x320x256xf8E4M3FN>, %ws: tensor<8x384x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op rhs scales cannot use the per_k_group layout here: per_k_group is for token groups along the contraction axis (mxmoe.quantize with offsets and axis = 0, or the 2D x 2D grouped matmul)}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<1000x256xf8E4M3FN>, tensor<1000x8xf8E8M0FNU>, tensor<8x320x256xf8E4M3FN>, tensor<8x384x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<8xi32>) -> tensor<1000x320xbf16>
  return
}
