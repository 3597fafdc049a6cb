// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.grouped_matmul result: [M, N] for 2D x 3D, [G, M', N'] for 2D x 2D;
// element type bf16 or f32.

func.func @result_width(%a: tensor<1000x256xbf16>, %w: tensor<8x320x256xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op result must be [1000, 320] ([M, N]), got [1000, 256]}}
  %o = mxmoe.grouped_matmul %a, %w offsets %offs : (tensor<1000x256xbf16>, tensor<8x320x256xbf16>, tensor<8xi32>) -> tensor<1000x256xbf16>
  return
}

// -----

// 2D x 3D produces a 2-D result.
func.func @result_rank_3_for_2d_3d(%a: tensor<1000x256xbf16>, %w: tensor<8x320x256xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op result must be [1000, 320] ([M, N]), got [8, 1000, 320]}}
  %o = mxmoe.grouped_matmul %a, %w offsets %offs : (tensor<1000x256xbf16>, tensor<8x320x256xbf16>, tensor<8xi32>) -> tensor<8x1000x320xbf16>
  return
}

// -----

func.func @result_rank_2_for_2d_2d(%g: tensor<256x1248xbf16>, %x: tensor<512x1248xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op 2D x 2D grouped matmul must produce a 3-D [G, M', N'] result, got rank 2}}
  %o = mxmoe.grouped_matmul %g, %x offsets %offs : (tensor<256x1248xbf16>, tensor<512x1248xbf16>, tensor<8xi32>) -> tensor<256x512xf32>
  return
}

// -----

// The per-group result is lhs rows x rhs rows.
func.func @result_2d_2d_transposed(%g: tensor<256x1248xbf16>, %x: tensor<512x1248xbf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op result must be [8, 256, 512] ([G, M', N']), got [8, 512, 256]}}
  %o = mxmoe.grouped_matmul %g, %x offsets %offs : (tensor<256x1248xbf16>, tensor<512x1248xbf16>, tensor<8xi32>) -> tensor<8x512x256xf32>
  return
}

// -----

func.func @result_f16(%a: tensor<1000x256xf16>, %w: tensor<8x320x256xf16>, %offs: tensor<8xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op result #0 must be ranked tensor of bfloat16 type or 32-bit float values, but got 'tensor<1000x320xf16>'}}
  %o = mxmoe.grouped_matmul %a, %w offsets %offs : (tensor<1000x256xf16>, tensor<8x320x256xf16>, tensor<8xi32>) -> tensor<1000x320xf16>
  return
}

// -----

// MX operands do not produce MX results; quantize the result separately.
func.func @result_mx(%a: tensor<64x64xf8E4M3FN>, %as: tensor<64x2xf8E8M0FNU>, %w: tensor<4x32x64xf8E4M3FN>, %ws: tensor<4x32x2xf8E8M0FNU>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.grouped_matmul' op result #0 must be ranked tensor of bfloat16 type or 32-bit float values, but got 'tensor<64x32xf8E4M3FN>'}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs : (tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>, tensor<4x32x64xf8E4M3FN>, tensor<4x32x2xf8E8M0FNU>, tensor<4xi32>) -> tensor<64x32xf8E4M3FN>
  return
}
