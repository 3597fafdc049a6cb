// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.scaled_grouped_matmul: the result is [M, N], bf16 or f32.

func.func @result_width_k(%x: tensor<64x64xbf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op result must be [M, N] = [64, 32], got [64, 64]}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e"} : (tensor<64x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<64x64xbf16>
  return
}

// -----

// The forward result is 2-D; the per-expert [G, N, K] shape is the weight
// gradient's, not this op's result.
func.func @result_per_expert(%x: tensor<64x64xbf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op result must be [M, N] = [64, 32], got [4, 64, 32]}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e"} : (tensor<64x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<4x64x32xbf16>
  return
}

// -----

func.func @result_dynamic_tokens_mismatch(%x: tensor<?x64xbf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op result must be [M, N] = [?, 32], got [?, 16]}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e"} : (tensor<?x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<?x16xbf16>
  return
}

// -----

func.func @result_mx(%x: tensor<64x64xbf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op result #0 must be ranked tensor of bf16, f16 or f32 values, but got 'tensor<64x32xf8E4M3FN>'}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e"} : (tensor<64x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<64x32xf8E4M3FN>
  return
}

// -----

// The grouped GEMM accumulates in f32; an f16 result is not offered even
// for f16 inputs.
func.func @result_f16(%x: tensor<64x64xf16>, %w: tensor<4x32x64xf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op result element type must be bf16 or f32 (the grouped GEMM accumulates in f32), got 'f16'}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e"} : (tensor<64x64xf16>, tensor<4x32x64xf16>, tensor<4xi32>) -> tensor<64x32xf16>
  return
}
