// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.dequantize element types: data an MX element type, scales
// f8E8M0FNU (+ #mxmoe.scale_layout), result bf16/f16/f32; the data and the
// result carry no encoding.

func.func @data_bf16(%q: tensor<64x64xbf16>, %s: tensor<64x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.dequantize' op operand #0 must be ranked tensor of an MX element type (f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN, f4E2M1FN) values, but got 'tensor<64x64xbf16>'}}
  %x = mxmoe.dequantize %q, %s {axis = 1 : i64} : tensor<64x64xbf16>, tensor<64x2xf8E8M0FNU> -> tensor<64x64xbf16>
  return
}

// -----

func.func @result_mx(%q: tensor<64x64xf8E4M3FN>, %s: tensor<64x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.dequantize' op result #0 must be ranked tensor of bf16, f16 or f32 values, but got 'tensor<64x64xf8E5M2>'}}
  %x = mxmoe.dequantize %q, %s {axis = 1 : i64} : tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU> -> tensor<64x64xf8E5M2>
  return
}

// -----

// Scales are raw E8M0 exponents, not float multipliers.
func.func @scales_f32(%q: tensor<64x64xf8E4M3FN>, %s: tensor<64x2xf32>) {
  // expected-error @+1 {{'mxmoe.dequantize' op scales element type must be f8E8M0FNU (E8M0 scales), got 'f32'}}
  %x = mxmoe.dequantize %q, %s {axis = 1 : i64} : tensor<64x64xf8E4M3FN>, tensor<64x2xf32> -> tensor<64x64xbf16>
  return
}

// -----

func.func @scales_foreign_encoding(%q: tensor<64x64xf8E4M3FN>, %s: tensor<64x2xf8E8M0FNU, #mxmoe.rounding<floor>>) {
  // expected-error @+1 {{'mxmoe.dequantize' op scales encoding must be a #mxmoe.scale_layout, got #mxmoe.rounding<floor>}}
  %x = mxmoe.dequantize %q, %s {axis = 1 : i64} : tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU, #mxmoe.rounding<floor>> -> tensor<64x64xbf16>
  return
}

// -----

func.func @block_size_16(%q: tensor<64x64xf4E2M1FN>, %s: tensor<64x4xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.dequantize' op block_size must be 32 (OCP MX v1.0 shares one E8M0 scale per 32 elements), got 16}}
  %x = mxmoe.dequantize %q, %s {axis = 1 : i64, block_size = 16 : i64} : tensor<64x64xf4E2M1FN>, tensor<64x4xf8E8M0FNU> -> tensor<64x64xbf16>
  return
}

// -----

func.func @axis_missing(%q: tensor<64x64xf8E4M3FN>, %s: tensor<64x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.dequantize' op requires attribute 'axis'}}
  %x = mxmoe.dequantize %q, %s : tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU> -> tensor<64x64xbf16>
  return
}

// -----

// Only the scales carry an encoding (any encoding on the data is rejected).
func.func @data_encoding(%q: tensor<64x64xf8E4M3FN, "x">, %s: tensor<64x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.dequantize' op only scale tensors carry an encoding (#mxmoe.scale_layout); the data and the result must have none}}
  %x = mxmoe.dequantize %q, %s {axis = 1 : i64} : tensor<64x64xf8E4M3FN, "x">, tensor<64x2xf8E8M0FNU> -> tensor<64x64xbf16>
  return
}

// -----

// The high-precision side here is the result.
func.func @result_encoding(%q: tensor<64x64xf8E4M3FN>, %s: tensor<64x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.dequantize' op only scale tensors carry an encoding (#mxmoe.scale_layout); the data and the result must have none}}
  %x = mxmoe.dequantize %q, %s {axis = 1 : i64} : tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU> -> tensor<64x64xbf16, #mxmoe.scale_layout<blocked_128x4>>
  return
}
