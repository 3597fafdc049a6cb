// Runs the tiled loop on the CPU (mlir-runner): every token is processed
// exactly once, shard sizes are balanced (T = 10, N = 4: 3, 3, 2, 2), a
// [B, S, H] input works, and T < N (3 tokens, 4 shards) gives sizes 1, 1, 1
// plus one empty shard.
// RUN: mxmoe-opt %s --mxmoe-tile-mlp --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries" --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN:   | %mlir_runner -e main -entry-point-result=void -shared-libs=%runner_libs | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-tile-mlp="static-shards=false" --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries" --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN:   | %mlir_runner -e main -entry-point-result=void -shared-libs=%runner_libs | FileCheck %s

func.func private @printMemrefF32(memref<*xf32>)

// The body doubles its shard and reports the shard's size per token.
func.func @tiled(%x: tensor<2x5x2xf32>) -> (tensor<2x5x2xf32>, tensor<2x5x1xf32>) {
  %y, %sz = mxmoe.tiled_mlp shards = 4 (%x) : (tensor<2x5x2xf32>) -> (tensor<2x5x2xf32>, tensor<2x5x1xf32>) {
  ^bb0(%xs: tensor<?x2xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xs, %c0 : tensor<?x2xf32>
    %two = arith.constant 2.0 : f32
    %twos = tensor.splat %two[%n] : tensor<?x2xf32>
    %d = arith.mulf %xs, %twos : tensor<?x2xf32>
    %ni = arith.index_cast %n : index to i64
    %nf = arith.uitofp %ni : i64 to f32
    %s = tensor.splat %nf[%n] : tensor<?x1xf32>
    mxmoe.yield %d, %s : tensor<?x2xf32>, tensor<?x1xf32>
  }
  return %y, %sz : tensor<2x5x2xf32>, tensor<2x5x1xf32>
}

func.func @few(%x: tensor<3x1xf32>) -> tensor<3x1xf32> {
  %sz = mxmoe.tiled_mlp shards = 4 (%x) : (tensor<3x1xf32>) -> tensor<3x1xf32> {
  ^bb0(%xs: tensor<?x1xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xs, %c0 : tensor<?x1xf32>
    %ni = arith.index_cast %n : index to i64
    %nf = arith.uitofp %ni : i64 to f32
    %s = tensor.splat %nf[%n] : tensor<?x1xf32>
    mxmoe.yield %s : tensor<?x1xf32>
  }
  return %sz : tensor<3x1xf32>
}

func.func @main() {
  %x = arith.constant dense<[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0], [9.0, 10.0]],
                             [[11.0, 12.0], [13.0, 14.0], [15.0, 16.0], [17.0, 18.0], [19.0, 20.0]]]> : tensor<2x5x2xf32>
  %y, %sz = call @tiled(%x) : (tensor<2x5x2xf32>) -> (tensor<2x5x2xf32>, tensor<2x5x1xf32>)
  %ym = bufferization.to_buffer %y : tensor<2x5x2xf32> to memref<2x5x2xf32>
  %yu = memref.cast %ym : memref<2x5x2xf32> to memref<*xf32>
  call @printMemrefF32(%yu) : (memref<*xf32>) -> ()
  %sm = bufferization.to_buffer %sz : tensor<2x5x1xf32> to memref<2x5x1xf32>
  %su = memref.cast %sm : memref<2x5x1xf32> to memref<*xf32>
  call @printMemrefF32(%su) : (memref<*xf32>) -> ()
  %x3 = arith.constant dense<[[1.0], [2.0], [3.0]]> : tensor<3x1xf32>
  %f = call @few(%x3) : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %fm = bufferization.to_buffer %f : tensor<3x1xf32> to memref<3x1xf32>
  %fu = memref.cast %fm : memref<3x1xf32> to memref<*xf32>
  call @printMemrefF32(%fu) : (memref<*xf32>) -> ()
  return
}

// CHECK: sizes = [2, 5, 2]
// CHECK-NEXT: {{\[\[\[}}2,   4],
// CHECK-NEXT: [6,   8],
// CHECK-NEXT: [10,   12],
// CHECK-NEXT: [14,   16],
// CHECK-NEXT: [18,   20]],
// CHECK-NEXT: {{\[\[}}22,   24],
// CHECK-NEXT: [26,   28],
// CHECK-NEXT: [30,   32],
// CHECK-NEXT: [34,   36],
// CHECK-NEXT: [38,   40]]]
// CHECK: sizes = [2, 5, 1]
// CHECK-NEXT: {{\[\[\[}}3],
// CHECK-NEXT: [3],
// CHECK-NEXT: [3],
// CHECK-NEXT: [3],
// CHECK-NEXT: [3]],
// CHECK-NEXT: {{\[\[}}3],
// CHECK-NEXT: [2],
// CHECK-NEXT: [2],
// CHECK-NEXT: [2],
// CHECK-NEXT: [2]]]
// CHECK: sizes = [3, 1]
// CHECK-NEXT: {{\[\[}}1],
// CHECK-NEXT: [1],
// CHECK-NEXT: [1]]
