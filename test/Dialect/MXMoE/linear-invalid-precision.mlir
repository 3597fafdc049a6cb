// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.linear precision rules (verifyPrecision): the recipe element type
// must match the precision, and an MX precision needs K (forward contraction)
// and N (input-gradient contraction) to be multiples of 32.

func.func @mxfp8_with_fp4_recipe(%x: tensor<8x64xbf16>, %w: tensor<32x64xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op precision mxfp8 needs a recipe element type f8E4M3FN or f8E5M2, got 'f4E2M1FN'}}
  %y = mxmoe.linear %x, %w {fqn = "l", precision = #mxmoe.precision<mxfp8>,
                            recipe = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = rceil>}
      : (tensor<8x64xbf16>, tensor<32x64xbf16>) -> tensor<8x32xbf16>
  return
}

// -----

// MXFP6 elements are neither mxfp8 nor mxfp4.
func.func @mxfp8_with_fp6_recipe(%x: tensor<8x64xbf16>, %w: tensor<32x64xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op precision mxfp8 needs a recipe element type f8E4M3FN or f8E5M2, got 'f6E2M3FN'}}
  %y = mxmoe.linear %x, %w {fqn = "l", precision = #mxmoe.precision<mxfp8>,
                            recipe = #mxmoe.mx_recipe<f6E2M3FN, block_size = 32, rounding = rceil>}
      : (tensor<8x64xbf16>, tensor<32x64xbf16>) -> tensor<8x32xbf16>
  return
}

// -----

func.func @mxfp4_with_fp8_recipe(%x: tensor<8x64xbf16>, %w: tensor<32x64xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op precision mxfp4 needs a recipe element type f4E2M1FN, got 'f8E4M3FN'}}
  %y = mxmoe.linear %x, %w {fqn = "l", precision = #mxmoe.precision<mxfp4>,
                            recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>}
      : (tensor<8x64xbf16>, tensor<32x64xbf16>) -> tensor<8x32xbf16>
  return
}

// -----

func.func @mxfp4_with_fp6_recipe(%x: tensor<8x64xbf16>, %w: tensor<32x64xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op precision mxfp4 needs a recipe element type f4E2M1FN, got 'f6E3M2FN'}}
  %y = mxmoe.linear %x, %w {fqn = "l", precision = #mxmoe.precision<mxfp4>,
                            recipe = #mxmoe.mx_recipe<f6E3M2FN, block_size = 32, rounding = rceil>}
      : (tensor<8x64xbf16>, tensor<32x64xbf16>) -> tensor<8x32xbf16>
  return
}

// -----

func.func @mxfp8_k_not_multiple_of_32(%x: tensor<8x100xbf16>, %w: tensor<32x100xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op precision mxfp8 quantizes every GEMM along its contraction axis in blocks of 32, but K (forward contraction) = 100 is not a multiple of 32}}
  %y = mxmoe.linear %x, %w {fqn = "l", precision = #mxmoe.precision<mxfp8>}
      : (tensor<8x100xbf16>, tensor<32x100xbf16>) -> tensor<8x32xbf16>
  return
}

// -----

// The input gradient dx = dy W contracts over N.
func.func @mxfp8_n_not_multiple_of_32(%x: tensor<8x64xbf16>, %w: tensor<1000x64xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op precision mxfp8 quantizes every GEMM along its contraction axis in blocks of 32, but N (input-gradient contraction) = 1000 is not a multiple of 32}}
  %y = mxmoe.linear %x, %w {fqn = "l", precision = #mxmoe.precision<mxfp8>}
      : (tensor<8x64xbf16>, tensor<1000x64xbf16>) -> tensor<8x1000xbf16>
  return
}

// -----

func.func @mxfp4_k_not_multiple_of_32(%x: tensor<2x8x48xbf16>, %w: tensor<32x48xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op precision mxfp4 quantizes every GEMM along its contraction axis in blocks of 32, but K (forward contraction) = 48 is not a multiple of 32}}
  %y = mxmoe.linear %x, %w {fqn = "l", precision = #mxmoe.precision<mxfp4>}
      : (tensor<2x8x48xbf16>, tensor<32x48xbf16>) -> tensor<2x8x32xbf16>
  return
}

// -----

// The recipe/precision mismatch is reported before divisibility.
func.func @mismatch_before_divisibility(%x: tensor<8x100xbf16>, %w: tensor<32x100xbf16>) {
  // expected-error @+1 {{'mxmoe.linear' op precision mxfp4 needs a recipe element type f4E2M1FN, got 'f8E5M2'}}
  %y = mxmoe.linear %x, %w {fqn = "l", precision = #mxmoe.precision<mxfp4>,
                            recipe = #mxmoe.mx_recipe<f8E5M2, block_size = 32, rounding = rceil>}
      : (tensor<8x100xbf16>, tensor<32x100xbf16>) -> tensor<8x32xbf16>
  return
}
