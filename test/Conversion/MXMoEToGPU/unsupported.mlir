// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu --split-input-file --verify-diagnostics

func.func @fp6(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op GPU lowering of 'f6E2M3FN' data is not implemented yet (supported: f8E4M3FN, f8E5M2, f4E2M1FN)}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xbf16> -> tensor<64x64xf6E2M3FN>, tensor<64x2xf8E8M0FNU>
  return
}

// -----

func.func @dynamic(%x: tensor<?x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op GPU lowering needs static shapes, got 'tensor<?x64xbf16>'}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<?x64xbf16> -> tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>
  return
}
