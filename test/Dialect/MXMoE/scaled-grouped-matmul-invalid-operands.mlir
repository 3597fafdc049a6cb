// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.scaled_grouped_matmul: input [M, K], weight [G, N, K], same
// high-precision element type (ScaledGroupedMatmulOp::verify, ODS).

func.func @input_rank_3(%x: tensor<2x64x64xbf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op input must be 2-D [M, K] (routed token rows sorted by expert), got rank 3}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e"} : (tensor<2x64x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

// A single 2-D weight is a dense layer (mxmoe.linear).
func.func @weight_rank_2(%x: tensor<64x64xbf16>, %w: tensor<32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op weight must be 3-D [G, N, K] (one [N, K] matrix per expert), got rank 2}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e"} : (tensor<64x64xbf16>, tensor<32x64xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @element_types_differ(%x: tensor<64x64xf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op input and weight element types differ: 'f16' vs 'bf16'}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e"} : (tensor<64x64xf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

// The weight is [G, N, K] (K contiguous, TorchAO's B_t), not [G, K, N].
func.func @weight_g_k_n(%x: tensor<64x64xbf16>, %w: tensor<4x64x32xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op contraction sizes differ: input has K = 64 but weight [G, N, K] has K = 32}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e"} : (tensor<64x64xbf16>, tensor<4x64x32xbf16>, tensor<4xi32>) -> tensor<64x64xbf16>
  return
}

// -----

func.func @input_mx(%x: tensor<64x64xf8E4M3FN>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op operand #0 must be ranked tensor of bf16, f16 or f32 values, but got 'tensor<64x64xf8E4M3FN>'}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e"} : (tensor<64x64xf8E4M3FN>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @weight_f64(%x: tensor<64x64xf64>, %w: tensor<4x32x64xf64>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op operand #0 must be ranked tensor of bf16, f16 or f32 values, but got 'tensor<64x64xf64>'}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e"} : (tensor<64x64xf64>, tensor<4x32x64xf64>, tensor<4xi32>) -> tensor<64x32xf64>
  return
}
