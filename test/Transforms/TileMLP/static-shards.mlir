// RUN: mxmoe-opt %s --mxmoe-tile-mlp --split-input-file --verify-diagnostics | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-tile-mlp="rule=square" --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=SQUARE
// RUN: mxmoe-opt %s --mxmoe-tile-mlp="weight-grad-bf16" --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=WGBF16
// RUN: mxmoe-opt %s --mxmoe-tile-mlp="backward=false" --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=NOBWD

// With a static token count and shard count, the balanced split is known
// at compile time: T = 10 tokens ([2, 5] flattened) in N = 4 shards is
// r = 2 shards of q + 1 = 3 tokens, then 2 shards of q = 2, one loop per
// shard size, each with static shapes (mxmoe.shard_tokens); shard i of
// the second loop starts at i * 2 + r.
// CHECK-LABEL: func.func @explicit
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<2x5x64xbf16> into tensor<10x64xbf16>
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<10x96xbf16>
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[L1:.*]] = scf.for %[[I:.*]] = %[[C0]] to %[[C2]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (tensor<10x96xbf16>)
// CHECK:   %[[OFF:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK:   %[[SHARD:.*]] = tensor.extract_slice %[[X]][%[[OFF]], 0] [3, 64] [1, 1] : tensor<10x64xbf16> to tensor<3x64xbf16>
// CHECK:   %[[Y:.*]] = mxmoe.linear %[[SHARD]], %arg1 {fqn = "blk.w"} : (tensor<3x64xbf16>, tensor<96x64xbf16>) -> tensor<3x96xbf16>
// CHECK:   tensor.insert_slice %[[Y]] into %[[ACC]][%[[OFF]], 0] [3, 96] [1, 1] : tensor<3x96xbf16> into tensor<10x96xbf16>
// CHECK: } {mxmoe.grad_accumulator = f32, mxmoe.num_shards = 4 : i64, mxmoe.shard_tokens = 3 : i64, mxmoe.tiled_mlp = "blk", mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
// CHECK: %[[L2:.*]] = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC2:.*]] = %[[L1]]) -> (tensor<10x96xbf16>)
// CHECK:   %[[JQ:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK:   %[[OFF2:.*]] = arith.addi %[[JQ]], %{{.*}} : index
// CHECK:   tensor.extract_slice %[[X]][%[[OFF2]], 0] [2, 64] [1, 1] : tensor<10x64xbf16> to tensor<2x64xbf16>
// CHECK: } {mxmoe.grad_accumulator = f32, mxmoe.num_shards = 4 : i64, mxmoe.shard_tokens = 2 : i64, mxmoe.tiled_mlp = "blk", mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
// CHECK: tensor.expand_shape %[[L2]] {{\[\[}}0, 1], [2]] output_shape [2, 5, 96]
func.func @explicit(%x: tensor<2x5x64xbf16>, %w: tensor<96x64xbf16>) -> tensor<2x5x96xbf16> {
  %y = mxmoe.tiled_mlp shards = 4 (%x, %w) {fqn = "blk", grad_accumulator = f32}
      : (tensor<2x5x64xbf16>, tensor<96x64xbf16>) -> tensor<2x5x96xbf16> {
  ^bb0(%xs: tensor<?x64xbf16>, %ww: tensor<96x64xbf16>):
    %o = mxmoe.linear %xs, %ww {fqn = "blk.w"} : (tensor<?x64xbf16>, tensor<96x64xbf16>) -> tensor<?x96xbf16>
    mxmoe.yield %o : tensor<?x96xbf16>
  }
  return %y : tensor<2x5x96xbf16>
}

// -----

// Fewer tokens than shards (T = 3, N = 4): three shards of one token; the
// empty fourth shard computes nothing and gets no loop.
// CHECK-LABEL: func.func @fewer_tokens
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C3]]
// CHECK:   tensor.extract_slice %arg0[%{{.*}}, 0] [1, 16] [1, 1] : tensor<3x16xf32> to tensor<1x16xf32>
// CHECK: } {mxmoe.num_shards = 4 : i64, mxmoe.shard_tokens = 1 : i64, mxmoe.tiled_mlp, mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
// CHECK-NOT: scf.for
// CHECK: return
func.func @fewer_tokens(%x: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %y = mxmoe.tiled_mlp shards = 4 (%x) : (tensor<3x16xf32>) -> tensor<3x16xf32> {
  ^bb0(%xs: tensor<?x16xf32>):
    mxmoe.yield %xs : tensor<?x16xf32>
  }
  return %y : tensor<3x16xf32>
}

// -----

// auto with a static T: ceil(70000 / 32768) = 3 shards of 23334, 23333,
// 23333 tokens; `square` (H = 16384): ceil(70000 / 16384) = 5 shards of 14000.
// The body's shapes (tensor.dim, tensor.splat, elementwise ops) all become
// static.
// (The splat, now shard-invariant, is hoisted out of each loop.)
// CHECK-LABEL: func.func @auto_static
// CHECK: tensor.splat %{{.*}} : tensor<23334x16384xbf16>
// CHECK: scf.for
// CHECK:   arith.addf %{{.*}}, %{{.*}} : tensor<23334x16384xbf16>
// CHECK: } {mxmoe.shard_tokens = 23334 : i64, mxmoe.tiled_mlp = "a", mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
// CHECK: tensor.splat %{{.*}} : tensor<23333x16384xbf16>
// CHECK: scf.for
// CHECK:   arith.addf %{{.*}}, %{{.*}} : tensor<23333x16384xbf16>
// CHECK: } {mxmoe.shard_tokens = 23333 : i64, mxmoe.tiled_mlp = "a", mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
// SQUARE-LABEL: func.func @auto_static
// SQUARE: %[[C5:.*]] = arith.constant 5 : index
// SQUARE: scf.for %{{.*}} = %{{.*}} to %[[C5]]
// SQUARE: } {mxmoe.shard_tokens = 14000 : i64, mxmoe.tiled_mlp = "a", mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
// SQUARE-NEXT: return
func.func @auto_static(%x: tensor<70000x16384xbf16>) -> tensor<70000x16384xbf16> {
  %y = mxmoe.tiled_mlp shards = auto (%x) {fqn = "a"} : (tensor<70000x16384xbf16>) -> tensor<70000x16384xbf16> {
  ^bb0(%xs: tensor<?x16384xbf16>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xs, %c0 : tensor<?x16384xbf16>
    %one = arith.constant 1.0 : bf16
    %ones = tensor.splat %one[%n] : tensor<?x16384xbf16>
    %s = arith.addf %xs, %ones : tensor<?x16384xbf16>
    mxmoe.yield %s : tensor<?x16384xbf16>
  }
  return %y : tensor<70000x16384xbf16>
}

// -----

// MX linears of a static shard loop are expanded for the shard shapes:
// `@"<fqn>.forward"` etc. for the first loop's 43-token shards and
// `@"<fqn>.tail.forward"` etc. for the second loop's 42-token shards
// (300 tokens in 7 shards). The backward recomputes each shard with the
// same functions and takes the linear's gradients from its input_grad,
// weight_grad and bias_grad functions; parameter gradients are summed over
// all shards of both loops (grad_accumulator = f32: the weight-gradient
// GEMMs write f32, no bf16 rounding per shard). A recomputed forward call whose result no
// gradient needs (this linear's: its gradients use only its input) is
// dropped.
// CHECK-LABEL: func.func @mx
// CHECK: scf.for
// CHECK:   func.call @layers.0.mlp.w1.forward(%{{.*}}, %arg1, %arg2) : (tensor<43x64xbf16>, tensor<96x64xbf16>, tensor<96xbf16>) -> tensor<43x96xbf16>
// CHECK: } {mxmoe.grad_accumulator = f32, mxmoe.num_shards = 7 : i64, mxmoe.shard_tokens = 43 : i64, mxmoe.tiled_mlp = "layers.0.mlp", mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
// CHECK: scf.for
// CHECK:   func.call @layers.0.mlp.w1.tail.forward(%{{.*}}, %arg1, %arg2) : (tensor<42x64xbf16>, tensor<96x64xbf16>, tensor<96xbf16>) -> tensor<42x96xbf16>
// CHECK: } {mxmoe.grad_accumulator = f32, mxmoe.num_shards = 7 : i64, mxmoe.shard_tokens = 42 : i64, mxmoe.tiled_mlp = "layers.0.mlp", mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
// CHECK-LABEL: func.func @layers.0.mlp.backward
// CHECK: %[[B1:.*]]:3 = scf.for {{.*}} -> (tensor<300x64xbf16>, tensor<96x64xf32>, tensor<96xf32>)
// CHECK:   %[[XS:.*]] = tensor.extract_slice %arg0[%{{.*}}, 0] [43, 64]
// CHECK-NOT: func.call @layers.0.mlp.w1.forward
// CHECK:   %[[DY:.*]] = tensor.extract_slice %arg3[%{{.*}}, 0] [43, 96]
// CHECK:   %[[DX:.*]] = func.call @layers.0.mlp.w1.input_grad(%[[DY]], %arg1) : (tensor<43x96xbf16>, tensor<96x64xbf16>) -> tensor<43x64xbf16>
// CHECK:   %[[DW:.*]] = func.call @layers.0.mlp.w1.weight_grad(%[[DY]], %[[XS]]) : (tensor<43x96xbf16>, tensor<43x64xbf16>) -> tensor<96x64xf32>
// CHECK:   %[[DB:.*]] = func.call @layers.0.mlp.w1.bias_grad(%[[DY]]) : (tensor<43x96xbf16>) -> tensor<96xf32>
// CHECK:   tensor.insert_slice %[[DX]]
// CHECK:   arith.addf %{{.*}}, %[[DW]] : tensor<96x64xf32>
// CHECK: } {mxmoe.shard_tokens = 43 : i64, mxmoe.tiled_mlp_backward = "layers.0.mlp", mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
// CHECK: %[[B2:.*]]:3 = scf.for {{.*}} iter_args(%{{.*}} = %[[B1]]#0, %{{.*}} = %[[B1]]#1, %{{.*}} = %[[B1]]#2)
// CHECK:   func.call @layers.0.mlp.w1.tail.input_grad
// CHECK:   func.call @layers.0.mlp.w1.tail.weight_grad
// CHECK: } {mxmoe.shard_tokens = 42 : i64, mxmoe.tiled_mlp_backward = "layers.0.mlp", mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
// CHECK: arith.truncf %[[B2]]#1 : tensor<96x64xf32> to tensor<96x64xbf16>
// CHECK-LABEL: func.func @layers.0.mlp.w1.forward(%{{.*}}: tensor<43x64xbf16>, %{{.*}}: tensor<96x64xbf16>, %{{.*}}: tensor<96xbf16>) -> tensor<43x96xbf16> attributes {mxmoe.fqn = "layers.0.mlp.w1", mxmoe.pass = "forward"}
// CHECK: mxmoe.quantize %{{.*}} {axis = 1 : i64} : tensor<43x64xbf16> -> tensor<43x64xf8E4M3FN>, tensor<43x2xf8E8M0FNU>
// CHECK: mxmoe.grouped_matmul
// CHECK-LABEL: func.func @layers.0.mlp.w1.weight_grad(%{{.*}}: tensor<43x96xbf16>, %{{.*}}: tensor<43x64xbf16>) -> tensor<96x64xf32>
// CHECK: mxmoe.quantize %{{.*}} offsets(%{{.*}}) {axis = 0 : i64} : tensor<43x96xbf16> -> tensor<96x64xf8E4M3FN>
// CHECK-LABEL: func.func @layers.0.mlp.w1.tail.forward(%{{.*}}: tensor<42x64xbf16>
// CHECK-SAME: mxmoe.fqn = "layers.0.mlp.w1", mxmoe.pass = "forward"
// weight-grad-bf16: the expanded weight gradients stay bf16 (transposes +
// a bf16 grouped_matmul), as with mxmoe-expand-scaled-matmul's option.
// WGBF16-LABEL: func.func @layers.0.mlp.w1.weight_grad(%{{.*}}: tensor<43x96xbf16>, %{{.*}}: tensor<43x64xbf16>) -> tensor<96x64xf32>
// WGBF16-NOT: mxmoe.quantize
// WGBF16: linalg.transpose
// WGBF16: mxmoe.grouped_matmul %{{.*}}, %{{.*}} offsets %{{.*}} : (tensor<96x43xbf16>, tensor<64x43xbf16>, tensor<1xi32>) -> tensor<1x96x64xf32>
// backward=false: only the forward functions are created.
// NOBWD-LABEL: func.func @mx
// NOBWD: func.call @layers.0.mlp.w1.forward
// NOBWD: func.call @layers.0.mlp.w1.tail.forward
// NOBWD-NOT: input_grad
// NOBWD-NOT: weight_grad
// NOBWD-NOT: backward
func.func @mx(%x: tensor<300x64xbf16>, %w: tensor<96x64xbf16>, %b: tensor<96xbf16>) -> tensor<300x96xbf16> {
  %y = mxmoe.tiled_mlp shards = 7 (%x, %w, %b) {fqn = "layers.0.mlp", grad_accumulator = f32}
      : (tensor<300x64xbf16>, tensor<96x64xbf16>, tensor<96xbf16>) -> tensor<300x96xbf16> {
  ^bb0(%xs: tensor<?x64xbf16>, %ww: tensor<96x64xbf16>, %bb: tensor<96xbf16>):
    %o = mxmoe.linear %xs, %ww bias %bb {fqn = "layers.0.mlp.w1", precision = #mxmoe.precision<mxfp8>}
        : (tensor<?x64xbf16>, tensor<96x64xbf16>, tensor<96xbf16>) -> tensor<?x96xbf16>
    mxmoe.yield %o : tensor<?x96xbf16>
  }
  return %y : tensor<300x96xbf16>
}

// -----

// MXFP4 weights dequantized in the body: hoisted out of both loops of a
// two-size split (250 tokens, 8 shards: 2 of 32, 6 of 31) and computed once.
// CHECK-LABEL: func.func @fp4_two_runs
// CHECK: %[[W:.*]] = mxmoe.dequantize
// CHECK: scf.for
// CHECK:   mxmoe.linear %{{.*}}, %[[W]] {{.*}} : (tensor<32x64xbf16>, tensor<128x64xbf16>)
// CHECK-NOT: mxmoe.dequantize
// CHECK: scf.for
// CHECK:   mxmoe.linear %{{.*}}, %[[W]] {{.*}} : (tensor<31x64xbf16>, tensor<128x64xbf16>)
// CHECK-LABEL: func.func @l.backward
func.func @fp4_two_runs(%x: tensor<250x64xbf16>, %wq: tensor<128x64xf4E2M1FN>, %ws: tensor<128x2xf8E8M0FNU>)
    -> tensor<250x128xbf16> {
  %y = mxmoe.tiled_mlp shards = 8 (%x, %wq, %ws) {fqn = "l"}
      : (tensor<250x64xbf16>, tensor<128x64xf4E2M1FN>, tensor<128x2xf8E8M0FNU>) -> tensor<250x128xbf16> {
  ^bb0(%xs: tensor<?x64xbf16>, %q: tensor<128x64xf4E2M1FN>, %s: tensor<128x2xf8E8M0FNU>):
    %w = mxmoe.dequantize %q, %s {axis = 1 : i64} : tensor<128x64xf4E2M1FN>, tensor<128x2xf8E8M0FNU> -> tensor<128x64xbf16>
    %h = mxmoe.linear %xs, %w {fqn = "l.w1", precision = #mxmoe.precision<bf16>}
        : (tensor<?x64xbf16>, tensor<128x64xbf16>) -> tensor<?x128xbf16>
    mxmoe.yield %h : tensor<?x128xbf16>
  }
  return %y : tensor<250x128xbf16>
}

// -----

// A body op that cannot take static shapes (here a tensor whose size is
// read from the data) keeps one loop over run-time shard bounds, with a
// remark.
// CHECK-LABEL: func.func @fallback
// CHECK: arith.divui
// CHECK: scf.for
// CHECK:   tensor.extract_slice %{{.*}} : tensor<8x4xf32> to tensor<?x4xf32>
// CHECK-NOT: mxmoe.shard_tokens
// CHECK: } {mxmoe.dynamic_shards = "'tensor.empty' cannot take static shard shapes", mxmoe.num_shards = 2 : i64, mxmoe.tiled_mlp = "f", mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
func.func @fallback(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-remark @below {{mxmoe-tile-mlp: the shard loop keeps a run-time token count: 'tensor.empty' cannot take static shard shapes (its MX linears are not expanded)}}
  %y = mxmoe.tiled_mlp shards = 2 (%x) {fqn = "f"} : (tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%xs: tensor<?x4xf32>):
    %c0 = arith.constant 0 : index
    %v = tensor.extract %xs[%c0, %c0] : tensor<?x4xf32>
    %i = arith.fptoui %v : f32 to i32
    %n = arith.index_cast %i : i32 to index
    %scratch = tensor.empty(%n) : tensor<?xf32>
    mxmoe.yield %xs : tensor<?x4xf32>
  }
  return %y : tensor<8x4xf32>
}
