// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu --split-input-file | FileCheck %s

// Rowwise bf16 -> e4m3 with fused blocked scales: one thread per byte of
// the padded 256x92 blocked scale buffer (K = 2880 -> 90 columns).
// The op becomes a launch on buffers: operand -> to_buffer + collapse,
// results gpu.alloc'ed, reshaped and handed back as tensors. The kernel
// takes pointers and its sizes as run-time i64 parameters (batch, rows,
// len, scale rows, scale columns); the launch passes them with the grid of
// this use.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: func.func @rowwise(%[[X:.*]]: tensor<200x2880xbf16>)
// CHECK-NOT: mxmoe.quantize
// CHECK: %[[XB:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<200x2880xbf16> to memref<200x2880xbf16>
// CHECK: %[[XF:.*]] = memref.collapse_shape %[[XB]] {{\[\[}}0, 1]] : memref<200x2880xbf16> into memref<576000xbf16>
// CHECK: memref.extract_aligned_pointer_as_index %[[XF]] : memref<576000xbf16> -> index
// CHECK: %[[XP:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK: %[[D:.*]] = gpu.alloc () : memref<576000xf8E4M3FN>
// CHECK: memref.extract_aligned_pointer_as_index %[[D]]
// CHECK: %[[DP:.*]] = llvm.inttoptr
// CHECK: %[[DV:.*]] = memref.expand_shape %[[D]] {{\[\[}}0, 1]] output_shape [200, 2880]
// CHECK: bufferization.to_tensor %[[DV]] restrict writable : memref<200x2880xf8E4M3FN> to tensor<200x2880xf8E4M3FN>
// CHECK: %[[S:.*]] = gpu.alloc () : memref<23552xf8E8M0FNU>
// CHECK: memref.extract_aligned_pointer_as_index %[[S]]
// CHECK: %[[SP:.*]] = llvm.inttoptr
// CHECK: bufferization.to_tensor %{{.*}} restrict writable : memref<256x92xf8E8M0FNU> to tensor<256x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK: %[[B:.*]] = arith.constant 1 : i64
// CHECK: %[[R:.*]] = arith.constant 200 : i64
// CHECK: %[[L:.*]] = arith.constant 2880 : i64
// CHECK: %[[SR:.*]] = arith.constant 256 : i64
// CHECK: %[[SC:.*]] = arith.constant 92 : i64
// CHECK: %[[G:.*]] = arith.constant 92 : index
// CHECK: gpu.launch_func @mxmoe_kernels::@rowwise__quantize_0 blocks in (%[[G]], %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%[[XP]] : !llvm.ptr, %[[DP]] : !llvm.ptr, %[[SP]] : !llvm.ptr, %[[B]] : i64, %[[R]] : i64, %[[L]] : i64, %[[SR]] : i64, %[[SC]] : i64)
// CHECK: gpu.module @mxmoe_kernels
// CHECK: gpu.func @rowwise__quantize_0(%{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = bf16}, %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = f8E4M3FN}, %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = f8E8M0FNU}, %{{.*}}: i64 {mxmoe.scalar = "batch"}, %{{.*}}: i64 {mxmoe.scalar = "rows"}, %{{.*}}: i64 {mxmoe.scalar = "len"}, %{{.*}}: i64 {mxmoe.scalar = "scale_rows"}, %{{.*}}: i64 {mxmoe.scalar = "scale_cols"}) kernel attributes {known_block_size = array<i32: 256, 1, 1>, mxmoe.block = array<i64: 256, 1, 1>}
// The pointers are seen as memref<?xT> views (LLVM descriptors).
// CHECK: builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<?xbf16>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<?xbf16>, vector<8xbf16>
// CHECK: arith.maximumf
// CHECK: nvvm.convert.f32x2.to.f8x2 %{{.*}}, %{{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK: vector.store %{{.*}} {alignment = 32 : i64} : memref<?xf8E4M3FN>, vector<32xf8E4M3FN>
func.func @rowwise(%x: tensor<200x2880xbf16>) {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64}
      : tensor<200x2880xbf16> -> tensor<200x2880xf8E4M3FN>,
        tensor<256x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

// Columnwise (32x1) f32 -> e5m2 writes the data transposed, tiled through
// shared memory: a CTA loads 128 tokens x 64 columns with 16-byte loads
// along K (3 x 2 tiles of 256 threads here) stored as 16-byte vectors
// into shared memory (128 x 64 elements + an 8-element shift per 32-row
// block), then one thread per (column, 32-token block) quantizes from
// shared memory. Row-major scales: no padding threads.
// Sizes: batch 1, tokens 320, rows (K) 96, input elements per batch,
// scale rows and columns; 6 CTAs for this use.
// CHECK: %[[C6:.*]] = arith.constant 6 : index
// CHECK: gpu.launch_func @mxmoe_kernels::@colwise__quantize_0 blocks in (%[[C6]], {{.*}} args({{.*}}, %{{.*}} : i64, %c320_i64 : i64, %c96_i64 : i64, %c30720_i64 : i64, %{{.*}} : i64, %c10_i64 : i64)
// CHECK-LABEL: gpu.func @colwise__quantize_0(
// CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = f32}, %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = f8E5M2}, %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = f8E8M0FNU}, %{{.*}}: i64 {mxmoe.scalar = "batch"}, %{{.*}}: i64 {mxmoe.scalar = "tokens"}, %{{.*}}: i64 {mxmoe.scalar = "rows"}, %{{.*}}: i64 {mxmoe.scalar = "hp_batch"}, %{{.*}}: i64 {mxmoe.scalar = "scale_rows"}, %{{.*}}: i64 {mxmoe.scalar = "scale_cols"}) workgroup(%[[SMEM:.*]] : memref<8224xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel attributes
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[SMEM]][%{{.*}}] {alignment = 16 : i64} : memref<8224xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: gpu.barrier
// CHECK: memref.load %[[SMEM]]
// CHECK: nvvm.convert.f32x2.to.f8x2 {{.*}} : i16(f8E5M2)
func.func @colwise(%x: tensor<320x96xf32>) {
  %q, %s = mxmoe.quantize %x {axis = 0 : i64, rounding = #mxmoe.rounding<floor>}
      : tensor<320x96xf32> -> tensor<96x320xf8E5M2>, tensor<96x10xf8E8M0FNU>
  return
}

// -----

// Columnwise bf16 with fused blocked scales [128 x 12] for data [96, 320]:
// the 6 tiles (1536 threads) plus one thread per padding scale byte only,
// (128 - 96) x 12 padding rows + 96 x (12 - 10) padding columns = 576,
// 2112 threads = 9 CTAs (not one per each of the 1536 scale bytes).
// CHECK: %[[C9:.*]] = arith.constant 9 : index
// CHECK: gpu.launch_func @mxmoe_kernels::@colwise_blocked__quantize_0 blocks in (%[[C9]],
// CHECK-LABEL: gpu.func @colwise_blocked__quantize_0(
// CHECK-SAME: workgroup(%{{.*}} : memref<8224xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
func.func @colwise_blocked(%x: tensor<320x96xbf16>) {
  %q, %s = mxmoe.quantize %x {axis = 0 : i64, rounding = #mxmoe.rounding<rceil>}
      : tensor<320x96xbf16> -> tensor<96x320xf8E4M3FN>,
        tensor<128x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}
