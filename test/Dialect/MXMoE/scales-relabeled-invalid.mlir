// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// A tensor.cast can change only a type's encoding: row-major scales
// relabeled as #mxmoe.scale_layout<blocked_128x4> where the shapes coincide
// (here [256, 4] both ways) would be read by the consumer in the blocked
// layout. Every scale consumer rejects scales that come from such a cast;
// a layout change is mxmoe.swizzle_scales.

func.func @gemm_lhs_relabeled(%a: tensor<256x128xf8E4M3FN>, %as: tensor<256x4xf8E8M0FNU>,
                              %w: tensor<2x128x128xf8E4M3FN>,
                              %ws: tensor<2x128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                              %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  // expected-note @+1 {{the cast}}
  %c = tensor.cast %as : tensor<256x4xf8E8M0FNU> to tensor<256x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  // expected-error @+1 {{'mxmoe.grouped_matmul' op lhs scales come from a tensor.cast that changes their layout encoding from "none" to #mxmoe.scale_layout<blocked_128x4>: the bytes would be read in another layout; change a scale layout with mxmoe.swizzle_scales}}
  %o = mxmoe.grouped_matmul %a scales %c, %w scales %ws offsets %offs
      : (tensor<256x128xf8E4M3FN>, tensor<256x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<2x128x128xf8E4M3FN>,
         tensor<2x128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}

// -----

// Through a chain of casts (the first keeps the encoding, the second
// changes it), on the rhs.
func.func @gemm_rhs_relabeled_chain(%a: tensor<256x128xf8E4M3FN>,
                                    %as: tensor<256x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                                    %w: tensor<2x128x128xf8E4M3FN>, %ws: tensor<2x128x4xf8E8M0FNU>,
                                    %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  %c0 = tensor.cast %ws : tensor<2x128x4xf8E8M0FNU> to tensor<2x?x4xf8E8M0FNU>
  // expected-note @+1 {{the cast}}
  %c1 = tensor.cast %c0 : tensor<2x?x4xf8E8M0FNU> to tensor<2x128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  // expected-error @+1 {{'mxmoe.grouped_matmul' op rhs scales come from a tensor.cast that changes their layout encoding}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %c1 offsets %offs
      : (tensor<256x128xf8E4M3FN>, tensor<256x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<2x128x128xf8E4M3FN>,
         tensor<2x128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}

// -----

// Blocked relabeled as row-major, into a dequantize.
func.func @dequantize_relabeled(%q: tensor<256x128xf8E4M3FN>,
                                %s: tensor<256x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>) -> tensor<256x128xf32> {
  // expected-note @+1 {{the cast}}
  %c = tensor.cast %s : tensor<256x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> to tensor<256x4xf8E8M0FNU>
  // expected-error @+1 {{'mxmoe.dequantize' op scales come from a tensor.cast that changes their layout encoding from #mxmoe.scale_layout<blocked_128x4> to "none"}}
  %x = mxmoe.dequantize %q, %c {axis = 1 : i64} : tensor<256x128xf8E4M3FN>, tensor<256x4xf8E8M0FNU> -> tensor<256x128xf32>
  return %x : tensor<256x128xf32>
}

// -----

// Into a swizzle: the source must be what its producer wrote.
func.func @swizzle_relabeled(%s: tensor<256x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>) -> tensor<256x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  // expected-note @+1 {{the cast}}
  %c = tensor.cast %s : tensor<256x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> to tensor<256x4xf8E8M0FNU>
  // expected-error @+1 {{'mxmoe.swizzle_scales' op source scales come from a tensor.cast that changes their layout encoding}}
  %b = mxmoe.swizzle_scales %c : tensor<256x4xf8E8M0FNU> -> tensor<256x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %b : tensor<256x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// -----

// A cast that keeps the encoding (static <-> dynamic shape) is fine.
func.func @cast_keeps_layout(%q: tensor<256x128xf8E4M3FN>, %s: tensor<256x4xf8E8M0FNU>) -> tensor<256x128xf32> {
  %c0 = tensor.cast %s : tensor<256x4xf8E8M0FNU> to tensor<?x4xf8E8M0FNU>
  %c1 = tensor.cast %c0 : tensor<?x4xf8E8M0FNU> to tensor<256x4xf8E8M0FNU>
  %x = mxmoe.dequantize %q, %c1 {axis = 1 : i64} : tensor<256x128xf8E4M3FN>, tensor<256x4xf8E8M0FNU> -> tensor<256x128xf32>
  return %x : tensor<256x128xf32>
}
