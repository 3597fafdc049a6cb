// RUN: mxmoe-opt %s --mxmoe-expand-scaled-matmul | FileCheck %s

// An op in a nested module: its expanded functions go into that module,
// next to the call.
// CHECK: module @inner
// CHECK: func.func @f(
// CHECK: call @experts.w1.forward
// CHECK: {{^    }}func.func @experts.w1.forward(
// CHECK: {{^    }}func.func @experts.w1.input_grad(
// CHECK: {{^    }}func.func @experts.w1.weight_grad(
// CHECK-NOT: func.func
module {
  module @inner {
    func.func @f(%x: tensor<256x64xbf16>, %w: tensor<2x96x64xbf16>, %o: tensor<2xi32>) -> tensor<256x96xbf16> {
      %y = mxmoe.scaled_grouped_matmul %x, %w, %o {fqn = "experts.w1", precision = #mxmoe.precision<mxfp8>}
          : (tensor<256x64xbf16>, tensor<2x96x64xbf16>, tensor<2xi32>) -> tensor<256x96xbf16>
      return %y : tensor<256x96xbf16>
    }
  }
}
