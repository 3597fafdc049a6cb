// RUN: mxmoe-opt %s --mxmoe-pack-scales --split-input-file | FileCheck %s

// Plain 2-D: the swizzle disappears into the quantize.
// CHECK-LABEL: func.func @plain
// CHECK-NEXT: %{{.*}}, %[[S:.*]] = mxmoe.quantize %arg0 {axis = 1 : i64} : tensor<200x2880xbf16> -> tensor<200x2880xf8E4M3FN>, tensor<256x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK-NEXT: return %[[S]]
func.func @plain(%x: tensor<200x2880xbf16>) -> tensor<256x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<200x2880xbf16> -> tensor<200x2880xf8E4M3FN>, tensor<200x90xf8E8M0FNU>
  %b = mxmoe.swizzle_scales %s : tensor<200x90xf8E8M0FNU> -> tensor<256x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %b : tensor<256x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// -----

// M-groups: the swizzle's offsets move onto the quantize.
// CHECK-LABEL: func.func @m_groups
// CHECK-NEXT: %{{.*}}, %[[S:.*]] = mxmoe.quantize %arg0 offsets(%arg1 : tensor<8xi32>) {axis = 1 : i64, rounding = #mxmoe.rounding<floor>} : tensor<1000x512xbf16> -> tensor<1000x512xf8E4M3FN>, tensor<1920x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
// CHECK-NOT: mxmoe.swizzle_scales
func.func @m_groups(%x: tensor<1000x512xbf16>, %o: tensor<8xi32>) -> (tensor<1000x512xf8E4M3FN>, tensor<1920x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>) {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64, rounding = #mxmoe.rounding<floor>} : tensor<1000x512xbf16> -> tensor<1000x512xf8E4M3FN>, tensor<1000x16xf8E8M0FNU>
  %b = mxmoe.swizzle_scales %s offsets(%o : tensor<8xi32>) : tensor<1000x16xf8E8M0FNU> -> tensor<1920x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %q, %b : tensor<1000x512xf8E4M3FN>, tensor<1920x16xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}

// -----

// K-groups (jagged token axis): fused when the offsets are the same value.
// CHECK-LABEL: func.func @k_groups
// CHECK-NEXT: %{{.*}}, %[[S:.*]] = mxmoe.quantize %arg0 offsets(%arg1 : tensor<8xi32>) {axis = 0 : i64} : tensor<1000x512xbf16> -> tensor<512x1248xf8E4M3FN>, tensor<512x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
// CHECK: mxmoe.quantize %arg0 offsets(%arg1 : tensor<8xi32>) {axis = 0 : i64} : tensor<1000x512xbf16> -> tensor<512x1248xf8E4M3FN>, tensor<512x39xf8E8M0FNU>
// CHECK: mxmoe.swizzle_scales %{{.*}} offsets(%arg2 : tensor<8xi32>)
func.func @k_groups(%x: tensor<1000x512xbf16>, %o: tensor<8xi32>, %other: tensor<8xi32>)
    -> (tensor<512x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
        tensor<512x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>) {
  %q, %s = mxmoe.quantize %x offsets(%o : tensor<8xi32>) {axis = 0 : i64} : tensor<1000x512xbf16> -> tensor<512x1248xf8E4M3FN>, tensor<512x39xf8E8M0FNU>
  %b = mxmoe.swizzle_scales %s offsets(%o : tensor<8xi32>) : tensor<512x39xf8E8M0FNU> -> tensor<512x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  // Regrouped by other offsets: not the quantize's layout, kept.
  %q2, %s2 = mxmoe.quantize %x offsets(%o : tensor<8xi32>) {axis = 0 : i64} : tensor<1000x512xbf16> -> tensor<512x1248xf8E4M3FN>, tensor<512x39xf8E8M0FNU>
  %b2 = mxmoe.swizzle_scales %s2 offsets(%other : tensor<8xi32>) : tensor<512x39xf8E8M0FNU> -> tensor<512x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
  return %b, %b2 : tensor<512x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>, tensor<512x64xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>
}

// -----

// Row-major scales used elsewhere too: both layouts are needed, no fusion.
// CHECK-LABEL: func.func @shared_use
// CHECK: mxmoe.quantize
// CHECK: mxmoe.swizzle_scales
func.func @shared_use(%x: tensor<128x64xbf16>) -> (tensor<128x2xf8E8M0FNU>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>) {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<128x64xbf16> -> tensor<128x64xf8E4M3FN>, tensor<128x2xf8E8M0FNU>
  %b = mxmoe.swizzle_scales %s : tensor<128x2xf8E8M0FNU> -> tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %s, %b : tensor<128x2xf8E8M0FNU>, tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}
