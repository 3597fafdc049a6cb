// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="host-launch=false" | FileCheck %s
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="host-launch=false block-size=128" | FileCheck %s --check-prefix=SPLIT128
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_90a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm90a.ptx
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_100a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm100a.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t.sm90a.ptx -o %t.sm90a.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}
// RUN: %if ptxas %{ %ptxas -arch=sm_100a -v %t.sm100a.ptx -o %t.sm100a.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}

// mxmoe.quantize_weight lowered as one kernel (QuantizeTiles2D.cpp): the
// staged along-N 128x128 kernel, which also writes each staged 16-byte
// chunk again as 8 codes of the forward data (the input's layout) and the
// tile's forward scales. Parameters: input, transposed data and scales,
// forward data and scales, then the sizes. Where the kernel does not apply
// (f32 input, 128-thread CTAs, FP4 data) the pass lowers the op as its two
// quantizations. The GPU test (test/Integration/mx_kernels_gpu.py) checks
// both orientations bit-exactly against python/mxmoe/reference.py.

// CHECK-LABEL: func.func @blocked_both(
// CHECK:         mxmoe.quantize_weight %{{.*}} {mxmoe.grid = array<i64: 184, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@blocked_both__quantize_weight_0, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<result 2>, #mxmoe.kernel_arg<result 3>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<result 1>, #mxmoe.kernel_arg<value 4>, #mxmoe.kernel_arg<value 2880>, #mxmoe.kernel_arg<value 224>, #mxmoe.kernel_arg<value 645120>, #mxmoe.kernel_arg<value 1>, #mxmoe.kernel_arg<value 2880>, #mxmoe.kernel_arg<value 2944>, #mxmoe.kernel_arg<value 8>, #mxmoe.kernel_arg<value 256>, #mxmoe.kernel_arg<value 92>]
func.func @blocked_both(%w: tensor<4x224x2880xbf16>) -> (tensor<4x224x2880xf8E4M3FN>, tensor<4x256x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<4x2880x224xf8E4M3FN>, tensor<4x2944x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>) {
  %q, %s, %qt, %st = mxmoe.quantize_weight %w {scale_tile = array<i64: 128, 128>}
      : tensor<4x224x2880xbf16> -> tensor<4x224x2880xf8E4M3FN>, tensor<4x256x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
        tensor<4x2880x224xf8E4M3FN>, tensor<4x2944x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %q, %s, %qt, %st : tensor<4x224x2880xf8E4M3FN>, tensor<4x256x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<4x2880x224xf8E4M3FN>, tensor<4x2944x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// CHECK-LABEL: func.func @row_major_and_compact(
// CHECK:         mxmoe.quantize_weight %{{.*}} mxmoe.kernel = @mxmoe_kernels::@row_major_and_compact__quantize_weight_0
func.func @row_major_and_compact(%w: tensor<288x192xbf16>) -> (tensor<288x6xf8E8M0FNU>, tensor<2x3xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>) {
  %q, %s, %qt, %st = mxmoe.quantize_weight %w {scale_tile = array<i64: 128, 128>}
      : tensor<288x192xbf16> -> tensor<288x192xf8E5M2>, tensor<288x6xf8E8M0FNU>,
        tensor<192x288xf8E5M2>, tensor<2x3xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
  return %s, %st : tensor<288x6xf8E8M0FNU>, tensor<2x3xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
}

// f32 input: the two quantizations (along K, then along N).
// CHECK-LABEL: func.func @f32_split(
// CHECK:         mxmoe.quantize %{{.*}} {axis = 2 : i64, {{.*}}mxmoe.kernel = @mxmoe_kernels::@f32_split__quantize_0
// CHECK:         mxmoe.quantize %{{.*}} {axis = 1 : i64, {{.*}}mxmoe.kernel = @mxmoe_kernels::@f32_split__quantize_1
// CHECK-NOT:     mxmoe.quantize_weight
// SPLIT128-LABEL: func.func @blocked_both(
// SPLIT128:         mxmoe.quantize %{{.*}} {axis = 2 : i64
// SPLIT128:         mxmoe.quantize %{{.*}} {axis = 1 : i64
func.func @f32_split(%w: tensor<2x160x288xf32>) -> (tensor<2x160x288xf8E4M3FN>, tensor<2x288x160xf8E4M3FN>) {
  %q, %s, %qt, %st = mxmoe.quantize_weight %w {rounding = #mxmoe.rounding<floor>, scale_tile = array<i64: 128, 128>}
      : tensor<2x160x288xf32> -> tensor<2x160x288xf8E4M3FN>, tensor<2x160x9xf8E8M0FNU>,
        tensor<2x288x160xf8E4M3FN>, tensor<2x288x5xf8E8M0FNU>
  return %q, %qt : tensor<2x160x288xf8E4M3FN>, tensor<2x288x160xf8E4M3FN>
}

// CHECK-LABEL: gpu.func @blocked_both__quantize_weight_0(
// CHECK-SAME:    mxmoe.scalar = "forward_scale_rows"
// CHECK-SAME:    memref<16448xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}
// CHECK-COUNT-8: vector.store %{{.*}} : memref<16448xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK:         gpu.barrier
// CHECK-COUNT-8: vector.load %{{.*}} : memref<16448xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// SPILLS-NOT: {{[1-9][0-9]*}} bytes spill stores
