// RUN: mxmoe-opt %s --mxmoe-expand-scaled-matmul --split-input-file --verify-diagnostics | FileCheck %s
// RUN: mxmoe-opt %s --mxmoe-expand-scaled-matmul --mxmoe-pack-scales --mxmoe-fuse-quantize-producers --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=FUSED
// RUN: mxmoe-opt %s --mxmoe-expand-scaled-matmul="backward=false" --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=FWDONLY
// RUN: mxmoe-opt %s --mxmoe-expand-scaled-matmul="quantize-weights-once" --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=ONCE

// mxmoe.swiglu_experts -> <fqn>.forward (x, w13, w2, offsets) -> (y, h)
// and <fqn>.backward (dy, x, h, w13, w2, offsets) -> (dx, dw13, dw2): the
// two grouped GEMMs' forward, input and weight gradients around the SwiGLU
// (forward) and its backward as linalg.generic producers of the
// quantizations that read them. M = 1000 routed rows, E = 8, H = 256,
// I = 384, MX128 recipe.

// CHECK-LABEL: func.func @block(
// CHECK:         %[[C:.*]]:2 = call @l0.experts.forward(%arg0, %arg1, %arg2, %arg3)
// CHECK:         return %[[C]]#0
// Forward: h = x w13^T, a = SwiGLU(h) (a generic over h's two column
// halves), y = a w2^T; h is returned for the backward.
// CHECK-LABEL: func.func @l0.experts.forward(
// CHECK-SAME:      -> (tensor<1000x256xbf16>, tensor<1000x768xbf16>) attributes {mxmoe.fqn = "l0.experts", mxmoe.pass = "forward"}
// CHECK:         mxmoe.quantize %arg0 {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
// CHECK:         mxmoe.quantize %arg1 {axis = 2 : i64, scale_tile = array<i64: 128, 128>}
// CHECK:         %[[H:.*]] = mxmoe.grouped_matmul {{.*}} -> tensor<1000x768xbf16>
// CHECK-DAG:     %[[G:.*]] = tensor.extract_slice %[[H]][0, 0] [1000, 384] [1, 1]
// CHECK-DAG:     %[[U:.*]] = tensor.extract_slice %[[H]][0, 384] [1000, 384] [1, 1]
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} ins(%[[G]], %[[U]] :
// CHECK:           math.exp
// CHECK:           arith.divf
// CHECK:         mxmoe.quantize %[[A]] {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
// CHECK:         mxmoe.quantize %arg2 {axis = 2 : i64, scale_tile = array<i64: 128, 128>}
// CHECK:         %[[Y:.*]] = mxmoe.grouped_matmul {{.*}} -> tensor<1000x256xbf16>
// CHECK:         return %[[Y]], %[[H]]
// Backward: da = dy w2, dw2 = dy^T a (a recomputed from h), dh = SwiGLU'
// (two generics joined along dim 1), dw13 = dh^T x, dx = dh w13.
// CHECK-LABEL: func.func @l0.experts.backward(
// CHECK-SAME:      %arg0: tensor<1000x256xbf16>, %arg1: tensor<1000x256xbf16>, %arg2: tensor<1000x768xbf16>, %arg3: tensor<8x768x256xbf16>, %arg4: tensor<8x256x384xbf16>, %arg5: tensor<8xi32>)
// CHECK-SAME:      -> (tensor<1000x256xbf16>, tensor<8x768x256xbf16>, tensor<8x256x384xbf16>) attributes {mxmoe.fqn = "l0.experts", mxmoe.pass = "backward"}
// CHECK:         mxmoe.quantize %arg0 {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
// CHECK:         mxmoe.quantize %arg4 {axis = 1 : i64, scale_tile = array<i64: 128, 128>}
// CHECK:         %[[DA:.*]] = mxmoe.grouped_matmul {{.*}} -> tensor<1000x384xbf16>
// CHECK:         %[[A2:.*]] = linalg.generic
// CHECK:         mxmoe.quantize %arg0 offsets(%arg5 : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>}
// CHECK:         mxmoe.quantize %[[A2]] offsets(%arg5 : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>}
// CHECK:         mxmoe.grouped_matmul {{.*}} -> tensor<8x256x384xbf16>
// CHECK:         %[[DG:.*]] = linalg.generic {{.*}} ins(%[[DA]],
// CHECK:         %[[DU:.*]] = linalg.generic {{.*}} ins(%[[DA]],
// CHECK:         %[[DH:.*]] = tensor.concat dim(1) %[[DG]], %[[DU]]
// dw13 comes before dx (a lower peak of the program's workspace).
// CHECK:         mxmoe.quantize %[[DH]] offsets(%arg5 : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>}
// CHECK:         mxmoe.quantize %arg1 offsets(%arg5 : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>}
// CHECK:         mxmoe.grouped_matmul {{.*}} -> tensor<8x768x256xbf16>
// CHECK:         mxmoe.quantize %[[DH]] {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
// CHECK:         mxmoe.quantize %arg3 {axis = 1 : i64, scale_tile = array<i64: 128, 128>}
// CHECK:         mxmoe.grouped_matmul {{.*}} -> tensor<1000x256xbf16>

// After scale packing and producer fusion every generic and the concat sit
// inside mxmoe.fused_quantize ops: the SwiGLU is computed inside the
// quantize kernels that read it (the forward's rowwise a, the backward's
// token-axis a, and dh both ways in one op), never written in bf16.
// FUSED-LABEL: func.func @l0.experts.forward(
// FUSED:         %[[H:.*]] = mxmoe.grouped_matmul {{.*}} -> tensor<1000x768xbf16>
// FUSED-NEXT:    mxmoe.fused_quantize(%[[H]], %arg3)
// FUSED:           linalg.generic
// FUSED:           mxmoe.quantize {{.*}} {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
// FUSED-NEXT:      mxmoe.yield
// FUSED-NEXT:    }
// FUSED-NOT:     linalg.generic
// FUSED:         return
// FUSED-LABEL: func.func @l0.experts.backward(
// FUSED-NOT:     linalg.generic
// FUSED:         mxmoe.fused_quantize(%arg2, %arg5)
// FUSED:           linalg.generic
// FUSED:           mxmoe.quantize {{.*}} {axis = 0 : i64, scale_tile = array<i64: 1, 128>}
// FUSED-NEXT:      mxmoe.yield
// FUSED-NEXT:    }
// FUSED-NOT:     linalg.generic
// FUSED:         mxmoe.fused_quantize(%{{.*}}, %arg2, %arg5)
// FUSED:           linalg.generic
// FUSED:           linalg.generic
// FUSED:           tensor.concat dim(1)
// FUSED-NEXT:      mxmoe.quantize {{.*}} {axis = 0 : i64, scale_tile = array<i64: 1, 128>}
// FUSED-NEXT:      mxmoe.quantize {{.*}} {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
// FUSED-NEXT:      mxmoe.yield
// FUSED-NEXT:    }
// FUSED-NOT:     linalg.generic
// FUSED-NOT:     tensor.concat
// FUSED:         return

// FWDONLY-LABEL: func.func @l0.experts.forward(
// FWDONLY-NOT:   func.func @l0.experts.backward(
func.func @block(%x: tensor<1000x256xbf16>, %w13: tensor<8x768x256xbf16>, %w2: tensor<8x256x384xbf16>, %offs: tensor<8xi32>) -> tensor<1000x256xbf16> {
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offs {fqn = "l0.experts", recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil, granularity = mx128>}
      : (tensor<1000x256xbf16>, tensor<8x768x256xbf16>, tensor<8x256x384xbf16>, tensor<8xi32>) -> tensor<1000x256xbf16>
  return %y : tensor<1000x256xbf16>
}

// -----

// Precision bf16 (set by the policy or written): not expanded.
// CHECK-LABEL: func.func @bf16(
// CHECK-NEXT:    mxmoe.swiglu_experts
// CHECK-NEXT:    return
func.func @bf16(%x: tensor<64x256xbf16>, %w13: tensor<2x512x256xbf16>, %w2: tensor<2x256x256xbf16>, %offs: tensor<2xi32>) -> tensor<64x256xbf16> {
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offs {fqn = "e", precision = #mxmoe.precision<bf16>}
      : (tensor<64x256xbf16>, tensor<2x512x256xbf16>, tensor<2x256x256xbf16>, tensor<2xi32>) -> tensor<64x256xbf16>
  return %y : tensor<64x256xbf16>
}

// -----

// FP4 recipes: the fused SwiGLU quantizations are generated for FP8 only.
func.func @fp4(%x: tensor<64x256xbf16>, %w13: tensor<2x512x256xbf16>, %w2: tensor<2x256x256xbf16>, %offs: tensor<2xi32>) -> tensor<64x256xbf16> {
  // expected-error @+1 {{mxmoe-expand-scaled-matmul expands mxmoe.swiglu_experts for MXFP8 recipes only}}
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offs {fqn = "e", recipe = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = rceil>}
      : (tensor<64x256xbf16>, tensor<2x512x256xbf16>, tensor<2x256x256xbf16>, tensor<2xi32>) -> tensor<64x256xbf16>
  return %y : tensor<64x256xbf16>
}

// -----

// A function already named like an expanded one is an error, not a suffix.
// expected-note @+1 {{the existing function}}
func.func private @dup.backward()
func.func @dup(%x: tensor<64x256xbf16>, %w13: tensor<2x512x256xbf16>, %w2: tensor<2x256x256xbf16>, %offs: tensor<2xi32>) -> tensor<64x256xbf16> {
  // expected-error @+1 {{fqn 'dup' is not unique}}
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offs {fqn = "dup"}
      : (tensor<64x256xbf16>, tensor<2x512x256xbf16>, tensor<2x256x256xbf16>, tensor<2xi32>) -> tensor<64x256xbf16>
  return %y : tensor<64x256xbf16>
}

// -----

// With routing (T = 250 tokens, top-4): the forward gathers the routed rows
// (fused into x's quantization by mxmoe-fuse-quantize-producers) and
// combines y weighted by the scores through the inverse permutation; the
// backward inverts first (its kernel validates the indices), takes the
// scores' gradient, gathers dy = score * dout[token] and x, and combines
// the routed rows' dx.
// CHECK-LABEL: func.func @l1.experts.forward(
// CHECK-SAME:      %arg4: tensor<1000xi32>, %arg5: tensor<250x4xf32>) -> (tensor<250x256xbf16>, tensor<1000x768xbf16>, tensor<1000x256xbf16>)
// CHECK:         %[[XR:.*]] = mxmoe.gather_rows %arg0[%arg4] {top_k = 4 : i64}
// CHECK:         mxmoe.quantize %[[XR]] {axis = 1 : i64
// CHECK:         %[[Y:.*]] = mxmoe.grouped_matmul {{.*}} -> tensor<1000x256xbf16>
// CHECK:         %[[INV:.*]] = mxmoe.invert_permutation %arg4
// CHECK:         %[[OUT:.*]] = mxmoe.combine_rows %[[Y]], %arg4, %[[INV]] scaled_by %arg5
// CHECK:         return %[[OUT]], %{{.*}}, %[[Y]]
// CHECK-LABEL: func.func @l1.experts.backward(
// CHECK-SAME:      -> (tensor<250x256xbf16>, tensor<8x768x256xbf16>, tensor<8x256x384xbf16>, tensor<250x4xf32>)
// CHECK:         %[[INV2:.*]] = mxmoe.invert_permutation %arg7
// CHECK:         %[[DS:.*]] = mxmoe.combine_scores_grad %arg0, %arg3, %arg7, %[[INV2]] {top_k = 4 : i64}
// CHECK:         %[[DY:.*]] = mxmoe.gather_rows %arg0[%arg7] scaled_by %arg8
// CHECK:         %[[XG:.*]] = mxmoe.gather_rows %arg1[%arg7] {top_k = 4 : i64}
// CHECK:         mxmoe.quantize %[[DY]] {axis = 1 : i64
// CHECK:         mxmoe.quantize %[[XG]] offsets
// CHECK:         %[[DXR:.*]] = mxmoe.grouped_matmul {{.*}} -> tensor<1000x256xbf16>
// CHECK:         %[[DX:.*]] = mxmoe.combine_rows %[[DXR]], %arg7, %[[INV2]] {top_k = 4 : i64}
// CHECK:         return %[[DX]], %{{.*}}, %{{.*}}, %[[DS]]
// FUSED-LABEL: func.func @l1.experts.forward(
// FUSED:         mxmoe.fused_quantize(%arg0, %arg4, %arg3)
// FUSED-NEXT:    ^bb0(
// FUSED-NEXT:      mxmoe.gather_rows
// FUSED-LABEL: func.func @l1.experts.backward(
// FUSED:         mxmoe.fused_quantize(%arg0, %arg7, %arg8, %arg6)
// FUSED-NEXT:    ^bb0(
// FUSED-NEXT:      mxmoe.gather_rows {{.*}} scaled_by
// FUSED-NEXT:      mxmoe.quantize {{.*}} {axis = 1 : i64
// FUSED-NEXT:      mxmoe.quantize {{.*}} {axis = 0 : i64
// FUSED:         mxmoe.fused_quantize(%arg1, %arg7, %arg6)
// FUSED-NEXT:    ^bb0(
// FUSED-NEXT:      mxmoe.gather_rows
func.func @routed(%x: tensor<250x256xbf16>, %w13: tensor<8x768x256xbf16>, %w2: tensor<8x256x384xbf16>, %offs: tensor<8xi32>, %idx: tensor<1000xi32>, %s: tensor<250x4xf32>) -> tensor<250x256xbf16> {
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offs routing(%idx, %s : tensor<1000xi32>, tensor<250x4xf32>) {fqn = "l1.experts", recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil, granularity = mx128>}
      : (tensor<250x256xbf16>, tensor<8x768x256xbf16>, tensor<8x256x384xbf16>, tensor<8xi32>) -> tensor<250x256xbf16>
  return %y : tensor<250x256xbf16>
}

// -----

// quantize-weights-once (MX128): the forward quantizes w13 and w2 once in
// both orientations and returns the transposed copies with their blocked
// scales; the backward takes them last for both input gradients (no
// weight quantization in it).
// ONCE-LABEL: func.func @l2.experts.forward(
// ONCE-SAME:      -> (tensor<1000x256xbf16>, tensor<1000x768xbf16>, tensor<8x256x768xf8E4M3FN>, tensor<8x256x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, tensor<8x384x256xf8E4M3FN>, tensor<8x384x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>)
// ONCE-COUNT-2:  mxmoe.quantize_weight
// ONCE-LABEL: func.func @l2.experts.backward(
// ONCE-SAME:      %arg6: tensor<8x256x768xf8E4M3FN>, %arg7: tensor<8x256x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, %arg8: tensor<8x384x256xf8E4M3FN>, %arg9: tensor<8x384x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>)
// ONCE-NOT:      mxmoe.quantize %arg3
// ONCE-NOT:      mxmoe.quantize %arg4
// ONCE:          mxmoe.grouped_matmul {{.*}}, %arg8 scales %arg9 offsets %arg5 {{.*}} -> tensor<1000x384xbf16>
// ONCE:          mxmoe.grouped_matmul {{.*}}, %arg6 scales %arg7 offsets %arg5 {{.*}} -> tensor<1000x256xbf16>
func.func @once(%x: tensor<1000x256xbf16>, %w13: tensor<8x768x256xbf16>, %w2: tensor<8x256x384xbf16>, %offs: tensor<8xi32>) -> tensor<1000x256xbf16> {
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offs {fqn = "l2.experts", recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil, granularity = mx128>}
      : (tensor<1000x256xbf16>, tensor<8x768x256xbf16>, tensor<8x256x384xbf16>, tensor<8xi32>) -> tensor<1000x256xbf16>
  return %y : tensor<1000x256xbf16>
}
