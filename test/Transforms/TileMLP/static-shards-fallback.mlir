// RUN: mxmoe-opt %s --mxmoe-tile-mlp --split-input-file --verify-diagnostics | FileCheck %s

// Static shard loops need every body op to take static shapes; an op that
// does not (a call typed for tensor<?x...>, an unranked tensor) keeps one
// loop over run-time bounds, with a remark naming the op and the reason
// recorded on the loops (`mxmoe.dynamic_shards`, read by mxmoe-compile).
// CHECK-LABEL: func.func @call_in_body
// CHECK: scf.for
// CHECK:   func.call @trace(%{{.*}}) : (tensor<?x64xf32>) -> ()
// CHECK: } {mxmoe.dynamic_shards = "'func.call' cannot take static shard shapes", mxmoe.num_shards = 2 : i64, mxmoe.tiled_mlp = "c", mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
func.func private @trace(tensor<?x64xf32>)
func.func @call_in_body(%x: tensor<6x64xf32>) -> tensor<6x64xf32> {
  // expected-remark @below {{mxmoe-tile-mlp: the shard loop keeps a run-time token count: 'func.call' cannot take static shard shapes (its MX linears are not expanded)}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) {fqn = "c"} : (tensor<6x64xf32>) -> tensor<6x64xf32> {
  ^bb0(%xs: tensor<?x64xf32>):
    func.call @trace(%xs) : (tensor<?x64xf32>) -> ()
    mxmoe.yield %xs : tensor<?x64xf32>
  }
  return %y : tensor<6x64xf32>
}

// -----

// CHECK-LABEL: func.func @unranked
// CHECK: } {mxmoe.dynamic_shards = "'tensor.cast' cannot take static shard shapes", mxmoe.num_shards = 2 : i64, mxmoe.tiled_mlp = "u", mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
func.func @unranked(%x: tensor<6x64xf32>) -> tensor<6x64xf32> {
  // expected-remark @below {{'tensor.cast' cannot take static shard shapes}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) {fqn = "u"} : (tensor<6x64xf32>) -> tensor<6x64xf32> {
  ^bb0(%xs: tensor<?x64xf32>):
    %a = tensor.cast %xs : tensor<?x64xf32> to tensor<*xf32>
    mxmoe.yield %xs : tensor<?x64xf32>
  }
  return %y : tensor<6x64xf32>
}

// -----

// Shape arithmetic on the shard's token count folds to constants, so the
// loop stays static.
// CHECK-LABEL: func.func @shape_arith
// CHECK: tensor.empty() : tensor<6x64xf32>
// CHECK: scf.for
// CHECK: } {mxmoe.num_shards = 2 : i64, mxmoe.shard_tokens = 3 : i64, mxmoe.tiled_mlp = "s", mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
func.func @shape_arith(%x: tensor<6x64xf32>) -> tensor<6x64xf32> {
  %y = mxmoe.tiled_mlp shards = 2 (%x) {fqn = "s"} : (tensor<6x64xf32>) -> tensor<6x64xf32> {
  ^bb0(%xs: tensor<?x64xf32>):
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %n = tensor.dim %xs, %c0 : tensor<?x64xf32>
    %m = arith.muli %n, %c2 : index
    %scratch = tensor.empty(%m) : tensor<?x64xf32>
    mxmoe.yield %xs : tensor<?x64xf32>
  }
  return %y : tensor<6x64xf32>
}

// -----

// An MX linear with a bf16 input and an f32 result: its gradient functions
// take dy in the input's type, so the backward rounds the f32 cotangent.
// CHECK-LABEL: func.func @f32_out.backward
// CHECK: %[[DY:.*]] = tensor.extract_slice %arg2[%{{.*}}, 0] [4, 64] [1, 1] : tensor<8x64xf32> to tensor<4x64xf32>
// CHECK: %[[DYB:.*]] = arith.truncf %[[DY]] : tensor<4x64xf32> to tensor<4x64xbf16>
// CHECK: func.call @f32_out.w.input_grad(%[[DYB]], %arg1)
func.func @f32_out(%x: tensor<8x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<8x64xf32> {
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w) {fqn = "f32_out"} : (tensor<8x64xbf16>, tensor<64x64xbf16>) -> tensor<8x64xf32> {
  ^bb0(%xs: tensor<?x64xbf16>, %a: tensor<64x64xbf16>):
    %o = mxmoe.linear %xs, %a {fqn = "f32_out.w", precision = #mxmoe.precision<mxfp8>} : (tensor<?x64xbf16>, tensor<64x64xbf16>) -> tensor<?x64xf32>
    mxmoe.yield %o : tensor<?x64xf32>
  }
  return %y : tensor<8x64xf32>
}

// -----

// Tiled MLPs in nested modules: the expanded functions and the backward
// go into the nearest module, next to their calls; the same fqn in two
// modules is two sets of functions.
// CHECK-LABEL: module @a
// CHECK: func.call @m.w.forward
// CHECK: func.func @m.backward
// CHECK: func.func @m.w.forward
// CHECK-LABEL: module @b
// CHECK: func.call @m.w.forward
// CHECK: func.func @m.w.forward
module {
  module @a {
    func.func @f(%x: tensor<8x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<8x64xbf16> {
      %y = mxmoe.tiled_mlp shards = 2 (%x, %w) {fqn = "m"} : (tensor<8x64xbf16>, tensor<64x64xbf16>) -> tensor<8x64xbf16> {
      ^bb0(%xs: tensor<?x64xbf16>, %ww: tensor<64x64xbf16>):
        %o = mxmoe.linear %xs, %ww {fqn = "m.w", precision = #mxmoe.precision<mxfp8>} : (tensor<?x64xbf16>, tensor<64x64xbf16>) -> tensor<?x64xbf16>
        mxmoe.yield %o : tensor<?x64xbf16>
      }
      return %y : tensor<8x64xbf16>
    }
  }
  module @b {
    func.func @f(%x: tensor<8x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<8x64xbf16> {
      %y = mxmoe.tiled_mlp shards = 2 (%x, %w) {fqn = "m"} : (tensor<8x64xbf16>, tensor<64x64xbf16>) -> tensor<8x64xbf16> {
      ^bb0(%xs: tensor<?x64xbf16>, %ww: tensor<64x64xbf16>):
        %o = mxmoe.linear %xs, %ww {fqn = "m.w", precision = #mxmoe.precision<mxfp8>} : (tensor<?x64xbf16>, tensor<64x64xbf16>) -> tensor<?x64xbf16>
        mxmoe.yield %o : tensor<?x64xbf16>
      }
      return %y : tensor<8x64xbf16>
    }
  }
}

// -----

// A result type that leaves the batch dims dynamic: expanded with the
// input's [B, S], then cast to the declared type.
// CHECK-LABEL: func.func @dyn_result
// CHECK: %[[E:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 5, 64] : tensor<10x64xf32> into tensor<2x5x64xf32>
// CHECK: tensor.cast %[[E]] : tensor<2x5x64xf32> to tensor<?x5x64xf32>
func.func @dyn_result(%x: tensor<2x5x64xf32>) -> tensor<?x5x64xf32> {
  %y = mxmoe.tiled_mlp shards = 3 (%x) {fqn = "d"} : (tensor<2x5x64xf32>) -> tensor<?x5x64xf32> {
  ^bb0(%xs: tensor<?x64xf32>):
    %n = arith.negf %xs : tensor<?x64xf32>
    mxmoe.yield %n : tensor<?x64xf32>
  }
  return %y : tensor<?x5x64xf32>
}
