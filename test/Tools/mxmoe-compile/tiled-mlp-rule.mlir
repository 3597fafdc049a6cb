// The shard policy of tiled MLPs with shards = auto: --tokens-per-shard
// (default 32768) and --tile-rule (tokens, default; or square = ceil(T / H),
// DeepSpeed/ALST). The manifest's tiled_mlps records the partition.
// RUN: rm -rf %t && mxmoe-compile %s -o %t --chip sm_90a && FileCheck %s --check-prefix=TOKENS < %t/manifest.json
// RUN: rm -rf %t && mxmoe-compile %s -o %t --chip sm_90a --tile-rule=square && FileCheck %s --check-prefix=SQUARE < %t/manifest.json
// RUN: rm -rf %t && mxmoe-compile %s -o %t --chip sm_90a --tokens-per-shard=128 && FileCheck %s --check-prefix=PER128 < %t/manifest.json
// RUN: not mxmoe-compile %s -o %t --chip sm_90a --tile-rule=cube 2>&1 | FileCheck %s --check-prefix=BAD

// TOKENS: "tiled_mlps": [
// TOKENS: "shards": 1,
// TOKENS: "tokens": 300
// SQUARE: "tiled_mlps": [
// SQUARE: "shard_tokens": 60
// SQUARE: "shards": 5,
// PER128: "tiled_mlps": [
// PER128: "function_suffix": "",
// PER128-NEXT: "shard_tokens": 100
// PER128: "shards": 3,
// BAD: mxmoe: tile-rule must be tokens or square, got 'cube'
func.func @mlp_fn(%x: tensor<300x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<300x64xbf16> {
  %y = mxmoe.tiled_mlp shards = auto (%x, %w) {fqn = "mlp"} : (tensor<300x64xbf16>, tensor<64x64xbf16>) -> tensor<300x64xbf16> {
  ^bb0(%xs: tensor<?x64xbf16>, %a: tensor<64x64xbf16>):
    %o = mxmoe.linear %xs, %a {fqn = "mlp.w", precision = #mxmoe.precision<mxfp8>} : (tensor<?x64xbf16>, tensor<64x64xbf16>) -> tensor<?x64xbf16>
    mxmoe.yield %o : tensor<?x64xbf16>
  }
  return %y : tensor<300x64xbf16>
}
