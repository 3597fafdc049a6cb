// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.linear attributes: fqn (required, non-empty string), precision
// (#mxmoe.precision), recipe (#mxmoe.mx_recipe).

func.func @fqn_empty(%x: tensor<8x64xbf16>, %w: tensor<16x64xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op fqn must name the layer (e.g. "layers.0.attention.wq"); it is what the precision policy matches}}
  %y = mxmoe.linear %x, %w {fqn = ""} : (tensor<8x64xbf16>, tensor<16x64xbf16>) -> tensor<8x16xbf16>
  return
}

// -----

func.func @fqn_missing(%x: tensor<8x64xbf16>, %w: tensor<16x64xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op requires attribute 'fqn'}}
  %y = mxmoe.linear %x, %w : (tensor<8x64xbf16>, tensor<16x64xbf16>) -> tensor<8x16xbf16>
  return
}

// -----

func.func @fqn_not_string(%x: tensor<8x64xbf16>, %w: tensor<16x64xbf16>) {
  // expected-error @+1 {{custom op 'mxmoe.linear' 'mxmoe.linear' op attribute 'fqn' failed to satisfy constraint: string attribute}}
  %y = mxmoe.linear %x, %w {fqn = 0 : i64} : (tensor<8x64xbf16>, tensor<16x64xbf16>) -> tensor<8x16xbf16>
  return
}

// -----

// precision takes a #mxmoe.precision, not a string.
func.func @precision_string(%x: tensor<8x64xbf16>, %w: tensor<16x64xbf16>) {
  // expected-error @+1 {{custom op 'mxmoe.linear' 'mxmoe.linear' op attribute 'precision' failed to satisfy constraint: GEMM precision: bf16, mxfp8 (E4M3 + E8M0/32) or mxfp4 (E2M1 + E8M0/32)}}
  %y = mxmoe.linear %x, %w {fqn = "l", precision = "mxfp8"} : (tensor<8x64xbf16>, tensor<16x64xbf16>) -> tensor<8x16xbf16>
  return
}

// -----

// recipe takes a #mxmoe.mx_recipe, not a precision.
func.func @recipe_is_precision(%x: tensor<8x64xbf16>, %w: tensor<16x64xbf16>) {
  // expected-error @+1 {{custom op 'mxmoe.linear' 'mxmoe.linear' op attribute 'recipe' failed to satisfy constraint: how a GEMM's operands are quantized: element type, block size, scale rounding}}
  %y = mxmoe.linear %x, %w {fqn = "l", recipe = #mxmoe.precision<mxfp8>} : (tensor<8x64xbf16>, tensor<16x64xbf16>) -> tensor<8x16xbf16>
  return
}

// -----

// The generic form goes through the same checks (properties).
func.func @generic_fqn_not_string(%x: tensor<8x64xbf16>, %w: tensor<16x64xbf16>) {
  // expected-error @+1 {{invalid properties {fqn = 1 : i64} for op mxmoe.linear: Invalid attribute `fqn` in property conversion: 1 : i64}}
  %y = "mxmoe.linear"(%x, %w) <{fqn = 1 : i64}> : (tensor<8x64xbf16>, tensor<16x64xbf16>) -> tensor<8x16xbf16>
  return
}
