// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// mxmoe.scaled_grouped_matmul attributes: fqn (required, non-empty), recipe,
// precision.

func.func @fqn_empty(%x: tensor<64x64xbf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op fqn must name the layer (e.g. "layers.0.feed_forward.experts.w1")}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = ""} : (tensor<64x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @fqn_missing(%x: tensor<64x64xbf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{'mxmoe.scaled_grouped_matmul' op requires attribute 'fqn'}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs : (tensor<64x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @recipe_is_rounding(%x: tensor<64x64xbf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{custom op 'mxmoe.scaled_grouped_matmul' 'mxmoe.scaled_grouped_matmul' op attribute 'recipe' failed to satisfy constraint: how a GEMM's operands are quantized: element type, block size, scale rounding}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e", recipe = #mxmoe.rounding<rceil>} : (tensor<64x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

// An invalid recipe is rejected while parsing the attribute.
func.func @recipe_block_size(%x: tensor<64x64xbf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{MX recipe block_size must be 32 (OCP MX v1.0 shares one E8M0 scale per 32 elements), got 16}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e", recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 16, rounding = rceil>}
      : (tensor<64x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}

// -----

func.func @precision_is_recipe(%x: tensor<64x64xbf16>, %w: tensor<4x32x64xbf16>, %offs: tensor<4xi32>) {
  // expected-error @+1 {{custom op 'mxmoe.scaled_grouped_matmul' 'mxmoe.scaled_grouped_matmul' op attribute 'precision' failed to satisfy constraint: GEMM precision: bf16, mxfp8 (E4M3 + E8M0/32) or mxfp4 (E2M1 + E8M0/32)}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e", precision = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = rceil>}
      : (tensor<64x64xbf16>, tensor<4x32x64xbf16>, tensor<4xi32>) -> tensor<64x32xbf16>
  return
}
