// A bf16 mxmoe.linear accumulates in fp32 (the op's contract): ones[1, 4096]
// . ones[1, 4096]^T is 4096 (exact in bf16), where a bf16 accumulation
// stops at 256 (256 + 1 rounds back to 256); with a bias of 0.5 the f32
// sum 4096.5 rounds once to bf16 4096. Runs on the CPU.
// RUN: mxmoe-opt %s --mxmoe-linear-to-linalg | FileCheck %s --check-prefix=IR
// RUN: mxmoe-opt %s --mxmoe-linear-to-linalg --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries" --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN:   | %mlir_runner -e main -entry-point-result=void -shared-libs=%runner_libs | FileCheck %s

// IR-LABEL: func.func @main
// IR: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1xf32>)
// IR: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<1x4096xbf16>, tensor<4096x1xbf16>) outs(%{{.*}} : tensor<1x1xf32>)
// IR: arith.truncf %{{.*}} : tensor<1x1xf32> to tensor<1x1xbf16>
// IR: arith.extf %{{.*}} : tensor<1xbf16> to tensor<1xf32>
// IR: arith.addf %{{.*}} : tensor<1x1xf32>
// IR: arith.truncf %{{.*}} : tensor<1x1xf32> to tensor<1x1xbf16>

// CHECK: [4096]
// CHECK: [4096]

func.func private @printMemrefF32(memref<*xf32>)

func.func @print(%t: tensor<1x1xbf16>) {
  %f = arith.extf %t : tensor<1x1xbf16> to tensor<1x1xf32>
  %c = tensor.collapse_shape %f [[0, 1]] : tensor<1x1xf32> into tensor<1xf32>
  %m = bufferization.to_buffer %c : tensor<1xf32> to memref<1xf32>
  %u = memref.cast %m : memref<1xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %x = arith.constant dense<1.0> : tensor<1x4096xbf16>
  %w = arith.constant dense<1.0> : tensor<1x4096xbf16>
  %b = arith.constant dense<0.5> : tensor<1xbf16>
  %y = mxmoe.linear %x, %w {fqn = "l"} : (tensor<1x4096xbf16>, tensor<1x4096xbf16>) -> tensor<1x1xbf16>
  call @print(%y) : (tensor<1x1xbf16>) -> ()
  %z = mxmoe.linear %x, %w bias %b {fqn = "lb"} : (tensor<1x4096xbf16>, tensor<1x4096xbf16>, tensor<1xbf16>) -> tensor<1x1xbf16>
  call @print(%z) : (tensor<1x1xbf16>) -> ()
  return
}
