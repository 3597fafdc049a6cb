// A GEMM with K = 0: its output is zeros, with no kernel (zero-tokens.mlir).
func.func @k0(%x: tensor<64x0xbf16>, %w: tensor<4x128x0xbf16>, %offs: tensor<4xi32>) -> tensor<64x128xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e"} : (tensor<64x0xbf16>, tensor<4x128x0xbf16>, tensor<4xi32>) -> tensor<64x128xbf16>
  return %y : tensor<64x128xbf16>
}
