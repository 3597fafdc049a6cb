// RUN: mxmoe-opt %s --mxmoe-tile-mlp --split-input-file --verify-diagnostics

// Expanded functions are named after the linear's fqn: the same fqn in two
// tiled MLPs (here also with another precision) is an error, as it is for
// mxmoe-expand-scaled-matmul, not a silent reuse of the first MLP's
// functions.
func.func @two(%x: tensor<8x128xbf16>, %w: tensor<128x128xbf16>) -> (tensor<8x128xbf16>, tensor<8x128xbf16>) {
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w) {fqn = "a"} : (tensor<8x128xbf16>, tensor<128x128xbf16>) -> tensor<8x128xbf16> {
  ^bb0(%xs: tensor<?x128xbf16>, %ww: tensor<128x128xbf16>):
    // expected-note @below {{the existing function}}
    %o = mxmoe.linear %xs, %ww {fqn = "shared.w", precision = #mxmoe.precision<mxfp8>} : (tensor<?x128xbf16>, tensor<128x128xbf16>) -> tensor<?x128xbf16>
    mxmoe.yield %o : tensor<?x128xbf16>
  }
  %z = mxmoe.tiled_mlp shards = 2 (%x, %w) {fqn = "b"} : (tensor<8x128xbf16>, tensor<128x128xbf16>) -> tensor<8x128xbf16> {
  ^bb0(%xs: tensor<?x128xbf16>, %ww: tensor<128x128xbf16>):
    // expected-error @below {{fqn 'shared.w' is not unique: @shared.w.forward already serves another linear (another tiled MLP, precision, recipe or shape)}}
    %o = mxmoe.linear %xs, %ww {fqn = "shared.w", precision = #mxmoe.precision<mxfp4>} : (tensor<?x128xbf16>, tensor<128x128xbf16>) -> tensor<?x128xbf16>
    mxmoe.yield %o : tensor<?x128xbf16>
  }
  return %y, %z : tensor<8x128xbf16>, tensor<8x128xbf16>
}
