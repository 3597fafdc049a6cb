// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// The three MXFP8 GEMMs of one routed-expert projection at the MX level, each
// operand quantized along its own GEMM's contraction axis (the form
// mxmoe-expand-scaled-matmul produces): M = 1000 routed tokens, G = 8
// experts, K = 256, N = 512.

// CHECK-LABEL: func.func @expert_gemms(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<1000x256xbf16>, %[[W:[a-z0-9_]+]]: tensor<8x512x256xbf16>, %[[DY:[a-z0-9_]+]]: tensor<1000x512xbf16>, %[[OFFS:[a-z0-9_]+]]: tensor<8xi32>)
//
// Forward: y = x W^T per group (contraction K).
// CHECK:         %[[QX:[a-z0-9_]+]], %[[SX:[a-z0-9_]+]] = mxmoe.quantize %[[X]] offsets(%[[OFFS]] : tensor<8xi32>) {axis = 1 : i64}
// CHECK-SAME:      : tensor<1000x256xbf16> -> tensor<1000x256xf8E4M3FN>, tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK-NEXT:    %[[QW:[a-z0-9_]+]], %[[SW:[a-z0-9_]+]] = mxmoe.quantize %[[W]] {axis = 2 : i64}
// CHECK-SAME:      : tensor<8x512x256xbf16> -> tensor<8x512x256xf8E4M3FN>, tensor<8x512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK-NEXT:    %[[Y:[a-z0-9_]+]] = mxmoe.grouped_matmul %[[QX]] scales %[[SX]], %[[QW]] scales %[[SW]] offsets %[[OFFS]]
// CHECK-SAME:      -> tensor<1000x512xbf16>
//
// Input gradient: dx = dy W per group (contraction N).
// CHECK-NEXT:    %[[QDY:[a-z0-9_]+]], %[[SDY:[a-z0-9_]+]] = mxmoe.quantize %[[DY]] offsets(%[[OFFS]] : tensor<8xi32>) {axis = 1 : i64}
// CHECK-SAME:      : tensor<1000x512xbf16> -> tensor<1000x512xf8E4M3FN>, tensor<1920x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK-NEXT:    %[[QWT:[a-z0-9_]+]], %[[SWT:[a-z0-9_]+]] = mxmoe.quantize %[[W]] {axis = 1 : i64}
// CHECK-SAME:      : tensor<8x512x256xbf16> -> tensor<8x256x512xf8E4M3FN>, tensor<8x256x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK-NEXT:    %[[DX:[a-z0-9_]+]] = mxmoe.grouped_matmul %[[QDY]] scales %[[SDY]], %[[QWT]] scales %[[SWT]] offsets %[[OFFS]]
// CHECK-SAME:      -> tensor<1000x256xbf16>
//
// Weight gradient: dW[g] = dy_g^T x_g (contraction over the group's tokens).
// CHECK-NEXT:    %[[QDYT:[a-z0-9_]+]], %[[SDYT:[a-z0-9_]+]] = mxmoe.quantize %[[DY]] offsets(%[[OFFS]] : tensor<8xi32>) {axis = 0 : i64}
// CHECK-SAME:      : tensor<1000x512xbf16> -> tensor<512x1248xf8E4M3FN>, tensor<512x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
// CHECK-NEXT:    %[[QXT:[a-z0-9_]+]], %[[SXT:[a-z0-9_]+]] = mxmoe.quantize %[[X]] offsets(%[[OFFS]] : tensor<8xi32>) {axis = 0 : i64}
// CHECK-SAME:      : tensor<1000x256xbf16> -> tensor<256x1248xf8E4M3FN>, tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
// CHECK-NEXT:    %[[DW:[a-z0-9_]+]] = mxmoe.grouped_matmul %[[QDYT]] scales %[[SDYT]], %[[QXT]] scales %[[SXT]] offsets %[[OFFS]]
// CHECK-SAME:      -> tensor<8x512x256xf32>
// CHECK-NEXT:    return %[[Y]], %[[DX]], %[[DW]] : tensor<1000x512xbf16>, tensor<1000x256xbf16>, tensor<8x512x256xf32>
func.func @expert_gemms(%x: tensor<1000x256xbf16>, %w: tensor<8x512x256xbf16>, %dy: tensor<1000x512xbf16>, %offs: tensor<8xi32>)
    -> (tensor<1000x512xbf16>, tensor<1000x256xbf16>, tensor<8x512x256xf32>) {
  // Forward.
  %qx, %sx = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 1 : i64}
      : tensor<1000x256xbf16> -> tensor<1000x256xf8E4M3FN>, tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  %qw, %sw = mxmoe.quantize %w {axis = 2 : i64}
      : tensor<8x512x256xbf16> -> tensor<8x512x256xf8E4M3FN>, tensor<8x512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  %y = mxmoe.grouped_matmul %qx scales %sx, %qw scales %sw offsets %offs
      : (tensor<1000x256xf8E4M3FN>, tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8x512x256xf8E4M3FN>,
         tensor<8x512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8xi32>) -> tensor<1000x512xbf16>
  // Input gradient.
  %qdy, %sdy = mxmoe.quantize %dy offsets(%offs : tensor<8xi32>) {axis = 1 : i64}
      : tensor<1000x512xbf16> -> tensor<1000x512xf8E4M3FN>, tensor<1920x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  %qwt, %swt = mxmoe.quantize %w {axis = 1 : i64}
      : tensor<8x512x256xbf16> -> tensor<8x256x512xf8E4M3FN>, tensor<8x256x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  %dx = mxmoe.grouped_matmul %qdy scales %sdy, %qwt scales %swt offsets %offs
      : (tensor<1000x512xf8E4M3FN>, tensor<1920x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8x256x512xf8E4M3FN>,
         tensor<8x256x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, tensor<8xi32>) -> tensor<1000x256xbf16>
  // Weight gradient.
  %qdyt, %sdyt = mxmoe.quantize %dy offsets(%offs : tensor<8xi32>) {axis = 0 : i64}
      : tensor<1000x512xbf16> -> tensor<512x1248xf8E4M3FN>, tensor<512x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  %qxt, %sxt = mxmoe.quantize %x offsets(%offs : tensor<8xi32>) {axis = 0 : i64}
      : tensor<1000x256xbf16> -> tensor<256x1248xf8E4M3FN>, tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  %dw = mxmoe.grouped_matmul %qdyt scales %sdyt, %qxt scales %sxt offsets %offs
      : (tensor<512x1248xf8E4M3FN>, tensor<512x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<256x1248xf8E4M3FN>,
         tensor<256x60xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<8xi32>) -> tensor<8x512x256xf32>
  return %y, %dx, %dw : tensor<1000x512xbf16>, tensor<1000x256xbf16>, tensor<8x512x256xf32>
}
