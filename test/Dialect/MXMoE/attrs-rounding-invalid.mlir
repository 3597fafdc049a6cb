// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// Parse errors of #mxmoe.rounding. The valid values are floor, rceil, ceil,
// even (lower case).

// expected-error @+2 {{expected ::mlir::mxmoe::RoundingMode to be one of: floor, rceil, ceil, even}}
// expected-error @+1 {{failed to parse MXMoE_RoundingModeAttr parameter 'value' which is to be a `::mlir::mxmoe::RoundingMode`}}
func.func @unknown_mode() attributes {r = #mxmoe.rounding<nearest>} {
  return
}

// -----

// Enum keywords are case-sensitive.
// expected-error @+2 {{expected ::mlir::mxmoe::RoundingMode to be one of: floor, rceil, ceil, even}}
// expected-error @+1 {{failed to parse MXMoE_RoundingModeAttr parameter 'value' which is to be a `::mlir::mxmoe::RoundingMode`}}
func.func @upper_case_mode() attributes {r = #mxmoe.rounding<RCEIL>} {
  return
}

// -----

// expected-error @+1 {{expected '<'}}
func.func @missing_angle_brackets() attributes {r = #mxmoe.rounding} {
  return
}

// -----

// expected-error @+2 {{expected valid keyword or string}}
// expected-error @+1 {{failed to parse MXMoE_RoundingModeAttr parameter 'value' which is to be a `::mlir::mxmoe::RoundingMode`}}
func.func @empty_mode() attributes {r = #mxmoe.rounding<>} {
  return
}
