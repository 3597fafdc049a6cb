// RUN: mxmoe-opt %s --split-input-file --mxmoe-precision-policy="recipe=mx128" --verify-diagnostics | FileCheck %s

// A recipe written on an op wins over the policy's recipe option; when its
// scale granularity differs from the option's, the policy says so (the
// option has no effect on that op: a pipeline run with --recipe mx128 on
// IR whose ops carry MX32 recipes would otherwise compile MX32 silently).

// CHECK-LABEL: func.func @mx32_written
// CHECK: recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>}
func.func @mx32_written(%x: tensor<64x64xbf16>, %w: tensor<2x64x64xbf16>, %offs: tensor<2xi32>) {
  // expected-warning @+2 {{mxmoe-precision-policy: experts keeps the recipe written on it (mx32); the pipeline's recipe is mx128 (remove the op's recipe to follow the option)}}
  // expected-remark @+1 {{mxmoe-precision-policy: experts -> mxfp8 (rule default: passes every rule)}}
  %b = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "experts", recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>}
      : (tensor<64x64xbf16>, tensor<2x64x64xbf16>, tensor<2xi32>) -> tensor<64x64xbf16>
  return
}

// -----

// The same granularity: nothing to say.
// CHECK-LABEL: func.func @mx128_written
// CHECK: granularity = mx128
func.func @mx128_written(%x: tensor<64x64xbf16>, %w: tensor<2x64x64xbf16>, %offs: tensor<2xi32>) {
  // expected-remark @+1 {{mxmoe-precision-policy: experts -> mxfp8 (rule default: passes every rule)}}
  %b = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "experts", recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil, granularity = mx128>}
      : (tensor<64x64xbf16>, tensor<2x64x64xbf16>, tensor<2xi32>) -> tensor<64x64xbf16>
  return
}
