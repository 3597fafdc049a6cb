// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.quantize element types and encodings: input bf16/f16/f32, data an
// MX element type, scales f8E8M0FNU with no encoding or a
// #mxmoe.scale_layout (ODS constraints and verifyScaleElementType); the
// input and the data carry no encoding.

func.func @input_integer(%x: tensor<64x64xi8>) {
  // expected-error @+1 {{'mxmoe.quantize' op operand #0 must be ranked tensor of bf16, f16 or f32 values, but got 'tensor<64x64xi8>'}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xi8> -> tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>
  return
}

// -----

// Already-quantized data cannot be quantized again.
func.func @input_mx(%x: tensor<64x64xf8E5M2>) {
  // expected-error @+1 {{'mxmoe.quantize' op operand #0 must be ranked tensor of bf16, f16 or f32 values, but got 'tensor<64x64xf8E5M2>'}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xf8E5M2> -> tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>
  return
}

// -----

func.func @input_f64(%x: tensor<64x64xf64>) {
  // expected-error @+1 {{'mxmoe.quantize' op operand #0 must be ranked tensor of bf16, f16 or f32 values, but got 'tensor<64x64xf64>'}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xf64> -> tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>
  return
}

// -----

func.func @data_bf16(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op result #0 must be ranked tensor of an MX element type (f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN, f4E2M1FN) values, but got 'tensor<64x64xbf16>'}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xbf16> -> tensor<64x64xbf16>, tensor<64x2xf8E8M0FNU>
  return
}

// -----

// The FNUZ fp8 variants are not OCP MX element types.
func.func @data_e4m3fnuz(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op result #0 must be ranked tensor of an MX element type (f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN, f4E2M1FN) values, but got 'tensor<64x64xf8E4M3FNUZ>'}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FNUZ>, tensor<64x2xf8E8M0FNU>
  return
}

// -----

// The MXFP4 data type is f4E2M1FN, not packed i8.
func.func @data_packed_i8(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op result #0 must be ranked tensor of an MX element type (f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN, f4E2M1FN) values, but got 'tensor<64x32xi8>'}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xbf16> -> tensor<64x32xi8>, tensor<64x2xf8E8M0FNU>
  return
}

// -----

func.func @scales_i8(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales element type must be f8E8M0FNU (E8M0 scales), got 'i8'}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FN>, tensor<64x2xi8>
  return
}

// -----

// E4M3 scales are NVFP4's, not MX's.
func.func @scales_e4m3(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales element type must be f8E8M0FNU (E8M0 scales), got 'f8E4M3FN'}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FN>, tensor<64x2xf8E4M3FN>
  return
}

// -----

func.func @scales_string_encoding(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales encoding must be a #mxmoe.scale_layout, got "blocked"}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU, "blocked">
  return
}

// -----

// Another mxmoe attribute is not a layout either.
func.func @scales_precision_encoding(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales encoding must be a #mxmoe.scale_layout, got #mxmoe.precision<mxfp8>}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU, #mxmoe.precision<mxfp8>>
  return
}

// -----

// The element type is checked before the encoding.
func.func @scales_type_and_encoding(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op scales element type must be f8E8M0FNU (E8M0 scales), got 'ui8'}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FN>, tensor<64x2xui8, "x">
  return
}

// -----

// Only the scales carry a layout encoding; MX data is plain row-major.
func.func @data_encoding(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op only scale tensors carry an encoding (#mxmoe.scale_layout); the data and the input must have none}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FN, #mxmoe.scale_layout<blocked_128x4>>, tensor<64x2xf8E8M0FNU>
  return
}

// -----

// ... and so is the high-precision input.
func.func @input_encoding(%x: tensor<64x64xbf16, #mxmoe.scale_layout<blocked_128x4>>) {
  // expected-error @+1 {{'mxmoe.quantize' op only scale tensors carry an encoding (#mxmoe.scale_layout); the data and the input must have none}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xbf16, #mxmoe.scale_layout<blocked_128x4>> -> tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>
  return
}
