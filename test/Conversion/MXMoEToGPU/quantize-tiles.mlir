// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="host-launch=false" | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_90a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm90a.ptx
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_100a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm100a.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm90a.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t.sm90a.ptx -o %t.sm90a.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}
// RUN: %if ptxas %{ %ptxas -arch=sm_100a -v %t.sm100a.ptx -o %t.sm100a.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}

// Quantize kernels with scale tiles (MX128, QuantizeTiles.cpp): [1, 128]
// rowwise with row-major, compact and blocked scales (one thread per
// blocked byte; the four threads of a tile combine their amax with
// shfl.sync.bfly in their 4-lane group), M-grouped, 128x128 weight tiles (one CTA
// per tile, the amax reduced by warp shuffles and shared memory; blocked
// scales written as whole 512-byte atoms), and 128-token windows on a
// jagged token axis. The GPU test (test/Integration/mx_kernels_gpu.py)
// checks them bit-exactly against python/mxmoe/reference.py.

// CHECK-LABEL: gpu.func @rowwise_mx__quantize_0(
// CHECK-SAME:    mxmoe.scalar = "batch"
// CHECK-LABEL: gpu.func @rowwise_blocked__quantize_0(
// CHECK:         %[[LANE:.*]] = nvvm.read.ptx.sreg.laneid
// CHECK-COUNT-2: nvvm.shfl.sync  bfly
// CHECK-LABEL: gpu.func @m_grouped__quantize_0(
// CHECK-COUNT-2: nvvm.shfl.sync  bfly
// CHECK:         scf.if
// CHECK-COUNT-2: nvvm.shfl.sync  bfly
// Along K (rowwise): each thread's two blocks are read (4 x 16 bytes each)
// for the amax, then read again after the CTA's amax, not kept in
// registers (98 -> 57 registers on sm_90a, 2 -> 4 CTAs per SM).
// CHECK-LABEL: gpu.func @weight_compact__quantize_0(
// CHECK-COUNT-8: vector.load %{{.*}} {alignment = 16 : i64} : memref<?xbf16>, vector<8xbf16>
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK:         gpu.barrier
// CHECK:         scf.if
// CHECK-COUNT-4: vector.load %{{.*}} {alignment = 16 : i64} : memref<?xbf16>, vector<8xbf16>
// Along N (strided), bf16: the 128x128 input tile is staged in shared
// memory with 16-byte loads along K, the tile's amax taken from those
// loads (QuantizeTiles2D.cpp); the staged tile is read down its columns
// only after the CTA's amax, for the stores, two adjacent columns (data
// rows) per 4-byte read.
// CHECK-LABEL: gpu.func @weight_along_n__quantize_0(
// CHECK-SAME:    memref<16448xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}
// CHECK:         vector.load %{{.*}} {alignment = 16 : i64} : memref<?xbf16>, vector<8xbf16>
// CHECK:         vector.store
// CHECK:         arith.maximumf
// CHECK:         gpu.barrier
// CHECK-NOT:     vector.load %{{.*}} : memref<16448xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK:         gpu.barrier
// CHECK-COUNT-32: vector.load %{{.*}} {alignment = 4 : i64} : memref<16448xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// f32 weights keep the strided loads (a staged f32 tile would need 64 KB).
// CHECK-LABEL: gpu.func @weight_along_n_f32__quantize_0(
// CHECK-NOT:     vector.load
// CHECK:         gpu.shuffle  xor
// CHECK-LABEL: gpu.func @jagged__quantize_0(
// CHECK-LABEL: gpu.func @jagged__quantize_1(

// PTX-LABEL: .visible .entry rowwise_blocked__quantize_0(
// PTX:         shfl.sync.bfly.b32
// PTX-LABEL: .visible .entry weight_compact__quantize_0(
// PTX:         shfl.sync.bfly.b32
// PTX:         bar.sync
// SPILLS-NOT: {{[1-9][0-9]*}} bytes spill stores

func.func @rowwise_mx(%x: tensor<200x2880xbf16>) -> tensor<200x90xf8E8M0FNU> {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<200x2880xbf16> -> tensor<200x2880xf8E4M3FN>, tensor<200x90xf8E8M0FNU>
  return %s : tensor<200x90xf8E8M0FNU>
}
func.func @rowwise_compact(%x: tensor<200x2880xbf16>) -> tensor<200x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128]>> {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<200x2880xbf16> -> tensor<200x2880xf8E4M3FN>, tensor<200x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128]>>
  return %s : tensor<200x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128]>>
}
func.func @rowwise_blocked(%x: tensor<200x2880xbf16>) -> tensor<256x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<200x2880xbf16> -> tensor<200x2880xf8E4M3FN>, tensor<256x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %s : tensor<256x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}
func.func @m_grouped(%x: tensor<1000x2880xbf16>, %offs: tensor<8xi32>) -> tensor<1920x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<1000x2880xbf16> -> tensor<1000x2880xf8E4M3FN>, tensor<1920x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %s : tensor<1920x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}
func.func @weight_compact(%w: tensor<16x200x2880xbf16>) -> tensor<16x2x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>> {
  %q, %s = mxmoe.quantize %w {axis = 2 : i64, scale_tile = array<i64: 128, 128>}
      : tensor<16x200x2880xbf16> -> tensor<16x200x2880xf8E4M3FN>, tensor<16x2x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
  return %s : tensor<16x2x23xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [128, 128]>>
}
func.func @weight_along_n(%w: tensor<4x256x192xbf16>) -> tensor<4x256x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %w {axis = 1 : i64, scale_tile = array<i64: 128, 128>}
      : tensor<4x256x192xbf16> -> tensor<4x192x256xf8E4M3FN>, tensor<4x256x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %s : tensor<4x256x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}
func.func @weight_along_n_f32(%w: tensor<4x256x192xf32>) -> tensor<4x256x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %w {axis = 1 : i64, scale_tile = array<i64: 128, 128>}
      : tensor<4x256x192xf32> -> tensor<4x192x256xf8E4M3FN>, tensor<4x256x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %s : tensor<4x256x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}
func.func @jagged(%x: tensor<1000x64xbf16>, %offs: tensor<8xi32>) {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<1000x64xbf16> -> tensor<64x1248xf8E4M3FN>, tensor<64x15xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128], per_k_group>>
  %q2, %s2 = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<1000x64xbf16> -> tensor<64x1248xf8E4M3FN>, tensor<128x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return
}
