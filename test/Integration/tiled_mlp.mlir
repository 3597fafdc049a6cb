// Tiled MLPs (SwiGLU, hidden 256, intermediate 512, MXFP8 linears) for
// the device test test/Integration/tiled_mlp_compiled_gpu.py: the same MLP
// over 1000 tokens untiled (t1) and in 2, 3 (334 + 333 + 333: a `.tail`
// shard size) and 8 shards, batch 2 ([2, 500] tokens, 3 shards), and 3
// tokens untiled (tf1) and in 4 shards (fewer tokens than shards).
// mxmoe-tile-mlp makes every shard loop static and expands its linears per
// shard size; the test runs those kernels shard by shard and compares the
// tiled results with the untiled ones.
// Device workflow (test/Integration/README.md):
//   mxmoe-compile test/Integration/tiled_mlp.mlir --chip sm_90a -o .device/tiled
//   python3 test/Integration/tiled_mlp_compiled_gpu.py .device/tiled

func.func @t1(%x: tensor<1000x256xbf16>, %w13: tensor<1024x256xbf16>, %w2: tensor<256x512xbf16>) -> tensor<1000x256xbf16> {
  %y = mxmoe.tiled_mlp shards = 1 (%x, %w13, %w2) {fqn = "t1"}
      : (tensor<1000x256xbf16>, tensor<1024x256xbf16>, tensor<256x512xbf16>) -> tensor<1000x256xbf16> {
  ^bb0(%xs: tensor<?x256xbf16>, %a: tensor<1024x256xbf16>, %b: tensor<256x512xbf16>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xs, %c0 : tensor<?x256xbf16>
    %gu = mxmoe.linear %xs, %a {fqn = "t1.w13"} : (tensor<?x256xbf16>, tensor<1024x256xbf16>) -> tensor<?x1024xbf16>
    %g = tensor.extract_slice %gu[0, 0] [%n, 512] [1, 1] : tensor<?x1024xbf16> to tensor<?x512xbf16>
    %u = tensor.extract_slice %gu[0, 512] [%n, 512] [1, 1] : tensor<?x1024xbf16> to tensor<?x512xbf16>
    %ng = arith.negf %g : tensor<?x512xbf16>
    %e = math.exp %ng : tensor<?x512xbf16>
    %one = arith.constant 1.0 : bf16
    %ones = tensor.splat %one[%n] : tensor<?x512xbf16>
    %den = arith.addf %ones, %e : tensor<?x512xbf16>
    %silu = arith.divf %g, %den : tensor<?x512xbf16>
    %act = arith.mulf %silu, %u : tensor<?x512xbf16>
    %o = mxmoe.linear %act, %b {fqn = "t1.w2"} : (tensor<?x512xbf16>, tensor<256x512xbf16>) -> tensor<?x256xbf16>
    mxmoe.yield %o : tensor<?x256xbf16>
  }
  return %y : tensor<1000x256xbf16>
}

func.func @t2(%x: tensor<1000x256xbf16>, %w13: tensor<1024x256xbf16>, %w2: tensor<256x512xbf16>) -> tensor<1000x256xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w13, %w2) {fqn = "t2"}
      : (tensor<1000x256xbf16>, tensor<1024x256xbf16>, tensor<256x512xbf16>) -> tensor<1000x256xbf16> {
  ^bb0(%xs: tensor<?x256xbf16>, %a: tensor<1024x256xbf16>, %b: tensor<256x512xbf16>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xs, %c0 : tensor<?x256xbf16>
    %gu = mxmoe.linear %xs, %a {fqn = "t2.w13"} : (tensor<?x256xbf16>, tensor<1024x256xbf16>) -> tensor<?x1024xbf16>
    %g = tensor.extract_slice %gu[0, 0] [%n, 512] [1, 1] : tensor<?x1024xbf16> to tensor<?x512xbf16>
    %u = tensor.extract_slice %gu[0, 512] [%n, 512] [1, 1] : tensor<?x1024xbf16> to tensor<?x512xbf16>
    %ng = arith.negf %g : tensor<?x512xbf16>
    %e = math.exp %ng : tensor<?x512xbf16>
    %one = arith.constant 1.0 : bf16
    %ones = tensor.splat %one[%n] : tensor<?x512xbf16>
    %den = arith.addf %ones, %e : tensor<?x512xbf16>
    %silu = arith.divf %g, %den : tensor<?x512xbf16>
    %act = arith.mulf %silu, %u : tensor<?x512xbf16>
    %o = mxmoe.linear %act, %b {fqn = "t2.w2"} : (tensor<?x512xbf16>, tensor<256x512xbf16>) -> tensor<?x256xbf16>
    mxmoe.yield %o : tensor<?x256xbf16>
  }
  return %y : tensor<1000x256xbf16>
}

func.func @t3(%x: tensor<1000x256xbf16>, %w13: tensor<1024x256xbf16>, %w2: tensor<256x512xbf16>) -> tensor<1000x256xbf16> {
  %y = mxmoe.tiled_mlp shards = 3 (%x, %w13, %w2) {fqn = "t3"}
      : (tensor<1000x256xbf16>, tensor<1024x256xbf16>, tensor<256x512xbf16>) -> tensor<1000x256xbf16> {
  ^bb0(%xs: tensor<?x256xbf16>, %a: tensor<1024x256xbf16>, %b: tensor<256x512xbf16>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xs, %c0 : tensor<?x256xbf16>
    %gu = mxmoe.linear %xs, %a {fqn = "t3.w13"} : (tensor<?x256xbf16>, tensor<1024x256xbf16>) -> tensor<?x1024xbf16>
    %g = tensor.extract_slice %gu[0, 0] [%n, 512] [1, 1] : tensor<?x1024xbf16> to tensor<?x512xbf16>
    %u = tensor.extract_slice %gu[0, 512] [%n, 512] [1, 1] : tensor<?x1024xbf16> to tensor<?x512xbf16>
    %ng = arith.negf %g : tensor<?x512xbf16>
    %e = math.exp %ng : tensor<?x512xbf16>
    %one = arith.constant 1.0 : bf16
    %ones = tensor.splat %one[%n] : tensor<?x512xbf16>
    %den = arith.addf %ones, %e : tensor<?x512xbf16>
    %silu = arith.divf %g, %den : tensor<?x512xbf16>
    %act = arith.mulf %silu, %u : tensor<?x512xbf16>
    %o = mxmoe.linear %act, %b {fqn = "t3.w2"} : (tensor<?x512xbf16>, tensor<256x512xbf16>) -> tensor<?x256xbf16>
    mxmoe.yield %o : tensor<?x256xbf16>
  }
  return %y : tensor<1000x256xbf16>
}

func.func @t8(%x: tensor<1000x256xbf16>, %w13: tensor<1024x256xbf16>, %w2: tensor<256x512xbf16>) -> tensor<1000x256xbf16> {
  %y = mxmoe.tiled_mlp shards = 8 (%x, %w13, %w2) {fqn = "t8"}
      : (tensor<1000x256xbf16>, tensor<1024x256xbf16>, tensor<256x512xbf16>) -> tensor<1000x256xbf16> {
  ^bb0(%xs: tensor<?x256xbf16>, %a: tensor<1024x256xbf16>, %b: tensor<256x512xbf16>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xs, %c0 : tensor<?x256xbf16>
    %gu = mxmoe.linear %xs, %a {fqn = "t8.w13"} : (tensor<?x256xbf16>, tensor<1024x256xbf16>) -> tensor<?x1024xbf16>
    %g = tensor.extract_slice %gu[0, 0] [%n, 512] [1, 1] : tensor<?x1024xbf16> to tensor<?x512xbf16>
    %u = tensor.extract_slice %gu[0, 512] [%n, 512] [1, 1] : tensor<?x1024xbf16> to tensor<?x512xbf16>
    %ng = arith.negf %g : tensor<?x512xbf16>
    %e = math.exp %ng : tensor<?x512xbf16>
    %one = arith.constant 1.0 : bf16
    %ones = tensor.splat %one[%n] : tensor<?x512xbf16>
    %den = arith.addf %ones, %e : tensor<?x512xbf16>
    %silu = arith.divf %g, %den : tensor<?x512xbf16>
    %act = arith.mulf %silu, %u : tensor<?x512xbf16>
    %o = mxmoe.linear %act, %b {fqn = "t8.w2"} : (tensor<?x512xbf16>, tensor<256x512xbf16>) -> tensor<?x256xbf16>
    mxmoe.yield %o : tensor<?x256xbf16>
  }
  return %y : tensor<1000x256xbf16>
}

func.func @tb(%x: tensor<2x500x256xbf16>, %w13: tensor<1024x256xbf16>, %w2: tensor<256x512xbf16>) -> tensor<2x500x256xbf16> {
  %y = mxmoe.tiled_mlp shards = 3 (%x, %w13, %w2) {fqn = "tb"}
      : (tensor<2x500x256xbf16>, tensor<1024x256xbf16>, tensor<256x512xbf16>) -> tensor<2x500x256xbf16> {
  ^bb0(%xs: tensor<?x256xbf16>, %a: tensor<1024x256xbf16>, %b: tensor<256x512xbf16>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xs, %c0 : tensor<?x256xbf16>
    %gu = mxmoe.linear %xs, %a {fqn = "tb.w13"} : (tensor<?x256xbf16>, tensor<1024x256xbf16>) -> tensor<?x1024xbf16>
    %g = tensor.extract_slice %gu[0, 0] [%n, 512] [1, 1] : tensor<?x1024xbf16> to tensor<?x512xbf16>
    %u = tensor.extract_slice %gu[0, 512] [%n, 512] [1, 1] : tensor<?x1024xbf16> to tensor<?x512xbf16>
    %ng = arith.negf %g : tensor<?x512xbf16>
    %e = math.exp %ng : tensor<?x512xbf16>
    %one = arith.constant 1.0 : bf16
    %ones = tensor.splat %one[%n] : tensor<?x512xbf16>
    %den = arith.addf %ones, %e : tensor<?x512xbf16>
    %silu = arith.divf %g, %den : tensor<?x512xbf16>
    %act = arith.mulf %silu, %u : tensor<?x512xbf16>
    %o = mxmoe.linear %act, %b {fqn = "tb.w2"} : (tensor<?x512xbf16>, tensor<256x512xbf16>) -> tensor<?x256xbf16>
    mxmoe.yield %o : tensor<?x256xbf16>
  }
  return %y : tensor<2x500x256xbf16>
}

func.func @tf1(%x: tensor<3x256xbf16>, %w13: tensor<1024x256xbf16>, %w2: tensor<256x512xbf16>) -> tensor<3x256xbf16> {
  %y = mxmoe.tiled_mlp shards = 1 (%x, %w13, %w2) {fqn = "tf1"}
      : (tensor<3x256xbf16>, tensor<1024x256xbf16>, tensor<256x512xbf16>) -> tensor<3x256xbf16> {
  ^bb0(%xs: tensor<?x256xbf16>, %a: tensor<1024x256xbf16>, %b: tensor<256x512xbf16>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xs, %c0 : tensor<?x256xbf16>
    %gu = mxmoe.linear %xs, %a {fqn = "tf1.w13"} : (tensor<?x256xbf16>, tensor<1024x256xbf16>) -> tensor<?x1024xbf16>
    %g = tensor.extract_slice %gu[0, 0] [%n, 512] [1, 1] : tensor<?x1024xbf16> to tensor<?x512xbf16>
    %u = tensor.extract_slice %gu[0, 512] [%n, 512] [1, 1] : tensor<?x1024xbf16> to tensor<?x512xbf16>
    %ng = arith.negf %g : tensor<?x512xbf16>
    %e = math.exp %ng : tensor<?x512xbf16>
    %one = arith.constant 1.0 : bf16
    %ones = tensor.splat %one[%n] : tensor<?x512xbf16>
    %den = arith.addf %ones, %e : tensor<?x512xbf16>
    %silu = arith.divf %g, %den : tensor<?x512xbf16>
    %act = arith.mulf %silu, %u : tensor<?x512xbf16>
    %o = mxmoe.linear %act, %b {fqn = "tf1.w2"} : (tensor<?x512xbf16>, tensor<256x512xbf16>) -> tensor<?x256xbf16>
    mxmoe.yield %o : tensor<?x256xbf16>
  }
  return %y : tensor<3x256xbf16>
}

func.func @tf(%x: tensor<3x256xbf16>, %w13: tensor<1024x256xbf16>, %w2: tensor<256x512xbf16>) -> tensor<3x256xbf16> {
  %y = mxmoe.tiled_mlp shards = 4 (%x, %w13, %w2) {fqn = "tf"}
      : (tensor<3x256xbf16>, tensor<1024x256xbf16>, tensor<256x512xbf16>) -> tensor<3x256xbf16> {
  ^bb0(%xs: tensor<?x256xbf16>, %a: tensor<1024x256xbf16>, %b: tensor<256x512xbf16>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xs, %c0 : tensor<?x256xbf16>
    %gu = mxmoe.linear %xs, %a {fqn = "tf.w13"} : (tensor<?x256xbf16>, tensor<1024x256xbf16>) -> tensor<?x1024xbf16>
    %g = tensor.extract_slice %gu[0, 0] [%n, 512] [1, 1] : tensor<?x1024xbf16> to tensor<?x512xbf16>
    %u = tensor.extract_slice %gu[0, 512] [%n, 512] [1, 1] : tensor<?x1024xbf16> to tensor<?x512xbf16>
    %ng = arith.negf %g : tensor<?x512xbf16>
    %e = math.exp %ng : tensor<?x512xbf16>
    %one = arith.constant 1.0 : bf16
    %ones = tensor.splat %one[%n] : tensor<?x512xbf16>
    %den = arith.addf %ones, %e : tensor<?x512xbf16>
    %silu = arith.divf %g, %den : tensor<?x512xbf16>
    %act = arith.mulf %silu, %u : tensor<?x512xbf16>
    %o = mxmoe.linear %act, %b {fqn = "tf.w2"} : (tensor<?x512xbf16>, tensor<256x512xbf16>) -> tensor<?x256xbf16>
    mxmoe.yield %o : tensor<?x256xbf16>
  }
  return %y : tensor<3x256xbf16>
}
