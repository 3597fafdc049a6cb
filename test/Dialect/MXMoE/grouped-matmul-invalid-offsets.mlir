// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.grouped_matmul offsets: [G] i32 end offsets, G = rhs dim 0 (2D x 3D)
// or result dim 0 (2D x 2D).

func.func @offsets_i64(%a: tensor<64x64xbf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi64>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op offsets must be a 1-D tensor of i32 group end offsets, got 'tensor<4xi64>'}}
  %o = mxmoe.grouped_matmul %a, %w offsets %offs : (tensor<64x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi64>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @offsets_count_2d_3d(%a: tensor<64x64xbf16>, %w: tensor<8x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op offsets has 4 entries but there are 8 groups (rhs dim 0 is the number of experts)}}
  %o = mxmoe.grouped_matmul %a, %w offsets %offs : (tensor<64x64xbf16>, tensor<8x32x64xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @offsets_count_2d_2d(%g: tensor<256x1248xbf16>, %x: tensor<512x1248xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op offsets has 4 entries but there are 8 groups (result dim 0 is the number of groups)}}
  %o = mxmoe.grouped_matmul %g, %x offsets %offs : (tensor<256x1248xbf16>, tensor<512x1248xbf16>, tensor<4xi32>) -> tensor<8x256x512xf32>
  return
}

// -----

func.func @offsets_missing(%a: tensor<64x64xbf16>, %w: tensor<4x32x64xbf16>) {
  // expected-error @+1 {{custom op 'mxmoe.grouped_matmul' expected 'offsets'}}
  %o = mxmoe.grouped_matmul %a, %w : (tensor<64x64xbf16>, tensor<4x32x64xbf16>) -> tensor<64x32xbf16>
  return
}

// -----

// Constant offsets are checked at compile time, as the kernels check them
// at run time: non-decreasing, >= 0, at most M.
func.func @constant_offsets_decreasing(%a: tensor<4096x64xbf16>, %w: tensor<4x32x64xbf16>) {
  %offs = arith.constant dense<[1024, 512, 3000, 4096]> : tensor<4xi32>
  // expected-error @+1 {{'mxmoe.grouped_matmul' op constant offsets must be non-decreasing group end offsets >= 0: entry 1 is 512, after 1024}}
  %o = mxmoe.grouped_matmul %a, %w offsets %offs : (tensor<4096x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<4096x32xbf16>
  return
}

// -----

func.func @constant_offsets_negative(%a: tensor<4096x64xbf16>, %w: tensor<4x32x64xbf16>) {
  %offs = arith.constant dense<[-1, 512, 3000, 4096]> : tensor<4xi32>
  // expected-error @+1 {{'mxmoe.grouped_matmul' op constant offsets must be non-decreasing group end offsets >= 0: entry 0 is -1, after 0}}
  %o = mxmoe.grouped_matmul %a, %w offsets %offs : (tensor<4096x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<4096x32xbf16>
  return
}

// -----

func.func @constant_offsets_past_m(%a: tensor<4096x64xbf16>, %w: tensor<4x32x64xbf16>) {
  %offs = arith.constant dense<[1024, 2048, 3000, 4097]> : tensor<4xi32>
  // expected-error @+1 {{'mxmoe.grouped_matmul' op constant offsets must not pass the 4096 grouped rows: entry 3 is 4097}}
  %o = mxmoe.grouped_matmul %a, %w offsets %offs : (tensor<4096x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<4096x32xbf16>
  return
}
