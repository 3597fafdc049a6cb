// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.linear: input [..., K] and weight [N, K] (LinearOp::verify and the
// ODS operand constraints).

func.func @input_rank_1(%x: tensor<64xbf16>, %w: tensor<16x64xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op input must be [..., K] with rank >= 2, got rank 1}}
  %y = mxmoe.linear %x, %w {fqn = "l"} : (tensor<64xbf16>, tensor<16x64xbf16>) -> tensor<16xbf16>
  return
}

// -----

// A 3-D (per-expert) weight belongs to mxmoe.scaled_grouped_matmul.
func.func @weight_rank_3(%x: tensor<8x64xbf16>, %w: tensor<4x16x64xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op weight must be 2-D [N, K], got rank 3}}
  %y = mxmoe.linear %x, %w {fqn = "l"} : (tensor<8x64xbf16>, tensor<4x16x64xbf16>) -> tensor<8x16xbf16>
  return
}

// -----

func.func @weight_rank_1(%x: tensor<8x64xbf16>, %w: tensor<64xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op weight must be 2-D [N, K], got rank 1}}
  %y = mxmoe.linear %x, %w {fqn = "l"} : (tensor<8x64xbf16>, tensor<64xbf16>) -> tensor<8x64xbf16>
  return
}

// -----

func.func @element_types_differ(%x: tensor<8x64xbf16>, %w: tensor<16x64xf32>) {
  // expected-error @+1 {{'mxmoe.linear' op input and weight element types differ: 'bf16' vs 'f32'}}
  %y = mxmoe.linear %x, %w {fqn = "l"} : (tensor<8x64xbf16>, tensor<16x64xf32>) -> tensor<8x16xbf16>
  return
}

// -----

// The weight is [N, K] (nn.Linear layout), not [K, N].
func.func @weight_transposed(%x: tensor<8x64xbf16>, %w: tensor<64x16xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op contraction sizes differ: input has K = 64 but weight [N, K] has K = 16}}
  %y = mxmoe.linear %x, %w {fqn = "l"} : (tensor<8x64xbf16>, tensor<64x16xbf16>) -> tensor<8x64xbf16>
  return
}

// -----

// The contraction check uses the input's last dim for any input rank.
func.func @contraction_3d_input(%x: tensor<2x8x96xbf16>, %w: tensor<16x64xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op contraction sizes differ: input has K = 96 but weight [N, K] has K = 64}}
  %y = mxmoe.linear %x, %w {fqn = "l"} : (tensor<2x8x96xbf16>, tensor<16x64xbf16>) -> tensor<2x8x16xbf16>
  return
}

// -----

// Model-level ops take high-precision operands; MX data goes to
// mxmoe.grouped_matmul.
func.func @input_mx_element(%x: tensor<8x64xf8E4M3FN>, %w: tensor<16x64xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op operand #0 must be ranked tensor of bf16, f16 or f32 values, but got 'tensor<8x64xf8E4M3FN>'}}
  %y = mxmoe.linear %x, %w {fqn = "l"} : (tensor<8x64xf8E4M3FN>, tensor<16x64xbf16>) -> tensor<8x16xbf16>
  return
}

// -----

func.func @weight_integer(%x: tensor<8x64xbf16>, %w: tensor<16x64xi8>) {
  // expected-error @+1 {{'mxmoe.linear' op operand #1 must be ranked tensor of bf16, f16 or f32 values, but got 'tensor<16x64xi8>'}}
  %y = mxmoe.linear %x, %w {fqn = "l"} : (tensor<8x64xbf16>, tensor<16x64xi8>) -> tensor<8x16xbf16>
  return
}

// -----

// Ranked tensors only: the custom syntax parses ranked tensor types.
func.func @input_unranked(%x: tensor<*xbf16>, %w: tensor<16x64xbf16>) {
  // expected-error @+1 {{custom op 'mxmoe.linear' invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xbf16>'}}
  %y = mxmoe.linear %x, %w {fqn = "l"} : (tensor<*xbf16>, tensor<16x64xbf16>) -> tensor<8x16xbf16>
  return
}
