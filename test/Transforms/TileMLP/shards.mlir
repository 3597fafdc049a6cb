// RUN: mxmoe-opt %s --mxmoe-tile-mlp="static-shards=false" --split-input-file | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-tile-mlp="rule=square static-shards=false" --split-input-file | FileCheck %s --check-prefix=SQUARE
// RUN: mxmoe-opt %s --mxmoe-tile-mlp="tokens-per-shard=4096 static-shards=false" --split-input-file | FileCheck %s --check-prefix=PER4K

// Explicit shard count, [B, S, H] input flattened to [T, H], output width
// (96) different from the input width (64). Shard i: offset i*q + min(i, r),
// size q + (i < r), with q = T / N and r = T % N.
// CHECK-LABEL: func.func @explicit
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<2x5x64xbf16> into tensor<10x64xbf16>
// CHECK: %[[T:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<10x64xbf16>
// CHECK: %[[N:.*]] = arith.constant 4 : index
// CHECK: %[[Q:.*]] = arith.divui %[[T]], %[[N]]
// CHECK: %[[R:.*]] = arith.remui %[[T]], %[[N]]
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<10x96xbf16>
// CHECK: %[[LOOP:.*]] = scf.for %[[I:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (tensor<10x96xbf16>)
// CHECK:   %[[IQ:.*]] = arith.muli %[[I]], %[[Q]]
// CHECK:   %[[MIN:.*]] = arith.minui %[[I]], %[[R]]
// CHECK:   %[[OFF:.*]] = arith.addi %[[IQ]], %[[MIN]]
// CHECK:   %[[LT:.*]] = arith.cmpi ult, %[[I]], %[[R]]
// CHECK:   %[[SIZE:.*]] = arith.addi %[[Q]],
// CHECK:   %[[SHARD:.*]] = tensor.extract_slice %[[X]][%[[OFF]], 0] [%[[SIZE]], 64] [1, 1] : tensor<10x64xbf16> to tensor<?x64xbf16>
// CHECK:   %[[Y:.*]] = mxmoe.linear %[[SHARD]], %arg1 {fqn = "blk.w"}
// CHECK:   %[[UPD:.*]] = tensor.insert_slice %[[Y]] into %[[ACC]][%[[OFF]], 0] [%[[SIZE]], 96] [1, 1]
// CHECK:   scf.yield %[[UPD]]
// CHECK: } {mxmoe.grad_accumulator = f32, mxmoe.num_shards = 4 : i64, mxmoe.tiled_mlp = "blk", mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
// CHECK: tensor.expand_shape %[[LOOP]] {{\[\[}}0, 1], [2]] output_shape [2, 5, 96]
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

// auto: ceil(T / 32768) clamped to [1, T]; `square`: ceil(T / H); a
// smaller tokens-per-shard gives more shards. Dynamic T works too.
// CHECK-LABEL: func.func @auto
// CHECK: %[[T:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x2048xbf16>
// CHECK: %[[PER:.*]] = arith.constant 32768 : index
// CHECK: %[[C:.*]] = arith.ceildivui %[[T]], %[[PER]]
// CHECK: %[[CAP:.*]] = arith.minui %[[C]], %[[T]]
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[N:.*]] = arith.maxui %[[CAP]], %[[ONE]]
// CHECK: tensor.empty(%[[T]]) : tensor<?x2048xbf16>
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]]
// SQUARE-LABEL: func.func @auto
// SQUARE: arith.constant 2048 : index
// SQUARE: arith.ceildivui
// PER4K-LABEL: func.func @auto
// PER4K: arith.constant 4096 : index
// PER4K: arith.ceildivui
func.func @auto(%x: tensor<?x2048xbf16>) -> (tensor<?x2048xbf16>, tensor<?x8xf32>) {
  %y, %logits = mxmoe.tiled_mlp shards = auto (%x) : (tensor<?x2048xbf16>) -> (tensor<?x2048xbf16>, tensor<?x8xf32>) {
  ^bb0(%xs: tensor<?x2048xbf16>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xs, %c0 : tensor<?x2048xbf16>
    %l = tensor.empty(%n) : tensor<?x8xf32>
    mxmoe.yield %xs, %l : tensor<?x2048xbf16>, tensor<?x8xf32>
  }
  return %y, %logits : tensor<?x2048xbf16>, tensor<?x8xf32>
}

// -----

// Fewer tokens than shards: still exactly N (= 4) shards, the last empty
// (q = 0, r = 3: sizes 1, 1, 1, 0).
// CHECK-LABEL: func.func @fewer_tokens
// CHECK: %[[N:.*]] = arith.constant 4 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]]
func.func @fewer_tokens(%x: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %y = mxmoe.tiled_mlp shards = 4 (%x) : (tensor<3x16xf32>) -> tensor<3x16xf32> {
  ^bb0(%xs: tensor<?x16xf32>):
    mxmoe.yield %xs : tensor<?x16xf32>
  }
  return %y : tensor<3x16xf32>
}
