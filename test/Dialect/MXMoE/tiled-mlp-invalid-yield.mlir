// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.yield and the end of the mxmoe.tiled_mlp body: one value per result,
// each tensor<?x...> with the result's trailing dims and element type.

// The body must end with mxmoe.yield (a terminator of another dialect that
// has no parent constraint of its own reaches this rule).
func.func @foreign_terminator(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op body must end with mxmoe.yield}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    llvm.unreachable
  }
  return %y : tensor<64x32xbf16>
}

// -----

// A body ending in a non-terminator fails the generic block check first.
func.func @no_terminator(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    // expected-error @+1 {{block with no terminator, has %1 = "arith.constant"() <{value = 0 : i32}> : () -> i32}}
    %c = arith.constant 0 : i32
  }
  return %y : tensor<64x32xbf16>
}

// -----

func.func @yield_too_few(%x: tensor<64x32xbf16>) -> (tensor<64x32xbf16>, tensor<64x32xbf16>) {
  %y:2 = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> (tensor<64x32xbf16>, tensor<64x32xbf16>) {
  ^bb0(%xs: tensor<?x32xbf16>):
    // expected-error @+1 {{'mxmoe.yield' op yields 1 values but the enclosing mxmoe.tiled_mlp has 2 results}}
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y#0, %y#1 : tensor<64x32xbf16>, tensor<64x32xbf16>
}

// -----

func.func @yield_nothing(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    // expected-error @+1 {{'mxmoe.yield' op yields 0 values but the enclosing mxmoe.tiled_mlp has 1 results}}
    mxmoe.yield
  }
  return %y : tensor<64x32xbf16>
}

// -----

// Each shard yields a dynamic token count.
func.func @yield_static_tokens(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    %c = tensor.cast %xs : tensor<?x32xbf16> to tensor<32x32xbf16>
    // expected-error @+1 {{'mxmoe.yield' op value #0 must be 'tensor<?x32xbf16>' (a shard of result #0), got 'tensor<32x32xbf16>'}}
    mxmoe.yield %c : tensor<32x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

// The yielded element type is the result's.
func.func @yield_element_type(%x: tensor<64x32xbf16>) -> tensor<64x32xf32> {
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> tensor<64x32xf32> {
  ^bb0(%xs: tensor<?x32xbf16>):
    // expected-error @+1 {{'mxmoe.yield' op value #0 must be 'tensor<?x32xf32>' (a shard of result #0), got 'tensor<?x32xbf16>'}}
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xf32>
}

// -----

// With a [B, S, H] input, a [B, S, N] result is yielded as tensor<?xN>.
func.func @yield_3d_width(%x: tensor<2x64x32xbf16>, %w: tensor<48x32xbf16>) -> tensor<2x64x48xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w) : (tensor<2x64x32xbf16>, tensor<48x32xbf16>) -> tensor<2x64x48xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>, %ws: tensor<48x32xbf16>):
    // expected-error @+1 {{'mxmoe.yield' op value #0 must be 'tensor<?x48xbf16>' (a shard of result #0), got 'tensor<?x32xbf16>'}}
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<2x64x48xbf16>
}

// -----

// The second value is checked against the second result.
func.func @yield_second_value(%x: tensor<64x32xbf16>) -> (tensor<64x32xbf16>, tensor<64x4x8xf32>) {
  %y:2 = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> (tensor<64x32xbf16>, tensor<64x4x8xf32>) {
  ^bb0(%xs: tensor<?x32xbf16>):
    %e = arith.extf %xs : tensor<?x32xbf16> to tensor<?x32xf32>
    // expected-error @+1 {{'mxmoe.yield' op value #1 must be 'tensor<?x4x8xf32>' (a shard of result #1), got 'tensor<?x32xf32>'}}
    mxmoe.yield %xs, %e : tensor<?x32xbf16>, tensor<?x32xf32>
  }
  return %y#0, %y#1 : tensor<64x32xbf16>, tensor<64x4x8xf32>
}

// -----

func.func @yield_outside_tiled_mlp(%x: tensor<64x32xbf16>) {
  // expected-error @+1 {{'mxmoe.yield' op expects parent op to be one of 'mxmoe.tiled_mlp, mxmoe.fused_quantize'}}
  mxmoe.yield %x : tensor<64x32xbf16>
}

// -----

// A summed result's part has the result's own type (no token dim).
func.func @summed_part_type(%x: tensor<64x32xbf16>) -> (tensor<64x32xbf16>, tensor<16xf32>) {
  %y, %s = mxmoe.tiled_mlp shards = 2 (%x) {summed_results = 1} : (tensor<64x32xbf16>) -> (tensor<64x32xbf16>, tensor<16xf32>) {
  ^bb0(%xs: tensor<?x32xbf16>):
    %c = arith.constant dense<0.0> : tensor<8xf32>
    // expected-error @+1 {{'mxmoe.yield' op value #1 must be 'tensor<16xf32>' (the shard's part of summed result #1), got 'tensor<8xf32>'}}
    mxmoe.yield %xs, %c : tensor<?x32xbf16>, tensor<8xf32>
  }
  return %y, %s : tensor<64x32xbf16>, tensor<16xf32>
}
