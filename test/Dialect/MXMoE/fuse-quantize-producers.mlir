// RUN: mxmoe-opt %s --split-input-file --convert-elementwise-to-linalg --linalg-fuse-elementwise-ops --mxmoe-fuse-quantize-producers --canonicalize -verify-diagnostics | FileCheck %s

// mxmoe-fuse-quantize-producers (FuseQuantizeProducers.cpp): the SwiGLU of
// a gate/up result, written as PyTorch's F.silu(gate) * up computes it
// (f32 math, bf16 after silu and after the product) with elementwise arith
// / math ops on tensors, becomes one linalg.generic (MLIR's
// convert-elementwise-to-linalg, linalg-fuse-elementwise-ops) and then,
// with its quantization (1x128, M-grouped blocked scales), one
// mxmoe.fused_quantize reading h whole.

// CHECK-LABEL: func.func @swiglu(
// CHECK-SAME:    %[[H:[a-z0-9]+]]: tensor<256x1536xbf16>, %[[OFFS:[a-z0-9]+]]: tensor<4xi32>
// CHECK-NOT:     linalg.generic
// CHECK:         %[[R:.*]]:2 = mxmoe.fused_quantize(%[[H]], %[[OFFS]])
// CHECK:           tensor.extract_slice %{{.*}}[0, 768] [256, 768] [1, 1]
// CHECK:           linalg.generic
// CHECK:             math.exp
// CHECK:           mxmoe.quantize
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func @swiglu(%h: tensor<256x1536xbf16>, %offs: tensor<4xi32>)
    -> (tensor<256x768xf8E4M3FN>, tensor<1024x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>) {
  %gate = tensor.extract_slice %h[0, 0] [256, 768] [1, 1] : tensor<256x1536xbf16> to tensor<256x768xbf16>
  %up = tensor.extract_slice %h[0, 768] [256, 768] [1, 1] : tensor<256x1536xbf16> to tensor<256x768xbf16>
  %g = arith.extf %gate : tensor<256x768xbf16> to tensor<256x768xf32>
  %one = arith.constant dense<1.0> : tensor<256x768xf32>
  %ng = arith.negf %g : tensor<256x768xf32>
  %e = math.exp %ng : tensor<256x768xf32>
  %den = arith.addf %one, %e : tensor<256x768xf32>
  %silu = arith.divf %g, %den : tensor<256x768xf32>
  %sb = arith.truncf %silu : tensor<256x768xf32> to tensor<256x768xbf16>
  %sf = arith.extf %sb : tensor<256x768xbf16> to tensor<256x768xf32>
  %uf = arith.extf %up : tensor<256x768xbf16> to tensor<256x768xf32>
  %p = arith.mulf %sf, %uf : tensor<256x768xf32>
  %act = arith.truncf %p : tensor<256x768xf32> to tensor<256x768xbf16>
  %q, %s = mxmoe.quantize %act offsets(%offs : tensor<4xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
      : tensor<256x768xbf16> -> tensor<256x768xf8E4M3FN>, tensor<1024x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  return %q, %s : tensor<256x768xf8E4M3FN>, tensor<1024x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
}

// -----

// Two quantizations of one product: one fused op with both.

// CHECK-LABEL: func.func @two_quantizations(
// CHECK:         mxmoe.fused_quantize
// CHECK-COUNT-2:   mxmoe.quantize
// CHECK-NOT:     mxmoe.fused_quantize
func.func @two_quantizations(%a: tensor<64x256xbf16>, %b: tensor<64x256xbf16>)
    -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E5M2>, tensor<64x8xf8E8M0FNU>) {
  %p = arith.mulf %a, %b : tensor<64x256xbf16>
  %q0, %s0 = mxmoe.quantize %p {axis = 1 : i64} : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
  %q1, %s1 = mxmoe.quantize %p {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<64x256xbf16> -> tensor<64x256xf8E5M2>, tensor<64x8xf8E8M0FNU>
  return %q0, %s0, %q1, %s1 : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E5M2>, tensor<64x8xf8E8M0FNU>
}

// -----

// The weight gradient's operands: the same product quantized rowwise and
// along its token axis in token groups (the jagged kernel): one fused op
// with both (convert-mxmoe-to-gpu splits it into one kernel each).

// CHECK-LABEL: func.func @rowwise_and_jagged(
// CHECK:         mxmoe.fused_quantize(%arg0, %arg1, %arg2)
// CHECK:           mxmoe.quantize %{{.*}} {axis = 1 : i64}
// CHECK:           mxmoe.quantize %{{.*}} offsets(%{{.*}} : tensor<2xi32>) {axis = 0 : i64}
// CHECK-NOT:     linalg.generic
func.func @rowwise_and_jagged(%a: tensor<64x256xbf16>, %b: tensor<64x256xbf16>, %offs: tensor<2xi32>)
    -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<256x128xf8E4M3FN>, tensor<256x4xf8E8M0FNU>) {
  %p = arith.mulf %a, %b : tensor<64x256xbf16>
  %q0, %s0 = mxmoe.quantize %p {axis = 1 : i64} : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
  %q1, %s1 = mxmoe.quantize %p offsets(%offs : tensor<2xi32>) {axis = 0 : i64} : tensor<64x256xbf16> -> tensor<256x128xf8E4M3FN>, tensor<256x4xf8E8M0FNU>
  return %q0, %s0, %q1, %s1 : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<256x128xf8E4M3FN>, tensor<256x4xf8E8M0FNU>
}

// -----

// Left alone, with a remark: a columnwise quantization without token
// groups (not generated with a fused producer), a result also used by
// other ops.

// CHECK-LABEL: func.func @columnwise(
// CHECK-NOT:     mxmoe.fused_quantize
func.func @columnwise(%a: tensor<64x256xbf16>, %b: tensor<64x256xbf16>) -> (tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>) {
  // expected-remark @+1 {{mxmoe-fuse-quantize-producers: not fused: a quantization along axis 0 is generated with a fused producer only in token groups (with offsets: the weight gradient's operand)}}
  %p = arith.mulf %a, %b : tensor<64x256xbf16>
  %q, %s = mxmoe.quantize %p {axis = 0 : i64} : tensor<64x256xbf16> -> tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>
  return %q, %s : tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>
}

// -----

// CHECK-LABEL: func.func @other_user(
// CHECK-NOT:     mxmoe.fused_quantize
func.func @other_user(%a: tensor<64x256xbf16>, %b: tensor<64x256xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xbf16>) {
  // expected-remark @+1 {{mxmoe-fuse-quantize-producers: not fused: its result has users other than quantizations}}
  %p = arith.mulf %a, %b : tensor<64x256xbf16>
  %q, %s = mxmoe.quantize %p {axis = 1 : i64} : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
  return %q, %s, %p : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xbf16>
}

// -----

// A slice at a column that is not 16-byte aligned (bf16: 8 elements).

// CHECK-LABEL: func.func @misaligned_slice(
// CHECK-NOT:     mxmoe.fused_quantize
func.func @misaligned_slice(%h: tensor<64x264xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {
  %x = tensor.extract_slice %h[0, 4] [64, 256] [1, 1] : tensor<64x264xbf16> to tensor<64x256xbf16>
  // expected-remark @+1 {{mxmoe-fuse-quantize-producers: not fused: a producer input's rows or column offset are not a multiple of 16 bytes}}
  %p = arith.negf %x : tensor<64x256xbf16>
  %q, %s = mxmoe.quantize %p {axis = 1 : i64} : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
  return %q, %s : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
}

// -----

// One slice read twice (x * x): the fused op takes its source once, and
// the slice is erased once.

// CHECK-LABEL: func.func @square_of_slice(
// CHECK-SAME:    %[[H:[a-z0-9]+]]: tensor<64x512xbf16>
// CHECK-NOT:     tensor.extract_slice
// CHECK:         mxmoe.fused_quantize(%[[H]])
func.func @square_of_slice(%h: tensor<64x512xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {
  %x = tensor.extract_slice %h[0, 256] [64, 256] [1, 1] : tensor<64x512xbf16> to tensor<64x256xbf16>
  %p = arith.mulf %x, %x : tensor<64x256xbf16>
  %q, %s = mxmoe.quantize %p {axis = 1 : i64} : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
  return %q, %s : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
}

// -----

// The second quantization's offsets are computed after the first
// quantization: the fused op (at the first) could not use them.

// CHECK-LABEL: func.func @late_offsets(
// CHECK-NOT:     mxmoe.fused_quantize
func.func @late_offsets(%a: tensor<256x256xbf16>, %b: tensor<256x256xbf16>, %o: tensor<2xi32>)
    -> (tensor<256x256xf8E4M3FN>, tensor<256x8xf8E8M0FNU>, tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>) {
  // expected-remark @+1 {{mxmoe-fuse-quantize-producers: not fused: a quantization is in another block or takes offsets defined after the first quantization}}
  %p = arith.mulf %a, %b : tensor<256x256xbf16>
  %q0, %s0 = mxmoe.quantize %p {axis = 1 : i64} : tensor<256x256xbf16> -> tensor<256x256xf8E4M3FN>, tensor<256x8xf8E8M0FNU>
  %offs = arith.addi %o, %o : tensor<2xi32>
  %q1, %s1 = mxmoe.quantize %p offsets(%offs : tensor<2xi32>) {axis = 1 : i64}
      : tensor<256x256xbf16> -> tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %q0, %s0, %q1, %s1 : tensor<256x256xf8E4M3FN>, tensor<256x8xf8E8M0FNU>, tensor<256x256xf8E4M3FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}
