// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.linear: the result is the input's leading dims followed by N.

func.func @result_width_k(%x: tensor<8x64xbf16>, %w: tensor<16x64xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op result shape [8, 64] must be the input's leading dims followed by N: expected [8, 16]}}
  %y = mxmoe.linear %x, %w {fqn = "l"} : (tensor<8x64xbf16>, tensor<16x64xbf16>) -> tensor<8x64xbf16>
  return
}

// -----

func.func @result_token_count(%x: tensor<8x64xbf16>, %w: tensor<16x64xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op result shape [16, 16] must be the input's leading dims followed by N: expected [8, 16]}}
  %y = mxmoe.linear %x, %w {fqn = "l"} : (tensor<8x64xbf16>, tensor<16x64xbf16>) -> tensor<16x16xbf16>
  return
}

// -----

// A rank-3 input keeps both leading dims; flattening them is an error.
func.func @result_flattened(%x: tensor<2x8x64xbf16>, %w: tensor<16x64xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op result shape [16, 16] must be the input's leading dims followed by N: expected [2, 8, 16]}}
  %y = mxmoe.linear %x, %w {fqn = "l"} : (tensor<2x8x64xbf16>, tensor<16x64xbf16>) -> tensor<16x16xbf16>
  return
}

// -----

// Dynamic dims print as '?'.
func.func @result_dynamic_mismatch(%x: tensor<?x64xbf16>, %w: tensor<16x64xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op result shape [?, 32] must be the input's leading dims followed by N: expected [?, 16]}}
  %y = mxmoe.linear %x, %w {fqn = "l"} : (tensor<?x64xbf16>, tensor<16x64xbf16>) -> tensor<?x32xbf16>
  return
}

// -----

func.func @result_mx_element(%x: tensor<8x64xbf16>, %w: tensor<16x64xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op result #0 must be ranked tensor of bf16, f16 or f32 values, but got 'tensor<8x16xf8E4M3FN>'}}
  %y = mxmoe.linear %x, %w {fqn = "l"} : (tensor<8x64xbf16>, tensor<16x64xbf16>) -> tensor<8x16xf8E4M3FN>
  return
}
