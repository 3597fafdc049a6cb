// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.grouped_matmul scale operands: MX operands need both scales, high
// precision operands take none; scales are f8E8M0FNU with a scale-layout
// encoding (if any).

func.func @lhs_scales_missing(%a: tensor<64x64xf8E4M3FN>, %w: tensor<4x32x64xf8E4M3FN>, %ws: tensor<4x32x2xf8E8M0FNU>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op MX operands need their f8E8M0FNU scales (lhs has none; write `%x scales %s`)}}
  %o = mxmoe.grouped_matmul %a, %w scales %ws offsets %offs : (tensor<64x64xf8E4M3FN>, tensor<4x32x64xf8E4M3FN>, tensor<4x32x2xf8E8M0FNU>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @rhs_scales_missing(%a: tensor<64x64xf8E4M3FN>, %as: tensor<64x2xf8E8M0FNU>, %w: tensor<4x32x64xf8E4M3FN>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op MX operands need their f8E8M0FNU scales (rhs has none; write `%x scales %s`)}}
  %o = mxmoe.grouped_matmul %a scales %as, %w offsets %offs : (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>, tensor<4x32x64xf8E4M3FN>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

// With neither scale the lhs is reported.
func.func @both_scales_missing(%a: tensor<64x64xf8E4M3FN>, %w: tensor<4x32x64xf8E4M3FN>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op MX operands need their f8E8M0FNU scales (lhs has none; write `%x scales %s`)}}
  %o = mxmoe.grouped_matmul %a, %w offsets %offs : (tensor<64x64xf8E4M3FN>, tensor<4x32x64xf8E4M3FN>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @scales_on_bf16(%a: tensor<64x64xbf16>, %as: tensor<64x2xf8E8M0FNU>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op scales are only allowed with MX operands, but the operands are 'bf16'}}
  %o = mxmoe.grouped_matmul %a scales %as, %w offsets %offs : (tensor<64x64xbf16>, tensor<64x2xf8E8M0FNU>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @rhs_scales_on_f32(%a: tensor<64x64xf32>, %w: tensor<4x32x64xf32>, %ws: tensor<4x32x2xf8E8M0FNU>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op scales are only allowed with MX operands, but the operands are 'f32'}}
  %o = mxmoe.grouped_matmul %a, %w scales %ws offsets %offs : (tensor<64x64xf32>, tensor<4x32x64xf32>, tensor<4x32x2xf8E8M0FNU>, tensor<4xi32>) -> tensor<64x32xf32>
  return
}

// -----

func.func @lhs_scales_i8(%a: tensor<64x64xf8E4M3FN>, %as: tensor<64x2xi8>, %w: tensor<4x32x64xf8E4M3FN>, %ws: tensor<4x32x2xf8E8M0FNU>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op lhs scales element type must be f8E8M0FNU (E8M0 scales), got 'i8'}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs : (tensor<64x64xf8E4M3FN>, tensor<64x2xi8>, tensor<4x32x64xf8E4M3FN>, tensor<4x32x2xf8E8M0FNU>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @rhs_scales_bf16(%a: tensor<64x64xf8E4M3FN>, %as: tensor<64x2xf8E8M0FNU>, %w: tensor<4x32x64xf8E4M3FN>, %ws: tensor<4x32x2xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op rhs scales element type must be f8E8M0FNU (E8M0 scales), got 'bf16'}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs : (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>, tensor<4x32x64xf8E4M3FN>, tensor<4x32x2xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @lhs_scales_foreign_encoding(%a: tensor<64x64xf8E4M3FN>, %as: tensor<64x2xf8E8M0FNU, "swizzled">, %w: tensor<4x32x64xf8E4M3FN>, %ws: tensor<4x32x2xf8E8M0FNU>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op lhs scales encoding must be a #mxmoe.scale_layout, got "swizzled"}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs : (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU, "swizzled">, tensor<4x32x64xf8E4M3FN>, tensor<4x32x2xf8E8M0FNU>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}
