// RUN: mxmoe-opt %s --split-input-file | FileCheck %s
// RUN: mxmoe-opt %s --split-input-file --mlir-print-op-generic | mxmoe-opt --split-input-file | FileCheck %s

// mxmoe.grouped_matmul `accumulate %acc` (2D x 2D -> 3D only): the result
// is acc + product (BLAS GEMM's beta = 1 form), the accumulator of the
// result's type.

// CHECK-LABEL: func.func @wgrad_accumulate(
// CHECK-SAME:    %[[ACC:[a-z0-9_]+]]: tensor<8x256x512xbf16>)
// CHECK:         %[[O:.+]] = mxmoe.grouped_matmul %{{.+}} scales %{{.+}}, %{{.+}} scales %{{.+}} offsets %{{.+}} accumulate %[[ACC]]
// CHECK-SAME:      tensor<8xi32>, tensor<8x256x512xbf16>) -> tensor<8x256x512xbf16>
// CHECK-NEXT:    return %[[O]]
func.func @wgrad_accumulate(%g: tensor<256x1248xf8E4M3FN>, %gs: tensor<256x39xf8E8M0FNU>,
                            %x: tensor<512x1248xf8E4M3FN>, %xs: tensor<512x39xf8E8M0FNU>,
                            %offs: tensor<8xi32>, %acc: tensor<8x256x512xbf16>) -> tensor<8x256x512xbf16> {
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs accumulate %acc
      : (tensor<256x1248xf8E4M3FN>, tensor<256x39xf8E8M0FNU>, tensor<512x1248xf8E4M3FN>, tensor<512x39xf8E8M0FNU>, tensor<8xi32>, tensor<8x256x512xbf16>) -> tensor<8x256x512xbf16>
  return %o : tensor<8x256x512xbf16>
}

// -----

// An f32 accumulator (a tiled MLP's f32 grad_accumulator).
// CHECK-LABEL: func.func @wgrad_accumulate_f32(
// CHECK:         accumulate %{{.+}} : ({{.*}}, tensor<4x128x64xf32>) -> tensor<4x128x64xf32>
func.func @wgrad_accumulate_f32(%g: tensor<128x640xf8E4M3FN>, %gs: tensor<128x20xf8E8M0FNU>,
                                %x: tensor<64x640xf8E4M3FN>, %xs: tensor<64x20xf8E8M0FNU>,
                                %offs: tensor<4xi32>, %acc: tensor<4x128x64xf32>) -> tensor<4x128x64xf32> {
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs accumulate %acc
      : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU>, tensor<64x640xf8E4M3FN>, tensor<64x20xf8E8M0FNU>, tensor<4xi32>, tensor<4x128x64xf32>) -> tensor<4x128x64xf32>
  return %o : tensor<4x128x64xf32>
}
