// convert-mxmoe-to-gpu lowers MX-level ops only. Given model-level ops that
// the model passes have not turned into them yet (no precision, or an MX
// one; tiled MLPs), it says so once, at the first, with their count; bf16
// decisions are host ops and not counted. (After the model-level passes
// nothing is left to warn about: NOWARN in
// test/Tools/mxmoe-compile/default-pipeline-equivalence.mlir.)
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu=chip=sm_90a --verify-diagnostics

func.func @moe(%x: tensor<256x128xbf16>, %w: tensor<4x64x128xbf16>, %offs: tensor<4xi32>,
               %wl: tensor<64x128xbf16>) -> (tensor<256x64xbf16>, tensor<256x64xbf16>, tensor<256x64xbf16>) {
  // expected-warning @+1 {{convert-mxmoe-to-gpu lowers MX-level ops (mxmoe.quantize, dequantize, swizzle_scales, grouped_matmul); 2 model-level op(s) such as this 'mxmoe.scaled_grouped_matmul' stay as they are: run the model-level passes first}}
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "experts"}
      : (tensor<256x128xbf16>, tensor<4x64x128xbf16>, tensor<4xi32>) -> tensor<256x64xbf16>
  %p = mxmoe.linear %x, %wl {fqn = "proj"} : (tensor<256x128xbf16>, tensor<64x128xbf16>) -> tensor<256x64xbf16>
  %r = mxmoe.linear %x, %wl {fqn = "router", precision = #mxmoe.precision<bf16>}
      : (tensor<256x128xbf16>, tensor<64x128xbf16>) -> tensor<256x64xbf16>
  return %y, %p, %r : tensor<256x64xbf16>, tensor<256x64xbf16>, tensor<256x64xbf16>
}
