// RUN: mxmoe-opt %s --mxmoe-expand-scaled-matmul --split-input-file --verify-diagnostics

// Two ops with one fqn: the second would need the first's function names.
func.func @twice(%x: tensor<256x64xbf16>, %w: tensor<2x64x64xbf16>, %o: tensor<2xi32>) {
  // expected-note @+1 {{the existing function}}
  %a = mxmoe.scaled_grouped_matmul %x, %w, %o {fqn = "e.w1", precision = #mxmoe.precision<mxfp8>}
      : (tensor<256x64xbf16>, tensor<2x64x64xbf16>, tensor<2xi32>) -> tensor<256x64xbf16>
  // expected-error @+1 {{fqn 'e.w1' is not unique: @e.w1.forward already exists (another op with this fqn, or a function of that name); fqns name the expanded functions a runtime looks up}}
  %b = mxmoe.scaled_grouped_matmul %x, %w, %o {fqn = "e.w1", precision = #mxmoe.precision<mxfp8>}
      : (tensor<256x64xbf16>, tensor<2x64x64xbf16>, tensor<2xi32>) -> tensor<256x64xbf16>
  return
}

// -----

// A user function already has the name of an expanded one.
// expected-note @+1 {{the existing function}}
func.func @proj.input_grad() {
  return
}
func.func @f(%x: tensor<256x64xbf16>, %w: tensor<64x64xbf16>) {
  // expected-error @+1 {{fqn 'proj' is not unique: @proj.input_grad already exists}}
  %y = mxmoe.linear %x, %w {fqn = "proj", precision = #mxmoe.precision<mxfp8>}
      : (tensor<256x64xbf16>, tensor<64x64xbf16>) -> tensor<256x64xbf16>
  return
}
