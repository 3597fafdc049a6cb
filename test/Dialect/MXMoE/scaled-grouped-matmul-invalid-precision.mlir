// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.scaled_grouped_matmul precision rules (verifyPrecision): the recipe
// element type agrees with the precision (mxfp8: f8E4M3FN/f8E5M2, mxfp4:
// f4E2M1FN); with an MX precision K and N are multiples of 32.

func.func @mxfp8_with_fp4_recipe(%x: tensor<64x64xbf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op precision mxfp8 needs a recipe element type f8E4M3FN or f8E5M2, got 'f4E2M1FN'}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e", precision = #mxmoe.precision<mxfp8>,
      recipe = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = rceil>}
      : (tensor<64x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @mxfp4_with_e5m2_recipe(%x: tensor<64x64xbf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op precision mxfp4 needs a recipe element type f4E2M1FN, got 'f8E5M2'}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e", precision = #mxmoe.precision<mxfp4>,
      recipe = #mxmoe.mx_recipe<f8E5M2, block_size = 32, rounding = rceil>}
      : (tensor<64x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @mxfp8_k_not_multiple_of_32(%x: tensor<64x72xbf16>, %w: tensor<4x32x72xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op precision mxfp8 quantizes every GEMM along its contraction axis in blocks of 32, but K (forward contraction) = 72 is not a multiple of 32}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e", precision = #mxmoe.precision<mxfp8>}
      : (tensor<64x72xbf16>, tensor<4x32x72xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @mxfp8_n_not_multiple_of_32(%x: tensor<64x64xbf16>, %w: tensor<4x40x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op precision mxfp8 quantizes every GEMM along its contraction axis in blocks of 32, but N (input-gradient contraction) = 40 is not a multiple of 32}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e", precision = #mxmoe.precision<mxfp8>}
      : (tensor<64x64xbf16>, tensor<4x40x64xbf16>, tensor<4xi32>) -> tensor<64x40xbf16>
  return
}

// -----

func.func @mxfp4_n_not_multiple_of_32(%x: tensor<64x64xbf16>, %w: tensor<4x16x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op precision mxfp4 quantizes every GEMM along its contraction axis in blocks of 32, but N (input-gradient contraction) = 16 is not a multiple of 32}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e", precision = #mxmoe.precision<mxfp4>,
      recipe = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = rceil>}
      : (tensor<64x64xbf16>, tensor<4x16x64xbf16>, tensor<4xi32>) -> tensor<64x16xbf16>
  return
}
