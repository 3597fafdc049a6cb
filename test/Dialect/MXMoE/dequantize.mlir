// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// Round-trip of mxmoe.dequantize without offsets: the inverse of
// mxmoe.quantize with the same axis; the result has the data's last dim moved
// back to `axis`.

// Rowwise, row-major scales.
// CHECK-LABEL: func.func @dequantize_rowwise(
// CHECK-SAME:    %[[Q:[a-z0-9_]+]]: tensor<8192x5120xf8E4M3FN>, %[[S:[a-z0-9_]+]]: tensor<8192x160xf8E8M0FNU>)
// CHECK:         %[[X:[a-z0-9_]+]] = mxmoe.dequantize %[[Q]], %[[S]] {axis = 1 : i64}
// CHECK-SAME:      : tensor<8192x5120xf8E4M3FN>, tensor<8192x160xf8E8M0FNU> -> tensor<8192x5120xbf16>
// CHECK-NEXT:    return %[[X]] : tensor<8192x5120xbf16>
func.func @dequantize_rowwise(%q: tensor<8192x5120xf8E4M3FN>, %s: tensor<8192x160xf8E8M0FNU>) -> tensor<8192x5120xbf16> {
  %x = mxmoe.dequantize %q, %s {axis = 1 : i64}
      : tensor<8192x5120xf8E4M3FN>, tensor<8192x160xf8E8M0FNU> -> tensor<8192x5120xbf16>
  return %x : tensor<8192x5120xbf16>
}

// Columnwise: data [K, M] back to [M, K]; the default block_size written
// explicitly is elided.
// CHECK-LABEL: func.func @dequantize_columnwise(
// CHECK:         mxmoe.dequantize %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {axis = 0 : i64}
// CHECK-SAME:      : tensor<512x256xf8E5M2>, tensor<512x8xf8E8M0FNU> -> tensor<256x512xf32>
func.func @dequantize_columnwise(%q: tensor<512x256xf8E5M2>, %s: tensor<512x8xf8E8M0FNU>) -> tensor<256x512xf32> {
  %x = mxmoe.dequantize %q, %s {axis = 0 : i64, block_size = 32 : i64}
      : tensor<512x256xf8E5M2>, tensor<512x8xf8E8M0FNU> -> tensor<256x512xf32>
  return %x : tensor<256x512xf32>
}

// 3-D, axis 2 and axis 1 (dgrad layout [E, K, N] back to [E, N, K]).
// CHECK-LABEL: func.func @dequantize_3d(
// CHECK:         mxmoe.dequantize %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {axis = 2 : i64}
// CHECK-SAME:      : tensor<16x1024x512xf8E4M3FN>, tensor<16x1024x16xf8E8M0FNU> -> tensor<16x1024x512xbf16>
// CHECK:         mxmoe.dequantize %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {axis = 1 : i64}
// CHECK-SAME:      : tensor<16x512x1024xf8E4M3FN>, tensor<16x512x32xf8E8M0FNU> -> tensor<16x1024x512xbf16>
func.func @dequantize_3d(%q0: tensor<16x1024x512xf8E4M3FN>, %s0: tensor<16x1024x16xf8E8M0FNU>,
                         %q1: tensor<16x512x1024xf8E4M3FN>, %s1: tensor<16x512x32xf8E8M0FNU>) -> (tensor<16x1024x512xbf16>, tensor<16x1024x512xbf16>) {
  %x0 = mxmoe.dequantize %q0, %s0 {axis = 2 : i64}
      : tensor<16x1024x512xf8E4M3FN>, tensor<16x1024x16xf8E8M0FNU> -> tensor<16x1024x512xbf16>
  %x1 = mxmoe.dequantize %q1, %s1 {axis = 1 : i64}
      : tensor<16x512x1024xf8E4M3FN>, tensor<16x512x32xf8E8M0FNU> -> tensor<16x1024x512xbf16>
  return %x0, %x1 : tensor<16x1024x512xbf16>, tensor<16x1024x512xbf16>
}

// Blocked scales (2-D and 3-D) to an f16 result.
// CHECK-LABEL: func.func @dequantize_blocked(
// CHECK:         mxmoe.dequantize %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {axis = 1 : i64}
// CHECK-SAME:      : tensor<200x320xf8E4M3FN>, tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<200x320xf16>
// CHECK:         mxmoe.dequantize %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {axis = 1 : i64}
// CHECK-SAME:      : tensor<4x200x320xf4E2M1FN>, tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<4x320x200xf16>
func.func @dequantize_blocked(%q: tensor<200x320xf8E4M3FN>, %s: tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                              %q3: tensor<4x200x320xf4E2M1FN>, %s3: tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>) -> (tensor<200x320xf16>, tensor<4x320x200xf16>) {
  %x = mxmoe.dequantize %q, %s {axis = 1 : i64}
      : tensor<200x320xf8E4M3FN>, tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<200x320xf16>
  %x3 = mxmoe.dequantize %q3, %s3 {axis = 1 : i64}
      : tensor<4x200x320xf4E2M1FN>, tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<4x320x200xf16>
  return %x, %x3 : tensor<200x320xf16>, tensor<4x320x200xf16>
}

// quantize then dequantize: the pair round-trips the type.
// CHECK-LABEL: func.func @quantize_dequantize_pair(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<128x256xbf16>)
// CHECK:         %[[Q:[a-z0-9_]+]], %[[S:[a-z0-9_]+]] = mxmoe.quantize %[[X]] {axis = 0 : i64, rounding = #mxmoe.rounding<floor>}
// CHECK-SAME:      : tensor<128x256xbf16> -> tensor<256x128xf6E2M3FN>, tensor<256x4xf8E8M0FNU>
// CHECK-NEXT:    %[[D:[a-z0-9_]+]] = mxmoe.dequantize %[[Q]], %[[S]] {axis = 0 : i64}
// CHECK-SAME:      : tensor<256x128xf6E2M3FN>, tensor<256x4xf8E8M0FNU> -> tensor<128x256xbf16>
// CHECK-NEXT:    return %[[D]]
func.func @quantize_dequantize_pair(%x: tensor<128x256xbf16>) -> tensor<128x256xbf16> {
  %q, %s = mxmoe.quantize %x {axis = 0 : i64, rounding = #mxmoe.rounding<floor>}
      : tensor<128x256xbf16> -> tensor<256x128xf6E2M3FN>, tensor<256x4xf8E8M0FNU>
  %d = mxmoe.dequantize %q, %s {axis = 0 : i64}
      : tensor<256x128xf6E2M3FN>, tensor<256x4xf8E8M0FNU> -> tensor<128x256xbf16>
  return %d : tensor<128x256xbf16>
}
