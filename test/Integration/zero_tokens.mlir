// Routed-expert GEMMs over zero tokens (empty batches) for
// test/Integration/zero_tokens_gpu.py: an Scout-like expert shape (N not a
// multiple of 128, K of 128 but not of 256) at 8 experts, with M = 0 at
// compile time.
func.func @zero(%x: tensor<0x384xbf16>, %w: tensor<8x320x384xbf16>,
                %offs: tensor<8xi32>) -> tensor<0x320xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "zero"}
      : (tensor<0x384xbf16>, tensor<8x320x384xbf16>, tensor<8xi32>)
      -> tensor<0x320xbf16>
  return %y : tensor<0x320xbf16>
}
