// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu=host-launch=false | FileCheck %s --check-prefix=ANNOTATE
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=BUFFERIZED

// host-launch=false keeps the op for manifest-driven runtimes and names its
// kernel, its bindings (pointers, then the run-time sizes: batch, rows,
// len, scale rows, scale columns) and the grid of this use.
// ANNOTATE-LABEL: func.func @grouped
// ANNOTATE: mxmoe.quantize %{{.*}} offsets(%{{.*}} : tensor<4xi32>) {axis = 1 : i64, mxmoe.grid = array<i64: 40, 1, 1>, mxmoe.kernel = @mxmoe_kernels::@grouped__quantize_0, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 1>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<result 1>, #mxmoe.kernel_arg<status>, #mxmoe.kernel_arg<value 1>, #mxmoe.kernel_arg<value 256>, #mxmoe.kernel_arg<value 512>, #mxmoe.kernel_arg<value 640>, #mxmoe.kernel_arg<value 16>]}
// ANNOTATE: gpu.func @grouped__quantize_0(

// After one-shot bufferization the whole function is on buffers; the
// grouped kernel's status buffer is copied back and checked.
// BUFFERIZED-LABEL: func.func @grouped(%{{.*}}: memref<256x512xbf16>, %{{.*}}: memref<4xi32>) -> (memref<256x512xf8E4M3FN>, memref<640x16xf8E8M0FNU>)
// BUFFERIZED: %[[STATUS:.*]] = gpu.alloc () : memref<1xi32>
// BUFFERIZED: gpu.launch_func @mxmoe_kernels::@grouped__quantize_0
// BUFFERIZED: %[[HOST:.*]] = memref.alloca() : memref<1xi32>
// BUFFERIZED: gpu.memcpy %[[HOST]], %[[STATUS]] : memref<1xi32>, memref<1xi32>
// BUFFERIZED: %[[V:.*]] = memref.load %[[HOST]]
// BUFFERIZED: %[[NOT1:.*]] = arith.cmpi ne, %[[V]], %c1_i32
// BUFFERIZED: cf.assert %[[NOT1]], "mxmoe: kernel 'grouped__quantize_0' rejected its group offsets (negative, decreasing, past the token axis, or more padded rows than the buffers hold; status 1)"
// BUFFERIZED: %[[OK:.*]] = arith.cmpi eq, %[[V]], %c0_i32
// BUFFERIZED: cf.assert %[[OK]], "mxmoe: kernel 'grouped__quantize_0' wrote an unknown status"
// BUFFERIZED: gpu.dealloc %[[STATUS]]
// BUFFERIZED-NOT: bufferization.to_tensor
func.func @grouped(%x: tensor<256x512xbf16>, %o: tensor<4xi32>)
    -> (tensor<256x512xf8E4M3FN>, tensor<640x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>) {
  %q, %s = mxmoe.quantize %x offsets(%o : tensor<4xi32>) {axis = 1 : i64}
      : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>,
        tensor<640x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %q, %s : tensor<256x512xf8E4M3FN>, tensor<640x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}
