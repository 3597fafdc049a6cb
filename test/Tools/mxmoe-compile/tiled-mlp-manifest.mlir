// The manifest's "tiled_mlps" has one entry per tiled MLP, also when an fqn
// repeats in a nested module (each module has its own functions) or is
// absent ("fqn": null).
// RUN: rm -rf %t && mxmoe-compile %s -o %t --chip sm_90a && FileCheck %s < %t/manifest.json

// CHECK: "tiled_mlps": [
// CHECK-NEXT: {
// CHECK-NEXT: "fqn": "mlp",
// CHECK-NEXT: "function": "outer",
// CHECK: "shard_tokens": 150
// CHECK: "shards": 2,
// CHECK-NEXT: "static": true,
// CHECK-NEXT: "tokens": 300
// CHECK: "fqn": null,
// CHECK-NEXT: "function": "nameless",
// CHECK: "shards": 4,
// CHECK-NEXT: "static": true,
// CHECK-NEXT: "tokens": 8
// CHECK: "fqn": "mlp",
// CHECK-NEXT: "function": "innerf",
// CHECK: "first": 0,
// CHECK-NEXT: "function_suffix": "",
// CHECK-NEXT: "shard_tokens": 34
// CHECK: "first": 1,
// CHECK-NEXT: "function_suffix": ".tail",
// CHECK-NEXT: "shard_tokens": 33
// CHECK: "shards": 3,
// CHECK-NEXT: "static": true,
// CHECK-NEXT: "tokens": 100
module {
  func.func @outer(%x: tensor<300x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<300x64xbf16> {
    %y = mxmoe.tiled_mlp shards = 2 (%x, %w) {fqn = "mlp"} : (tensor<300x64xbf16>, tensor<64x64xbf16>) -> tensor<300x64xbf16> {
    ^bb0(%xs: tensor<?x64xbf16>, %a: tensor<64x64xbf16>):
      %o = mxmoe.linear %xs, %a {fqn = "mlp.w", precision = #mxmoe.precision<mxfp8>} : (tensor<?x64xbf16>, tensor<64x64xbf16>) -> tensor<?x64xbf16>
      mxmoe.yield %o : tensor<?x64xbf16>
    }
    return %y : tensor<300x64xbf16>
  }
  func.func @nameless(%x: tensor<8x64xbf16>) -> tensor<8x64xbf16> {
    %y = mxmoe.tiled_mlp shards = 4 (%x) : (tensor<8x64xbf16>) -> tensor<8x64xbf16> {
    ^bb0(%xs: tensor<?x64xbf16>):
      %n = arith.negf %xs : tensor<?x64xbf16>
      mxmoe.yield %n : tensor<?x64xbf16>
    }
    return %y : tensor<8x64xbf16>
  }
  module @inner {
    func.func @innerf(%x: tensor<100x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<100x64xbf16> {
      %y = mxmoe.tiled_mlp shards = 3 (%x, %w) {fqn = "mlp"} : (tensor<100x64xbf16>, tensor<64x64xbf16>) -> tensor<100x64xbf16> {
      ^bb0(%xs: tensor<?x64xbf16>, %a: tensor<64x64xbf16>):
        %o = mxmoe.linear %xs, %a {fqn = "mlp.w", precision = #mxmoe.precision<mxfp8>} : (tensor<?x64xbf16>, tensor<64x64xbf16>) -> tensor<?x64xbf16>
        mxmoe.yield %o : tensor<?x64xbf16>
      }
      return %y : tensor<100x64xbf16>
    }
  }
}
