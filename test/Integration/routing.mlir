// test/Integration/routing_gpu.py: the routing kernels (Routing.cpp) one
// op per function. T = 300 tokens, top_k = 4, M = 1200 routed rows, H = 256;
// @odd: rows of 100 bf16 elements (runs of 4), top_k = 2.
// @dispatch_q: the scaled gather fused into its MX128 quantizations (rowwise
// M-grouped blocked, token axis in groups; mxmoe-fuse-quantize-producers in
// mxmoe-compile's pipeline); @dispatch_q_ref returns the gather too, so
// nothing is fused: the plain kernels of the same quantizations.
// Build: mxmoe-compile test/Integration/routing.mlir --chip sm_90a -o DIR
func.func @dispatch(%x: tensor<300x256xbf16>, %idx: tensor<1200xi32>) -> tensor<1200x256xbf16> {
  %r = mxmoe.gather_rows %x[%idx] {top_k = 4 : i64} : tensor<300x256xbf16>, tensor<1200xi32> -> tensor<1200x256xbf16>
  return %r : tensor<1200x256xbf16>
}
func.func @dispatch_scaled(%x: tensor<300x256xbf16>, %idx: tensor<1200xi32>, %s: tensor<300x4xf32>) -> tensor<1200x256xbf16> {
  %r = mxmoe.gather_rows %x[%idx] scaled_by %s : tensor<300x4xf32> {top_k = 4 : i64} : tensor<300x256xbf16>, tensor<1200xi32> -> tensor<1200x256xbf16>
  return %r : tensor<1200x256xbf16>
}
func.func @combine(%y: tensor<1200x256xbf16>, %idx: tensor<1200xi32>, %s: tensor<300x4xf32>) -> tensor<300x256xbf16> {
  %inv = mxmoe.invert_permutation %idx : tensor<1200xi32> -> tensor<1200xi32>
  %out = mxmoe.combine_rows %y, %idx, %inv scaled_by %s : tensor<300x4xf32> {top_k = 4 : i64}
      : tensor<1200x256xbf16>, tensor<1200xi32>, tensor<1200xi32> -> tensor<300x256xbf16>
  return %out : tensor<300x256xbf16>
}
func.func @combine_sum(%y: tensor<1200x256xbf16>, %idx: tensor<1200xi32>) -> tensor<300x256xbf16> {
  %inv = mxmoe.invert_permutation %idx : tensor<1200xi32> -> tensor<1200xi32>
  %out = mxmoe.combine_rows %y, %idx, %inv {top_k = 4 : i64}
      : tensor<1200x256xbf16>, tensor<1200xi32>, tensor<1200xi32> -> tensor<300x256xbf16>
  return %out : tensor<300x256xbf16>
}
func.func @scores_grad(%g: tensor<300x256xbf16>, %y: tensor<1200x256xbf16>, %idx: tensor<1200xi32>) -> tensor<300x4xf32> {
  %inv = mxmoe.invert_permutation %idx : tensor<1200xi32> -> tensor<1200xi32>
  %ds = mxmoe.combine_scores_grad %g, %y, %idx, %inv {top_k = 4 : i64}
      : tensor<300x256xbf16>, tensor<1200x256xbf16>, tensor<1200xi32>, tensor<1200xi32> -> tensor<300x4xf32>
  return %ds : tensor<300x4xf32>
}
func.func @odd(%x: tensor<30x100xbf16>, %idx: tensor<60xi32>, %s: tensor<30x2xbf16>) -> (tensor<60x100xbf16>, tensor<30x100xbf16>, tensor<30x2xbf16>) {
  %r = mxmoe.gather_rows %x[%idx] scaled_by %s : tensor<30x2xbf16> {top_k = 2 : i64} : tensor<30x100xbf16>, tensor<60xi32> -> tensor<60x100xbf16>
  %inv = mxmoe.invert_permutation %idx : tensor<60xi32> -> tensor<60xi32>
  %out = mxmoe.combine_rows %r, %idx, %inv scaled_by %s : tensor<30x2xbf16> {top_k = 2 : i64}
      : tensor<60x100xbf16>, tensor<60xi32>, tensor<60xi32> -> tensor<30x100xbf16>
  %ds = mxmoe.combine_scores_grad %x, %r, %idx, %inv {top_k = 2 : i64}
      : tensor<30x100xbf16>, tensor<60x100xbf16>, tensor<60xi32>, tensor<60xi32> -> tensor<30x2xbf16>
  return %r, %out, %ds : tensor<60x100xbf16>, tensor<30x100xbf16>, tensor<30x2xbf16>
}
func.func @dispatch_q(%x: tensor<300x256xbf16>, %idx: tensor<1200xi32>, %s: tensor<300x4xf32>, %offs: tensor<8xi32>) -> (tensor<1200x256xf8E4M3FN>, tensor<2176x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<256x2176xf8E4M3FN>, tensor<256x68xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>) {
  %r = mxmoe.gather_rows %x[%idx] scaled_by %s : tensor<300x4xf32> {top_k = 4 : i64} : tensor<300x256xbf16>, tensor<1200xi32> -> tensor<1200x256xbf16>
  %q, %sc = mxmoe.quantize %r offsets(%offs : tensor<8xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<1200x256xbf16> -> tensor<1200x256xf8E4M3FN>, tensor<2176x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  %q2, %s2 = mxmoe.quantize %r offsets(%offs : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>} : tensor<1200x256xbf16> -> tensor<256x2176xf8E4M3FN>, tensor<256x68xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
  return %q, %sc, %q2, %s2 : tensor<1200x256xf8E4M3FN>, tensor<2176x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<256x2176xf8E4M3FN>, tensor<256x68xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
}
func.func @dispatch_q_ref(%x: tensor<300x256xbf16>, %idx: tensor<1200xi32>, %s: tensor<300x4xf32>, %offs: tensor<8xi32>) -> (tensor<1200x256xbf16>, tensor<1200x256xf8E4M3FN>, tensor<2176x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<256x2176xf8E4M3FN>, tensor<256x68xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>) {
  %r = mxmoe.gather_rows %x[%idx] scaled_by %s : tensor<300x4xf32> {top_k = 4 : i64} : tensor<300x256xbf16>, tensor<1200xi32> -> tensor<1200x256xbf16>
  %q, %sc = mxmoe.quantize %r offsets(%offs : tensor<8xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<1200x256xbf16> -> tensor<1200x256xf8E4M3FN>, tensor<2176x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  %q2, %s2 = mxmoe.quantize %r offsets(%offs : tensor<8xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>} : tensor<1200x256xbf16> -> tensor<256x2176xf8E4M3FN>, tensor<256x68xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
  return %r, %q, %sc, %q2, %s2 : tensor<1200x256xbf16>, tensor<1200x256xf8E4M3FN>, tensor<2176x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<256x2176xf8E4M3FN>, tensor<256x68xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
}
