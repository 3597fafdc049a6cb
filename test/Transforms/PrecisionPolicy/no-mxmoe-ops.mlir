// RUN: mxmoe-opt %s --split-input-file --mxmoe-precision-policy | FileCheck %s
// RUN: mxmoe-opt %s --split-input-file --mxmoe-precision-policy="precision=mxfp4 rounding=floor" | FileCheck %s

// Regression (mxmoe-fuzz-pipeline, empty input): the pass builds its
// default MX recipe attribute before it looks at any op; on a module
// without mxmoe ops the mxmoe dialect was not loaded and MXRecipeAttr::get
// crashed (SEGV in the storage uniquer). The pass now declares the mxmoe
// dialect as a dependent dialect.

// CHECK-LABEL: func.func @no_mx_ops
// CHECK-NEXT: return
func.func @no_mx_ops() {
  return
}

// -----

// CHECK: module {
// CHECK-NEXT: }
