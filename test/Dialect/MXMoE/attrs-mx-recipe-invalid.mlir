// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// Verifier and parse errors of #mxmoe.mx_recipe (MXRecipeAttr::verify).

// expected-error @+1 {{MX recipe element type must be an MX element type (f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN, f4E2M1FN), got 'bf16'}}
func.func @element_bf16() attributes {r = #mxmoe.mx_recipe<bf16, block_size = 32, rounding = rceil>} {
  return
}

// -----

// The E8M0 scale type is not an element type.
// expected-error @+1 {{MX recipe element type must be an MX element type (f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN, f4E2M1FN), got 'f8E8M0FNU'}}
func.func @element_e8m0() attributes {r = #mxmoe.mx_recipe<f8E8M0FNU, block_size = 32, rounding = rceil>} {
  return
}

// -----

// Non-OCP fp8 variants are not MX element types either.
// expected-error @+1 {{MX recipe element type must be an MX element type (f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN, f4E2M1FN), got 'f8E4M3FNUZ'}}
func.func @element_e4m3fnuz() attributes {r = #mxmoe.mx_recipe<f8E4M3FNUZ, block_size = 32, rounding = rceil>} {
  return
}

// -----

// expected-error @+1 {{MX recipe element type must be an MX element type (f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN, f4E2M1FN), got 'i8'}}
func.func @element_integer() attributes {r = #mxmoe.mx_recipe<i8, block_size = 32, rounding = rceil>} {
  return
}

// -----

// The element is a scalar type, not a tensor type.
// expected-error @+1 {{MX recipe element type must be an MX element type (f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN, f4E2M1FN), got 'tensor<4xf8E4M3FN>'}}
func.func @element_tensor() attributes {r = #mxmoe.mx_recipe<tensor<4xf8E4M3FN>, block_size = 32, rounding = rceil>} {
  return
}

// -----

// NVFP4-style 16-element blocks are not MX.
// expected-error @+1 {{MX recipe block_size must be 32 (OCP MX v1.0 shares one E8M0 scale per 32 elements), got 16}}
func.func @block_size_16() attributes {r = #mxmoe.mx_recipe<f4E2M1FN, block_size = 16, rounding = rceil>} {
  return
}

// -----

// expected-error @+1 {{MX recipe block_size must be 32 (OCP MX v1.0 shares one E8M0 scale per 32 elements), got 0}}
func.func @block_size_0() attributes {r = #mxmoe.mx_recipe<f8E4M3FN, block_size = 0, rounding = floor>} {
  return
}

// -----

// The element type is checked before the block size.
// expected-error @+1 {{MX recipe element type must be an MX element type (f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN, f4E2M1FN), got 'f16'}}
func.func @both_wrong() attributes {r = #mxmoe.mx_recipe<f16, block_size = 64, rounding = rceil>} {
  return
}

// -----

// expected-error @+2 {{expected ::mlir::mxmoe::RoundingMode to be one of: floor, rceil, ceil, even}}
// expected-error @+1 {{failed to parse MXMoE_MXRecipeAttr parameter 'rounding' which is to be a `::mlir::mxmoe::RoundingMode`}}
func.func @unknown_rounding() attributes {r = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = up>} {
  return
}

// -----

// Inside the recipe the rounding mode is a bare keyword, not a
// #mxmoe.rounding attribute.
// expected-error @+2 {{expected valid keyword or string}}
// expected-error @+1 {{failed to parse MXMoE_MXRecipeAttr parameter 'rounding' which is to be a `::mlir::mxmoe::RoundingMode`}}
func.func @rounding_as_attribute() attributes {r = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = #mxmoe.rounding<rceil>>} {
  return
}

// -----

// All three parameters are required.
// expected-error @+1 {{expected ','}}
func.func @missing_rounding() attributes {r = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32>} {
  return
}

// -----

// Parameters are named.
// expected-error @+1 {{expected 'block_size'}}
func.func @positional_parameters() attributes {r = #mxmoe.mx_recipe<f8E4M3FN, 32, rceil>} {
  return
}

// -----

// expected-error @+1 {{MX recipe granularity mx128 (1x128 / 128x128 scale tiles) needs an 8-bit element type (f8E4M3FN or f8E5M2), got 'f4E2M1FN'}}
func.func @mx128_fp4() attributes {r = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = rceil, granularity = mx128>} {
  return
}

// -----

// expected-error @+2 {{expected ::mlir::mxmoe::ScaleGranularity to be one of: mx32, mx128}}
// expected-error @+1 {{failed to parse MXMoE_MXRecipeAttr parameter 'granularity' which is to be a `::mlir::mxmoe::ScaleGranularity`}}
func.func @unknown_granularity() attributes {r = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil, granularity = mx64>} {
  return
}
