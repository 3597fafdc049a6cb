// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.linear: the optional bias is 1-D [N] with the input's element type.

func.func @bias_rank_2(%x: tensor<8x64xbf16>, %w: tensor<16x64xbf16>, %b: tensor<1x16xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op bias must be 1-D [N] = [16], got [1, 16]}}
  %y = mxmoe.linear %x, %w bias %b {fqn = "l"} : (tensor<8x64xbf16>, tensor<16x64xbf16>, tensor<1x16xbf16>) -> tensor<8x16xbf16>
  return
}

// -----

// The bias has N entries, not K.
func.func @bias_size_k(%x: tensor<8x64xbf16>, %w: tensor<16x64xbf16>, %b: tensor<64xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op bias must be 1-D [N] = [16], got [64]}}
  %y = mxmoe.linear %x, %w bias %b {fqn = "l"} : (tensor<8x64xbf16>, tensor<16x64xbf16>, tensor<64xbf16>) -> tensor<8x16xbf16>
  return
}

// -----

func.func @bias_rank_0(%x: tensor<8x64xbf16>, %w: tensor<16x64xbf16>, %b: tensor<bf16>) {
  // expected-error @+1 {{'mxmoe.linear' op bias must be 1-D [N] = [16], got []}}
  %y = mxmoe.linear %x, %w bias %b {fqn = "l"} : (tensor<8x64xbf16>, tensor<16x64xbf16>, tensor<bf16>) -> tensor<8x16xbf16>
  return
}

// -----

func.func @bias_element_type(%x: tensor<8x64xbf16>, %w: tensor<16x64xbf16>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'mxmoe.linear' op bias element type 'f32' differs from the input's 'bf16'}}
  %y = mxmoe.linear %x, %w bias %b {fqn = "l"} : (tensor<8x64xbf16>, tensor<16x64xbf16>, tensor<16xf32>) -> tensor<8x16xbf16>
  return
}

// -----

func.func @bias_integer(%x: tensor<8x64xbf16>, %w: tensor<16x64xbf16>, %b: tensor<16xi32>) {
  // expected-error @+1 {{'mxmoe.linear' op operand #2 must be ranked tensor of bf16, f16 or f32 values, but got 'tensor<16xi32>'}}
  %y = mxmoe.linear %x, %w bias %b {fqn = "l"} : (tensor<8x64xbf16>, tensor<16x64xbf16>, tensor<16xi32>) -> tensor<8x16xbf16>
  return
}

// -----

// The bias type is listed in the functional type when the bias is present.
func.func @bias_type_missing(%x: tensor<8x64xbf16>, %w: tensor<16x64xbf16>, %b: tensor<16xbf16>) {
  // expected-error @+1 {{custom op 'mxmoe.linear' number of operands and types do not match: got 1 operands and 0 types}}
  %y = mxmoe.linear %x, %w bias %b {fqn = "l"} : (tensor<8x64xbf16>, tensor<16x64xbf16>) -> tensor<8x16xbf16>
  return
}

// -----

// A dynamic N is printed as '?'; a 1-D bias would match it, a 2-D one does
// not.
func.func @bias_rank_2_dynamic_n(%x: tensor<8x64xbf16>, %w: tensor<?x64xbf16>, %b: tensor<1x16xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op bias must be 1-D [N] = [?], got [1, 16]}}
  %y = mxmoe.linear %x, %w bias %b {fqn = "l"} : (tensor<8x64xbf16>, tensor<?x64xbf16>, tensor<1x16xbf16>) -> tensor<8x?xbf16>
  return
}
