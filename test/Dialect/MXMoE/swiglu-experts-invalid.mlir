// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// Verifier of mxmoe.swiglu_experts (MXMoEOps.cpp: SwiGLUExpertsOp::verify).

func.func @f32_input(%x: tensor<64x256xf32>, %w13: tensor<2x512x256xbf16>, %w2: tensor<2x256x256xbf16>, %o: tensor<2xi32>) -> tensor<64x256xbf16> {
  // expected-error @+1 {{input must be bf16 (the SwiGLU's roundings are bf16's), got 'f32'}}
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %o {fqn = "e"}
      : (tensor<64x256xf32>, tensor<2x512x256xbf16>, tensor<2x256x256xbf16>, tensor<2xi32>) -> tensor<64x256xbf16>
  return %y : tensor<64x256xbf16>
}

// -----

func.func @w13_not_2i(%x: tensor<64x256xbf16>, %w13: tensor<2x384x256xbf16>, %w2: tensor<2x256x256xbf16>, %o: tensor<2xi32>) -> tensor<64x256xbf16> {
  // expected-error @+1 {{w13 must be [E, 2I, H] = [2, 512, 256] and w2 [E, H, I] = [2, 256, 256] (H = 256 from the input, I = 256 from w2), got w13 [2, 384, 256] and w2 [2, 256, 256]}}
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %o {fqn = "e"}
      : (tensor<64x256xbf16>, tensor<2x384x256xbf16>, tensor<2x256x256xbf16>, tensor<2xi32>) -> tensor<64x256xbf16>
  return %y : tensor<64x256xbf16>
}

// -----

func.func @w2_experts(%x: tensor<64x256xbf16>, %w13: tensor<2x512x256xbf16>, %w2: tensor<3x256x256xbf16>, %o: tensor<2xi32>) -> tensor<64x256xbf16> {
  // expected-error @+1 {{w13 must be [E, 2I, H] = [2, 512, 256] and w2 [E, H, I] = [2, 256, 256]}}
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %o {fqn = "e"}
      : (tensor<64x256xbf16>, tensor<2x512x256xbf16>, tensor<3x256x256xbf16>, tensor<2xi32>) -> tensor<64x256xbf16>
  return %y : tensor<64x256xbf16>
}

// -----

func.func @offsets_count(%x: tensor<64x256xbf16>, %w13: tensor<2x512x256xbf16>, %w2: tensor<2x256x256xbf16>, %o: tensor<3xi32>) -> tensor<64x256xbf16> {
  // expected-error @+1 {{offsets}}
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %o {fqn = "e"}
      : (tensor<64x256xbf16>, tensor<2x512x256xbf16>, tensor<2x256x256xbf16>, tensor<3xi32>) -> tensor<64x256xbf16>
  return %y : tensor<64x256xbf16>
}

// -----

func.func @result_shape(%x: tensor<64x256xbf16>, %w13: tensor<2x512x256xbf16>, %w2: tensor<2x256x256xbf16>, %o: tensor<2xi32>) -> tensor<64x512xbf16> {
  // expected-error @+1 {{result must be [M, H] = [64, 256], got [64, 512]}}
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %o {fqn = "e"}
      : (tensor<64x256xbf16>, tensor<2x512x256xbf16>, tensor<2x256x256xbf16>, tensor<2xi32>) -> tensor<64x512xbf16>
  return %y : tensor<64x512xbf16>
}

// -----

func.func @empty_fqn(%x: tensor<64x256xbf16>, %w13: tensor<2x512x256xbf16>, %w2: tensor<2x256x256xbf16>, %o: tensor<2xi32>) -> tensor<64x256xbf16> {
  // expected-error @+1 {{fqn must name the experts}}
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %o {fqn = ""}
      : (tensor<64x256xbf16>, tensor<2x512x256xbf16>, tensor<2x256x256xbf16>, tensor<2xi32>) -> tensor<64x256xbf16>
  return %y : tensor<64x256xbf16>
}

// -----

func.func @i_not_multiple_of_32(%x: tensor<64x256xbf16>, %w13: tensor<2x80x256xbf16>, %w2: tensor<2x256x40xbf16>, %o: tensor<2xi32>) -> tensor<64x256xbf16> {
  // expected-error @+1 {{I (w2 forward contraction)}}
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %o {fqn = "e", precision = #mxmoe.precision<mxfp8>}
      : (tensor<64x256xbf16>, tensor<2x80x256xbf16>, tensor<2x256x40xbf16>, tensor<2xi32>) -> tensor<64x256xbf16>
  return %y : tensor<64x256xbf16>
}

// -----

// Only the token rows may be dynamic (a tiled_mlp body's shard).
func.func @dynamic(%x: tensor<64x?xbf16>, %w13: tensor<2x512x256xbf16>, %w2: tensor<2x256x256xbf16>, %o: tensor<2xi32>) -> tensor<64x256xbf16> {
  // expected-error @+1 {{H and the weights' shapes must be static (only the token rows may be dynamic)}}
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %o {fqn = "e"}
      : (tensor<64x?xbf16>, tensor<2x512x256xbf16>, tensor<2x256x256xbf16>, tensor<2xi32>) -> tensor<64x256xbf16>
  return %y : tensor<64x256xbf16>
}

// -----

func.func @routing_shapes(%x: tensor<64x256xbf16>, %w13: tensor<2x512x256xbf16>, %w2: tensor<2x256x256xbf16>, %o: tensor<2xi32>, %idx: tensor<200xi32>, %s: tensor<64x4xf32>) -> tensor<64x256xbf16> {
  // expected-error @+1 {{routing: scores must be [T, top_k] with T = 64 (the input's token rows) and indices [T * top_k], got scores [64, 4] and indices [200]}}
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %o routing(%idx, %s : tensor<200xi32>, tensor<64x4xf32>) {fqn = "e"}
      : (tensor<64x256xbf16>, tensor<2x512x256xbf16>, tensor<2x256x256xbf16>, tensor<2xi32>) -> tensor<64x256xbf16>
  return %y : tensor<64x256xbf16>
}

// -----

func.func @routing_result(%x: tensor<64x256xbf16>, %w13: tensor<2x512x256xbf16>, %w2: tensor<2x256x256xbf16>, %o: tensor<2xi32>, %idx: tensor<256xi32>, %s: tensor<64x4xf32>) -> tensor<256x256xbf16> {
  // expected-error @+1 {{result must be [T, H] = [64, 256], got [256, 256]}}
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %o routing(%idx, %s : tensor<256xi32>, tensor<64x4xf32>) {fqn = "e"}
      : (tensor<64x256xbf16>, tensor<2x512x256xbf16>, tensor<2x256x256xbf16>, tensor<2xi32>) -> tensor<256x256xbf16>
  return %y : tensor<256x256xbf16>
}
