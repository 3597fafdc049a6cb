// tcgen05 lowering of mxmoe.grouped_matmul with FP4 (e2m1) operands through
// kind::mxf8f6f4, and the sm_103a (B300) target.
//
// 4-bit data stays packed two per byte in global memory; the tensor map
// uses the unpacking TMA type 16U4_ALIGN16B (dims and box in elements, row
// stride K/2 bytes), which writes the 8-bit-container shared-memory layout
// kind::mxf8f6f4 reads (PTX ISA 9.7.16.10.4.4). Tiles, shared-memory
// descriptors, scales and the expect-tx byte count are those of the fp8
// kernel; only the A/B type fields of the instruction descriptor change
// (E2M1 = 5 at bits 7-9 / 10-12, PTX ISA 9.7.16.4.2).
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu=chip=sm_100a | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-to-nvvm=chip=sm_100a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm100.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm100.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_100a -v %t.sm100.ptx -o %t.sm100.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// sm_103a (B300): the same kernels, PTX ISA 8.8. MLIR 22's NVVM verifier
// accepts tcgen05.alloc/cp/ld/commit only on sm_100a/sm_101a, so the
// kernels are lowered for sm_100a and mxmoe-compile rewrites the PTX's
// .target to sm_103a (Chips.h), then ptxas assembles it for sm_103a.
// RUN: rm -rf %t.out && mxmoe-compile %s --chip sm_103a -o %t.out
// RUN: FileCheck %s --check-prefix=SM103 < %t.out/sm_103a/kernels.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_103a -v %t.out/sm_103a/kernels.ptx -o %t.sm103.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// RUN: %if ptxas %{ test -s %t.out/sm_103a/kernels.cubin %}

// CHECK-LABEL: func.func @fwd_fp8_fp4(
// CHECK: mxmoe.grouped_matmul {{.*}}mxmoe.kernel = @mxmoe_kernels::@fwd_fp8_fp4__grouped_matmul_0
// CHECK-LABEL: func.func @fwd_fp4_fp4(
// CHECK: mxmoe.grouped_matmul {{.*}}mxmoe.kernel = @mxmoe_kernels::@fwd_fp4_fp4__grouped_matmul_0
// CHECK-LABEL: gpu.func @fwd_fp8_fp4__grouped_matmul_0(
// A (e4m3): one byte per element.
// CHECK-SAME: mxmoe.element_type = f8E4M3FN, mxmoe.tensor_map = {box = array<i64: 128, 128>, data_type = "uint8", oob_fill = "zero", operand = "lhs", swizzle = "128B"}
// B (e2m1): the map unpacks 4-bit data (its dims and 1024-byte row stride
// come from the bound [4, 320, 2048] tensor at launch).
// CHECK-SAME: mxmoe.element_type = f4E2M1FN, mxmoe.tensor_map = {box = array<i64: 128, 128>, data_type = "16U4_ALIGN16B", oob_fill = "zero", operand = "rhs", swizzle = "128B"}
// e4m3 x e2m1, UE8M0, M 128, N 128: 0x08A00000 | 5 << 10 = 0x08A01400.
// CHECK: %[[D:.*]] = arith.constant 144708608 : i32
// CHECK: nvvm.tcgen05.mma.block_scale {{.*}}, %[[D]], {{.*}}kind = #nvvm.block_scale_kind<mxf8f6f4>
// Block 3 of the stage: | 3 << 29 | 3 << 4.
// CHECK: arith.constant 1755321392 : i32

// PTX: .target sm_100a
// PTX-LABEL: .visible .entry fwd_fp8_fp4__grouped_matmul_0(
// PTX: tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32
// PTX-LABEL: .visible .entry fwd_fp4_fp4__grouped_matmul_0(
// PTX: tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32

// SM103: .target sm_103a
// SM103: .visible .entry fwd_fp8_fp4__grouped_matmul_0(
// SM103: tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32

// Every kernel assembles with no spill and no stack.
// PTXAS-NOT: bytes spill stores, {{[1-9]}}
// PTXAS-NOT: {{[1-9][0-9]*}} bytes stack frame
// PTXAS: Function properties for {{.*}}grouped_matmul_0
// PTXAS-NOT: bytes spill stores, {{[1-9]}}
// PTXAS-NOT: {{[1-9][0-9]*}} bytes stack frame
// PTXAS: Function properties for {{.*}}grouped_matmul_0
// PTXAS-NOT: {{[1-9][0-9]*}} bytes stack frame
// PTXAS-NOT: {{[1-9][0-9]*}} bytes spill

func.func @fwd_fp8_fp4(%a: tensor<1000x2048xf8E4M3FN>, %as: tensor<1536x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                       %w: tensor<4x320x2048xf4E2M1FN>, %ws: tensor<4x384x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                       %offs: tensor<4xi32>) -> tensor<1000x320xbf16> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<1000x2048xf8E4M3FN>, tensor<1536x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<4x320x2048xf4E2M1FN>, tensor<4x384x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<4xi32>) -> tensor<1000x320xbf16>
  return %o : tensor<1000x320xbf16>
}

// CHECK-LABEL: gpu.func @fwd_fp4_fp4__grouped_matmul_0(
// CHECK-SAME: mxmoe.element_type = f4E2M1FN, mxmoe.tensor_map = {box = array<i64: 128, 128>, data_type = "16U4_ALIGN16B", oob_fill = "zero", operand = "lhs"
// CHECK-SAME: mxmoe.element_type = f4E2M1FN, mxmoe.tensor_map = {box = array<i64: 128, 128>, data_type = "16U4_ALIGN16B", oob_fill = "zero", operand = "rhs"
// e2m1 x e2m1: 0x08A00000 | 5 << 7 | 5 << 10 = 0x08A01680.
// CHECK: arith.constant 144709248 : i32
func.func @fwd_fp4_fp4(%a: tensor<300x1024xf4E2M1FN>, %as: tensor<512x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                       %w: tensor<2x256x1024xf4E2M1FN>, %ws: tensor<2x256x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                       %offs: tensor<2xi32>) -> tensor<300x256xf32> {
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<300x1024xf4E2M1FN>, tensor<512x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x256x1024xf4E2M1FN>, tensor<2x256x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<300x256xf32>
  return %o : tensor<300x256xf32>
}
