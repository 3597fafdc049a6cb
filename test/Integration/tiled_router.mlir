// A bare bf16 router linear as one mxmoe.tiled_mlp (y = x W^T over the
// token axis), for test/Integration/tiled_router_gpu.py: the forward and
// `<fqn>.backward` launch programs run the LinearBf16.cpp kernels (the
// linear, its input and weight gradients, the transposes). M = 1000 (a
// tile tail), N = 192 (a partial 128-wide tile), K = 520 (a partial
// 32-wide K step); 1 shard (the reference), 3 shards (334 + 333 + 333
// tokens: weight-gradient K not a multiple of 8) and 8; with a bias
// (`linb<N>`, gpt-oss's router) in 1 and 3 shards.
//
//   build/bin/mxmoe-compile test/Integration/tiled_router.mlir --chip sm_90a -o .device/tr

func.func @lin1(%x: tensor<1000x520xbf16>, %w: tensor<192x520xbf16>) -> tensor<1000x192xbf16> {
  %y = mxmoe.tiled_mlp shards = 1 (%x, %w) {fqn = "r1"}
      : (tensor<1000x520xbf16>, tensor<192x520xbf16>) -> tensor<1000x192xbf16> {
  ^bb0(%xs: tensor<?x520xbf16>, %ws: tensor<192x520xbf16>):
    %l = mxmoe.linear %xs, %ws {fqn = "r1.router", precision = #mxmoe.precision<bf16>}
        : (tensor<?x520xbf16>, tensor<192x520xbf16>) -> tensor<?x192xbf16>
    mxmoe.yield %l : tensor<?x192xbf16>
  }
  return %y : tensor<1000x192xbf16>
}

func.func @lin3(%x: tensor<1000x520xbf16>, %w: tensor<192x520xbf16>) -> tensor<1000x192xbf16> {
  %y = mxmoe.tiled_mlp shards = 3 (%x, %w) {fqn = "r3"}
      : (tensor<1000x520xbf16>, tensor<192x520xbf16>) -> tensor<1000x192xbf16> {
  ^bb0(%xs: tensor<?x520xbf16>, %ws: tensor<192x520xbf16>):
    %l = mxmoe.linear %xs, %ws {fqn = "r3.router", precision = #mxmoe.precision<bf16>}
        : (tensor<?x520xbf16>, tensor<192x520xbf16>) -> tensor<?x192xbf16>
    mxmoe.yield %l : tensor<?x192xbf16>
  }
  return %y : tensor<1000x192xbf16>
}

func.func @lin8(%x: tensor<1000x520xbf16>, %w: tensor<192x520xbf16>) -> tensor<1000x192xbf16> {
  %y = mxmoe.tiled_mlp shards = 8 (%x, %w) {fqn = "r8"}
      : (tensor<1000x520xbf16>, tensor<192x520xbf16>) -> tensor<1000x192xbf16> {
  ^bb0(%xs: tensor<?x520xbf16>, %ws: tensor<192x520xbf16>):
    %l = mxmoe.linear %xs, %ws {fqn = "r8.router", precision = #mxmoe.precision<bf16>}
        : (tensor<?x520xbf16>, tensor<192x520xbf16>) -> tensor<?x192xbf16>
    mxmoe.yield %l : tensor<?x192xbf16>
  }
  return %y : tensor<1000x192xbf16>
}

func.func @linb1(%x: tensor<1000x520xbf16>, %w: tensor<192x520xbf16>, %bias: tensor<192xbf16>) -> tensor<1000x192xbf16> {
  %y = mxmoe.tiled_mlp shards = 1 (%x, %w, %bias) {fqn = "rb1"}
      : (tensor<1000x520xbf16>, tensor<192x520xbf16>, tensor<192xbf16>) -> tensor<1000x192xbf16> {
  ^bb0(%xs: tensor<?x520xbf16>, %ws: tensor<192x520xbf16>, %bs: tensor<192xbf16>):
    %l = mxmoe.linear %xs, %ws bias %bs {fqn = "rb1.router", precision = #mxmoe.precision<bf16>}
        : (tensor<?x520xbf16>, tensor<192x520xbf16>, tensor<192xbf16>) -> tensor<?x192xbf16>
    mxmoe.yield %l : tensor<?x192xbf16>
  }
  return %y : tensor<1000x192xbf16>
}

func.func @linb3(%x: tensor<1000x520xbf16>, %w: tensor<192x520xbf16>, %bias: tensor<192xbf16>) -> tensor<1000x192xbf16> {
  %y = mxmoe.tiled_mlp shards = 3 (%x, %w, %bias) {fqn = "rb3"}
      : (tensor<1000x520xbf16>, tensor<192x520xbf16>, tensor<192xbf16>) -> tensor<1000x192xbf16> {
  ^bb0(%xs: tensor<?x520xbf16>, %ws: tensor<192x520xbf16>, %bs: tensor<192xbf16>):
    %l = mxmoe.linear %xs, %ws bias %bs {fqn = "rb3.router", precision = #mxmoe.precision<bf16>}
        : (tensor<?x520xbf16>, tensor<192x520xbf16>, tensor<192xbf16>) -> tensor<?x192xbf16>
    mxmoe.yield %l : tensor<?x192xbf16>
  }
  return %y : tensor<1000x192xbf16>
}
