// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// #mxmoe.scale_layout<row_major | blocked_128x4 [, per_k_group]>, standalone
// and as the encoding of scale tensor types.

// CHECK-LABEL: func.func @scale_layout_values()
// CHECK-SAME:    attributes {l0 = #mxmoe.scale_layout<row_major>, l1 = #mxmoe.scale_layout<blocked_128x4>, l2 = #mxmoe.scale_layout<blocked_128x4, per_k_group>}
func.func @scale_layout_values() attributes {l0 = #mxmoe.scale_layout<row_major>, l1 = #mxmoe.scale_layout<blocked_128x4>, l2 = #mxmoe.scale_layout<blocked_128x4, per_k_group>} {
  return
}

// The custom syntax tolerates extra whitespace; it prints canonically.
// CHECK-LABEL: func.func @scale_layout_whitespace()
// CHECK-SAME:    attributes {l = #mxmoe.scale_layout<blocked_128x4, per_k_group>}
func.func @scale_layout_whitespace() attributes {l = #mxmoe.scale_layout< blocked_128x4 ,per_k_group >} {
  return
}

// As tensor encodings: distinct types, printed in the function signature.
// CHECK-LABEL: func.func @scale_layout_encodings(
// CHECK-SAME:    %{{[a-z0-9_]+}}: tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<row_major>>,
// CHECK-SAME:    %{{[a-z0-9_]+}}: tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
// CHECK-SAME:    %{{[a-z0-9_]+}}: tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
// CHECK-SAME:    %{{[a-z0-9_]+}}: tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>)
func.func @scale_layout_encodings(%a: tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<row_major>>,
                                  %b: tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                                  %c: tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
                                  %d: tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>) {
  return
}

// Encodings flow through generic tensor ops unchanged.
// CHECK-LABEL: func.func @scale_layout_through_tensor_cast(
// CHECK:         tensor.cast %{{[a-z0-9_]+}} : tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> to tensor<?x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
func.func @scale_layout_through_tensor_cast(%b: tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>) -> tensor<?x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %c = tensor.cast %b : tensor<256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> to tensor<?x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %c : tensor<?x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// The compact layout: one byte per scale tile (MX128).
// CHECK-LABEL: func.func @scale_layout_compact()
// CHECK-SAME:    attributes {l0 = #mxmoe.scale_layout<compact, tile = [1, 128]>, l1 = #mxmoe.scale_layout<compact, tile = [128, 128]>, l2 = #mxmoe.scale_layout<compact, tile = [1, 128], per_k_group>}
func.func @scale_layout_compact() attributes {l0 = #mxmoe.scale_layout<compact, tile = [1, 128]>, l1 = #mxmoe.scale_layout<compact, tile = [128, 128]>, l2 = #mxmoe.scale_layout<compact, per_k_group, tile = [1, 128]>} {
  return
}

// Tile-uniform MX scales (MX128): the row-major and blocked layouts keep one
// byte per 1x32 block, and `tile` records that every r x c tile's bytes are
// equal (grouped_matmul promotes once per tile column on sm_90a).
// CHECK-LABEL: func.func @scale_layout_uniform_tiles()
// CHECK-SAME:    attributes {l0 = #mxmoe.scale_layout<row_major, tile = [1, 128]>, l1 = #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>, l2 = #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>}
func.func @scale_layout_uniform_tiles() attributes {l0 = #mxmoe.scale_layout<row_major, tile = [1, 128]>, l1 = #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>, l2 = #mxmoe.scale_layout<blocked_128x4, per_k_group, tile = [1, 128]>} {
  return
}
