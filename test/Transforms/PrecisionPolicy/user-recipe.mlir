// RUN: mxmoe-opt %s --split-input-file --mxmoe-precision-policy --verify-diagnostics | FileCheck %s
// RUN: not mxmoe-opt %s --split-input-file --mxmoe-precision-policy="precision=mxfp4" 2>/dev/null | FileCheck %s --check-prefix=FP4

// Regression (mxmoe-fuzz-pipeline, seed from attrs-mx-recipe.mlir): an op
// with a user recipe but no precision got the policy's target precision
// whatever the recipe's element type, e.g. mxfp8 with an f6E2M3FN or
// f4E2M1FN recipe, which the verifier rejects. The recipe now decides the
// MX precision (rule `recipe`); an FP6 recipe fails the pass.

// CHECK-LABEL: func.func @fp8_recipe
// CHECK: mxmoe.linear {{.*}} {fqn = "dense", precision = #mxmoe.precision<mxfp8>, recipe = #mxmoe.mx_recipe<f8E5M2, block_size = 32, rounding = even>}
// FP4-LABEL: func.func @fp8_recipe
// FP4: mxmoe.linear {{.*}} {fqn = "dense", precision = #mxmoe.precision<mxfp8>, recipe = #mxmoe.mx_recipe<f8E5M2, block_size = 32, rounding = even>}
func.func @fp8_recipe(%x: tensor<64x64xbf16>, %w: tensor<64x64xbf16>) {
  // expected-remark @+1 {{mxmoe-precision-policy: dense -> mxfp8 (rule default: passes every rule)}}
  %a = mxmoe.linear %x, %w {fqn = "dense", recipe = #mxmoe.mx_recipe<f8E5M2, block_size = 32, rounding = even>}
      : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  return
}

// -----

// CHECK-LABEL: func.func @fp4_recipe
// CHECK: mxmoe.scaled_grouped_matmul {{.*}} {fqn = "experts", precision = #mxmoe.precision<mxfp4>, recipe = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = ceil>}
// FP4-LABEL: func.func @fp4_recipe
// FP4: mxmoe.scaled_grouped_matmul {{.*}} {fqn = "experts", precision = #mxmoe.precision<mxfp4>, recipe = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = ceil>}
func.func @fp4_recipe(%x: tensor<64x64xbf16>, %w: tensor<2x64x64xbf16>, %offs: tensor<2xi32>) {
  // expected-remark @+1 {{mxmoe-precision-policy: experts -> mxfp4 (rule recipe: the op's recipe has f4E2M1FN elements)}}
  %b = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "experts", recipe = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = ceil>}
      : (tensor<64x64xbf16>, tensor<2x64x64xbf16>, tensor<2xi32>) -> tensor<64x64xbf16>
  return
}

// -----

// An excluded op stays bf16 whatever its recipe.
// CHECK-LABEL: func.func @fp6_recipe_excluded
// CHECK: mxmoe.linear {{.*}} {fqn = "output", precision = #mxmoe.precision<bf16>, recipe = #mxmoe.mx_recipe<f6E2M3FN, block_size = 32, rounding = rceil>}
func.func @fp6_recipe_excluded(%x: tensor<64x64xbf16>, %w: tensor<64x64xbf16>) {
  // expected-remark @+1 {{mxmoe-precision-policy: output -> bf16 (rule exclude: fqn matches exclude pattern 'output')}}
  %a = mxmoe.linear %x, %w {fqn = "output", recipe = #mxmoe.mx_recipe<f6E2M3FN, block_size = 32, rounding = rceil>}
      : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  return
}

// -----

func.func @fp6_recipe(%x: tensor<64x64xbf16>, %w: tensor<64x64xbf16>) {
  // expected-error @+1 {{mxmoe-precision-policy: dense: the op's recipe element type 'f6E2M3FN' has no MX precision (mxfp8: f8E4M3FN or f8E5M2, mxfp4: f4E2M1FN)}}
  %a = mxmoe.linear %x, %w {fqn = "dense", recipe = #mxmoe.mx_recipe<f6E2M3FN, block_size = 32, rounding = even>}
      : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  return
}
