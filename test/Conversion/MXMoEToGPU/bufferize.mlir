// One-shot bufferization of the lowered IR: an op annotated with its
// kernel by convert-mxmoe-to-gpu (host-launch=false; a grouped GEMM under
// either setting) bufferizes into that kernel's launch on buffers
// (BufferizableOpInterfaceImpl.cpp, HostLaunch.h). The grouped GEMM's TMA
// maps come from upstream's nvgpu.tma.create.descriptor over the operands
// viewed as [rows, K] bytes, of the kernel parameters'
// !nvgpu.tensormap.descriptor type.
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="chip=sm_90a host-launch=false" --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s
// With host-launch=true the quantization is launched by the pass and the
// GEMM by bufferization: the same launches.
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="chip=sm_90a" --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s
// Buffers with a layout map (here fully dynamic function arguments) are
// copied into row-major buffers first.
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="chip=sm_90a host-launch=false" --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=STRIDED
// The host side lowers with upstream passes (gpu-async-region first: MLIR's
// gpu-to-llvm lowers the async forms of the gpu ops) to calls of MLIR's
// CUDA runtime wrappers: the maps are encoded at run time by
// mgpuTensorMapEncodeTiledMemref (cuTensorMapEncodeTiled), the kernels
// take them as generic pointers.
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu="chip=sm_90a host-launch=false" --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --mxmoe-to-nvvm=chip=sm_90a --gpu-async-region --convert-nvgpu-to-nvvm --expand-strided-metadata --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --gpu-to-llvm --reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM
// A fused quantization's producer region is part of its kernel: the fused
// op becomes one launch. The routing kernels (and every kernel with a
// status word) get it set to -1 before the launch.
// RUN: mxmoe-opt %S/../../Dialect/MXMoE/fused-quantize.mlir --convert-mxmoe-to-gpu="chip=sm_90a host-launch=false" --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=FUSED --implicit-check-not="= mxmoe."
// RUN: mxmoe-opt %S/routing.mlir --split-input-file --convert-mxmoe-to-gpu="chip=sm_90a host-launch=false" --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=ROUTING --implicit-check-not="= mxmoe."
// FUSED-LABEL: func.func @swiglu_mx128(
// FUSED-SAME: -> (memref<256x768xf8E4M3FN>, memref<1024x24xf8E8M0FNU>)
// FUSED-NOT: linalg.generic
// FUSED: gpu.launch_func @mxmoe_kernels::@swiglu_mx128__quantize_0
// FUSED-NOT: linalg.generic
// FUSED-LABEL: func.func @product_two_quantizations(
// FUSED-COUNT-2: gpu.launch_func
// FUSED-LABEL: func.func @dswiglu_mx128(
// FUSED-COUNT-2: gpu.launch_func
// ROUTING-LABEL: func.func @dispatch_combine(
// ROUTING: %[[ST:.*]] = gpu.alloc () : memref<1xi32>
// ROUTING: gpu.memset %[[ST]], %c-1_i32
// ROUTING: gpu.launch_func @mxmoe_kernels::@dispatch_combine__gather_rows_0
// ROUTING: cf.assert %{{.*}}, "mxmoe: kernel 'dispatch_combine__gather_rows_0' did not run (its status word is still -1)"
// ROUTING: cf.assert %{{.*}}, "mxmoe: kernel 'dispatch_combine__gather_rows_0' rejected its routing indices
// ROUTING: gpu.launch_func @mxmoe_kernels::@dispatch_combine__invert_permutation_1
// ROUTING: gpu.launch_func @mxmoe_kernels::@dispatch_combine__combine_rows_2

// Errors (an op without a kernel, model-level ops, 4-bit TMA maps):
// bufferize-invalid.mlir.

// CHECK-LABEL: func.func @layer(
// CHECK-SAME: %[[X:.*]]: memref<256x512xbf16>, %[[OFFS:.*]]: memref<4xi32>, %[[W:.*]]: memref<4x128x512xf8E4M3FN>, %[[WS:.*]]: memref<4x128x16xf8E8M0FNU>) -> memref<256x128xbf16>
// The quantization: its data and scales gpu.alloc'ed, its status checked.
// CHECK: %[[Q:.*]] = gpu.alloc () : memref<131072xf8E4M3FN>
// CHECK: %[[QV:.*]] = memref.expand_shape %[[Q]] {{\[\[}}0, 1]] output_shape [256, 512]
// CHECK: %[[S:.*]] = gpu.alloc () : memref<10240xf8E8M0FNU>
// CHECK: %[[SV:.*]] = memref.expand_shape %[[S]]
// The status word starts at -1, as the runtime sets it.
// CHECK: %[[QST:.*]] = gpu.alloc () : memref<1xi32>
// CHECK: gpu.memset %[[QST]], %c-1_i32 : memref<1xi32>, i32
// CHECK: gpu.launch_func @mxmoe_kernels::@layer__quantize_0 blocks in (%c40,
// CHECK: cf.assert %{{.*}}, "mxmoe: kernel 'layer__quantize_0' did not run (its status word is still -1)"
// CHECK: cf.assert %{{.*}}, "mxmoe: kernel 'layer__quantize_0' rejected its group offsets
// CHECK: cf.assert %{{.*}}, "mxmoe: kernel 'layer__quantize_0' wrote an unknown status"
// The GEMM: TMA maps over the quantized rows [256, 512] and the experts'
// weights viewed as [4 * 128, 512] bytes, box 128 x 128.
// CHECK: %[[QB:.*]] = builtin.unrealized_conversion_cast %[[QV]] : memref<256x512xf8E4M3FN> to memref<256x512xui8>
// CHECK: %[[QU:.*]] = memref.cast %[[QB]] : memref<256x512xui8> to memref<*xui8>
// CHECK: %[[MAPA:.*]] = nvgpu.tma.create.descriptor %[[QU]] box[%c128{{.*}}, %c128{{.*}}] : memref<*xui8> -> <tensor = memref<128x128xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>
// CHECK: memref.collapse_shape %[[SV]] {{\[\[}}0, 1]] : memref<640x16xf8E8M0FNU> into memref<10240xf8E8M0FNU>
// CHECK: %[[WR:.*]] = memref.collapse_shape %[[W]] {{\[\[}}0, 1], [2]] : memref<4x128x512xf8E4M3FN> into memref<512x512xf8E4M3FN>
// CHECK: %[[WB:.*]] = builtin.unrealized_conversion_cast %[[WR]] : memref<512x512xf8E4M3FN> to memref<512x512xui8>
// CHECK: %[[WU:.*]] = memref.cast %[[WB]]
// CHECK: %[[MAPB:.*]] = nvgpu.tma.create.descriptor %[[WU]]
// CHECK: %[[Y:.*]] = gpu.alloc () : memref<32768xbf16>
// CHECK: %[[YV:.*]] = memref.expand_shape %[[Y]] {{\[\[}}0, 1]] output_shape [256, 128]
// CHECK: %[[ST:.*]] = gpu.alloc () : memref<1xi32>
// The kernel's persistent grid, warp-specialized CTA and shared memory.
// CHECK: %[[SMEM:.*]] = arith.constant 178496 : i32
// CHECK: gpu.launch_func @mxmoe_kernels::@layer__grouped_matmul_1 blocks in (%c132{{.*}}) threads in (%c384{{.*}}) dynamic_shared_memory_size %[[SMEM]] args(%[[MAPA]] : !nvgpu.tensormap.descriptor<{{.*}}>, %{{.*}} : !llvm.ptr<1>, %[[MAPB]] : !nvgpu.tensormap.descriptor<{{.*}}>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %c256_i64{{.*}} : i64, %c128_i64{{.*}} : i64, %c512_i64{{.*}} : i64, %c4_i64{{.*}} : i64,
// CHECK: gpu.memcpy %[[HOST:.*]], %[[ST]]
// CHECK: cf.assert %{{.*}}, "mxmoe: kernel 'layer__grouped_matmul_1' rejected its group offsets
// CHECK: cf.assert %{{.*}}, "mxmoe: kernel 'layer__grouped_matmul_1' rejected its sizes
// CHECK: cf.assert %{{.*}}, "mxmoe: kernel 'layer__grouped_matmul_1' wrote an unknown status"
// CHECK: gpu.dealloc %[[ST]]
// CHECK: return %[[YV]] : memref<256x128xbf16>
// CHECK-NOT: mxmoe.quantize
// CHECK-NOT: mxmoe.grouped_matmul
// CHECK-NOT: bufferization.to_tensor
// CHECK: gpu.func @layer__grouped_matmul_1(%{{.*}}: !nvgpu.tensormap.descriptor<tensor = memref<128x128xi8, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero, interleave = none>

// STRIDED-LABEL: func.func @layer(
// STRIDED-SAME: %[[W:[^:]*]]: memref<4x128x512xf8E4M3FN, strided<[?, ?, ?], offset: ?>>
// STRIDED: %[[WC:.*]] = gpu.alloc () : memref<4x128x512xf8E4M3FN>
// STRIDED: gpu.memcpy %[[WC]], %[[W]] : memref<4x128x512xf8E4M3FN>, memref<4x128x512xf8E4M3FN, strided<[?, ?, ?], offset: ?>>
// STRIDED: memref.collapse_shape %[[WC]] {{\[\[}}0, 1], [2]]
// STRIDED: gpu.launch_func @mxmoe_kernels::@layer__grouped_matmul_1

// LLVM-LABEL: llvm.func @layer(
// LLVM-NOT: gpu.alloc
// LLVM-NOT: gpu.memcpy
// LLVM-NOT: gpu.memset
// LLVM-NOT: memref.
// LLVM-NOT: builtin.unrealized_conversion_cast
// LLVM: llvm.call @mgpuTensorMapEncodeTiledMemref(
// LLVM-NOT: gpu.alloc
// LLVM: llvm.call @mgpuTensorMapEncodeTiledMemref(
// LLVM-NOT: gpu.alloc
// LLVM-NOT: gpu.dealloc
// LLVM: gpu.launch_func <%{{.*}} : !llvm.ptr> @mxmoe_kernels::@layer__grouped_matmul_1 {{.*}} args(%{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr,
// LLVM: llvm.func @layer__grouped_matmul_1(%{{.*}}: !llvm.ptr {llvm.noalias

func.func @layer(%x: tensor<256x512xbf16>, %offs: tensor<4xi32>,
                 %w: tensor<4x128x512xf8E4M3FN>,
                 %ws: tensor<4x128x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>)
    -> tensor<256x128xbf16> {
  %q, %s = mxmoe.quantize %x offsets(%offs : tensor<4xi32>) {axis = 1 : i64}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>,
        tensor<640x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  %y = mxmoe.grouped_matmul %q scales %s, %w scales %ws offsets %offs
      : (tensor<256x512xf8E4M3FN>, tensor<640x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<4x128x512xf8E4M3FN>, tensor<4x128x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<4xi32>) -> tensor<256x128xbf16>
  return %y : tensor<256x128xbf16>
}
