// RUN: mxmoe-opt %s --mxmoe-tile-mlp | FileCheck %s

// MXFP4 weights are dequantized once, before the shard loop; every shard's
// GEMM uses the same bf16 buffer.
// CHECK-LABEL: func.func @fp4_weights
// CHECK: %[[W:.*]] = mxmoe.dequantize %arg1, %arg2 {axis = 1 : i64} : tensor<128x64xf4E2M1FN>, tensor<128x2xf8E8M0FNU> -> tensor<128x64xbf16>
// CHECK: scf.for
// CHECK-NOT: mxmoe.dequantize
// CHECK: mxmoe.linear %{{.*}}, %[[W]] {fqn = "layers.0.mlp.w1", precision = #mxmoe.precision<bf16>}
// CHECK: } {mxmoe.num_shards = 8 : i64, mxmoe.shard_tokens = 32 : i64, mxmoe.tiled_mlp = "layers.0.mlp", mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
func.func @fp4_weights(%x: tensor<256x64xbf16>, %wq: tensor<128x64xf4E2M1FN>, %ws: tensor<128x2xf8E8M0FNU>)
    -> tensor<256x128xbf16> {
  %y = mxmoe.tiled_mlp shards = 8 (%x, %wq, %ws) {fqn = "layers.0.mlp"}
      : (tensor<256x64xbf16>, tensor<128x64xf4E2M1FN>, tensor<128x2xf8E8M0FNU>) -> tensor<256x128xbf16> {
  ^bb0(%xs: tensor<?x64xbf16>, %q: tensor<128x64xf4E2M1FN>, %s: tensor<128x2xf8E8M0FNU>):
    %w = mxmoe.dequantize %q, %s {axis = 1 : i64} : tensor<128x64xf4E2M1FN>, tensor<128x2xf8E8M0FNU> -> tensor<128x64xbf16>
    %h = mxmoe.linear %xs, %w {fqn = "layers.0.mlp.w1", precision = #mxmoe.precision<bf16>}
        : (tensor<?x64xbf16>, tensor<128x64xbf16>) -> tensor<?x128xbf16>
    mxmoe.yield %h : tensor<?x128xbf16>
  }
  return %y : tensor<256x128xbf16>
}
