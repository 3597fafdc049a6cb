// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu=host-launch=false --mxmoe-dedupe-kernels --split-input-file | FileCheck %s
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu --mxmoe-dedupe-kernels --split-input-file | FileCheck %s --check-prefix=LAUNCH
// With reuse-kernels (mxmoe-compile's pipeline) an op equal to an earlier
// one generates no kernel; after the dedupe the result is the same (the
// CHECK lines again), before it only the equal ops share (REUSE).
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="host-launch=false reuse-kernels=true" --mxmoe-dedupe-kernels --split-input-file | FileCheck %s
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="host-launch=false reuse-kernels=true" --split-input-file | FileCheck %s --check-prefix=REUSE
// RUN: not mxmoe-opt %s --convert-mxmoe-to-gpu=reuse-kernels=true --split-input-file 2>&1 | FileCheck %s --check-prefix=NOLAUNCH

// @a and @c quantize the same shape with the same recipe, @b another
// shape: quantize kernels take their sizes at run time, so one kernel, the
// first (@a__quantize_0), serves all three (the sizes are the ops'
// bindings). Dequantize kernels are still specialized on their shapes:
// @d and @f share one, @e (another shape) keeps its own.
// CHECK-LABEL: func.func @a(
// CHECK: mxmoe.quantize {{.*}}mxmoe.kernel = @mxmoe_kernels::@a__quantize_0, mxmoe.kernel_args = [{{.*}}#mxmoe.kernel_arg<value 256>, #mxmoe.kernel_arg<value 64>
// CHECK-LABEL: func.func @b(
// CHECK: mxmoe.quantize {{.*}}mxmoe.kernel = @mxmoe_kernels::@a__quantize_0, mxmoe.kernel_args = [{{.*}}#mxmoe.kernel_arg<value 128>, #mxmoe.kernel_arg<value 64>
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

// @c (equal to @a) and @f (equal to @d) take their kernels; @b and @e
// (other shapes) get their own, which only the dedupe merges.
// REUSE-LABEL: func.func @a(
// REUSE: mxmoe.kernel = @mxmoe_kernels::@a__quantize_0, mxmoe.kernel_args = [{{.*}}#mxmoe.kernel_arg<value 256>, #mxmoe.kernel_arg<value 64>
// REUSE-LABEL: func.func @b(
// REUSE: mxmoe.kernel = @mxmoe_kernels::@b__quantize_0, mxmoe.kernel_args = [{{.*}}#mxmoe.kernel_arg<value 128>, #mxmoe.kernel_arg<value 64>
// REUSE-LABEL: func.func @c(
// REUSE: mxmoe.kernel = @mxmoe_kernels::@a__quantize_0, mxmoe.kernel_args = [{{.*}}#mxmoe.kernel_arg<value 256>, #mxmoe.kernel_arg<value 64>
// REUSE-LABEL: func.func @f(
// REUSE: mxmoe.kernel = @mxmoe_kernels::@d__dequantize_0
// REUSE: gpu.module @mxmoe_kernels
// REUSE-NEXT: gpu.func @a__quantize_0(
// REUSE-NOT: gpu.func @c__quantize_0(
// REUSE: gpu.func @b__quantize_0(
// REUSE-NOT: gpu.func @c__quantize_0(
// REUSE: gpu.func @d__dequantize_0(
// REUSE: gpu.func @e__dequantize_0(
// REUSE-NOT: gpu.func @f__dequantize_0(
// NOLAUNCH: error: convert-mxmoe-to-gpu: reuse-kernels needs host-launch=false
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

// -----

// A reused op still takes its kernel name: @g's dequantize (a shape of its
// own) is @g__dequantize_2 with or without reuse-kernels.
// CHECK-LABEL: func.func @g(
// CHECK: mxmoe.quantize {{.*}}mxmoe.kernel = @mxmoe_kernels::@g__quantize_0
// CHECK: mxmoe.quantize {{.*}}mxmoe.kernel = @mxmoe_kernels::@g__quantize_0
// CHECK: mxmoe.dequantize {{.*}}mxmoe.kernel = @mxmoe_kernels::@g__dequantize_2
// CHECK: gpu.func @g__quantize_0(
// CHECK-NOT: gpu.func @g__quantize_1(
// CHECK: gpu.func @g__dequantize_2(
// REUSE-LABEL: func.func @g(
// REUSE: mxmoe.kernel = @mxmoe_kernels::@g__quantize_0
// REUSE: mxmoe.kernel = @mxmoe_kernels::@g__quantize_0
// REUSE: mxmoe.kernel = @mxmoe_kernels::@g__dequantize_2
// REUSE: gpu.func @g__quantize_0(
// REUSE-NOT: gpu.func @g__quantize_1(
// REUSE: gpu.func @g__dequantize_2(
func.func @g(%x: tensor<256x64xbf16>, %y: tensor<256x64xbf16>, %q: tensor<64x64xf8E4M3FN>, %s: tensor<64x2xf8E8M0FNU>)
    -> (tensor<256x64xf8E4M3FN>, tensor<256x64xf8E4M3FN>, tensor<64x64xbf16>) {
  %d0, %s0 = mxmoe.quantize %x {axis = 1 : i64}
      : tensor<256x64xbf16> -> tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>
  %d1, %s1 = mxmoe.quantize %y {axis = 1 : i64}
      : tensor<256x64xbf16> -> tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>
  %z = mxmoe.dequantize %q, %s {axis = 1 : i64}
      : tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU> -> tensor<64x64xbf16>
  return %d0, %d1, %z : tensor<256x64xf8E4M3FN>, tensor<256x64xf8E4M3FN>, tensor<64x64xbf16>
}
