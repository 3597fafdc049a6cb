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

// -----

// Regression (mxmoe-fuzz-pipeline, seed from quantize-offsets.mlir): a
// dynamic number of token groups (offsets tensor<?xi32>) reached the
// kernel generators, which computed the group table from the dynamic-size
// sentinel (signed overflow, then a nonsense kernel). Every operand and
// result must now be static before any kernel is generated.
func.func @dynamic_group_count_quantize(%x: tensor<512x128xbf16>, %offs: tensor<?xi32>) {
  // expected-error @+1 {{'mxmoe.quantize' op GPU lowering needs static shapes, got 'tensor<?xi32>'}}
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<?xi32>) {axis = 0 : i64}
      : tensor<512x128xbf16> -> tensor<128x1024xf8E4M3FN>, tensor<128x36xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return
}

// -----

func.func @dynamic_group_count_dequantize(%q: tensor<256x1248xf8E4M3FN>, %s: tensor<256x39xf8E8M0FNU>, %offs: tensor<?xi32>) {
  // expected-error @+1 {{'mxmoe.dequantize' op GPU lowering needs static shapes, got 'tensor<?xi32>'}}
  %x = mxmoe.dequantize %q, %s offsets(%offs : tensor<?xi32>) {axis = 0 : i64}
      : tensor<256x1248xf8E4M3FN>, tensor<256x39xf8E8M0FNU> -> tensor<1000x256xbf16>
  return
}

// -----

func.func @dynamic_group_count_swizzle(%s: tensor<1000x8xf8E8M0FNU>, %offs: tensor<?xi32>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op GPU lowering needs static shapes, got 'tensor<?xi32>'}}
  %b = mxmoe.swizzle_scales %s offsets(%offs : tensor<?xi32>)
      : tensor<1000x8xf8E8M0FNU> -> tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}
