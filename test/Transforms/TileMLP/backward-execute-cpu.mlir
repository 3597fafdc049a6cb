// The backward function recomputes every shard and propagates its slice
// of dy: for y = x * exp(x), dx = dy * (1 + x) * exp(x); for
// z = 3 * x[:, 0:1] (an output narrower than the input), dx = [3, 0].
// T = 4 tokens in 3 shards (sizes 2, 1, 1), dy = 1. Run on the CPU.
// RUN: mxmoe-opt %s --mxmoe-tile-mlp --canonicalize --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries" --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --lower-affine --convert-math-to-llvm --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN:   | %mlir_runner -e main -entry-point-result=void -shared-libs=%runner_libs | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-tile-mlp="static-shards=false" --canonicalize --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries" --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --lower-affine --convert-math-to-llvm --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN:   | %mlir_runner -e main -entry-point-result=void -shared-libs=%runner_libs | FileCheck %s

func.func private @printMemrefF32(memref<*xf32>)
func.func private @mlp.backward(tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>

func.func @fwd(%x: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x1xf32>) {
  %y, %z = mxmoe.tiled_mlp shards = 3 (%x) {fqn = "mlp"} : (tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x1xf32>) {
  ^bb0(%xs: tensor<?x2xf32>):
    %e = math.exp %xs : tensor<?x2xf32>
    %y = arith.mulf %xs, %e : tensor<?x2xf32>
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xs, %c0 : tensor<?x2xf32>
    %col = tensor.extract_slice %xs[0, 0] [%n, 1] [1, 1] : tensor<?x2xf32> to tensor<?x1xf32>
    %three = arith.constant 3.0 : f32
    %threes = tensor.splat %three[%n] : tensor<?x1xf32>
    %z = arith.mulf %col, %threes : tensor<?x1xf32>
    mxmoe.yield %y, %z : tensor<?x2xf32>, tensor<?x1xf32>
  }
  return %y, %z : tensor<4x2xf32>, tensor<4x1xf32>
}

func.func @main() {
  %x = arith.constant dense<[[0.0, 1.0], [-1.0, 2.0], [0.5, 0.0], [1.0, -2.0]]> : tensor<4x2xf32>
  %dy = arith.constant dense<1.0> : tensor<4x2xf32>
  %dz = arith.constant dense<0.0> : tensor<4x1xf32>
  %dx1 = call @mlp.backward(%x, %dy, %dz) : (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>
  %m1 = bufferization.to_buffer %dx1 : tensor<4x2xf32> to memref<4x2xf32>
  %u1 = memref.cast %m1 : memref<4x2xf32> to memref<*xf32>
  call @printMemrefF32(%u1) : (memref<*xf32>) -> ()
  %dy0 = arith.constant dense<0.0> : tensor<4x2xf32>
  %dz1 = arith.constant dense<1.0> : tensor<4x1xf32>
  %dx2 = call @mlp.backward(%x, %dy0, %dz1) : (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>
  %m2 = bufferization.to_buffer %dx2 : tensor<4x2xf32> to memref<4x2xf32>
  %u2 = memref.cast %m2 : memref<4x2xf32> to memref<*xf32>
  call @printMemrefF32(%u2) : (memref<*xf32>) -> ()
  return
}

// d/dx x e^x = (1 + x) e^x: 0 -> 1, 1 -> 2e, -1 -> 0, 2 -> 3e^2, 0.5 -> 1.5 e^0.5, -2 -> -e^-2.
// CHECK: sizes = [4, 2]
// CHECK-NEXT: {{\[\[}}1,   5.43656],
// CHECK-NEXT: [0,   22.1672],
// CHECK-NEXT: [2.47308,   1],
// CHECK-NEXT: [5.43656,   -0.135335]]
// CHECK: sizes = [4, 2]
// CHECK-NEXT: {{\[\[}}3,   0],
// CHECK-NEXT: [3,   0],
// CHECK-NEXT: [3,   0],
// CHECK-NEXT: [3,   0]]
