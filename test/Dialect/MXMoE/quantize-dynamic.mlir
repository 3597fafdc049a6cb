// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// mxmoe.quantize / mxmoe.dequantize with dynamic dims: a dynamic dim is
// compatible with any size, a dynamic quantized axis gives a dynamic scale
// column count, and padding rules are only checked where sizes are known.

// Dynamic token count, rowwise.
// CHECK-LABEL: func.func @quantize_dynamic_tokens(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64}
// CHECK-SAME:      : tensor<?x512xbf16> -> tensor<?x512xf8E4M3FN>, tensor<?x16xf8E8M0FNU>
func.func @quantize_dynamic_tokens(%x: tensor<?x512xbf16>) -> tensor<?x16xf8E8M0FNU> {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<?x512xbf16> -> tensor<?x512xf8E4M3FN>, tensor<?x16xf8E8M0FNU>
  return %s : tensor<?x16xf8E8M0FNU>
}

// Dynamic quantized axis: the scale column count is dynamic too.
// CHECK-LABEL: func.func @quantize_dynamic_quantized_axis(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64}
// CHECK-SAME:      : tensor<64x?xbf16> -> tensor<64x?xf8E4M3FN>, tensor<64x?xf8E8M0FNU>
func.func @quantize_dynamic_quantized_axis(%x: tensor<64x?xbf16>) -> tensor<64x?xf8E8M0FNU> {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x?xbf16> -> tensor<64x?xf8E4M3FN>, tensor<64x?xf8E8M0FNU>
  return %s : tensor<64x?xf8E8M0FNU>
}

// Dynamic tokens, columnwise: the dynamic dim moves to the data's last dim.
// CHECK-LABEL: func.func @quantize_dynamic_columnwise(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 0 : i64}
// CHECK-SAME:      : tensor<?x512xbf16> -> tensor<512x?xf8E4M3FN>, tensor<512x?xf8E8M0FNU>
func.func @quantize_dynamic_columnwise(%x: tensor<?x512xbf16>) -> tensor<512x?xf8E8M0FNU> {
  %q, %s = mxmoe.quantize %x {axis = 0 : i64} : tensor<?x512xbf16> -> tensor<512x?xf8E4M3FN>, tensor<512x?xf8E8M0FNU>
  return %s : tensor<512x?xf8E8M0FNU>
}

// Dynamic tokens with blocked scales: the row padding is checked at run time.
// CHECK-LABEL: func.func @quantize_dynamic_blocked(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64}
// CHECK-SAME:      : tensor<?x512xbf16> -> tensor<?x512xf8E4M3FN>, tensor<?x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @quantize_dynamic_blocked(%x: tensor<?x512xbf16>) -> tensor<?x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<?x512xbf16> -> tensor<?x512xf8E4M3FN>, tensor<?x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %s : tensor<?x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// Dynamic expert count of 3-D weights, dgrad direction, blocked per expert.
// CHECK-LABEL: func.func @quantize_dynamic_experts(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64}
// CHECK-SAME:      : tensor<?x64x128xbf16> -> tensor<?x128x64xf8E4M3FN>, tensor<?x128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @quantize_dynamic_experts(%w: tensor<?x64x128xbf16>) -> tensor<?x128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %w {axis = 1 : i64} : tensor<?x64x128xbf16> -> tensor<?x128x64xf8E4M3FN>, tensor<?x128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %s : tensor<?x128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// Jagged token axis with a dynamic token count and a dynamic padded extent.
// CHECK-LABEL: func.func @quantize_dynamic_jagged(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} offsets(%{{[a-z0-9_]+}} : tensor<16xi32>) {axis = 0 : i64}
// CHECK-SAME:      : tensor<?x256xbf16> -> tensor<256x?xf8E4M3FN>, tensor<256x?xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
func.func @quantize_dynamic_jagged(%x: tensor<?x256xbf16>, %offs: tensor<16xi32>) -> tensor<256x?xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>> {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<16xi32>) {axis = 0 : i64}
      : tensor<?x256xbf16> -> tensor<256x?xf8E4M3FN>, tensor<256x?xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return %s : tensor<256x?xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
}

// Static input with dynamic data and scale types (compatible shapes).
// CHECK-LABEL: func.func @quantize_dynamic_results(
// CHECK:         mxmoe.quantize %{{[a-z0-9_]+}} {axis = 1 : i64}
// CHECK-SAME:      : tensor<64x128xbf16> -> tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>
func.func @quantize_dynamic_results(%x: tensor<64x128xbf16>) -> tensor<?x?xf8E8M0FNU> {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x128xbf16> -> tensor<?x?xf8E4M3FN>, tensor<?x?xf8E8M0FNU>
  return %s : tensor<?x?xf8E8M0FNU>
}

// Dequantize back to a dynamic token count.
// CHECK-LABEL: func.func @dequantize_dynamic_tokens(
// CHECK:         mxmoe.dequantize %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {axis = 1 : i64}
// CHECK-SAME:      : tensor<?x512xf8E4M3FN>, tensor<?x16xf8E8M0FNU> -> tensor<?x512xf32>
func.func @dequantize_dynamic_tokens(%q: tensor<?x512xf8E4M3FN>, %s: tensor<?x16xf8E8M0FNU>) -> tensor<?x512xf32> {
  %x = mxmoe.dequantize %q, %s {axis = 1 : i64} : tensor<?x512xf8E4M3FN>, tensor<?x16xf8E8M0FNU> -> tensor<?x512xf32>
  return %x : tensor<?x512xf32>
}
