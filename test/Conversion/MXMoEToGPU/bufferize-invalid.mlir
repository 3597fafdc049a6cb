// One-shot bufferization of mxmoe ops that cannot become a launch.
// RUN: mxmoe-opt %s --split-input-file --verify-diagnostics --one-shot-bufferize="bufferize-function-boundaries"
// A 4-bit TMA map (MXFP4 operands of the tcgen05 GEMM): upstream's
// nvgpu.tma.create.descriptor has no 16U4_ALIGN16B type.
// RUN: not mxmoe-opt %S/grouped-matmul-sm100-fp4.mlir --convert-mxmoe-to-gpu="chip=sm_100a host-launch=false" --one-shot-bufferize="bufferize-function-boundaries" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FP4

// FP4: error: 'mxmoe.grouped_matmul' op has a TMA map of data type 16U4_ALIGN16B (MXFP4 operands are unpacked by the copy), which nvgpu.tma.create.descriptor cannot encode: launch it from mxmoe-compile's manifest (mxmoe-run, the C runtime)

// An MX-level op before convert-mxmoe-to-gpu has no kernel yet.
func.func @no_kernel(%x: tensor<128x256xbf16>) -> tensor<128x256xf8E4M3FN> {
  // expected-error @below {{'mxmoe.quantize' op has no kernel: run convert-mxmoe-to-gpu first (host-launch=false keeps the op, annotated with its kernel, for bufferization)}}
  // expected-error @below {{failed to bufferize op}}
  %q, %s = mxmoe.quantize %x {axis = 1 : i64}
      : tensor<128x256xbf16> -> tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>
  return %q : tensor<128x256xf8E4M3FN>
}

// -----

// A model-level op is expanded (or, kept in bf16, lowered to linalg) first.
func.func @model_level(%x: tensor<128x256xbf16>, %w: tensor<64x256xbf16>) -> tensor<128x64xbf16> {
  // expected-error @below {{'mxmoe.linear' op is a model-level op}}
  // expected-error @below {{failed to bufferize op}}
  %y = mxmoe.linear %x, %w {fqn = "proj", precision = #mxmoe.precision<bf16>}
      : (tensor<128x256xbf16>, tensor<64x256xbf16>) -> tensor<128x64xbf16>
  return %y : tensor<128x64xbf16>
}

// -----

// An annotation whose kernel is not a gpu.func of the module.
module attributes {gpu.container_module} {
  func.func @dangling(%x: tensor<128x256xbf16>) -> tensor<128x256xf8E4M3FN> {
    // expected-error @below {{kernel @mxmoe_kernels::@missing is not a gpu.func in this module}}
    // expected-error @below {{failed to bufferize op}}
    %q, %s = mxmoe.quantize %x {axis = 1 : i64, mxmoe.kernel = @mxmoe_kernels::@missing, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<result 1>]}
        : tensor<128x256xbf16> -> tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>
    return %q : tensor<128x256xf8E4M3FN>
  }
}

// -----

// An annotation without a launch shape (no mxmoe.grid on the op or the
// kernel, no mxmoe.block on the kernel).
module attributes {gpu.container_module} {
  func.func @no_shape(%x: tensor<128x256xbf16>) -> tensor<128x256xf8E4M3FN> {
    // expected-error @below {{has no launch shape: neither it nor kernel @k has a 3-element mxmoe.grid, or the kernel has no 3-element mxmoe.block}}
    // expected-error @below {{failed to bufferize op}}
    %q, %s = mxmoe.quantize %x {axis = 1 : i64, mxmoe.kernel = @mxmoe_kernels::@k, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<result 1>]}
        : tensor<128x256xbf16> -> tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>
    return %q : tensor<128x256xf8E4M3FN>
  }
  gpu.module @mxmoe_kernels {
    gpu.func @k(%a: memref<32768xbf16>, %b: memref<32768xf8E4M3FN>, %c: memref<1024xf8E8M0FNU>) kernel {
      gpu.return
    }
  }
}
