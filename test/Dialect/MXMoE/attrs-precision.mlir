// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// #mxmoe.precision<bf16 | mxfp8 | mxfp4> as a standalone attribute (e.g. a
// per-layer override table) and on mxmoe.linear.

// CHECK-LABEL: func.func @precision_values()
// CHECK-SAME:    attributes {p0 = #mxmoe.precision<bf16>, p1 = #mxmoe.precision<mxfp8>, p2 = #mxmoe.precision<mxfp4>}
func.func @precision_values() attributes {p0 = #mxmoe.precision<bf16>, p1 = #mxmoe.precision<mxfp8>, p2 = #mxmoe.precision<mxfp4>} {
  return
}

// A dictionary from layer names to precisions (printed sorted by key).
// CHECK-LABEL: func.func @precision_table()
// CHECK-SAME:    attributes {overrides = {layers.0.attention.wq = #mxmoe.precision<bf16>, layers.0.feed_forward.experts = #mxmoe.precision<mxfp8>, output = #mxmoe.precision<bf16>}}
func.func @precision_table() attributes {overrides = {output = #mxmoe.precision<bf16>, "layers.0.attention.wq" = #mxmoe.precision<bf16>, "layers.0.feed_forward.experts" = #mxmoe.precision<mxfp8>}} {
  return
}

// Each value on the op that carries it.
// CHECK-LABEL: func.func @precision_on_linear(
// CHECK:         mxmoe.linear %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "a", precision = #mxmoe.precision<bf16>}
// CHECK:         mxmoe.linear %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "b", precision = #mxmoe.precision<mxfp8>}
// CHECK:         mxmoe.linear %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {fqn = "c", precision = #mxmoe.precision<mxfp4>}
func.func @precision_on_linear(%x: tensor<32x64xbf16>, %w: tensor<32x64xbf16>) {
  %a = mxmoe.linear %x, %w {fqn = "a", precision = #mxmoe.precision<bf16>} : (tensor<32x64xbf16>, tensor<32x64xbf16>) -> tensor<32x32xbf16>
  %b = mxmoe.linear %x, %w {fqn = "b", precision = #mxmoe.precision<mxfp8>} : (tensor<32x64xbf16>, tensor<32x64xbf16>) -> tensor<32x32xbf16>
  %c = mxmoe.linear %x, %w {fqn = "c", precision = #mxmoe.precision<mxfp4>} : (tensor<32x64xbf16>, tensor<32x64xbf16>) -> tensor<32x32xbf16>
  return
}
