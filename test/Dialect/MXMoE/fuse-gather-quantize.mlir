// RUN: mxmoe-opt %s --mxmoe-fuse-quantize-producers -verify-diagnostics | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-fuse-quantize-producers -verify-diagnostics --convert-mxmoe-to-gpu="host-launch=false" | FileCheck %s --check-prefix=GPU
// RUN: mxmoe-opt %s --mxmoe-fuse-quantize-producers -verify-diagnostics --mxmoe-to-nvvm=chip=sm_90a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm90a.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm90a.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t.sm90a.ptx -o %t.sm90a.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}

// A scaled mxmoe.gather_rows (the MoE dispatch of dout in the combine's
// backward) whose users are both MX128 quantizations in token groups
// becomes one mxmoe.fused_quantize (FuseQuantizeProducers.cpp): the
// kernels read token rows through the indices (FusedQuantize.cpp,
// loadGathered), so the routed rows are never written. T = 300, top_k = 4,
// M = 1200, H = 256, 8 groups.

// CHECK-LABEL: func.func @dispatch(
// CHECK-NOT:     mxmoe.gather_rows %arg0
// CHECK:         mxmoe.fused_quantize(%arg0, %arg1, %arg2, %arg3)
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      %[[G:.*]] = mxmoe.gather_rows %{{.*}}[%{{.*}}] scaled_by
// CHECK-NEXT:      mxmoe.quantize %[[G]] offsets({{.*}}) {axis = 1 : i64
// CHECK-NEXT:      mxmoe.quantize %[[G]] offsets({{.*}}) {axis = 0 : i64
// CHECK-NEXT:      mxmoe.yield
// The fused op splits into one kernel per quantization; each takes the
// source in place of the quantize input, then indices and scores.
// GPU-LABEL: func.func @dispatch(
// GPU:         mxmoe.fused_quantize(%arg0, %arg1, %arg2, %arg3) {{{.*}}mxmoe.kernel = @mxmoe_kernels::@dispatch__quantize_0, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 3>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<result 1>, #mxmoe.kernel_arg<status>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<operand 2>,
// GPU:         mxmoe.fused_quantize(%arg0, %arg1, %arg2, %arg3) {{{.*}}mxmoe.kernel = @mxmoe_kernels::@dispatch__quantize_1, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 3>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<result 1>, #mxmoe.kernel_arg<status>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<operand 2>,
// A bad routing index raises the status word to 3; the group table's
// report joins it by atomic max.
// PTX-LABEL: .entry dispatch__quantize_0(
// PTX:         atom.global.max.s32
// PTX-LABEL: .entry dispatch__quantize_1(
// PTX:         atom.global.max.s32
// SPILLS-NOT: {{[1-9][0-9]*}} bytes spill stores
func.func @dispatch(%x: tensor<300x256xbf16>, %idx: tensor<1200xi32>, %s: tensor<300x4xf32>, %offs: tensor<8xi32>) -> (tensor<1200x256xf8E4M3FN>, tensor<2176x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<256x2176xf8E4M3FN>, tensor<256x68xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>) {
  %r = mxmoe.gather_rows %x[%idx] scaled_by %s : tensor<300x4xf32> {top_k = 4 : i64} : tensor<300x256xbf16>, tensor<1200xi32> -> tensor<1200x256xbf16>
  %q, %sc = mxmoe.quantize %r offsets(%offs : tensor<8xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<1200x256xbf16> -> tensor<1200x256xf8E4M3FN>, tensor<2176x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  %q2, %s2 = mxmoe.quantize %r offsets(%offs : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>} : tensor<1200x256xbf16> -> tensor<256x2176xf8E4M3FN>, tensor<256x68xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
  return %q, %sc, %q2, %s2 : tensor<1200x256xf8E4M3FN>, tensor<2176x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<256x2176xf8E4M3FN>, tensor<256x68xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
}
