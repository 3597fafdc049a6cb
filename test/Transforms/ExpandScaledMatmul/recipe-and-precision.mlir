// RUN: mxmoe-opt %s --mxmoe-expand-scaled-matmul --split-input-file --verify-diagnostics | FileCheck %s

// The recipe's element type and rounding reach every quantize (an MXFP4
// recipe's weight gradient is quantized to e4m3: FP4 2D x 2D GEMMs are not
// lowered); a bf16 op is left alone.
// CHECK-LABEL: func.func @recipe
// CHECK: call @e.fp4.forward
// CHECK: mxmoe.scaled_grouped_matmul {{.*}}fqn = "e.bf16"
// CHECK-LABEL: func.func @e.fp4.forward
// CHECK: mxmoe.quantize %arg0 {axis = 1 : i64, rounding = #mxmoe.rounding<floor>} : tensor<256x64xbf16> -> tensor<256x64xf4E2M1FN>
// CHECK-LABEL: func.func @e.fp4.weight_grad
// CHECK: rounding = #mxmoe.rounding<floor>} : tensor<256x64xbf16> -> tensor<64x{{[0-9]+}}xf8E4M3FN>
func.func @recipe(%x: tensor<256x64xbf16>, %w: tensor<2x64x64xbf16>, %o: tensor<2xi32>) {
  %a = mxmoe.scaled_grouped_matmul %x, %w, %o {fqn = "e.fp4", precision = #mxmoe.precision<mxfp4>,
      recipe = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = floor>}
      : (tensor<256x64xbf16>, tensor<2x64x64xbf16>, tensor<2xi32>) -> tensor<256x64xbf16>
  %b = mxmoe.scaled_grouped_matmul %x, %w, %o {fqn = "e.bf16", precision = #mxmoe.precision<bf16>}
      : (tensor<256x64xbf16>, tensor<2x64x64xbf16>, tensor<2xi32>) -> tensor<256x64xbf16>
  return
}

// -----

func.func @dynamic(%x: tensor<?x64xbf16>, %w: tensor<2x64x64xbf16>, %o: tensor<2xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op mxmoe-expand-scaled-matmul needs static shapes (M, N, K and the expert count)}}
  %a = mxmoe.scaled_grouped_matmul %x, %w, %o {fqn = "e.dyn"}
      : (tensor<?x64xbf16>, tensor<2x64x64xbf16>, tensor<2xi32>) -> tensor<?x64xbf16>
  return
}
