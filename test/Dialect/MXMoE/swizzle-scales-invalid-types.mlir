// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.swizzle_scales: source and result are f8E8M0FNU tensors whose
// encoding, if any, is a #mxmoe.scale_layout (verifyScaleElementType).

func.func @source_i8(%s: tensor<200x10xi8>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op source element type must be f8E8M0FNU (E8M0 scales), got 'i8'}}
  %b = mxmoe.swizzle_scales %s : tensor<200x10xi8> -> tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

func.func @result_ui8(%s: tensor<200x10xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op result element type must be f8E8M0FNU (E8M0 scales), got 'ui8'}}
  %b = mxmoe.swizzle_scales %s : tensor<200x10xf8E8M0FNU> -> tensor<256x12xui8, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

// The source is checked before the result.
func.func @both_wrong(%s: tensor<200x10xf8E4M3FN>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op source element type must be f8E8M0FNU (E8M0 scales), got 'f8E4M3FN'}}
  %b = mxmoe.swizzle_scales %s : tensor<200x10xf8E4M3FN> -> tensor<256x12xi8>
  return
}

// -----

func.func @source_foreign_encoding(%s: tensor<256x12xf8E8M0FNU, "blocked_128x4">) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op source encoding must be a #mxmoe.scale_layout, got "blocked_128x4"}}
  %r = mxmoe.swizzle_scales %s : tensor<256x12xf8E8M0FNU, "blocked_128x4"> -> tensor<200x10xf8E8M0FNU>
  return
}

// -----

func.func @result_foreign_encoding(%s: tensor<200x10xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op result encoding must be a #mxmoe.scale_layout, got #mxmoe.precision<mxfp8>}}
  %b = mxmoe.swizzle_scales %s : tensor<200x10xf8E8M0FNU> -> tensor<256x12xf8E8M0FNU, #mxmoe.precision<mxfp8>>
  return
}
