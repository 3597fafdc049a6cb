// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.tiled_mlp attributes: num_shards >= 1 (or absent = auto);
// grad_accumulator f32, bf16 or f16, and f32 or the element type of every
// float parameter (TiledMLPOp::verify).

func.func @shards_zero(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op shard count must be >= 1 or auto, got 0}}
  %y = mxmoe.tiled_mlp shards = 0 (%x) : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

func.func @shards_negative(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op shard count must be >= 1 or auto, got -2}}
  %y = mxmoe.tiled_mlp shards = -2 (%x) : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

// The generic form reaches the same rule.
func.func @shards_zero_generic(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op shard count must be >= 1 or auto, got 0}}
  %y = "mxmoe.tiled_mlp"(%x) <{num_shards = 0 : i64}> ({
  ^bb0(%xs: tensor<?x32xbf16>):
    "mxmoe.yield"(%xs) : (tensor<?x32xbf16>) -> ()
  }) : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
  return %y : tensor<64x32xbf16>
}

// -----

func.func @accumulator_integer(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op grad_accumulator must be f32, bf16 or f16 (the parameter type is the default), got 'i32'}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) {grad_accumulator = i32} : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

// The accumulator is an element type, not a tensor type.
func.func @accumulator_tensor(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op grad_accumulator must be f32, bf16 or f16 (the parameter type is the default), got 'tensor<32xf32>'}}
  %y = mxmoe.tiled_mlp shards = auto (%x) {grad_accumulator = tensor<32xf32>} : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

// In the generic form a non-type grad_accumulator fails property conversion.
func.func @accumulator_not_a_type_generic(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{invalid properties {grad_accumulator = 3 : i64} for op mxmoe.tiled_mlp: Invalid attribute `grad_accumulator` in property conversion: 3 : i64}}
  %y = "mxmoe.tiled_mlp"(%x) <{grad_accumulator = 3 : i64}> ({
  ^bb0(%xs: tensor<?x32xbf16>):
    "mxmoe.yield"(%xs) : (tensor<?x32xbf16>) -> ()
  }) : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
  return %y : tensor<64x32xbf16>
}

// -----

// ... and as a discardable-looking attribute it fails the ODS constraint.
func.func @accumulator_not_a_type_generic_attr_dict(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op attribute 'grad_accumulator' failed to satisfy constraint: any type attribute}}
  %y = "mxmoe.tiled_mlp"(%x) ({
  ^bb0(%xs: tensor<?x32xbf16>):
    "mxmoe.yield"(%xs) : (tensor<?x32xbf16>) -> ()
  }) {grad_accumulator = 3 : i64} : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
  return %y : tensor<64x32xbf16>
}

// -----

// A float type, but not an accumulation type.
func.func @accumulator_f4(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op grad_accumulator must be f32, bf16 or f16 (the parameter type is the default), got 'f4E2M1FN'}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) {grad_accumulator = f4E2M1FN} : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

// Regression (mxmoe-fuzz-pipeline, a mutant of Transforms/TileMLP/shards.mlir):
// a bf16 parameter with an f16 accumulator verified, and mxmoe-tile-mlp then
// emitted arith.extf bf16 -> f16 (not a widening), invalid IR. The
// accumulator must be f32 or the parameter's element type.
func.func @accumulator_f16_bf16_param(%x: tensor<2x5x64xbf16>, %w: tensor<96x64xbf16>) -> tensor<2x5x96xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op grad_accumulator 'f16' cannot accumulate the gradient of parameter #0 ('tensor<96x64xbf16>'): it must be f32 or the parameter's element type}}
  %y = mxmoe.tiled_mlp shards = 4 (%x, %w) {fqn = "blk", grad_accumulator = f16}
      : (tensor<2x5x64xbf16>, tensor<96x64xbf16>) -> tensor<2x5x96xbf16> {
  ^bb0(%xs: tensor<?x64xbf16>, %ww: tensor<96x64xbf16>):
    %o = mxmoe.linear %xs, %ww {fqn = "blk.w"} : (tensor<?x64xbf16>, tensor<96x64xbf16>) -> tensor<?x96xbf16>
    mxmoe.yield %o : tensor<?x96xbf16>
  }
  return %y : tensor<2x5x96xbf16>
}

// -----

// Accumulating an f32 parameter's gradient in bf16 would narrow it.
func.func @accumulator_bf16_f32_param(%x: tensor<64x32xbf16>, %b: tensor<32xbf16>, %s: tensor<32xf32>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op grad_accumulator 'bf16' cannot accumulate the gradient of parameter #1 ('tensor<32xf32>'): it must be f32 or the parameter's element type}}
  %y = mxmoe.tiled_mlp shards = 2 (%x, %b, %s) {grad_accumulator = bf16} : (tensor<64x32xbf16>, tensor<32xbf16>, tensor<32xf32>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>, %bb: tensor<32xbf16>, %ss: tensor<32xf32>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// -----

// save_routing names @"<fqn>.forward" (TiledMLPOp::verifyRegions).
func.func @save_routing_no_fqn(%x: tensor<64x32xbf16>) -> tensor<64x2xf32> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op save_routing needs an fqn (it names the forward function that returns the saved routing)}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) {save_routing} : (tensor<64x32xbf16>) -> tensor<64x2xf32> {
  ^bb0(%xs: tensor<?x32xbf16>):
    %wt, %e = mxmoe.router_topk %xs {top_k = 2 : i64, score = #mxmoe.router_score<softmax>}
        : tensor<?x32xbf16> -> tensor<?x2xf32>, tensor<?x2xi32>
    mxmoe.yield %wt : tensor<?x2xf32>
  }
  return %y : tensor<64x2xf32>
}

// -----

func.func @save_routing_no_router(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  // expected-error @+1 {{'mxmoe.tiled_mlp' op save_routing needs an mxmoe.router_topk in the body (the routing decision it saves)}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) {fqn = "mlp", save_routing} : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}
