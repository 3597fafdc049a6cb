// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.grouped_matmul operands: lhs 2-D, rhs 3-D (2D x 3D) or 2-D (2D x 2D),
// both MX or both the same high-precision type (GroupedMatmulOp::verify, ODS).

func.func @lhs_rank_3(%a: tensor<2x64x64xbf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op lhs must be 2-D ([M, K] or [M', T]), got rank 3}}
  %o = mxmoe.grouped_matmul %a, %w offsets %offs : (tensor<2x64x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @rhs_rank_1(%a: tensor<64x64xbf16>, %w: tensor<64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op rhs must be 3-D [G, N, K] (2D x 3D -> 2D) or 2-D [N', T] (2D x 2D -> 3D), got rank 1}}
  %o = mxmoe.grouped_matmul %a, %w offsets %offs : (tensor<64x64xbf16>, tensor<64xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @rhs_rank_4(%a: tensor<64x64xbf16>, %w: tensor<2x4x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op rhs must be 3-D [G, N, K] (2D x 3D -> 2D) or 2-D [N', T] (2D x 2D -> 3D), got rank 4}}
  %o = mxmoe.grouped_matmul %a, %w offsets %offs : (tensor<64x64xbf16>, tensor<2x4x32x64xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

// MX x bf16 is not a supported mix (quantize the bf16 side first).
func.func @mx_times_bf16(%a: tensor<64x64xf8E4M3FN>, %as: tensor<64x2xf8E8M0FNU>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op lhs and rhs must both be MX or both high precision, got 'f8E4M3FN' and 'bf16'}}
  %o = mxmoe.grouped_matmul %a scales %as, %w offsets %offs : (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @bf16_times_mx(%a: tensor<64x64xbf16>, %w: tensor<4x32x64xf4E2M1FN>, %ws: tensor<4x32x2xf8E8M0FNU>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op lhs and rhs must both be MX or both high precision, got 'bf16' and 'f4E2M1FN'}}
  %o = mxmoe.grouped_matmul %a, %w scales %ws offsets %offs : (tensor<64x64xbf16>, tensor<4x32x64xf4E2M1FN>, tensor<4x32x2xf8E8M0FNU>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

// Two different MX types may be mixed; two different high-precision types
// may not.
func.func @bf16_times_f16(%a: tensor<64x64xbf16>, %w: tensor<4x32x64xf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op high-precision lhs and rhs element types differ: 'bf16' vs 'f16'}}
  %o = mxmoe.grouped_matmul %a, %w offsets %offs : (tensor<64x64xbf16>, tensor<4x32x64xf16>, tensor<4xi32>) -> tensor<64x32xf32>
  return
}

// -----

func.func @lhs_integer(%a: tensor<64x64xi8>, %w: tensor<4x32x64xi8>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op operand #0 must be ranked tensor of an MX element type or bf16/f16/f32 values, but got 'tensor<64x64xi8>'}}
  %o = mxmoe.grouped_matmul %a, %w offsets %offs : (tensor<64x64xi8>, tensor<4x32x64xi8>, tensor<4xi32>) -> tensor<64x32xf32>
  return
}

// -----

// ODS operand numbers count the operands actually present (here lhs,
// lhs_scales, rhs: the rhs is operand #2).
func.func @rhs_integer_after_scales(%a: tensor<64x64xf8E4M3FN>, %as: tensor<64x2xf8E8M0FNU>, %w: tensor<4x32x64xi8>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op operand #2 must be ranked tensor of an MX element type or bf16/f16/f32 values, but got 'tensor<4x32x64xi8>'}}
  %o = mxmoe.grouped_matmul %a scales %as, %w offsets %offs : (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>, tensor<4x32x64xi8>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

// The functional type lists every operand present, scales included.
func.func @scales_type_missing(%a: tensor<64x64xf8E4M3FN>, %as: tensor<64x2xf8E8M0FNU>, %w: tensor<4x32x64xf8E4M3FN>, %ws: tensor<4x32x2xf8E8M0FNU>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{custom op 'mxmoe.grouped_matmul' number of operands and types do not match: got 5 operands and 3 types}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs : (tensor<64x64xf8E4M3FN>, tensor<4x32x64xf8E4M3FN>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}
