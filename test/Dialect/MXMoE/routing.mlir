// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// The routing ops (MXMoEOps.td): T = 64 tokens, top_k = 4, M = 256 routed
// rows, H = 128.

// CHECK-LABEL: func.func @dispatch_combine(
// CHECK:         %[[XR:.*]] = mxmoe.gather_rows %arg0[%arg1] {top_k = 4 : i64} : tensor<64x128xbf16>, tensor<256xi32> -> tensor<256x128xbf16>
// CHECK:         %[[INV:.*]] = mxmoe.invert_permutation %arg1 : tensor<256xi32> -> tensor<256xi32>
// CHECK:         %[[OUT:.*]] = mxmoe.combine_rows %[[XR]], %arg1, %[[INV]] scaled_by %arg2 : tensor<64x4xf32> {top_k = 4 : i64} : tensor<256x128xbf16>, tensor<256xi32>, tensor<256xi32> -> tensor<64x128xbf16>
// CHECK:         mxmoe.combine_rows %[[XR]], %arg1, %[[INV]] {top_k = 4 : i64} : tensor<256x128xbf16>, tensor<256xi32>, tensor<256xi32> -> tensor<64x128xbf16>
// CHECK:         mxmoe.gather_rows %[[OUT]][%arg1] scaled_by %arg2 : tensor<64x4xf32> {top_k = 4 : i64} : tensor<64x128xbf16>, tensor<256xi32> -> tensor<256x128xbf16>
// CHECK:         mxmoe.combine_scores_grad %[[OUT]], %[[XR]], %arg1, %[[INV]] {top_k = 4 : i64} : tensor<64x128xbf16>, tensor<256x128xbf16>, tensor<256xi32>, tensor<256xi32> -> tensor<64x4xf32>
func.func @dispatch_combine(%x: tensor<64x128xbf16>, %idx: tensor<256xi32>, %w: tensor<64x4xf32>)
    -> (tensor<64x128xbf16>, tensor<256x128xbf16>, tensor<64x4xf32>) {
  %xr = mxmoe.gather_rows %x[%idx] {top_k = 4 : i64} : tensor<64x128xbf16>, tensor<256xi32> -> tensor<256x128xbf16>
  %inv = mxmoe.invert_permutation %idx : tensor<256xi32> -> tensor<256xi32>
  %out = mxmoe.combine_rows %xr, %idx, %inv scaled_by %w : tensor<64x4xf32> {top_k = 4 : i64}
      : tensor<256x128xbf16>, tensor<256xi32>, tensor<256xi32> -> tensor<64x128xbf16>
  %sum = mxmoe.combine_rows %xr, %idx, %inv {top_k = 4 : i64}
      : tensor<256x128xbf16>, tensor<256xi32>, tensor<256xi32> -> tensor<64x128xbf16>
  %dr = mxmoe.gather_rows %out[%idx] scaled_by %w : tensor<64x4xf32> {top_k = 4 : i64} : tensor<64x128xbf16>, tensor<256xi32> -> tensor<256x128xbf16>
  %ds = mxmoe.combine_scores_grad %out, %xr, %idx, %inv {top_k = 4 : i64}
      : tensor<64x128xbf16>, tensor<256x128xbf16>, tensor<256xi32>, tensor<256xi32> -> tensor<64x4xf32>
  return %sum, %dr, %ds : tensor<64x128xbf16>, tensor<256x128xbf16>, tensor<64x4xf32>
}
