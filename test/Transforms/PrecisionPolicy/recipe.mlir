// RUN: mxmoe-opt %s --mxmoe-precision-policy="recipe=mx128" 2>/dev/null | FileCheck %s --check-prefix=MX128
// RUN: mxmoe-opt %s --mxmoe-precision-policy 2>/dev/null | FileCheck %s --check-prefix=MX32
// RUN: mxmoe-opt %s --mxmoe-precision-policy="recipe=auto chips=sm_90a,sm_100a" 2>/dev/null | FileCheck %s --check-prefix=MX128
// RUN: mxmoe-opt %s --mxmoe-precision-policy="recipe=auto chips=sm_100a,sm_103a" 2>/dev/null | FileCheck %s --check-prefix=MX32
// RUN: mxmoe-opt %s --mxmoe-precision-policy="recipe=auto chips=sm_90a precision=mxfp4" 2>/dev/null | FileCheck %s --check-prefix=FP4
// RUN: mxmoe-opt %s --mxmoe-precision-policy="recipe=auto chips=sm_90a report=- remarks=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: not mxmoe-opt %s --mxmoe-precision-policy="recipe=auto" 2>&1 | FileCheck %s --check-prefix=NOCHIPS
// RUN: not mxmoe-opt %s --mxmoe-precision-policy="recipe=auto chips=sm_80" 2>&1 | FileCheck %s --check-prefix=BADCHIP
// RUN: not mxmoe-opt %s --mxmoe-precision-policy="recipe=mx64" 2>&1 | FileCheck %s --check-prefix=BADRECIPE
// RUN: not mxmoe-opt %s --mxmoe-precision-policy="recipe=mx128 precision=mxfp4" 2>&1 | FileCheck %s --check-prefix=MX128FP4

// The policy's `recipe` option picks the granularity of the recipe it
// assigns; `auto` is mx128 when the chips include sm_90a (and the elements
// are fp8), mx32 otherwise. A recipe on the op always wins.

// MX128-LABEL: func.func @layer
// MX128: {fqn = "layers.0.moe.experts", precision = #mxmoe.precision<mxfp8>, recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil, granularity = mx128>}
// MX128: {fqn = "layers.0.moe.shared", precision = #mxmoe.precision<mxfp8>, recipe = #mxmoe.mx_recipe<f8E5M2, block_size = 32, rounding = floor>}
// MX32-LABEL: func.func @layer
// MX32: {fqn = "layers.0.moe.experts", precision = #mxmoe.precision<mxfp8>, recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>}
// MX32: {fqn = "layers.0.moe.shared", precision = #mxmoe.precision<mxfp8>, recipe = #mxmoe.mx_recipe<f8E5M2, block_size = 32, rounding = floor>}
// FP4-LABEL: func.func @layer
// FP4: {fqn = "layers.0.moe.experts", precision = #mxmoe.precision<mxfp4>, recipe = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = rceil>}
// REPORT: "fqn": "layers.0.moe.experts"
// REPORT: "recipe": "mx128"
// REPORT: "fqn": "layers.0.moe.shared"
// REPORT: "recipe": "mx32"
// REPORT: "recipe": "auto -> mx128"
// NOCHIPS: error: mxmoe-precision-policy: recipe=auto needs the target chips (chips=sm_90a,sm_100a); or choose recipe=mx32 or mx128
// BADCHIP: error: mxmoe-precision-policy: unknown chip 'sm_80' in chips; expected sm_90a, sm_100a or sm_103a
// BADRECIPE: for the --recipe option: 'mx64' is not one of: mx32, mx128, auto
// MX128FP4: error: mxmoe-precision-policy: recipe=mx128 (1x128 / 128x128 scale tiles) needs precision=mxfp8, got precision=mxfp4
func.func @layer(%x: tensor<256x256xbf16>, %w: tensor<4x256x256xbf16>, %o: tensor<4xi32>, %ws: tensor<256x256xbf16>) {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %o {fqn = "layers.0.moe.experts"}
      : (tensor<256x256xbf16>, tensor<4x256x256xbf16>, tensor<4xi32>) -> tensor<256x256xbf16>
  %s = mxmoe.linear %x, %ws {fqn = "layers.0.moe.shared", recipe = #mxmoe.mx_recipe<f8E5M2, block_size = 32, rounding = floor>}
      : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  return
}
