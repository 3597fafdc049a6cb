// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// Parse errors of #mxmoe.precision. The valid values are bf16, mxfp8, mxfp4.

// MXFP6 is an MX element format (f6E2M3FN, f6E3M2FN) but not a precision.
// expected-error @+2 {{expected ::mlir::mxmoe::Precision to be one of: bf16, mxfp8, mxfp4}}
// expected-error @+1 {{failed to parse MXMoE_PrecisionAttr parameter 'value' which is to be a `::mlir::mxmoe::Precision`}}
func.func @mxfp6() attributes {p = #mxmoe.precision<mxfp6>} {
  return
}

// -----

// A builtin type name is not a precision.
// expected-error @+2 {{expected ::mlir::mxmoe::Precision to be one of: bf16, mxfp8, mxfp4}}
// expected-error @+1 {{failed to parse MXMoE_PrecisionAttr parameter 'value' which is to be a `::mlir::mxmoe::Precision`}}
func.func @fp16() attributes {p = #mxmoe.precision<f16>} {
  return
}

// -----

// expected-error @+2 {{expected valid keyword or string}}
// expected-error @+1 {{failed to parse MXMoE_PrecisionAttr parameter 'value' which is to be a `::mlir::mxmoe::Precision`}}
func.func @empty() attributes {p = #mxmoe.precision<>} {
  return
}

// -----

// expected-error @+1 {{unknown attribute `precisions` in dialect `mxmoe`}}
func.func @misspelled_mnemonic() attributes {p = #mxmoe.precisions<mxfp8>} {
  return
}
