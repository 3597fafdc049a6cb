// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.grouped_matmul 2D x 3D, lhs scales: row-major [M, K/32], or the
// M-grouped blocked layout [Mp, roundUp(K/32, 4)] with Mp a multiple of 128
// and Mp >= roundUp(M, 128). Here M = 1000, K = 256 (K/32 = 8), G = 8.

func.func @row_major_shape(%a: tensor<1000x256xf8E4M3FN>, %as: tensor<1000x16xf8E8M0FNU>,
                           %w: tensor<8x320x256xf8E4M3FN>, %ws: tensor<8x320x8xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op lhs scales must have shape [1000, 8] (one row-major E8M0 scale per 32 elements along the contraction axis), got [1000, 16]}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<1000x256xf8E4M3FN>, tensor<1000x16xf8E8M0FNU>, tensor<8x320x256xf8E4M3FN>, tensor<8x320x8xf8E8M0FNU>, tensor<8xi32>) -> tensor<1000x320xbf16>
  return
}

// -----

// Blocked lhs scales are M-grouped: each group is padded to 128 rows.
func.func @m_grouped_rows_not_multiple_of_128(%a: tensor<1000x256xf8E4M3FN>, %as: tensor<1000x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                                              %w: tensor<8x320x256xf8E4M3FN>, %ws: tensor<8x320x8xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op lhs scales in the M-grouped blocked_128x4 layout must have a multiple of 128 rows (every group is padded to 128 rows), got 1000}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<1000x256xf8E4M3FN>, tensor<1000x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8x320x256xf8E4M3FN>, tensor<8x320x8xf8E8M0FNU>, tensor<8xi32>) -> tensor<1000x320xbf16>
  return
}

// -----

func.func @m_grouped_rows_too_few(%a: tensor<1000x256xf8E4M3FN>, %as: tensor<768x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                                  %w: tensor<8x320x256xf8E4M3FN>, %ws: tensor<8x320x8xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op lhs scales in the M-grouped blocked_128x4 layout need at least roundUp(M, 128) = 1024 rows for M = 1000, got 768}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<1000x256xf8E4M3FN>, tensor<768x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8x320x256xf8E4M3FN>, tensor<8x320x8xf8E8M0FNU>, tensor<8xi32>) -> tensor<1000x320xbf16>
  return
}

// -----

// K = 320: K/32 = 10 scale columns, padded to 12.
func.func @m_grouped_cols(%a: tensor<1000x320xf8E4M3FN>, %as: tensor<1920x10xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                          %w: tensor<8x128x320xf8E4M3FN>, %ws: tensor<8x128x10xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op lhs scales in the blocked_128x4 layout must have roundUp(C, 4) = 12 columns for C = 10 scale columns (columns padded to multiples of 4), got 10}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<1000x320xf8E4M3FN>, tensor<1920x10xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8x128x320xf8E4M3FN>, tensor<8x128x10xf8E8M0FNU>, tensor<8xi32>) -> tensor<1000x128xbf16>
  return
}

// -----

// The 2D x 3D GEMM groups rows, not the contraction axis.
func.func @per_k_group(%a: tensor<1000x256xf8E4M3FN>, %as: tensor<1024x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
                       %w: tensor<8x320x256xf8E4M3FN>, %ws: tensor<8x320x8xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op lhs scales cannot use the per_k_group layout here: per_k_group is for token groups along the contraction axis (mxmoe.quantize with offsets and axis = 0, or the 2D x 2D grouped matmul)}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<1000x256xf8E4M3FN>, tensor<1024x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<8x320x256xf8E4M3FN>, tensor<8x320x8xf8E8M0FNU>, tensor<8xi32>) -> tensor<1000x320xbf16>
  return
}

// -----

func.func @blocked_rank_3(%a: tensor<1000x256xf8E4M3FN>, %as: tensor<8x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                          %w: tensor<8x320x256xf8E4M3FN>, %ws: tensor<8x320x8xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op lhs scales must have rank 2, got rank 3}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<1000x256xf8E4M3FN>, tensor<8x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8x320x256xf8E4M3FN>, tensor<8x320x8xf8E8M0FNU>, tensor<8xi32>) -> tensor<1000x320xbf16>
  return
}
