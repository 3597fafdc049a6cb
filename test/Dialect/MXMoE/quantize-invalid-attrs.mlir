// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.quantize attributes: axis (required i64), block_size (must be 32),
// rounding (#mxmoe.rounding).

func.func @block_size_16(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op block_size must be 32 (OCP MX v1.0 shares one E8M0 scale per 32 elements), got 16}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64, block_size = 16 : i64} : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FN>, tensor<64x4xf8E8M0FNU>
  return
}

// -----

// The block size is checked before any shape rule.
func.func @block_size_64_bad_shapes(%x: tensor<64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op block_size must be 32 (OCP MX v1.0 shares one E8M0 scale per 32 elements), got 64}}
  %q, %s = mxmoe.quantize %x {axis = 0 : i64, block_size = 64 : i64} : tensor<64xbf16> -> tensor<64xf8E4M3FN>, tensor<1xf8E8M0FNU>
  return
}

// -----

func.func @axis_missing(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op requires attribute 'axis'}}
  %q, %s = mxmoe.quantize %x : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>
  return
}

// -----

func.func @axis_i32(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{custom op 'mxmoe.quantize' 'mxmoe.quantize' op attribute 'axis' failed to satisfy constraint: 64-bit signless integer attribute}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i32} : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>
  return
}

// -----

func.func @rounding_integer(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{custom op 'mxmoe.quantize' 'mxmoe.quantize' op attribute 'rounding' failed to satisfy constraint: MX scale rounding mode (floor, rceil, ceil, even)}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64, rounding = 1 : i32} : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>
  return
}

// -----

// rounding is a bare #mxmoe.rounding, not a whole recipe.
func.func @rounding_recipe(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{custom op 'mxmoe.quantize' 'mxmoe.quantize' op attribute 'rounding' failed to satisfy constraint: MX scale rounding mode (floor, rceil, ceil, even)}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64, rounding = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>} : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>
  return
}
