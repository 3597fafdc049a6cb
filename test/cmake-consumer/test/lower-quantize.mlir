// A lowering test outside the mxmoe tree: the installed mxmoe-opt and this
// project's consumer-opt (built from the installed libraries) lower an MX
// quantization to the same GPU kernel and launch, and to sm_90a PTX.
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu=chip=sm_90a > %t.installed.mlir
// RUN: consumer-opt %s --convert-mxmoe-to-gpu=chip=sm_90a > %t.consumer.mlir
// RUN: FileCheck %s < %t.consumer.mlir
// RUN: diff %t.installed.mlir %t.consumer.mlir
// RUN: consumer-opt %s --mxmoe-to-nvvm=chip=sm_90a | consumer-opt --gpu-module-to-binary=format=isa | FileCheck %s --check-prefix=PTX
// RUN: not consumer-opt %s --convert-mxmoe-to-gpu=chip=sm_80 2>&1 | FileCheck %s --check-prefix=BADCHIP

// CHECK-LABEL: func.func @rowwise(
// CHECK-NOT: mxmoe.quantize
// CHECK: gpu.launch_func @mxmoe_kernels::@rowwise__quantize_0
// CHECK: gpu.module @mxmoe_kernels
// CHECK: gpu.func @rowwise__quantize_0(
// CHECK: nvvm.convert.f32x2.to.f8x2

// PTX: .target sm_90a
// PTX: .entry rowwise__quantize_0(
// PTX: cvt.rn.satfinite.e4m3x2.f32

// BADCHIP: for the --chip option: 'sm_80' is not one of: sm_90a, sm_100a, sm_103a
func.func @rowwise(%x: tensor<200x2880xbf16>) {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64}
      : tensor<200x2880xbf16> -> tensor<200x2880xf8E4M3FN>,
        tensor<256x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}
