// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.scaled_grouped_matmul: offsets are [G] i32 end offsets, one per
// expert (verifyOffsetsType).

func.func @offsets_i64(%x: tensor<64x64xbf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi64>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op offsets must be a 1-D tensor of i32 group end offsets, got 'tensor<4xi64>'}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e"} : (tensor<64x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi64>) -> tensor<64x32xbf16>
  return
}

// -----

// Signless i32 only (torch int32).
func.func @offsets_ui32(%x: tensor<64x64xbf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xui32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op offsets must be a 1-D tensor of i32 group end offsets, got 'tensor<4xui32>'}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e"} : (tensor<64x64xbf16>, tensor<4x32x64xbf16>, tensor<4xui32>) -> tensor<64x32xbf16>
  return
}

// -----

// [start, end) pairs are not the offsets convention.
func.func @offsets_rank_2(%x: tensor<64x64xbf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<4x2xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op offsets must be a 1-D tensor of i32 group end offsets, got 'tensor<4x2xi32>'}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e"} : (tensor<64x64xbf16>, tensor<4x32x64xbf16>, tensor<4x2xi32>) -> tensor<64x32xbf16>
  return
}

// -----

// G + 1 start offsets (CSR style) are one too many.
func.func @offsets_g_plus_1(%x: tensor<64x64xbf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<5xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op offsets has 5 entries but there are 4 groups (weight dim 0 is the number of experts)}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e"} : (tensor<64x64xbf16>, tensor<4x32x64xbf16>, tensor<5xi32>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @offsets_required(%x: tensor<64x64xbf16>, %w: tensor<4x32x64xbf16>) {
  // expected-error @+1 {{expected ','}}
  %y = mxmoe.scaled_grouped_matmul %x, %w {fqn = "e"} : (tensor<64x64xbf16>, tensor<4x32x64xbf16>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @offsets_zero_groups(%x: tensor<64x64xbf16>, %w: tensor<0x64x64xbf16>, %offs: tensor<0xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op offsets must have at least one entry (one end offset per group), got 'tensor<0xi32>'}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "experts"}
      : (tensor<64x64xbf16>, tensor<0x64x64xbf16>, tensor<0xi32>) -> tensor<64x64xbf16>
  return
}

// -----

// Constant offsets that decrease or pass M: a compile-time error (the
// kernels would reject them only when the program runs).
func.func @constant_offsets_past_m(%x: tensor<4096x64xbf16>, %w: tensor<4x32x64xbf16>) -> tensor<4096x32xbf16> {
  %offs = arith.constant dense<[1024, 512, 3000, 4096]> : tensor<4xi32>
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op constant offsets must be non-decreasing group end offsets >= 0: entry 1 is 512, after 1024}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "experts"}
      : (tensor<4096x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<4096x32xbf16>
  return %y : tensor<4096x32xbf16>
}

// -----

func.func @constant_offsets_ok(%x: tensor<4096x64xbf16>, %w: tensor<4x32x64xbf16>) -> tensor<4096x32xbf16> {
  // Empty groups (equal offsets) and a last offset below M are valid.
  %offs = arith.constant dense<[0, 512, 512, 4000]> : tensor<4xi32>
  %bad = arith.constant dense<[0, 512, 512, 5000]> : tensor<4xi32>
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "experts"}
      : (tensor<4096x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<4096x32xbf16>
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op constant offsets must not pass the 4096 grouped rows: entry 3 is 5000}}
  %z = mxmoe.scaled_grouped_matmul %x, %w, %bad {fqn = "experts2"}
      : (tensor<4096x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<4096x32xbf16>
  return %y : tensor<4096x32xbf16>
}
