// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu --split-input-file | FileCheck %s

// Jagged token axis (32x1 along tokens, per-group 32-blocks) with
// per-K-group blocked scales (the kernel itself: quantize-jagged.mlir).
// Parameters: input, offsets, data, scales, status. Every CTA builds the
// group table (end offsets, 32-block starts, 4-column starts, 128-token
// chunk starts) in shared memory with all its threads: each copies one
// offset, checks it against its predecessor (a violation clears the flag),
// and the padded sizes are prefix-summed in three 256-entry scratch arrays
// (Hillis-Steele: per step a barrier between the loads and the stores, one
// after them).
// Pointers (input, offsets, data, scales, status), then the sizes: batch,
// rows, len, hp_batch, hp_row, hp_along, scale rows and columns, tokens.
// CHECK-LABEL: gpu.func @jagged__quantize_0(%{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = bf16}, %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = i32}, %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = f8E4M3FN}, %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = f8E8M0FNU}, %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = i32}, %{{.*}}: i64 {mxmoe.scalar = "batch"}, %{{.*}}: i64 {mxmoe.scalar = "rows"}, %{{.*}}: i64 {mxmoe.scalar = "len"}, %{{.*}}: i64 {mxmoe.scalar = "hp_batch"}, %{{.*}}: i64 {mxmoe.scalar = "hp_row"}, %{{.*}}: i64 {mxmoe.scalar = "hp_along"}, %{{.*}}: i64 {mxmoe.scalar = "scale_rows"}, %{{.*}}: i64 {mxmoe.scalar = "scale_cols"}, %{{.*}}: i64 {mxmoe.scalar = "tokens"})
// CHECK-SAME: workgroup(%[[ENDS:.*]] : memref<5xindex, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[STARTS32:.*]] : memref<6xindex, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[STARTS4:.*]] : memref<6xindex, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[CHUNKS:.*]] : memref<6xindex, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[FLAG:.*]] : memref<1xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[SCAN32:.*]] : memref<256xindex, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[SCAN4:.*]] : memref<256xindex, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[SCANCHUNK:.*]] : memref<256xindex, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[TILE:.*]] : memref<8256xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: memref.store %c1_i32, %[[FLAG]]
// CHECK: memref.store %{{.*}}, %[[ENDS]][%{{.*}}]
// CHECK: gpu.barrier
// CHECK: %[[O:.*]] = memref.load %[[ENDS]]
// CHECK: %[[PREV:.*]] = memref.load %[[ENDS]]
// CHECK: arith.cmpi sge, %[[O]]
// CHECK: arith.cmpi sle, %[[O]]
// CHECK: memref.store %{{.*}}, %[[FLAG]]
// CHECK: memref.store %{{.*}}, %[[SCAN32]][%thread_id_x]
// CHECK: memref.store %{{.*}}, %[[SCAN4]][%thread_id_x]
// CHECK: memref.store %{{.*}}, %[[SCANCHUNK]][%thread_id_x]
// One barrier, then ceil(log2(5)) = 3 scan steps of two barriers each:
// CHECK-COUNT-7: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[STARTS32]]
// CHECK: memref.store %{{.*}}, %[[STARTS4]]
// CHECK: memref.store %{{.*}}, %[[CHUNKS]]
// CHECK: gpu.barrier
// Thread 0: the totals and the capacity check.
// CHECK: memref.store %{{.*}}, %[[STARTS32]][%c5{{.*}}]
// CHECK: memref.store %{{.*}}, %[[STARTS4]][%c5{{.*}}]
// CHECK: memref.store %{{.*}}, %[[CHUNKS]][%c5{{.*}}]
// CHECK: gpu.barrier
// CHECK: memref.load %[[FLAG]]
// The body: per 64-column tile a barrier after the loads into %[[TILE]]
// and one before the next tile's.
// CHECK: scf.for
// CHECK: vector.store %{{.*}}, %[[TILE]]
// CHECK-COUNT-2: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @jagged(%x: tensor<300x96xbf16>, %o: tensor<5xi32>) {
  %q, %s = mxmoe.quantize %x offsets(%o : tensor<5xi32>) {axis = 0 : i64}
      : tensor<300x96xbf16> -> tensor<96x448xf8E4M3FN>,
        tensor<128x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return
}

// -----

// M-grouped blocked scales fused into a rowwise quantization: the group
// table holds 128-row tile starts.
// CHECK-LABEL: gpu.func @mgroups__quantize_0(%{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = bf16}, %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = i32}, %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = f8E4M3FN}, %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = f8E8M0FNU}, %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = i32}, %{{.*}}: i64 {mxmoe.scalar = "batch"}
// CHECK-SAME: workgroup(%{{.*}} : memref<3xindex, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4xindex, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<1xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<256xindex, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
func.func @mgroups(%x: tensor<300x2880xbf16>, %o: tensor<3xi32>) {
  %q, %s = mxmoe.quantize %x offsets(%o : tensor<3xi32>) {axis = 1 : i64}
      : tensor<300x2880xbf16> -> tensor<300x2880xf8E4M3FN>,
        tensor<640x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

// MXFP4: two E2M1 codes per byte, so the data parameter is i8 of half size.
// CHECK-LABEL: gpu.func @fp4__quantize_0(%{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = bf16}, %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = i8}, %{{.*}}: !llvm.ptr {llvm.noalias, mxmoe.element_type = f8E8M0FNU}
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<?xi8>, vector<16xi8>
func.func @fp4(%x: tensor<64x64xbf16>) {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64}
      : tensor<64x64xbf16> -> tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU>
  return
}

// -----

// One group: no scan steps (the single padded size is its own prefix);
// the barriers are the offsets copy, the scratch stores, the chunk's end,
// the totals and the body's two (around the use of a token chunk's tile).
// CHECK-LABEL: gpu.func @one_group__quantize_0
// CHECK-SAME: workgroup(%[[ENDS1:.*]] : memref<1xindex, #gpu.address_space<workgroup>>
// CHECK-COUNT-6: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @one_group(%x: tensor<300x96xbf16>, %o: tensor<1xi32>) {
  %q, %s = mxmoe.quantize %x offsets(%o : tensor<1xi32>) {axis = 0 : i64}
      : tensor<300x96xbf16> -> tensor<96x320xf8E4M3FN>,
        tensor<128x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return
}

// -----

// 300 groups, more than the 256 threads of a CTA: two chunks, scanned in
// 8 and 6 steps (ceil(log2(256)), ceil(log2(44))), the second starting
// from the first's totals.
// CHECK-LABEL: gpu.func @many_groups__quantize_0
// CHECK-SAME: workgroup(%{{.*}} : memref<300xindex, #gpu.address_space<workgroup>>
// 1 (copy) + 1 + 2 x 8 + 1 (chunk 1) + 1 + 2 x 6 + 1 (chunk 2) + 1 (totals),
// then the body's two:
// CHECK-COUNT-36: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @many_groups(%x: tensor<9600x64xbf16>, %o: tensor<300xi32>) {
  %q, %s = mxmoe.quantize %x offsets(%o : tensor<300xi32>) {axis = 0 : i64}
      : tensor<9600x64xbf16> -> tensor<64x19168xf8E4M3FN>,
        tensor<64x599xf8E8M0FNU>
  return
}
