// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.tiled_mlp body: one non-empty block whose arguments are (shard,
// params...): the shard is tensor<?xHxE> (input's last dim and element type),
// each parameter argument has its operand's type; the region is isolated from
// above (TiledMLPOp::verifyRegions and the op traits).

func.func @missing_param_argument(%x: tensor<64x32xbf16>, %w: tensor<32x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op body must take 2 arguments (the token shard, then one per parameter), got 1}}
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w) : (tensor<64x32xbf16>, tensor<32x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

func.func @extra_argument(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op body must take 1 arguments (the token shard, then one per parameter), got 2}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>, %extra: index):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

// The shard has a dynamic token count, not the full input's.
func.func @shard_static(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op body argument #0 (the token shard) must be 'tensor<?x32xbf16>', got 'tensor<64x32xbf16>'}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<64x32xbf16>):
    %c = tensor.cast %xs : tensor<64x32xbf16> to tensor<?x32xbf16>
    mxmoe.yield %c : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

// A [B, S, H] input is sharded along the flattened token axis: the shard is
// 2-D.
func.func @shard_3d(%x: tensor<2x64x32xbf16>) -> tensor<2x64x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op body argument #0 (the token shard) must be 'tensor<?x32xbf16>', got 'tensor<?x?x32xbf16>'}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<2x64x32xbf16>) -> tensor<2x64x32xbf16> {
  ^bb0(%xs: tensor<?x?x32xbf16>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xs, %c0 : tensor<?x?x32xbf16>
    %e = tensor.empty(%n) : tensor<?x32xbf16>
    mxmoe.yield %e : tensor<?x32xbf16>
  }
  return %y : tensor<2x64x32xbf16>
}

// -----

func.func @shard_element_type(%x: tensor<64x32xbf16>) -> tensor<64x32xf32> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op body argument #0 (the token shard) must be 'tensor<?x32xbf16>', got 'tensor<?x32xf32>'}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> tensor<64x32xf32> {
  ^bb0(%xs: tensor<?x32xf32>):
    mxmoe.yield %xs : tensor<?x32xf32>
  }
  return %y : tensor<64x32xf32>
}

// -----

// Parameters are passed whole to every shard, with their own type.
func.func @param_type(%x: tensor<64x32xbf16>, %w: tensor<16x32xbf16>, %b: tensor<16xbf16>) -> tensor<64x16xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op body argument #2 must have the type of parameter #1 ('tensor<16xbf16>'), got 'tensor<?xbf16>'}}
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w, %b) : (tensor<64x32xbf16>, tensor<16x32xbf16>, tensor<16xbf16>) -> tensor<64x16xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>, %ws: tensor<16x32xbf16>, %bs: tensor<?xbf16>):
    %o = mxmoe.linear %xs, %ws bias %bs {fqn = "l"} : (tensor<?x32xbf16>, tensor<16x32xbf16>, tensor<?xbf16>) -> tensor<?x16xbf16>
    mxmoe.yield %o : tensor<?x16xbf16>
  }
  return %y : tensor<64x16xbf16>
}

// -----

// IsolatedFromAbove: values from outside reach the body only as parameters.
func.func @captures_outer_value(%x: tensor<64x32xbf16>, %w: tensor<32x32xbf16>) -> tensor<64x32xbf16> {
  // expected-note @+1 {{required by region isolation constraints}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    // expected-error @+1 {{'mxmoe.linear' op using value defined outside the region}}
    %o = mxmoe.linear %xs, %w {fqn = "l"} : (tensor<?x32xbf16>, tensor<32x32xbf16>) -> tensor<?x32xbf16>
    mxmoe.yield %o : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

func.func @empty_region(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op region #0 ('body') failed to verify constraint: region with 1 blocks}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  }
  return %y : tensor<64x32xbf16>
}

// -----

func.func @two_blocks(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op expects region #0 to have 0 or 1 blocks}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  ^bb1:
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

func.func @empty_block(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op expects a non-empty block}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
  }
  return %y : tensor<64x32xbf16>
}
