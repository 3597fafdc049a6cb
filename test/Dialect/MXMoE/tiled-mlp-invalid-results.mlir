// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.tiled_mlp results: at least one, each a float tensor that starts with
// the input's token dims ([T, ...] or [B, S, ...]).

func.func @no_results(%x: tensor<64x32xbf16>) {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op must have at least one result}}
  mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> () {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield
  }
  return
}

// -----

func.func @result_token_count(%x: tensor<64x32xbf16>) -> tensor<32x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op result #0 must start with the input's token dims [64], got [32, 32]}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> tensor<32x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<32x32xbf16>
}

// -----

// The second result is checked too (index #1).
func.func @second_result(%x: tensor<64x32xbf16>) -> (tensor<64x32xbf16>, tensor<8x64xf32>) {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op result #1 must start with the input's token dims [64], got [8, 64]}}
  %y:2 = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> (tensor<64x32xbf16>, tensor<8x64xf32>) {
  ^bb0(%xs: tensor<?x32xbf16>):
    %e = arith.extf %xs : tensor<?x32xbf16> to tensor<?x32xf32>
    mxmoe.yield %xs, %e : tensor<?x32xbf16>, tensor<?x32xf32>
  }
  return %y#0, %y#1 : tensor<64x32xbf16>, tensor<8x64xf32>
}

// -----

// A [B, S, H] input keeps [B, S] in every result; flattening to [B*S, H] is
// not allowed.
func.func @result_flattened(%x: tensor<2x64x32xbf16>) -> tensor<128x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op result #0 must have rank >= 3 (the input's token dims [2, 64] followed by feature dims), got [128, 32]}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<2x64x32xbf16>) -> tensor<128x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<128x32xbf16>
}

// -----

func.func @result_batch_seq_swapped(%x: tensor<2x64x32xbf16>) -> tensor<64x2x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op result #0 must start with the input's token dims [2, 64], got [64, 2, 32]}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<2x64x32xbf16>) -> tensor<64x2x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x2x32xbf16>
}

// -----

func.func @result_integer(%x: tensor<64x32xbf16>) -> tensor<64x1xi32> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op result #0 must be variadic of ranked tensor of floating-point values, but got 'tensor<64x1xi32>'}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> tensor<64x1xi32> {
  ^bb0(%xs: tensor<?x32xbf16>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xs, %c0 : tensor<?x32xbf16>
    %e = tensor.empty(%n) : tensor<?x1xi32>
    mxmoe.yield %e : tensor<?x1xi32>
  }
  return %y : tensor<64x1xi32>
}

// -----

// A result must keep the feature dim: [T] alone (e.g. a per-token scalar)
// has rank 1 < 2.
func.func @result_rank_below_input(%x: tensor<64x32xbf16>) -> tensor<64xf32> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op result #0 must have rank >= 2 (the input's token dims [64] followed by feature dims), got [64]}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> tensor<64xf32> {
  ^bb0(%xs: tensor<?x32xbf16>):
    %e = arith.constant dense<0.0> : tensor<64xf32>
    mxmoe.yield %e : tensor<64xf32>
  }
  return %y : tensor<64xf32>
}

// -----

// summed_results counts trailing results; the first is always token rows.
func.func @summed_all(%x: tensor<64x32xbf16>) -> tensor<32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op summed_results must be in [0, 0] (the first result is token rows), got 1}}
  %s = mxmoe.tiled_mlp shards = 2 (%x) {summed_results = 1} : (tensor<64x32xbf16>) -> tensor<32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    %c = arith.constant dense<0.0> : tensor<32xbf16>
    mxmoe.yield %c : tensor<32xbf16>
  }
  return %s : tensor<32xbf16>
}

// -----

func.func @summed_dynamic(%x: tensor<64x32xbf16>) -> (tensor<64x32xbf16>, tensor<?xf32>) {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op summed result #1 must have a static shape, got 'tensor<?xf32>'}}
  %y, %s = mxmoe.tiled_mlp shards = 2 (%x) {summed_results = 1} : (tensor<64x32xbf16>) -> (tensor<64x32xbf16>, tensor<?xf32>) {
  ^bb0(%xs: tensor<?x32xbf16>):
    %c = arith.constant dense<0.0> : tensor<4xf32>
    %d = tensor.cast %c : tensor<4xf32> to tensor<?xf32>
    mxmoe.yield %xs, %d : tensor<?x32xbf16>, tensor<?xf32>
  }
  return %y, %s : tensor<64x32xbf16>, tensor<?xf32>
}
