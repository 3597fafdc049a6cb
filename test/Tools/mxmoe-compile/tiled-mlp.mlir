// A tiled MLP with a static token count compiles completely: mxmoe-tile-mlp
// emits one static shard loop per shard size (250 tokens in 4 shards: 2 of
// 63, 2 of 62) and expands the MX linears of each, so every linear has
// forward / input_grad / weight_grad programs for the 63-token shards
// (`<fqn>.*`) and for the 62-token shards (`<fqn>.tail.*`); nothing is left
// uncompiled and no warning is printed. Batch 2 is flattened to tokens.
// RUN: rm -rf %t && mxmoe-compile %s -o %t --chip sm_90a 2>&1 | FileCheck %s --implicit-check-not=warning
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.json
// RUN: FileCheck %s --check-prefix=PARTITION < %t/manifest.json
// RUN: FileCheck %s --check-prefix=MODEL < %t/model.mlir

// CHECK: mxmoe-compile: {{.*}} (sm_90a) in
// MANIFEST-DAG: "function": "mlp.w13.forward",
// MANIFEST-DAG: "function": "mlp.w13.input_grad",
// MANIFEST-DAG: "function": "mlp.w13.weight_grad",
// MANIFEST-DAG: "function": "mlp.w2.forward",
// MANIFEST-DAG: "function": "mlp.w13.tail.forward",
// MANIFEST-DAG: "function": "mlp.w2.tail.weight_grad",
// MANIFEST-DAG: "uncompiled": []
// The partition a runtime must use (2 + 2 shards, 250 tokens):
// PARTITION: "tiled_mlps": [
// PARTITION-NEXT: {
// PARTITION-NEXT: "fqn": "mlp",
// PARTITION-NEXT: "function": "mlp_fn",
// PARTITION-NEXT: "loops": [
// PARTITION-NEXT: {
// PARTITION-NEXT: "count": 2,
// PARTITION-NEXT: "first": 0,
// PARTITION-NEXT: "function_suffix": "",
// PARTITION-NEXT: "shard_tokens": 63
// PARTITION-NEXT: },
// PARTITION-NEXT: {
// PARTITION-NEXT: "count": 2,
// PARTITION-NEXT: "first": 2,
// PARTITION-NEXT: "function_suffix": ".tail",
// PARTITION-NEXT: "shard_tokens": 62
// PARTITION-NEXT: }
// PARTITION-NEXT: ],
// PARTITION-NEXT: "num_shards": 4,
// PARTITION-NEXT: "shards": 4,
// PARTITION-NEXT: "static": true,
// PARTITION-NEXT: "tokens": 250
// MANIFEST-DAG: "functions_without_program": []
// MODEL-LABEL: func.func @mlp_fn
// MODEL: scf.for
// MODEL: call @mlp.w13.forward({{.*}}) : (tensor<63x64xbf16>, tensor<256x64xbf16>) -> tensor<63x256xbf16>
// MODEL: call @mlp.w2.forward
// MODEL: } {mxmoe.num_shards = 4 : i64, mxmoe.shard_tokens = 63 : i64, mxmoe.tiled_mlp = "mlp", mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
// MODEL: scf.for
// MODEL: call @mlp.w13.tail.forward({{.*}}) : (tensor<62x64xbf16>, tensor<256x64xbf16>) -> tensor<62x256xbf16>
// MODEL: } {mxmoe.num_shards = 4 : i64, mxmoe.shard_tokens = 62 : i64, mxmoe.tiled_mlp = "mlp", mxmoe.tiled_mlp_id = {{[0-9]+}} : i64}
// MODEL-LABEL: func.func @mlp.backward
// MODEL: call @mlp.w13.forward
// MODEL-NOT: call @mlp.w2.forward
// MODEL: call @mlp.w2.input_grad
// MODEL: call @mlp.w2.weight_grad
// MODEL: call @mlp.w13.input_grad
// MODEL: call @mlp.w13.weight_grad
// MODEL: call @mlp.w2.tail.input_grad
func.func @mlp_fn(%x: tensor<2x125x64xbf16>, %w13: tensor<256x64xbf16>, %w2: tensor<64x128xbf16>) -> tensor<2x125x64xbf16> {
  %y = mxmoe.tiled_mlp shards = 4 (%x, %w13, %w2) {fqn = "mlp"} : (tensor<2x125x64xbf16>, tensor<256x64xbf16>, tensor<64x128xbf16>) -> tensor<2x125x64xbf16> {
  ^bb0(%xs: tensor<?x64xbf16>, %a: tensor<256x64xbf16>, %b: tensor<64x128xbf16>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xs, %c0 : tensor<?x64xbf16>
    %gu = mxmoe.linear %xs, %a {fqn = "mlp.w13"} : (tensor<?x64xbf16>, tensor<256x64xbf16>) -> tensor<?x256xbf16>
    %g = tensor.extract_slice %gu[0, 0] [%n, 128] [1, 1] : tensor<?x256xbf16> to tensor<?x128xbf16>
    %u = tensor.extract_slice %gu[0, 128] [%n, 128] [1, 1] : tensor<?x256xbf16> to tensor<?x128xbf16>
    %ng = arith.negf %g : tensor<?x128xbf16>
    %e = math.exp %ng : tensor<?x128xbf16>
    %one = arith.constant 1.0 : bf16
    %ones = tensor.splat %one[%n] : tensor<?x128xbf16>
    %den = arith.addf %ones, %e : tensor<?x128xbf16>
    %silu = arith.divf %g, %den : tensor<?x128xbf16>
    %act = arith.mulf %silu, %u : tensor<?x128xbf16>
    %o = mxmoe.linear %act, %b {fqn = "mlp.w2"} : (tensor<?x128xbf16>, tensor<64x128xbf16>) -> tensor<?x64xbf16>
    mxmoe.yield %o : tensor<?x64xbf16>
  }
  return %y : tensor<2x125x64xbf16>
}
