// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.swizzle_scales `offsets`: 2-D scales only, 1-D i32.

func.func @offsets_3d(%s: tensor<4x200x10xf8E8M0FNU>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op offsets are only supported for 2-D scales; 3-D scales are blocked per expert}}
  %b = mxmoe.swizzle_scales %s offsets(%offs : tensor<4xi32>) : tensor<4x200x10xf8E8M0FNU> -> tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

func.func @offsets_3d_from_blocked(%b: tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op offsets are only supported for 2-D scales; 3-D scales are blocked per expert}}
  %s = mxmoe.swizzle_scales %b offsets(%offs : tensor<4xi32>) : tensor<4x256x12xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>> -> tensor<4x200x10xf8E8M0FNU>
  return
}

// -----

func.func @offsets_i16(%s: tensor<1000x8xf8E8M0FNU>, %offs: tensor<8xi16>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op offsets must be a 1-D tensor of i32 group end offsets, got 'tensor<8xi16>'}}
  %b = mxmoe.swizzle_scales %s offsets(%offs : tensor<8xi16>) : tensor<1000x8xf8E8M0FNU> -> tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

func.func @offsets_rank_2(%s: tensor<1000x8xf8E8M0FNU>, %offs: tensor<2x4xi32>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op offsets must be a 1-D tensor of i32 group end offsets, got 'tensor<2x4xi32>'}}
  %b = mxmoe.swizzle_scales %s offsets(%offs : tensor<2x4xi32>) : tensor<1000x8xf8E8M0FNU> -> tensor<1920x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}

// -----

func.func @offsets_zero_groups(%s: tensor<64x2xf8E8M0FNU>, %offs: tensor<0xi32>) {
  // expected-error @+1 {{'mxmoe.swizzle_scales' op offsets must have at least one entry (one end offset per group), got 'tensor<0xi32>'}}
  %b = mxmoe.swizzle_scales %s offsets(%offs : tensor<0xi32>)
      : tensor<64x2xf8E8M0FNU> -> tensor<128x4xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return
}
