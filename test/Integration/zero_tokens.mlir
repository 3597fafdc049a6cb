// Routed-expert GEMMs over zero tokens (empty batches) for
// test/Integration/zero_tokens_gpu.py, with M = 0 at compile time: N not
// a multiple of 128, K of 128 but not of 256, at 8 experts and at one.
func.func @zero(%x: tensor<0x384xbf16>, %w: tensor<8x320x384xbf16>,
                %offs: tensor<8xi32>) -> tensor<0x320xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "zero"}
      : (tensor<0x384xbf16>, tensor<8x320x384xbf16>, tensor<8xi32>)
      -> tensor<0x320xbf16>
  return %y : tensor<0x320xbf16>
}

// One expert: its weight gradient contracts over 0 tokens (zeros, no
// kernel).
func.func @one(%x: tensor<0x384xbf16>, %w: tensor<1x320x384xbf16>,
               %offs: tensor<1xi32>) -> tensor<0x320xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "one"}
      : (tensor<0x384xbf16>, tensor<1x320x384xbf16>, tensor<1xi32>)
      -> tensor<0x320xbf16>
  return %y : tensor<0x320xbf16>
}
