// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="host-launch=false" | FileCheck %s
// RUN: not mxmoe-opt %s --convert-mxmoe-to-gpu="host-launch=false block-size=64" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_90a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm90a.ptx
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_100a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm100a.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t.sm90a.ptx -o %t.sm90a.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}
// RUN: %if ptxas %{ %ptxas -arch=sm_100a -v %t.sm100a.ptx -o %t.sm100a.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}

// mxmoe.requantize lowered (Requantize.cpp): one thread per (tile, tile
// row) takes the largest scale byte of its row's blocks; the 128 rows of a
// [128, 128] tile combine theirs by shuffles and shared memory (one
// barrier), a [1, 128] tile needs neither; then each block's 32 codes are
// decoded, shifted by 2^(s - S) and converted back. Grid: whole CTAs of
// 256 threads, 2 x 23 tiles x 4 experts x 128 rows = 92 CTAs. The GPU test
// (test/Integration/mx_kernels_gpu.py) checks them bit-exactly against
// python/mxmoe/reference.py mx_to_tiled.

// CHECK-LABEL: func.func @weights_compact(
// CHECK:         mxmoe.requantize %{{.*}}, %{{.*}} {mxmoe.grid = array<i64: 92, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@weights_compact__requantize_0, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<result 1>, #mxmoe.kernel_arg<value 4>, #mxmoe.kernel_arg<value 200>, #mxmoe.kernel_arg<value 2880>]
// CHECK-LABEL: gpu.func @weights_compact__requantize_0(
// CHECK-SAME:    workgroup(%{{.*}} : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK-COUNT-5: nvvm.shfl.sync  bfly
// CHECK:         gpu.barrier
// CHECK-LABEL: gpu.func @rows_row_major__requantize_0(
// CHECK-NOT:     gpu.barrier
// CHECK-NOT:     nvvm.shfl.sync
// CHECK:         gpu.return
// BLOCK: error: 'mxmoe.requantize' op GPU lowering needs a scale tile of a power of two rows dividing the block size (64), got 128
// SPILLS-NOT: {{[1-9][0-9]*}} bytes spill stores

func.func @weights_compact(%q: tensor<4x200x2880xf8E4M3FN>, %s: tensor<4x200x90xf8E8M0FNU>) -> (tensor<4x200x2880xf8E4M3FN>, tensor<4x2x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>) {
  %q2, %s2 = mxmoe.requantize %q, %s {scale_tile = array<i64: 128, 128>}
      : tensor<4x200x2880xf8E4M3FN>, tensor<4x200x90xf8E8M0FNU>
      -> tensor<4x200x2880xf8E4M3FN>, tensor<4x2x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
  return %q2, %s2 : tensor<4x200x2880xf8E4M3FN>, tensor<4x2x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
}

func.func @rows_row_major(%q: tensor<64x256xf8E5M2>, %s: tensor<64x8xf8E8M0FNU>) -> (tensor<64x256xf8E5M2>, tensor<64x8xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>) {
  %q2, %s2 = mxmoe.requantize %q, %s {scale_tile = array<i64: 1, 128>}
      : tensor<64x256xf8E5M2>, tensor<64x8xf8E8M0FNU>
      -> tensor<64x256xf8E5M2>, tensor<64x8xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
  return %q2, %s2 : tensor<64x256xf8E5M2>, tensor<64x8xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
}
