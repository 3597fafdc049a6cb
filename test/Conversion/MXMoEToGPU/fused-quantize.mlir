// RUN: mxmoe-opt %S/../../Dialect/MXMoE/fused-quantize.mlir --convert-mxmoe-to-gpu="host-launch=false" | FileCheck %s
// RUN: mxmoe-opt %S/../../Dialect/MXMoE/fused-quantize.mlir --mxmoe-to-nvvm=chip=sm_90a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm90a.ptx
// RUN: mxmoe-opt %S/../../Dialect/MXMoE/fused-quantize.mlir --mxmoe-to-nvvm=chip=sm_100a | mxmoe-opt --gpu-module-to-binary=format=isa | %python %S/../../Inputs/extract_ptx.py > %t.sm100a.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm90a.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t.sm90a.ptx -o %t.sm90a.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}
// RUN: %if ptxas %{ %ptxas -arch=sm_100a -v %t.sm100a.ptx -o %t.sm100a.cubin 2>&1 | FileCheck %s --check-prefix=SPILLS %}

// mxmoe.fused_quantize's kernels (FusedQuantize.cpp) on the ops of
// test/Dialect/MXMoE/fused-quantize.mlir: the inner quantization's kernel
// (here the MX128 rowwise blocked one, M-grouped) with the producer's input
// h in place of the quantize input and the producer evaluated at its
// loads (also the jagged token-axis kernel, QuantizeJagged.cpp, at its
// 16-byte staging loads; a producer of two parts joined by a concat picks
// the part of each loaded run at run time, scf.if); a fused op of two
// quantizations is split into one op (one kernel)
// each. math.exp is a polynomial (no libdevice call in the PTX).

// CHECK-LABEL: func.func @swiglu_mx128(
// CHECK:         mxmoe.fused_quantize(%{{.*}}, %{{.*}}) {mxmoe.grid = array<i64: 96, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@swiglu_mx128__quantize_0, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<result 1>, #mxmoe.kernel_arg<status>, #mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<value 1>, #mxmoe.kernel_arg<value 256>, #mxmoe.kernel_arg<value 768>, #mxmoe.kernel_arg<value 1024>, #mxmoe.kernel_arg<value 24>]}
// CHECK-LABEL: func.func @product_two_quantizations(
// CHECK:         %[[A:.*]]:2 = mxmoe.fused_quantize(%arg0, %arg1) {{{.*}}@product_two_quantizations__quantize_0, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<result 1>, #mxmoe.kernel_arg<operand 1>,
// CHECK:         %[[B:.*]]:2 = mxmoe.fused_quantize(%arg0, %arg1) {{{.*}}@product_two_quantizations__quantize_1, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<result 1>, #mxmoe.kernel_arg<operand 1>,
// CHECK:         return %[[A]]#0, %[[A]]#1, %[[B]]#0, %[[B]]#1
// CHECK-LABEL: func.func @swiglu_mx128_jagged(
// CHECK:         mxmoe.fused_quantize(%{{.*}}, %{{.*}}) {mxmoe.grid = array<i64: 18, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@swiglu_mx128_jagged__quantize_0, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<result 1>, #mxmoe.kernel_arg<status>, #mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<value 1>, #mxmoe.kernel_arg<value 768>, #mxmoe.kernel_arg<value 384>, #mxmoe.kernel_arg<value 196608>, #mxmoe.kernel_arg<value 1>, #mxmoe.kernel_arg<value 768>, #mxmoe.kernel_arg<value 768>, #mxmoe.kernel_arg<value 24>, #mxmoe.kernel_arg<value 256>]}
// CHECK-LABEL: func.func @dswiglu_mx128(
// CHECK:         mxmoe.fused_quantize(%arg0, %arg1, %arg2) {{{.*}}@dswiglu_mx128__quantize_0, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 2>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<result 1>, #mxmoe.kernel_arg<status>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 1>,
// CHECK:         mxmoe.fused_quantize(%arg0, %arg1, %arg2) {{{.*}}@dswiglu_mx128__quantize_1, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 2>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<result 1>, #mxmoe.kernel_arg<status>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 1>,
// CHECK:       gpu.func @swiglu_mx128__quantize_0(%arg0: !llvm.ptr {llvm.noalias, mxmoe.element_type = bf16}, %arg1: !llvm.ptr {llvm.noalias, mxmoe.element_type = i32}, %arg2: !llvm.ptr {llvm.noalias, mxmoe.element_type = f8E4M3FN}, %arg3: !llvm.ptr {llvm.noalias, mxmoe.element_type = f8E8M0FNU}, %arg4: !llvm.ptr {llvm.noalias, mxmoe.element_type = i32}, %arg5: !llvm.ptr {llvm.noalias, mxmoe.element_type = bf16}
// CHECK-NOT:     math.exp
// CHECK:       gpu.func @product_two_quantizations__quantize_0({{.*}}%arg3: !llvm.ptr {llvm.noalias, mxmoe.element_type = f32}
// CHECK:       gpu.func @swiglu_mx128_jagged__quantize_0({{.*}}%arg5: !llvm.ptr {llvm.noalias, mxmoe.element_type = bf16}
// CHECK-NOT:     math.exp
// CHECK:         vector.from_elements
// CHECK:       gpu.func @dswiglu_mx128__quantize_0(
// CHECK:         scf.if
// CHECK:       gpu.func @dswiglu_mx128__quantize_1(
// CHECK:         scf.if

// PTX-LABEL: .entry swiglu_mx128__quantize_0
// PTX-NOT:   call
// PTX:       .entry product_two_quantizations__quantize_0
// PTX:       .entry swiglu_mx128_jagged__quantize_0
// PTX-NOT:   call
// PTX:       .entry dswiglu_mx128__quantize_0
// PTX-NOT:   call
// PTX:       .entry dswiglu_mx128__quantize_1
// PTX-NOT:   call
// SPILLS-NOT: bytes spill stores, [1-9]
// SPILLS:    0 bytes spill stores
