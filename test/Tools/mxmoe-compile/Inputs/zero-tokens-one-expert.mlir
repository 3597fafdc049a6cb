// One expert over zero tokens: the weight gradient contracts over 0 tokens (zero-tokens.mlir).
func.func @one(%x: tensor<0x256xbf16>, %w: tensor<1x128x256xbf16>, %offs: tensor<1xi32>) -> tensor<0x128xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e"} : (tensor<0x256xbf16>, tensor<1x128x256xbf16>, tensor<1xi32>) -> tensor<0x128xbf16>
  return %y : tensor<0x128xbf16>
}
