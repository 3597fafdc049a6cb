// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_90a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm90a.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm90a.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t.sm90a.ptx -o %t.sm90a.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}

// Quantize along a jagged token axis (QuantizeJagged.cpp): one CTA per
// (128-token chunk of a group, up to 4 tiles of 64 K columns) loads, per
// tile, the chunk with 16-byte vector loads into a shared-memory tile
// (tokens past the group's end as zeros), a barrier, then one thread per
// (two adjacent columns, 16-token segment) reads its 2 x 16 values from
// the tile with 4-byte reads and stores 16 codes per column (8 lanes: one
// 128-byte row segment); the segments of a c-token scale window are
// adjacent lanes (per column c = 128: three shfl.sync.bfly steps, c = 64:
// two, c = 32: one). Blocked scales: the
// chunk threads also zero their group's padding bytes. CTAs past the
// chunks zero what lies past the groups (grid-stride scf.for loops). The
// GPU test (test/Integration/mx_kernels_gpu.py) checks them bit-exactly
// against python/mxmoe/reference.py.

// Grid: (ceil(1000 / 128) + 8 groups) chunk slots x 1 CTA of column tiles
// = 16 CTAs, also for blocked scales (no padding threads: two tiles cover
// the 128 scale rows).
// CHECK-LABEL: func.func @mx_rowmajor(
// CHECK: gpu.launch_func @mxmoe_kernels::@mx_rowmajor__quantize_0 blocks in (%c16
// CHECK-LABEL: func.func @mx128_blocked(
// CHECK: gpu.launch_func @mxmoe_kernels::@mx128_blocked__quantize_0 blocks in (%c16
// K = 1088: 17 tiles, 5 CTAs of up to 4 per chunk slot: 16 x 5 = 80.
// CHECK-LABEL: func.func @wide(
// CHECK: gpu.launch_func @mxmoe_kernels::@wide__quantize_0 blocks in (%c80

// CHECK-LABEL: gpu.func @mx_rowmajor__quantize_0(
// CHECK-SAME:    %[[TILE:[a-z0-9]+]] : memref<8256xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-SAME:    nvvm.minctasm = 4 : i32
// CHECK:         scf.for
// CHECK:         vector.load %{{.*}} {alignment = 16 : i64} : memref<?xbf16>, vector<8xbf16>
// CHECK:         vector.store %{{.*}}, %[[TILE]]
// CHECK:         arith.constant dense<0.000000e+00> : vector<8xbf16>
// CHECK:         gpu.barrier
// CHECK-COUNT-16: vector.load %[[TILE]][%{{.*}}] {alignment = 4 : i64} : memref<8256xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK-COUNT-2: nvvm.shfl.sync  bfly
// CHECK-NOT:     nvvm.shfl.sync
// CHECK:         gpu.barrier
// CHECK:         scf.for
// CHECK:         gpu.return
// CHECK-LABEL: gpu.func @mx128_compact__quantize_0(
// CHECK:         gpu.barrier
// CHECK-COUNT-6: nvvm.shfl.sync  bfly
// CHECK-NOT:     nvvm.shfl.sync
// Compact scales: the window columns past the groups are zeroed too.
// CHECK:         scf.for
// CHECK:         scf.for
// CHECK-LABEL: gpu.func @mx128_blocked__quantize_0(
// CHECK:         gpu.barrier
// CHECK-COUNT-6: nvvm.shfl.sync  bfly
// CHECK-NOT:     nvvm.shfl.sync
// CHECK-LABEL: gpu.func @wide__quantize_0(
// CHECK-COUNT-2: nvvm.shfl.sync  bfly
// CHECK-NOT:     nvvm.shfl.sync
// CHECK-LABEL: gpu.func @window64__quantize_0(
// CHECK-COUNT-4: nvvm.shfl.sync  bfly
// CHECK-NOT:     nvvm.shfl.sync
// CHECK-LABEL: gpu.func @f32_input__quantize_0(
// CHECK-SAME:    memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>>
// CHECK:         vector.load %{{.*}} : memref<?xf32>, vector<4xf32>
// K = 36 is not a multiple of the 8-element load: the one-thread-per-
// block kernel (strided loads, no tile).
// CHECK-LABEL: gpu.func @rows_not_multiple_of_load__quantize_0(
// CHECK-NOT:     vector.load
// CHECK:         gpu.return

// PTX-LABEL: .visible .entry mx_rowmajor__quantize_0(
// PTX:         ld.global.nc.v4
// PTX:         st.shared.v4
// PTX:         bar.sync
// PTX-LABEL: .visible .entry mx128_compact__quantize_0(
// PTX:         bar.sync
// PTX:         shfl.sync.bfly.b32
// SPILLS-NOT: {{[1-9][0-9]*}} bytes spill stores

func.func @mx_rowmajor(%x: tensor<1000x64xbf16>, %offs: tensor<8xi32>) {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64}
      : tensor<1000x64xbf16> -> tensor<64x1248xf8E4M3FN>, tensor<64x39xf8E8M0FNU>
  return
}
func.func @mx128_compact(%x: tensor<1000x64xbf16>, %offs: tensor<8xi32>) {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<1000x64xbf16> -> tensor<64x1248xf8E4M3FN>, tensor<64x15xf8E8M0FNU, #mxmoe.scale_layout<compact, tile = [1, 128], per_k_group>>
  return
}
func.func @mx128_blocked(%x: tensor<1000x64xbf16>, %offs: tensor<8xi32>) {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<1000x64xbf16> -> tensor<64x1248xf8E4M3FN>, tensor<128x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return
}
func.func @wide(%x: tensor<1000x1088xbf16>, %offs: tensor<8xi32>) {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64}
      : tensor<1000x1088xbf16> -> tensor<1088x1248xf8E4M3FN>, tensor<1088x39xf8E8M0FNU>
  return
}
func.func @window64(%x: tensor<1000x64xbf16>, %offs: tensor<8xi32>) {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 64>}
      : tensor<1000x64xbf16> -> tensor<64x1248xf8E4M3FN>, tensor<64x39xf8E8M0FNU>
  return
}
func.func @f32_input(%x: tensor<300x96xf32>, %offs: tensor<5xi32>) {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<5xi32>) {axis = 0 : i64}
      : tensor<300x96xf32> -> tensor<96x448xf8E4M3FN>, tensor<96x14xf8E8M0FNU>
  return
}
func.func @rows_not_multiple_of_load(%x: tensor<300x36xbf16>, %offs: tensor<5xi32>) {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<5xi32>) {axis = 0 : i64}
      : tensor<300x36xbf16> -> tensor<36x448xf8E4M3FN>, tensor<36x14xf8E8M0FNU>
  return
}
