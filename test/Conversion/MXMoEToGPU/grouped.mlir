// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu --split-input-file | FileCheck %s

// Jagged token axis (32x1 along tokens, per-group 32-blocks) with
// per-K-group blocked scales. Parameters: input, offsets, data, scales,
// status. Thread 0 of every CTA builds the group table (end offsets, 32-block
// starts, 4-column starts) in shared memory and validates the offsets.
// CHECK-LABEL: gpu.func @jagged__quantize_0(%{{.*}}: memref<28800xbf16> {llvm.noalias}, %{{.*}}: memref<5xi32> {llvm.noalias}, %{{.*}}: memref<43008xf8E4M3FN> {llvm.noalias}, %{{.*}}: memref<4096xf8E8M0FNU> {llvm.noalias}, %{{.*}}: memref<1xi32> {llvm.noalias})
// CHECK-SAME: workgroup(%[[ENDS:.*]] : memref<5xindex, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[STARTS32:.*]] : memref<6xindex, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[STARTS4:.*]] : memref<6xindex, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[FLAG:.*]] : memref<1xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: scf.for
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi sle
// CHECK: gpu.barrier
// CHECK: memref.load %[[FLAG]]
func.func @jagged(%x: tensor<300x96xbf16>, %o: tensor<5xi32>) {
  %q, %s = mxmoe.quantize %x offsets(%o : tensor<5xi32>) {axis = 0 : i64}
      : tensor<300x96xbf16> -> tensor<96x448xf8E4M3FN>,
        tensor<128x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return
}

// -----

// M-grouped blocked scales fused into a rowwise quantization: the group
// table holds 128-row tile starts.
// CHECK-LABEL: gpu.func @mgroups__quantize_0(%{{.*}}: memref<864000xbf16> {llvm.noalias}, %{{.*}}: memref<3xi32> {llvm.noalias}, %{{.*}}: memref<864000xf8E4M3FN> {llvm.noalias}, %{{.*}}: memref<58880xf8E8M0FNU> {llvm.noalias}, %{{.*}}: memref<1xi32> {llvm.noalias})
// CHECK-SAME: workgroup(%{{.*}} : memref<3xindex, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4xindex, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<1xi32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
func.func @mgroups(%x: tensor<300x2880xbf16>, %o: tensor<3xi32>) {
  %q, %s = mxmoe.quantize %x offsets(%o : tensor<3xi32>) {axis = 1 : i64}
      : tensor<300x2880xbf16> -> tensor<300x2880xf8E4M3FN>,
        tensor<640x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

// MXFP4: two E2M1 codes per byte, so the data parameter is i8 of half size.
// CHECK-LABEL: gpu.func @fp4__quantize_0(%{{.*}}: memref<4096xbf16> {llvm.noalias}, %{{.*}}: memref<2048xi8> {llvm.noalias}, %{{.*}}: memref<128xf8E8M0FNU> {llvm.noalias})
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<2048xi8>, vector<16xi8>
func.func @fp4(%x: tensor<64x64xbf16>) {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64}
      : tensor<64x64xbf16> -> tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU>
  return
}
