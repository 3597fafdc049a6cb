// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// Round-trip of mxmoe.quantize without offsets and with row-major scales:
// rowwise / columnwise, 2-D / 3-D, bf16 / f16 / f32 inputs, rounding modes.
// data = input with `axis` moved last; scales = data shape with the last dim
// divided by 32.

// Rowwise (1x32 blocks) of a 2-D activation.
// CHECK-LABEL: func.func @quantize_rowwise_2d(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<8192x5120xbf16>)
// CHECK:         %[[Q:[a-z0-9_]+]], %[[S:[a-z0-9_]+]] = mxmoe.quantize %[[X]] {axis = 1 : i64}
// CHECK-SAME:      : tensor<8192x5120xbf16> -> tensor<8192x5120xf8E4M3FN>, tensor<8192x160xf8E8M0FNU>
// CHECK-NEXT:    return %[[Q]], %[[S]] : tensor<8192x5120xf8E4M3FN>, tensor<8192x160xf8E8M0FNU>
func.func @quantize_rowwise_2d(%x: tensor<8192x5120xbf16>) -> (tensor<8192x5120xf8E4M3FN>, tensor<8192x160xf8E8M0FNU>) {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64}
      : tensor<8192x5120xbf16> -> tensor<8192x5120xf8E4M3FN>, tensor<8192x160xf8E8M0FNU>
  return %q, %s : tensor<8192x5120xf8E4M3FN>, tensor<8192x160xf8E8M0FNU>
}

// Columnwise (32x1 blocks, along tokens) of a 2-D tensor: the data is the
// transpose [K, M].
// CHECK-LABEL: func.func @quantize_columnwise_2d(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 0 : i64}
// CHECK-SAME:      : tensor<256x512xbf16> -> tensor<512x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU>
func.func @quantize_columnwise_2d(%x: tensor<256x512xbf16>) -> (tensor<512x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU>) {
  %q, %s = mxmoe.quantize %x {axis = 0 : i64}
      : tensor<256x512xbf16> -> tensor<512x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU>
  return %q, %s : tensor<512x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU>
}

// 3-D expert weights [E, N, K] quantized along K (forward).
// CHECK-LABEL: func.func @quantize_rowwise_3d(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 2 : i64}
// CHECK-SAME:      : tensor<16x1024x512xbf16> -> tensor<16x1024x512xf8E4M3FN>, tensor<16x1024x16xf8E8M0FNU>
func.func @quantize_rowwise_3d(%w: tensor<16x1024x512xbf16>) -> (tensor<16x1024x512xf8E4M3FN>, tensor<16x1024x16xf8E8M0FNU>) {
  %q, %s = mxmoe.quantize %w {axis = 2 : i64}
      : tensor<16x1024x512xbf16> -> tensor<16x1024x512xf8E4M3FN>, tensor<16x1024x16xf8E8M0FNU>
  return %q, %s : tensor<16x1024x512xf8E4M3FN>, tensor<16x1024x16xf8E8M0FNU>
}

// 3-D expert weights [E, N, K] quantized along N for the input gradient
// (dgrad): data [E, K, N], scales [E, K, N/32].
// CHECK-LABEL: func.func @quantize_3d_axis1_dgrad(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64}
// CHECK-SAME:      : tensor<16x1024x512xbf16> -> tensor<16x512x1024xf8E4M3FN>, tensor<16x512x32xf8E8M0FNU>
func.func @quantize_3d_axis1_dgrad(%w: tensor<16x1024x512xbf16>) -> (tensor<16x512x1024xf8E4M3FN>, tensor<16x512x32xf8E8M0FNU>) {
  %q, %s = mxmoe.quantize %w {axis = 1 : i64}
      : tensor<16x1024x512xbf16> -> tensor<16x512x1024xf8E4M3FN>, tensor<16x512x32xf8E8M0FNU>
  return %q, %s : tensor<16x512x1024xf8E4M3FN>, tensor<16x512x32xf8E8M0FNU>
}

// f16 and f32 inputs.
// CHECK-LABEL: func.func @quantize_f16_f32_inputs(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64}
// CHECK-SAME:      : tensor<64x96xf16> -> tensor<64x96xf8E4M3FN>, tensor<64x3xf8E8M0FNU>
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 0 : i64}
// CHECK-SAME:      : tensor<64x96xf32> -> tensor<96x64xf8E4M3FN>, tensor<96x2xf8E8M0FNU>
func.func @quantize_f16_f32_inputs(%a: tensor<64x96xf16>, %b: tensor<64x96xf32>) -> (tensor<64x96xf8E4M3FN>, tensor<96x64xf8E4M3FN>) {
  %qa, %sa = mxmoe.quantize %a {axis = 1 : i64}
      : tensor<64x96xf16> -> tensor<64x96xf8E4M3FN>, tensor<64x3xf8E8M0FNU>
  %qb, %sb = mxmoe.quantize %b {axis = 0 : i64}
      : tensor<64x96xf32> -> tensor<96x64xf8E4M3FN>, tensor<96x2xf8E8M0FNU>
  return %qa, %qb : tensor<64x96xf8E4M3FN>, tensor<96x64xf8E4M3FN>
}

// Default-valued attributes (block_size = 32, rounding = rceil) written
// explicitly are elided when printed; the other rounding modes are kept.
// CHECK-LABEL: func.func @quantize_rounding_modes(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64} : tensor<32x64xbf16> -> tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>
// CHECK-NEXT:    mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64, rounding = #mxmoe.rounding<floor>} : tensor<32x64xbf16> -> tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>
// CHECK-NEXT:    mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64} : tensor<32x64xbf16> -> tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>
// CHECK-NEXT:    mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64, rounding = #mxmoe.rounding<ceil>} : tensor<32x64xbf16> -> tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>
// CHECK-NEXT:    mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64, rounding = #mxmoe.rounding<even>} : tensor<32x64xbf16> -> tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>
func.func @quantize_rounding_modes(%x: tensor<32x64xbf16>) {
  %q0, %s0 = mxmoe.quantize %x {axis = 1 : i64, block_size = 32 : i64, rounding = #mxmoe.rounding<rceil>}
      : tensor<32x64xbf16> -> tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>
  %q1, %s1 = mxmoe.quantize %x {axis = 1 : i64, rounding = #mxmoe.rounding<floor>}
      : tensor<32x64xbf16> -> tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>
  %q2, %s2 = mxmoe.quantize %x {axis = 1 : i64, rounding = #mxmoe.rounding<rceil>}
      : tensor<32x64xbf16> -> tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>
  %q3, %s3 = mxmoe.quantize %x {axis = 1 : i64, rounding = #mxmoe.rounding<ceil>}
      : tensor<32x64xbf16> -> tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>
  %q4, %s4 = mxmoe.quantize %x {axis = 1 : i64, rounding = #mxmoe.rounding<even>}
      : tensor<32x64xbf16> -> tensor<32x64xf8E4M3FN>, tensor<32x2xf8E8M0FNU>
  return
}

// Scales with an explicit #mxmoe.scale_layout<row_major> encoding are the
// same layout as no encoding and keep the encoding in their type.
// CHECK-LABEL: func.func @quantize_explicit_row_major(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64}
// CHECK-SAME:      : tensor<128x128xbf16> -> tensor<128x128xf8E4M3FN>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<row_major>>
func.func @quantize_explicit_row_major(%x: tensor<128x128xbf16>) -> tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<row_major>> {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64}
      : tensor<128x128xbf16> -> tensor<128x128xf8E4M3FN>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<row_major>>
  return %s : tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<row_major>>
}

// The smallest case: a single 32-element block.
// CHECK-LABEL: func.func @quantize_single_block(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64} : tensor<1x32xf32> -> tensor<1x32xf8E4M3FN>, tensor<1x1xf8E8M0FNU>
func.func @quantize_single_block(%x: tensor<1x32xf32>) -> tensor<1x1xf8E8M0FNU> {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<1x32xf32> -> tensor<1x32xf8E4M3FN>, tensor<1x1xf8E8M0FNU>
  return %s : tensor<1x1xf8E8M0FNU>
}
