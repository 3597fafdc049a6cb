// An MXFP4 recipe compiles for sm_100a: forward and input gradient are FP4
// (e2m1) 2D x 3D GEMMs; the weight gradient's token-axis operands are
// quantized to MXFP8 (e4m3), which the 2D x 2D GEMM takes. sm_90a has no
// FP4 MMA: a clear error.
// RUN: rm -rf %t && mxmoe-compile %s -o %t --chip sm_100a
// RUN: FileCheck %s < %t/model.mlir
// RUN: not mxmoe-compile %s -o %t.90 --chip sm_90a 2>&1 | FileCheck %s --check-prefix=SM90

// CHECK-LABEL: func.func @experts.w1.forward
// CHECK: mxmoe.quantize {{.*}} -> tensor<256x128xf4E2M1FN>
// CHECK-LABEL: func.func @experts.w1.weight_grad
// CHECK: mxmoe.quantize {{.*}}axis = 0 : i64{{.*}} -> tensor<128x{{[0-9]+}}xf8E4M3FN>
// CHECK: mxmoe.quantize {{.*}}axis = 0 : i64{{.*}} -> tensor<128x{{[0-9]+}}xf8E4M3FN>
// SM90: error: 'mxmoe.grouped_matmul' op sm_90a lowering supports f8E4M3FN and f8E5M2 operands
func.func @f(%x: tensor<256x128xbf16>, %w: tensor<2x128x128xbf16>, %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "experts.w1", recipe = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = even>}
      : (tensor<256x128xbf16>, tensor<2x128x128xbf16>, tensor<2xi32>) -> tensor<256x128xbf16>
  return %y : tensor<256x128xbf16>
}
