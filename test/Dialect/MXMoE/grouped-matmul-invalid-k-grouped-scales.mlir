// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.grouped_matmul 2D x 2D (weight gradient), scales of both operands:
// row-major [R, T/32], or per_k_group blocked [roundUp(R, 128), Qp] with Qp a
// multiple of 4 and >= roundUp(T/32, 4). Here T = 1248 (T/32 = 39), G = 8.

func.func @lhs_plain_blocked(%g: tensor<256x1248xf8E4M3FN>, %gs: tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                             %x: tensor<512x1248xf8E4M3FN>, %xs: tensor<512x39xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op lhs scales with groups along the contraction (token) axis must use #mxmoe.scale_layout<blocked_128x4, per_k_group>}}
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<256x1248xf8E4M3FN>, tensor<256x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<512x1248xf8E4M3FN>, tensor<512x39xf8E8M0FNU>, tensor<8xi32>) -> tensor<8x256x512xf32>
  return
}

// -----

func.func @rhs_plain_blocked(%g: tensor<256x1248xf8E4M3FN>, %gs: tensor<256x39xf8E8M0FNU>,
                             %x: tensor<512x1248xf8E4M3FN>, %xs: tensor<512x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op rhs scales with groups along the contraction (token) axis must use #mxmoe.scale_layout<blocked_128x4, per_k_group>}}
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<256x1248xf8E4M3FN>, tensor<256x39xf8E8M0FNU>, tensor<512x1248xf8E4M3FN>, tensor<512x40xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8xi32>) -> tensor<8x256x512xf32>
  return
}

// -----

func.func @lhs_cols_not_multiple_of_4(%g: tensor<256x1248xf8E4M3FN>, %gs: tensor<256x45xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
                                      %x: tensor<512x1248xf8E4M3FN>, %xs: tensor<512x39xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op lhs scales in the per_k_group blocked_128x4 layout must have a multiple of 4 columns (every group is padded to 4 scale columns), got 45}}
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<256x1248xf8E4M3FN>, tensor<256x45xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<512x1248xf8E4M3FN>, tensor<512x39xf8E8M0FNU>, tensor<8xi32>) -> tensor<8x256x512xf32>
  return
}

// -----

func.func @rhs_cols_too_few(%g: tensor<256x1248xf8E4M3FN>, %gs: tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
                            %x: tensor<512x1248xf8E4M3FN>, %xs: tensor<512x36xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op rhs scales in the per_k_group blocked_128x4 layout need at least roundUp(C, 4) = 40 columns for C = 39 scale columns, got 36}}
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<256x1248xf8E4M3FN>, tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<512x1248xf8E4M3FN>, tensor<512x36xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<8xi32>) -> tensor<8x256x512xf32>
  return
}

// -----

// M' = 200 rows are padded to exactly 256.
func.func @lhs_rows(%g: tensor<200x1248xf8E4M3FN>, %gs: tensor<200x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
                    %x: tensor<512x1248xf8E4M3FN>, %xs: tensor<512x39xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op lhs scales in the blocked_128x4 layout must have roundUp(R, 128) = 256 rows for R = 200 (rows padded to multiples of 128), got 200}}
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<200x1248xf8E4M3FN>, tensor<200x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<512x1248xf8E4M3FN>, tensor<512x39xf8E8M0FNU>, tensor<8xi32>) -> tensor<8x200x512xf32>
  return
}

// -----

// Row-major scales follow the padded token axis (T/32 = 39).
func.func @rhs_row_major_shape(%g: tensor<256x1248xf8E4M3FN>, %gs: tensor<256x39xf8E8M0FNU>,
                               %x: tensor<512x1248xf8E4M3FN>, %xs: tensor<512x31xf8E8M0FNU>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op rhs scales must have shape [512, 39] (one row-major E8M0 scale per 32 elements along the contraction axis), got [512, 31]}}
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<256x1248xf8E4M3FN>, tensor<256x39xf8E8M0FNU>, tensor<512x1248xf8E4M3FN>, tensor<512x31xf8E8M0FNU>, tensor<8xi32>) -> tensor<8x256x512xf32>
  return
}
