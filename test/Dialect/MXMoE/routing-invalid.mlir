// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// Verifiers of the routing ops (MXMoERoutingOps.cpp).

func.func @gather_top_k(%x: tensor<64x128xbf16>, %idx: tensor<256xi32>) -> tensor<256x128xbf16> {
  // expected-error @+1 {{top_k must be >= 1, got 0}}
  %r = mxmoe.gather_rows %x[%idx] {top_k = 0 : i64} : tensor<64x128xbf16>, tensor<256xi32> -> tensor<256x128xbf16>
  return %r : tensor<256x128xbf16>
}

// -----

func.func @gather_rank(%x: tensor<64x2x64xbf16>, %idx: tensor<256xi32>) -> tensor<256x128xbf16> {
  // expected-error @+1 {{source must be [T, H], got rank 3}}
  %r = mxmoe.gather_rows %x[%idx] {top_k = 4 : i64} : tensor<64x2x64xbf16>, tensor<256xi32> -> tensor<256x128xbf16>
  return %r : tensor<256x128xbf16>
}

// -----

func.func @gather_elem(%x: tensor<64x128xbf16>, %idx: tensor<256xi32>) -> tensor<256x128xf32> {
  // expected-error @+1 {{result element type must be the source's ('bf16'), got 'f32'}}
  %r = mxmoe.gather_rows %x[%idx] {top_k = 4 : i64} : tensor<64x128xbf16>, tensor<256xi32> -> tensor<256x128xf32>
  return %r : tensor<256x128xf32>
}

// -----

func.func @gather_indices(%x: tensor<64x128xbf16>, %idx: tensor<255xi32>) -> tensor<256x128xbf16> {
  // expected-error @+1 {{indices must have dim 0 = the routed rows M = 256, got 255}}
  %r = mxmoe.gather_rows %x[%idx] {top_k = 4 : i64} : tensor<64x128xbf16>, tensor<255xi32> -> tensor<256x128xbf16>
  return %r : tensor<256x128xbf16>
}

// -----

func.func @gather_width(%x: tensor<64x128xbf16>, %idx: tensor<256xi32>) -> tensor<256x64xbf16> {
  // expected-error @+1 {{result must have dim 1 = the source's row length H = 128, got 64}}
  %r = mxmoe.gather_rows %x[%idx] {top_k = 4 : i64} : tensor<64x128xbf16>, tensor<256xi32> -> tensor<256x64xbf16>
  return %r : tensor<256x64xbf16>
}

// -----

func.func @gather_too_many(%x: tensor<64x128xbf16>, %idx: tensor<300xi32>) -> tensor<300x128xbf16> {
  // expected-error @+1 {{routed rows M = 300 exceed tokens x top_k = 256}}
  %r = mxmoe.gather_rows %x[%idx] {top_k = 4 : i64} : tensor<64x128xbf16>, tensor<300xi32> -> tensor<300x128xbf16>
  return %r : tensor<300x128xbf16>
}

// -----

func.func @gather_scores(%x: tensor<64x128xbf16>, %idx: tensor<256xi32>, %w: tensor<64x8xf32>) -> tensor<256x128xbf16> {
  // expected-error @+1 {{scores must have dim 1 = top_k = 4, got 8}}
  %r = mxmoe.gather_rows %x[%idx] scaled_by %w : tensor<64x8xf32> {top_k = 4 : i64} : tensor<64x128xbf16>, tensor<256xi32> -> tensor<256x128xbf16>
  return %r : tensor<256x128xbf16>
}

// -----

func.func @gather_index_type(%x: tensor<64x128xbf16>, %idx: tensor<256xi64>) -> tensor<256x128xbf16> {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer values}}
  %r = mxmoe.gather_rows %x[%idx] {top_k = 4 : i64} : tensor<64x128xbf16>, tensor<256xi64> -> tensor<256x128xbf16>
  return %r : tensor<256x128xbf16>
}

// -----

func.func @invert_shape(%idx: tensor<256xi32>) -> tensor<128xi32> {
  // expected-error @+1 {{result must have dim 0 = the routed rows M = 256, got 128}}
  %r = mxmoe.invert_permutation %idx : tensor<256xi32> -> tensor<128xi32>
  return %r : tensor<128xi32>
}

// -----

func.func @combine_rows_count(%y: tensor<250x128xbf16>, %idx: tensor<250xi32>, %inv: tensor<250xi32>) -> tensor<64x128xbf16> {
  // expected-error @+1 {{routed rows M = 250 must be tokens x top_k = 64 x 4 = 256 (no routing choice is dropped)}}
  %r = mxmoe.combine_rows %y, %idx, %inv {top_k = 4 : i64} : tensor<250x128xbf16>, tensor<250xi32>, tensor<250xi32> -> tensor<64x128xbf16>
  return %r : tensor<64x128xbf16>
}

// -----

func.func @combine_inverse(%y: tensor<256x128xbf16>, %idx: tensor<256xi32>, %inv: tensor<64xi32>) -> tensor<64x128xbf16> {
  // expected-error @+1 {{inverse must have dim 0 = the routed rows M = 256, got 64}}
  %r = mxmoe.combine_rows %y, %idx, %inv {top_k = 4 : i64} : tensor<256x128xbf16>, tensor<256xi32>, tensor<64xi32> -> tensor<64x128xbf16>
  return %r : tensor<64x128xbf16>
}

// -----

func.func @combine_scores_tokens(%y: tensor<256x128xbf16>, %idx: tensor<256xi32>, %inv: tensor<256xi32>, %w: tensor<32x4xf32>) -> tensor<64x128xbf16> {
  // expected-error @+1 {{scores must have dim 0 = the tokens T = 64, got 32}}
  %r = mxmoe.combine_rows %y, %idx, %inv scaled_by %w : tensor<32x4xf32> {top_k = 4 : i64} : tensor<256x128xbf16>, tensor<256xi32>, tensor<256xi32> -> tensor<64x128xbf16>
  return %r : tensor<64x128xbf16>
}

// -----

func.func @combine_elem(%y: tensor<256x128xbf16>, %idx: tensor<256xi32>, %inv: tensor<256xi32>) -> tensor<64x128xf32> {
  // expected-error @+1 {{result element type must be the rows' ('bf16'), got 'f32'}}
  %r = mxmoe.combine_rows %y, %idx, %inv {top_k = 4 : i64} : tensor<256x128xbf16>, tensor<256xi32>, tensor<256xi32> -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// -----

func.func @scores_grad_width(%g: tensor<64x128xbf16>, %y: tensor<256x64xbf16>, %idx: tensor<256xi32>, %inv: tensor<256xi32>) -> tensor<64x4xf32> {
  // expected-error @+1 {{rows must have dim 1 = grad's row length H = 128, got 64}}
  %r = mxmoe.combine_scores_grad %g, %y, %idx, %inv {top_k = 4 : i64} : tensor<64x128xbf16>, tensor<256x64xbf16>, tensor<256xi32>, tensor<256xi32> -> tensor<64x4xf32>
  return %r : tensor<64x4xf32>
}

// -----

func.func @scores_grad_result(%g: tensor<64x128xbf16>, %y: tensor<256x128xbf16>, %idx: tensor<256xi32>, %inv: tensor<256xi32>) -> tensor<64x2xf32> {
  // expected-error @+1 {{result must have dim 1 = top_k = 4, got 2}}
  %r = mxmoe.combine_scores_grad %g, %y, %idx, %inv {top_k = 4 : i64} : tensor<64x128xbf16>, tensor<256x128xbf16>, tensor<256xi32>, tensor<256xi32> -> tensor<64x2xf32>
  return %r : tensor<64x2xf32>
}
