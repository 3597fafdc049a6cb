// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu | FileCheck %s

// CHECK-LABEL: gpu.module @mxmoe_kernels
// Dequantize: exact cvt.rn.f16x2.e4m3x2 then scale by 2^(b-127).
// CHECK: gpu.func @f__dequantize_0(%{{.*}}: memref<8192xf8E4M3FN> {llvm.noalias}, %{{.*}}: memref<1024xf8E8M0FNU> {llvm.noalias}, %{{.*}}: memref<8192xbf16> {llvm.noalias}) kernel
// CHECK: nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// Row-major -> blocked: one thread per blocked byte (128x4 padded = 512).
// CHECK: gpu.func @f__swizzle_scales_1(%{{.*}}: memref<256xf8E8M0FNU> {llvm.noalias}, %{{.*}}: memref<512xf8E8M0FNU> {llvm.noalias}) kernel attributes {{{.*}}mxmoe.grid = array<i64: 2, 1, 1>}
// Blocked -> row-major: one thread per logical scale.
// CHECK: gpu.func @f__swizzle_scales_2(%{{.*}}: memref<512xf8E8M0FNU> {llvm.noalias}, %{{.*}}: memref<256xf8E8M0FNU> {llvm.noalias}) kernel attributes {{{.*}}mxmoe.grid = array<i64: 1, 1, 1>}
func.func @f(%q: tensor<32x256xf8E4M3FN>, %s: tensor<128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
             %r: tensor<128x2xf8E8M0FNU>) {
  %x = mxmoe.dequantize %q, %s {axis = 1 : i64}
      : tensor<32x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<32x256xbf16>
  %b = mxmoe.swizzle_scales %r : tensor<128x2xf8E8M0FNU> -> tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  %u = mxmoe.swizzle_scales %b : tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<128x2xf8E8M0FNU>
  return
}
