// PTX for both chips: the e4m3/e8m0 conversions, no flush-to-zero, and
// ptxas accepts the kernels for sm_90a and sm_100a.
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_90a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm90a.ptx
// RUN: FileCheck %s --check-prefixes=PTX,SM90 < %t.sm90a.ptx
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_100a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm100a.ptx
// RUN: FileCheck %s --check-prefixes=PTX,SM100 < %t.sm100a.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t.sm90a.ptx -o %t.sm90a.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_100a %t.sm100a.ptx -o %t.sm100a.cubin %}

// SM90: .target sm_90a
// SM100: .target sm_100a
// PTX-LABEL: .visible .entry q__quantize_0(
// PTX: ld.global.nc.v4.b32
// PTX: cvt.rn.satfinite.e4m3x2.f32
// PTX-LABEL: .visible .entry q__dequantize_1(
// PTX: cvt.rn.f16x2.e4m3x2
// PTX-NOT: .ftz
func.func @q(%x: tensor<128x256xbf16>) {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64}
      : tensor<128x256xbf16> -> tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  %y = mxmoe.dequantize %q, %s {axis = 1 : i64}
      : tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<128x256xf32>
  return
}
