// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.tiled_mlp: the token input is [T, H] or [B, S, H], bf16/f16/f32.

func.func @input_rank_1(%x: tensor<64xbf16>) -> tensor<64xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op input must be [T, H] or [B, S, H], got rank 1}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64xbf16>) -> tensor<64xbf16> {
  ^bb0(%xs: tensor<?xbf16>):
    mxmoe.yield %xs : tensor<?xbf16>
  }
  return %y : tensor<64xbf16>
}

// -----

func.func @input_rank_4(%x: tensor<2x2x64x32xbf16>) -> tensor<2x2x64x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op input must be [T, H] or [B, S, H], got rank 4}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<2x2x64x32xbf16>) -> tensor<2x2x64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<2x2x64x32xbf16>
}

// -----

// Token ids are not a valid input: the first operand is the hidden states.
func.func @input_integer(%x: tensor<64x32xi32>) -> tensor<64x32xf32> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op operand #0 must be ranked tensor of bf16, f16 or f32 values, but got 'tensor<64x32xi32>'}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xi32>) -> tensor<64x32xf32> {
  ^bb0(%xs: tensor<?x32xi32>):
    %e = arith.sitofp %xs : tensor<?x32xi32> to tensor<?x32xf32>
    mxmoe.yield %e : tensor<?x32xf32>
  }
  return %y : tensor<64x32xf32>
}

// -----

func.func @input_mx(%x: tensor<64x32xf8E4M3FN>) -> tensor<64x32xf8E4M3FN> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op operand #0 must be ranked tensor of bf16, f16 or f32 values, but got 'tensor<64x32xf8E4M3FN>'}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xf8E4M3FN>) -> tensor<64x32xf8E4M3FN> {
  ^bb0(%xs: tensor<?x32xf8E4M3FN>):
    mxmoe.yield %xs : tensor<?x32xf8E4M3FN>
  }
  return %y : tensor<64x32xf8E4M3FN>
}

// -----

// No tokens.
func.func @input_no_tokens(%x: tensor<0x32xbf16>) -> tensor<0x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op has no tokens: input 'tensor<0x32xbf16>'}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<0x32xbf16>) -> tensor<0x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<0x32xbf16>
}

// -----

// Parameters go whole to every shard: the group offsets of a routed GEMM
// depend on the tokens and would be wrong for every shard.
func.func @offsets_param(%x: tensor<64x256xbf16>, %w: tensor<4x512x256xbf16>, %offs: tensor<4xi32>) -> tensor<64x512xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op parameter #1 ('tensor<4xi32>') has an integer element type: parameters are shard-invariant (weights and their scales); token-dependent data such as group offsets must be computed in the body from the shard}}
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w, %offs)
      : (tensor<64x256xbf16>, tensor<4x512x256xbf16>, tensor<4xi32>) -> tensor<64x512xbf16> {
  ^bb0(%xs: tensor<?x256xbf16>, %ws: tensor<4x512x256xbf16>, %o: tensor<4xi32>):
    %h = mxmoe.scaled_grouped_matmul %xs, %ws, %o {fqn = "experts.w1"}
        : (tensor<?x256xbf16>, tensor<4x512x256xbf16>, tensor<4xi32>) -> tensor<?x512xbf16>
    mxmoe.yield %h : tensor<?x512xbf16>
  }
  return %y : tensor<64x512xbf16>
}
