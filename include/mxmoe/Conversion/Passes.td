//===- Passes.td - mxmoe lowering passes -------------------*- tablegen -*-===//

#ifndef MXMOE_CONVERSION_PASSES
#define MXMOE_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertMXMoEToGPU : Pass<"convert-mxmoe-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower MX-level mxmoe ops (quantize, dequantize, "
                "swizzle_scales) to SIMT GPU kernels";
  let description = [{
    Every `mxmoe.quantize`, `mxmoe.dequantize` and `mxmoe.swizzle_scales` in
    a function becomes a `gpu.func` kernel in the module's
    `gpu.module @mxmoe_kernels` (built from `gpu`, `scf`, `arith`, `memref`,
    `vector` and `nvvm` ops), and the op itself becomes a `gpu.launch_func`
    on buffers: operands go through `bufferization.to_buffer`, results are
    `memref.alloc`ed and handed back with `bufferization.to_tensor`.

    Kernel ABI (with `convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1}`
    every memref is one pointer): inputs, then outputs, then a 1-element i32
    `status` buffer (0 = ok; nonzero = the kernel rejected its runtime
    input, e.g. invalid group offsets, and wrote nothing it could not
    justify). One thread per output 32-element block (quantize, dequantize)
    or per output scale byte (swizzle), `block-size` threads per CTA, a 1-D
    grid of ceil(work / block-size) CTAs. Every output byte is written,
    padding included (padding scales are 0x00), so outputs need no
    zero-fill.

    Semantics are bit-exact with the OCP MX v1.0 spec as TorchAO implements
    it (shared/reference/mx-formats.md): element conversion by PTX
    `cvt.rn.satfinite.{e4m3,e5m2}x2.f32` (`nvvm.convert.f32x2.to.f8x2`),
    scale bytes computed from the fp32 bits of amax with integer ops (FLOOR,
    RCEIL, CEIL, EVEN), NaN/Inf blocks get scale 0xFF, dequantization by
    `cvt.rn.f16x2.{e4m3,e5m2}x2` (exact) times 2^(b-127) built from bits.

    Supported now: f8E4M3FN and f8E5M2 data; bf16/f16/f32 high precision;
    rowwise (last axis) and columnwise (axis 0 of 2-D, axis 1 of 3-D)
    quantization; row-major and blocked_128x4 scales (swizzle fused into
    quantize); swizzle in both directions for 2-D and 3-D scales. Other
    cases (fp4/fp6 data, group offsets, dynamic shapes) fail the pass with a
    diagnostic naming what is unsupported.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::vector::VectorDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::bufferization::BufferizationDialect"
  ];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "threads per CTA of the generated kernels (32..1024, a multiple "
           "of 32)">
  ];
}

#endif // MXMOE_CONVERSION_PASSES
