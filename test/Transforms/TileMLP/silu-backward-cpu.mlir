// The SiLU written as x * (0.5 + 0.5 tanh(x / 2)) (mxmoe.builders' form)
// differentiates without overflow: d/dx = s (1 + x (1 - s)), s the
// sigmoid, about 0 for very negative x, never NaN (x / (1 + exp(-x))
// gives 0 * inf = NaN below about -88.7 in f32). T = 4 tokens in 3
// shards, dy = 1. Run on the CPU (math.tanh expanded by math-expand-ops).
// RUN: mxmoe-opt %s --mxmoe-tile-mlp --canonicalize --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries" --convert-linalg-to-loops --convert-scf-to-cf --math-expand-ops --expand-strided-metadata --lower-affine --convert-math-to-llvm --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN:   | %mlir_runner -e main -entry-point-result=void -shared-libs=%runner_libs | FileCheck %s

func.func private @printMemrefF32(memref<*xf32>)
func.func private @silu.backward(tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>

func.func @fwd(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %y = mxmoe.tiled_mlp shards = 3 (%x) {fqn = "silu"} : (tensor<4x2xf32>) -> tensor<4x2xf32> {
  ^bb0(%xs: tensor<?x2xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xs, %c0 : tensor<?x2xf32>
    %h = arith.constant 0.5 : f32
    %half = tensor.splat %h[%n] : tensor<?x2xf32>
    %hx = arith.mulf %half, %xs : tensor<?x2xf32>
    %t = math.tanh %hx : tensor<?x2xf32>
    %ht = arith.mulf %half, %t : tensor<?x2xf32>
    %s = arith.addf %half, %ht : tensor<?x2xf32>
    %y = arith.mulf %xs, %s : tensor<?x2xf32>
    mxmoe.yield %y : tensor<?x2xf32>
  }
  return %y : tensor<4x2xf32>
}

func.func @main() {
  %x = arith.constant dense<[[-100.0, -89.0], [-10.0, 1.0], [2.0, 3.0], [0.0, -0.5]]> : tensor<4x2xf32>
  %dy = arith.constant dense<1.0> : tensor<4x2xf32>
  %dx = call @silu.backward(%x, %dy) : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %m = bufferization.to_buffer %dx : tensor<4x2xf32> to memref<4x2xf32>
  %u = memref.cast %m : memref<4x2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

// CHECK-NOT: nan
// CHECK: sizes = [4, 2]
// CHECK-NEXT: {{\[\[}}{{-?0|-?[0-9.]+e-[0-9]+}},   {{-?0|-?[0-9.]+e-[0-9]+}}],
// CHECK-NEXT: [-0.00040{{[0-9]*}},   0.92767{{[0-9]*}}],
// CHECK-NEXT: [1.0907{{[0-9]*}},   1.088{{[0-9]*}}],
// CHECK-NEXT: [0.5,   0.2600{{[0-9]*}}]]
// CHECK-NOT: nan
