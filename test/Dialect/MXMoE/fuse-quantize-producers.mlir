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

// -----

// The SwiGLU's backward: d gate and d up (each its own chain of arith /
// math ops, so that linalg-fuse-elementwise-ops makes each one generic)
// joined by a tensor.concat along dim 1 into dh: one fused op with the two
// generics, the concat and both quantizations (rowwise for w13's input
// gradient, along the token axis for its weight gradient).

// CHECK-LABEL: func.func @dswiglu_mx128(
// CHECK-SAME:    %[[DA:[a-z0-9]+]]: tensor<256x768xbf16>, %[[H:[a-z0-9]+]]: tensor<256x1536xbf16>, %[[OFFS:[a-z0-9]+]]: tensor<4xi32>
// CHECK:         %[[R:.*]]:4 = mxmoe.fused_quantize(%[[DA]], %[[H]], %[[OFFS]])
// CHECK-COUNT-2:   linalg.generic
// CHECK:           tensor.concat dim(1)
// CHECK:           mxmoe.quantize %{{.*}} {axis = 1 : i64
// CHECK:           mxmoe.quantize %{{.*}} {axis = 0 : i64
// CHECK-NOT:     tensor.concat
// CHECK:         return %[[R]]#0, %[[R]]#1, %[[R]]#2, %[[R]]#3
// The SwiGLU's backward (PyTorch's autograd of F.silu(gate) * up in bf16:
// d_silu = bf16(da * up), d gate = bf16(d_silu * s * (1 + g * (1 - s))),
// s = 1 / (1 + exp(-g)), d up = bf16(da * bf16(silu(g)))) as two parts
// concatenated into dh = [d gate | d up], quantized 1x128 rowwise
// (M-grouped blocked: w13's input gradient lhs) and along the token axis
// (w13's weight gradient operand).
func.func @dswiglu_mx128(%da: tensor<256x768xbf16>, %h: tensor<256x1536xbf16>, %offs: tensor<4xi32>)
    -> (tensor<256x1536xf8E4M3FN>, tensor<1024x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>,
        tensor<1536x384xf8E4M3FN>, tensor<1536x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>) {
  %gate = tensor.extract_slice %h[0, 0] [256, 768] [1, 1] : tensor<256x1536xbf16> to tensor<256x768xbf16>
  %up = tensor.extract_slice %h[0, 768] [256, 768] [1, 1] : tensor<256x1536xbf16> to tensor<256x768xbf16>
  %one = arith.constant dense<1.0> : tensor<256x768xf32>
  // d gate
  %daf = arith.extf %da : tensor<256x768xbf16> to tensor<256x768xf32>
  %uf = arith.extf %up : tensor<256x768xbf16> to tensor<256x768xf32>
  %ds = arith.mulf %daf, %uf : tensor<256x768xf32>
  %dsb = arith.truncf %ds : tensor<256x768xf32> to tensor<256x768xbf16>
  %dsf = arith.extf %dsb : tensor<256x768xbf16> to tensor<256x768xf32>
  %gf = arith.extf %gate : tensor<256x768xbf16> to tensor<256x768xf32>
  %ng = arith.negf %gf : tensor<256x768xf32>
  %e = math.exp %ng : tensor<256x768xf32>
  %den = arith.addf %one, %e : tensor<256x768xf32>
  %sig = arith.divf %one, %den : tensor<256x768xf32>
  %oms = arith.subf %one, %sig : tensor<256x768xf32>
  %t = arith.mulf %gf, %oms : tensor<256x768xf32>
  %opt = arith.addf %one, %t : tensor<256x768xf32>
  %a1 = arith.mulf %dsf, %sig : tensor<256x768xf32>
  %dgf = arith.mulf %a1, %opt : tensor<256x768xf32>
  %dg = arith.truncf %dgf : tensor<256x768xf32> to tensor<256x768xbf16>
  // d up
  %gf2 = arith.extf %gate : tensor<256x768xbf16> to tensor<256x768xf32>
  %ng2 = arith.negf %gf2 : tensor<256x768xf32>
  %e2 = math.exp %ng2 : tensor<256x768xf32>
  %den2 = arith.addf %one, %e2 : tensor<256x768xf32>
  %silu = arith.divf %gf2, %den2 : tensor<256x768xf32>
  %sb = arith.truncf %silu : tensor<256x768xf32> to tensor<256x768xbf16>
  %sf = arith.extf %sb : tensor<256x768xbf16> to tensor<256x768xf32>
  %daf2 = arith.extf %da : tensor<256x768xbf16> to tensor<256x768xf32>
  %duf = arith.mulf %daf2, %sf : tensor<256x768xf32>
  %du = arith.truncf %duf : tensor<256x768xf32> to tensor<256x768xbf16>
  %dh = tensor.concat dim(1) %dg, %du : (tensor<256x768xbf16>, tensor<256x768xbf16>) -> tensor<256x1536xbf16>
  %q0, %s0 = mxmoe.quantize %dh offsets(%offs : tensor<4xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<256x1536xbf16> -> tensor<256x1536xf8E4M3FN>, tensor<1024x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  %q1, %s1 = mxmoe.quantize %dh offsets(%offs : tensor<4xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>} : tensor<256x1536xbf16> -> tensor<1536x384xf8E4M3FN>, tensor<1536x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
  return %q0, %s0, %q1, %s1 : tensor<256x1536xf8E4M3FN>, tensor<1024x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<1536x384xf8E4M3FN>, tensor<1536x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
}

// -----

// A concat of a generic and a tensor that is not produced here: left
// alone (no remark: it is not a producer the pass knows).

// CHECK-LABEL: func.func @concat_of_argument(
// CHECK-NOT:     mxmoe.fused_quantize
func.func @concat_of_argument(%a: tensor<64x128xbf16>, %b: tensor<64x128xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {
  %p = arith.mulf %a, %a : tensor<64x128xbf16>
  %c = tensor.concat dim(1) %p, %b : (tensor<64x128xbf16>, tensor<64x128xbf16>) -> tensor<64x256xbf16>
  %q, %s = mxmoe.quantize %c {axis = 1 : i64} : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
  return %q, %s : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
}

// -----

// Parts of 16 columns: a part boundary inside a 32-element block.

// CHECK-LABEL: func.func @narrow_parts(
// CHECK-NOT:     mxmoe.fused_quantize
func.func @narrow_parts(%a: tensor<64x16xbf16>, %b: tensor<64x16xbf16>) -> (tensor<64x32xf8E4M3FN>, tensor<64x1xf8E8M0FNU>) {
  %p = arith.mulf %a, %b : tensor<64x16xbf16>
  %r = arith.addf %a, %b : tensor<64x16xbf16>
  // expected-remark @+1 {{mxmoe-fuse-quantize-producers: not fused: a concatenated part is not a multiple of 32 columns wide}}
  %c = tensor.concat dim(1) %p, %r : (tensor<64x16xbf16>, tensor<64x16xbf16>) -> tensor<64x32xbf16>
  %q, %s = mxmoe.quantize %c {axis = 1 : i64} : tensor<64x32xbf16> -> tensor<64x32xf8E4M3FN>, tensor<64x1xf8E8M0FNU>
  return %q, %s : tensor<64x32xf8E4M3FN>, tensor<64x1xf8E8M0FNU>
}

// -----

// Without token groups the quantize kernel has no status word to report a
// bad index: the gather stays (and runs as its own kernel).
// CHECK-LABEL: func.func @no_groups(
// CHECK:         mxmoe.gather_rows
// CHECK-NOT:     mxmoe.fused_quantize
func.func @no_groups(%x: tensor<300x256xbf16>, %idx: tensor<1200xi32>) -> (tensor<1200x256xf8E4M3FN>, tensor<1200x8xf8E8M0FNU>) {
  // expected-remark @+1 {{mxmoe-fuse-quantize-producers: not fused: a gather is fused only into quantizations in token groups}}
  %r = mxmoe.gather_rows %x[%idx] {top_k = 4 : i64} : tensor<300x256xbf16>, tensor<1200xi32> -> tensor<1200x256xbf16>
  %q, %sc = mxmoe.quantize %r {axis = 1 : i64} : tensor<1200x256xbf16> -> tensor<1200x256xf8E4M3FN>, tensor<1200x8xf8E8M0FNU>
  return %q, %sc : tensor<1200x256xf8E4M3FN>, tensor<1200x8xf8E8M0FNU>
}
