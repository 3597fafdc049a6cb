// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu=host-launch=false --mxmoe-dedupe-kernels --split-input-file | FileCheck %s
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu --mxmoe-dedupe-kernels --split-input-file | FileCheck %s --check-prefix=LAUNCH

// @a and @c quantize the same shape with the same recipe, @b another
// shape: quantize kernels take their sizes at run time, so one kernel, the
// first (@a__quantize_0), serves all three (the sizes are the ops'
// bindings). Dequantize kernels are still specialized on their shapes:
// @d and @f share one, @e (another shape) keeps its own.
// CHECK-LABEL: func.func @a(
// CHECK: mxmoe.quantize {{.*}}mxmoe.kernel = @mxmoe_kernels::@a__quantize_0, mxmoe.kernel_args = [{{.*}}"value:256", "value:64"
// CHECK-LABEL: func.func @b(
// CHECK: mxmoe.quantize {{.*}}mxmoe.kernel = @mxmoe_kernels::@a__quantize_0, mxmoe.kernel_args = [{{.*}}"value:128", "value:64"
// CHECK-LABEL: func.func @c(
// CHECK: mxmoe.quantize {{.*}}mxmoe.kernel = @mxmoe_kernels::@a__quantize_0
// CHECK-LABEL: func.func @d(
// CHECK: mxmoe.dequantize {{.*}}mxmoe.kernel = @mxmoe_kernels::@d__dequantize_0
// CHECK-LABEL: func.func @e(
// CHECK: mxmoe.dequantize {{.*}}mxmoe.kernel = @mxmoe_kernels::@e__dequantize_0
// CHECK-LABEL: func.func @f(
// CHECK: mxmoe.dequantize {{.*}}mxmoe.kernel = @mxmoe_kernels::@d__dequantize_0
// CHECK: gpu.module @mxmoe_kernels
// CHECK: gpu.func @a__quantize_0(
// CHECK-NOT: gpu.func @b__quantize_0(
// CHECK-NOT: gpu.func @c__quantize_0(
// CHECK: gpu.func @d__dequantize_0(
// CHECK: gpu.func @e__dequantize_0(
// CHECK-NOT: gpu.func @f__dequantize_0(

// LAUNCH-LABEL: func.func @a(
// LAUNCH: gpu.launch_func @mxmoe_kernels::@a__quantize_0
// LAUNCH-LABEL: func.func @b(
// LAUNCH: gpu.launch_func @mxmoe_kernels::@a__quantize_0
// LAUNCH-LABEL: func.func @c(
// LAUNCH: gpu.launch_func @mxmoe_kernels::@a__quantize_0
// LAUNCH-LABEL: func.func @e(
// LAUNCH: gpu.launch_func @mxmoe_kernels::@e__dequantize_0
// LAUNCH-NOT: gpu.func @c__quantize_0(
func.func @a(%x: tensor<256x64xbf16>) -> (tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>) {
  %d, %s = mxmoe.quantize %x {axis = 1 : i64}
      : tensor<256x64xbf16> -> tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>
  return %d, %s : tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>
}
func.func @b(%x: tensor<128x64xbf16>) -> (tensor<128x64xf8E4M3FN>, tensor<128x2xf8E8M0FNU>) {
  %d, %s = mxmoe.quantize %x {axis = 1 : i64}
      : tensor<128x64xbf16> -> tensor<128x64xf8E4M3FN>, tensor<128x2xf8E8M0FNU>
  return %d, %s : tensor<128x64xf8E4M3FN>, tensor<128x2xf8E8M0FNU>
}
func.func @c(%x: tensor<256x64xbf16>) -> (tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>) {
  %d, %s = mxmoe.quantize %x {axis = 1 : i64}
      : tensor<256x64xbf16> -> tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>
  return %d, %s : tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>
}
func.func @d(%q: tensor<256x64xf8E4M3FN>, %s: tensor<256x2xf8E8M0FNU>) -> tensor<256x64xbf16> {
  %y = mxmoe.dequantize %q, %s {axis = 1 : i64}
      : tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU> -> tensor<256x64xbf16>
  return %y : tensor<256x64xbf16>
}
func.func @e(%q: tensor<128x64xf8E4M3FN>, %s: tensor<128x2xf8E8M0FNU>) -> tensor<128x64xbf16> {
  %y = mxmoe.dequantize %q, %s {axis = 1 : i64}
      : tensor<128x64xf8E4M3FN>, tensor<128x2xf8E8M0FNU> -> tensor<128x64xbf16>
  return %y : tensor<128x64xbf16>
}
func.func @f(%q: tensor<256x64xf8E4M3FN>, %s: tensor<256x2xf8E8M0FNU>) -> tensor<256x64xbf16> {
  %y = mxmoe.dequantize %q, %s {axis = 1 : i64}
      : tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU> -> tensor<256x64xbf16>
  return %y : tensor<256x64xbf16>
}

// -----

// Same shapes, different rounding (a different kernel body) or a different
// scale element type: nothing is merged.
// CHECK-LABEL: func.func @floor(
// CHECK: mxmoe.kernel = @mxmoe_kernels::@floor__quantize_0
// CHECK-LABEL: func.func @rceil(
// CHECK: mxmoe.kernel = @mxmoe_kernels::@rceil__quantize_0
// CHECK-LABEL: func.func @e5m2(
// CHECK: mxmoe.kernel = @mxmoe_kernels::@e5m2__quantize_0
// CHECK: gpu.func @floor__quantize_0(
// CHECK: gpu.func @rceil__quantize_0(
// CHECK: gpu.func @e5m2__quantize_0(
func.func @floor(%x: tensor<256x64xbf16>) -> (tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>) {
  %d, %s = mxmoe.quantize %x {axis = 1 : i64, rounding = #mxmoe.rounding<floor>}
      : tensor<256x64xbf16> -> tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>
  return %d, %s : tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>
}
func.func @rceil(%x: tensor<256x64xbf16>) -> (tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>) {
  %d, %s = mxmoe.quantize %x {axis = 1 : i64, rounding = #mxmoe.rounding<rceil>}
      : tensor<256x64xbf16> -> tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>
  return %d, %s : tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>
}
func.func @e5m2(%x: tensor<256x64xbf16>) -> (tensor<256x64xf8E5M2>, tensor<256x2xf8E8M0FNU>) {
  %d, %s = mxmoe.quantize %x {axis = 1 : i64, rounding = #mxmoe.rounding<rceil>}
      : tensor<256x64xbf16> -> tensor<256x64xf8E5M2>, tensor<256x2xf8E8M0FNU>
  return %d, %s : tensor<256x64xf8E5M2>, tensor<256x2xf8E8M0FNU>
}
