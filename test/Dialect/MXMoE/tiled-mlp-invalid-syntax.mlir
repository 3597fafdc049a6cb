// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// Parse errors of the custom syntax of mxmoe.tiled_mlp (TiledMLPOp::parse):
//   mxmoe.tiled_mlp shards = (auto | N) (%input, %params...) attr-dict
//       : (input-type, param-types...) -> (result-types) region
// including the typing of num_shards / grad_accumulator / fqn in the
// attribute dictionary.

func.func @shards_keyword(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+2 {{custom op 'mxmoe.tiled_mlp' expected integer value}}
  // expected-error @+1 {{custom op 'mxmoe.tiled_mlp' expected a shard count or 'auto'}}
  %y = mxmoe.tiled_mlp shards = foo (%x) : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

func.func @shards_float(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+2 {{custom op 'mxmoe.tiled_mlp' expected integer value}}
  // expected-error @+1 {{custom op 'mxmoe.tiled_mlp' expected a shard count or 'auto'}}
  %y = mxmoe.tiled_mlp shards = 2.5 (%x) : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

func.func @shards_too_large(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+2 {{custom op 'mxmoe.tiled_mlp' integer value too large}}
  // expected-error @+1 {{custom op 'mxmoe.tiled_mlp' expected a shard count or 'auto'}}
  %y = mxmoe.tiled_mlp shards = 99999999999999999999 (%x) : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

// `shards = ...` is mandatory (write `shards = auto` for the default).
func.func @shards_missing(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{custom op 'mxmoe.tiled_mlp' expected 'shards'}}
  %y = mxmoe.tiled_mlp (%x) : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

func.func @shards_missing_equal(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{expected '='}}
  %y = mxmoe.tiled_mlp shards 2 (%x) : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

func.func @no_operands() -> tensor<64x32xbf16> {
  // expected-error @+1 {{custom op 'mxmoe.tiled_mlp' expected at least the token input operand}}
  %y = mxmoe.tiled_mlp shards = 2 () : () -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

func.func @operand_type_count(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{custom op 'mxmoe.tiled_mlp' number of operands and types do not match: got 1 operands and 2 types}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>, tensor<32x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

// The type is a function type (operands) -> (results).
func.func @not_a_function_type(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{custom op 'mxmoe.tiled_mlp' invalid kind of type specified: expected builtin.function, but found 'tensor<64x32xbf16>'}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

func.func @region_missing(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{expected '{' to begin a region}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
  return %y : tensor<64x32xbf16>
}

// -----

// num_shards is spelled by `shards = N`, not repeated in the attribute
// dictionary.
func.func @shards_twice(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{custom op 'mxmoe.tiled_mlp' attribute 'num_shards' occurs more than once in the attribute list}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) {num_shards = 4 : i64} : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

// Mistyped inherent attributes in the attribute dictionary are rejected by
// the parser (at the dictionary) instead of being dropped silently.
func.func @accumulator_string(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{custom op 'mxmoe.tiled_mlp' grad_accumulator must be a type (e.g. grad_accumulator = f32), got "f32"}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) {grad_accumulator = "f32"} : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

func.func @fqn_integer(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{custom op 'mxmoe.tiled_mlp' fqn must be a string, got 7 : i32}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) {fqn = 7 : i32} : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

// With `shards = auto`, num_shards in the dictionary is not a duplicate but
// is still the wrong spelling.
func.func @shards_in_attr_dict(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{custom op 'mxmoe.tiled_mlp' give the shard count as `shards = N` (or `shards = auto`), not as num_shards in the attribute dictionary}}
  %y = mxmoe.tiled_mlp shards = auto (%x) {num_shards = 3} : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

func.func @summed_results_not_integer(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{custom op 'mxmoe.tiled_mlp' summed_results must be an i64 count (e.g. summed_results = 2), got "one"}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) {summed_results = "one"} : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}
