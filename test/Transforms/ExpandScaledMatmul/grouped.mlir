// RUN: mxmoe-opt %s --mxmoe-expand-scaled-matmul | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-expand-scaled-matmul="weight-grad-bf16" | FileCheck %s --check-prefix=HP
// RUN: mxmoe-opt %s --mxmoe-expand-scaled-matmul="backward=false" | FileCheck %s --check-prefix=FWDONLY

// M = 1000 tokens in G = 8 groups, K = 512, N = 1024.
// CHECK-LABEL: func.func @moe
// CHECK: %[[Y:.*]] = call @layers.0.moe.experts.w13.forward(%arg0, %arg1, %arg2)
// CHECK: return %[[Y]]
// Forward: x and w quantized along K; x scales M-grouped blocked
// (roundDown(1000 + 127*8, 128) = 1920 rows), w per expert.
// CHECK-LABEL: func.func @layers.0.moe.experts.w13.forward(%{{.*}}: tensor<1000x512xbf16>, %{{.*}}: tensor<8x1024x512xbf16>, %{{.*}}: tensor<8xi32>) -> tensor<1000x1024xbf16> attributes {mxmoe.fqn = "layers.0.moe.experts.w13", mxmoe.pass = "forward"}
// CHECK: mxmoe.quantize %arg0 {axis = 1 : i64} : tensor<1000x512xbf16> -> tensor<1000x512xf8E4M3FN>, tensor<1000x16xf8E8M0FNU>
// CHECK: mxmoe.swizzle_scales %{{.*}} offsets(%arg2 : tensor<8xi32>) : tensor<1000x16xf8E8M0FNU> -> tensor<1920x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK: mxmoe.quantize %arg1 {axis = 2 : i64} : tensor<8x1024x512xbf16> -> tensor<8x1024x512xf8E4M3FN>, tensor<8x1024x16xf8E8M0FNU>
// CHECK: mxmoe.swizzle_scales %{{.*}} : tensor<8x1024x16xf8E8M0FNU> -> tensor<8x1024x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK: mxmoe.grouped_matmul {{.*}} -> tensor<1000x1024xbf16>
// Input gradient: dy along N, w along N written as [G, K, N].
// CHECK-LABEL: func.func @layers.0.moe.experts.w13.input_grad(%{{.*}}: tensor<1000x1024xbf16>, %{{.*}}: tensor<8x1024x512xbf16>, %{{.*}}: tensor<8xi32>) -> tensor<1000x512xbf16>
// CHECK: mxmoe.quantize %arg0 {axis = 1 : i64} : tensor<1000x1024xbf16> -> tensor<1000x1024xf8E4M3FN>, tensor<1000x32xf8E8M0FNU>
// CHECK: mxmoe.quantize %arg1 {axis = 1 : i64} : tensor<8x1024x512xbf16> -> tensor<8x512x1024xf8E4M3FN>, tensor<8x512x32xf8E8M0FNU>
// CHECK: mxmoe.grouped_matmul {{.*}} -> tensor<1000x512xbf16>
// Weight gradient: dy and x along tokens per group; Tp = roundDown(1000 +
// 31*8, 32) = 1248, per-K-group columns roundUp(39 + 3*8, 4) = 64.
// CHECK-LABEL: func.func @layers.0.moe.experts.w13.weight_grad(%{{.*}}: tensor<1000x1024xbf16>, %{{.*}}: tensor<1000x512xbf16>, %{{.*}}: tensor<8xi32>) -> tensor<8x1024x512xbf16>
// CHECK: mxmoe.quantize %arg0 offsets(%arg2 : tensor<8xi32>) {axis = 0 : i64} : tensor<1000x1024xbf16> -> tensor<1024x1248xf8E4M3FN>, tensor<1024x39xf8E8M0FNU>
// CHECK: mxmoe.swizzle_scales %{{.*}} offsets(%arg2 : tensor<8xi32>) : tensor<1024x39xf8E8M0FNU> -> tensor<1024x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
// CHECK: mxmoe.quantize %arg1 offsets(%arg2 : tensor<8xi32>) {axis = 0 : i64} : tensor<1000x512xbf16> -> tensor<512x1248xf8E4M3FN>, tensor<512x39xf8E8M0FNU>
// CHECK: mxmoe.grouped_matmul {{.*}} -> tensor<8x1024x512xbf16>

// HP-LABEL: func.func @layers.0.moe.experts.w13.weight_grad
// HP-NOT: mxmoe.quantize
// HP: linalg.transpose ins(%arg0 : tensor<1000x1024xbf16>) outs(%{{.*}} : tensor<1024x1000xbf16>) permutation = [1, 0]
// HP: linalg.transpose ins(%arg1 : tensor<1000x512xbf16>) outs(%{{.*}} : tensor<512x1000xbf16>) permutation = [1, 0]
// HP: mxmoe.grouped_matmul %{{.*}}, %{{.*}} offsets %arg2 : (tensor<1024x1000xbf16>, tensor<512x1000xbf16>, tensor<8xi32>) -> tensor<8x1024x512xbf16>

// FWDONLY: func.func @layers.0.moe.experts.w13.forward
// FWDONLY-NOT: input_grad
// FWDONLY-NOT: weight_grad
func.func @moe(%x: tensor<1000x512xbf16>, %w: tensor<8x1024x512xbf16>, %o: tensor<8xi32>) -> tensor<1000x1024xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %o {fqn = "layers.0.moe.experts.w13"}
      : (tensor<1000x512xbf16>, tensor<8x1024x512xbf16>, tensor<8xi32>) -> tensor<1000x1024xbf16>
  return %y : tensor<1000x1024xbf16>
}
