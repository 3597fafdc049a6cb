// Summed results of mxmoe.tiled_mlp (`summed_results`): the forward adds
// every shard's part, and the backward hands every shard the whole
// cotangent of a sum. Here s = sum over tokens of x * x (a linalg.reduce
// over dim 0, the form of a router's per-expert score sums): T = 5 tokens
// in 3 shards (2, 2, 1); s = [15.25, 7]; with ds = [1, 2] and dy = 0,
// dx = 2 x ds. Run on the CPU, static and run-time shard loops.
// RUN: mxmoe-opt %s --mxmoe-tile-mlp | FileCheck %s --check-prefix=IR
// RUN: mxmoe-opt %s --mxmoe-tile-mlp --canonicalize --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries" --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --lower-affine --convert-math-to-llvm --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN:   | %mlir_runner -e main -entry-point-result=void -shared-libs=%runner_libs | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-tile-mlp="static-shards=false" --canonicalize --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries" --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --lower-affine --convert-math-to-llvm --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN:   | %mlir_runner -e main -entry-point-result=void -shared-libs=%runner_libs | FileCheck %s

// The forward loops carry the sum from zeros (one addf per shard); the
// backward's shards read the whole ds, broadcast over their rows.
// IR-LABEL: func.func @sq.backward(
// IR:         scf.for
// IR:           linalg.broadcast ins(%arg2 : tensor<2xf32>)
// IR-LABEL: func.func @fwd(
// IR:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2xf32>)
// IR:         scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[S:.*]] = %[[Z]])
// IR:           arith.addf %[[S]], %{{.*}} : tensor<2xf32>

func.func private @printMemrefF32(memref<*xf32>)
func.func private @sq.backward(tensor<5x2xf32>, tensor<5x2xf32>, tensor<2xf32>) -> tensor<5x2xf32>

func.func @fwd(%x: tensor<5x2xf32>) -> (tensor<5x2xf32>, tensor<2xf32>) {
  %y, %s = mxmoe.tiled_mlp shards = 3 (%x) {fqn = "sq", summed_results = 1} : (tensor<5x2xf32>) -> (tensor<5x2xf32>, tensor<2xf32>) {
  ^bb0(%xs: tensor<?x2xf32>):
    %sq = arith.mulf %xs, %xs : tensor<?x2xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
    %sum = linalg.reduce ins(%sq : tensor<?x2xf32>) outs(%init : tensor<2xf32>) dimensions = [0]
      (%a: f32, %b: f32) {
        %t = arith.addf %a, %b : f32
        linalg.yield %t : f32
      }
    mxmoe.yield %sq, %sum : tensor<?x2xf32>, tensor<2xf32>
  }
  return %y, %s : tensor<5x2xf32>, tensor<2xf32>
}

func.func @main() {
  %x = arith.constant dense<[[1.0, 2.0], [3.0, -1.0], [0.5, 0.0], [-2.0, 1.0], [1.0, 1.0]]> : tensor<5x2xf32>
  %y, %s = call @fwd(%x) : (tensor<5x2xf32>) -> (tensor<5x2xf32>, tensor<2xf32>)
  %ms = bufferization.to_buffer %s : tensor<2xf32> to memref<2xf32>
  %us = memref.cast %ms : memref<2xf32> to memref<*xf32>
  call @printMemrefF32(%us) : (memref<*xf32>) -> ()
  %dy = arith.constant dense<0.0> : tensor<5x2xf32>
  %ds = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %dx = call @sq.backward(%x, %dy, %ds) : (tensor<5x2xf32>, tensor<5x2xf32>, tensor<2xf32>) -> tensor<5x2xf32>
  %m = bufferization.to_buffer %dx : tensor<5x2xf32> to memref<5x2xf32>
  %u = memref.cast %m : memref<5x2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

// CHECK: sizes = [2]
// CHECK-NEXT: [15.25,  7]
// CHECK: sizes = [5, 2]
// CHECK-NEXT: {{\[\[}}2,   8],
// CHECK-NEXT: [6,   -4],
// CHECK-NEXT: [1,   0],
// CHECK-NEXT: [-4,   4],
// CHECK-NEXT: [2,   4]]
