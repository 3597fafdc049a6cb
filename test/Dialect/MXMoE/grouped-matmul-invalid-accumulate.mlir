// RUN: mxmoe-opt %s --split-input-file --verify-diagnostics

// `accumulate` on a 2D x 3D (forward / input-gradient) grouped matmul.
func.func @accumulate_2dx3d(%a: tensor<256x128xf8E4M3FN>, %as: tensor<256x4xf8E8M0FNU>,
                            %w: tensor<4x64x128xf8E4M3FN>, %ws: tensor<4x64x4xf8E8M0FNU>,
                            %offs: tensor<4xi32>, %acc: tensor<256x64xbf16>) -> tensor<256x64xbf16> {
  // expected-error @+1 {{`accumulate` is only supported by 2D x 2D -> 3D (weight-gradient) grouped matmuls}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs accumulate %acc
      : (tensor<256x128xf8E4M3FN>, tensor<256x4xf8E8M0FNU>, tensor<4x64x128xf8E4M3FN>, tensor<4x64x4xf8E8M0FNU>, tensor<4xi32>, tensor<256x64xbf16>) -> tensor<256x64xbf16>
  return %o : tensor<256x64xbf16>
}

// -----

// The accumulator's element type differs from the result's.
func.func @accumulate_type(%g: tensor<128x640xf8E4M3FN>, %gs: tensor<128x20xf8E8M0FNU>,
                           %x: tensor<64x640xf8E4M3FN>, %xs: tensor<64x20xf8E8M0FNU>,
                           %offs: tensor<4xi32>, %acc: tensor<4x128x64xbf16>) -> tensor<4x128x64xf32> {
  // expected-error @+1 {{accumulator type 'tensor<4x128x64xbf16>' must equal the result type 'tensor<4x128x64xf32>'}}
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs accumulate %acc
      : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU>, tensor<64x640xf8E4M3FN>, tensor<64x20xf8E8M0FNU>, tensor<4xi32>, tensor<4x128x64xbf16>) -> tensor<4x128x64xf32>
  return %o : tensor<4x128x64xf32>
}

// -----

// The accumulator's shape differs from the result's.
func.func @accumulate_shape(%g: tensor<128x640xf8E4M3FN>, %gs: tensor<128x20xf8E8M0FNU>,
                            %x: tensor<64x640xf8E4M3FN>, %xs: tensor<64x20xf8E8M0FNU>,
                            %offs: tensor<4xi32>, %acc: tensor<4x64x128xf32>) -> tensor<4x128x64xf32> {
  // expected-error @+1 {{accumulator type 'tensor<4x64x128xf32>' must equal the result type 'tensor<4x128x64xf32>'}}
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs accumulate %acc
      : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU>, tensor<64x640xf8E4M3FN>, tensor<64x20xf8E8M0FNU>, tensor<4xi32>, tensor<4x64x128xf32>) -> tensor<4x128x64xf32>
  return %o : tensor<4x128x64xf32>
}
