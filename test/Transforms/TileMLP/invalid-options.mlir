// RUN: not mxmoe-opt %s --mxmoe-tile-mlp="rule=cube" 2>&1 | FileCheck %s --check-prefix=RULE
// RUN: not mxmoe-opt %s --mxmoe-tile-mlp="tokens-per-shard=0" 2>&1 | FileCheck %s --check-prefix=PER
// RULE: for the --rule option: 'cube' is not one of: tokens, square
// PER: error: mxmoe-tile-mlp: tokens-per-shard must be >= 1, got 0
// Rejected when the pipeline is built (initializeOptions), before any pass
// runs; the module is not printed after the error.
// PER-NOT: see current operation
// PER-NOT: mxmoe.tiled_mlp
func.func @f(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %y = mxmoe.tiled_mlp shards = auto (%x) : (tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%xs: tensor<?x16xf32>):
    mxmoe.yield %xs : tensor<?x16xf32>
  }
  return %y : tensor<4x16xf32>
}
