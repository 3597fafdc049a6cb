// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu --split-input-file --verify-diagnostics

func.func @fp4(%x: tensor<64x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op GPU lowering of 'f4E2M1FN' data is not implemented yet (supported: f8E4M3FN, f8E5M2)}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xbf16> -> tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU>
  return
}

// -----

func.func @dynamic(%x: tensor<?x64xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op GPU lowering needs static shapes, got 'tensor<?x64xbf16>'}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<?x64xbf16> -> tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>
  return
}

// -----

func.func @grouped(%x: tensor<64x64xbf16>, %o: tensor<2xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op GPU lowering of quantization with group offsets is not implemented yet}}
  %q, %s = mxmoe.quantize %x offsets(%o : tensor<2xi32>) {axis = 0 : i64} : tensor<64x64xbf16> -> tensor<64x128xf8E4M3FN>, tensor<64x4xf8E8M0FNU>
  return
}

// -----

func.func @axis0_3d(%x: tensor<64x4x8xbf16>) {
  // expected-error @+1 {{'mxmoe.quantize' op GPU lowering supports 3-D quantization along axis 1 or 2 (per-expert weights), not axis 0}}
  %q, %s = mxmoe.quantize %x {axis = 0 : i64} : tensor<64x4x8xbf16> -> tensor<4x8x64xf8E4M3FN>, tensor<4x8x2xf8E8M0FNU>
  return
}
