// MXFP8 linears inside a tiled MLP whose token count is only known at run
// time keep a dynamic shard loop and get no kernels: mxmoe-compile warns
// once per tiled MLP, at the first such linear, and lists every one under
// "uncompiled" in the manifest (forward loop and the recomputing backward).
// (With a static token count the shard loops are static and compiled:
// tiled-mlp.mlir.)
// RUN: rm -rf %t && mxmoe-compile %s -o %t --chip sm_90a 2>&1 | FileCheck %s
// RUN: rm -rf %t && mxmoe-compile %s -o %t --chip sm_90a 2>&1 | FileCheck %s --check-prefix=CHECK2
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.json

// CHECK: tiled-mlp-uncompiled.mlir:[[@LINE+12]]:10: warning: mxmoe: not compiled to kernels, inside the shard loop of tiled MLP 'mlp' (dynamic token count; MX kernels need static shapes): mlp.w1 (mxfp8), mlp.w2 (mxfp8), mlp.w2.input_grad (mxfp8), mlp.w2.weight_grad (mxfp8), mlp.w1.input_grad (mxfp8), mlp.w1.weight_grad (mxfp8); they stay in the host IR (model.mlir) and are listed under "uncompiled" in the manifest
// CHECK: mxmoe-compile: {{.*}} (sm_90a) in
// MANIFEST: "uncompiled": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "fqn": "mlp.w1",
// MANIFEST-NEXT: "function": "mlp_fn",
// MANIFEST-NEXT: "op": "mxmoe.linear",
// MANIFEST-NEXT: "precision": "mxfp8",
// MANIFEST-NEXT: "reason": "inside the shard loop of tiled MLP 'mlp' (dynamic token count; MX kernels need static shapes)"
func.func @mlp_fn(%x: tensor<?x64xbf16>, %w1: tensor<128x64xbf16>, %w2: tensor<64x128xbf16>) -> tensor<?x64xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w1, %w2) {fqn = "mlp"} : (tensor<?x64xbf16>, tensor<128x64xbf16>, tensor<64x128xbf16>) -> tensor<?x64xbf16> {
  ^bb0(%xs: tensor<?x64xbf16>, %a: tensor<128x64xbf16>, %b: tensor<64x128xbf16>):
    %h = mxmoe.linear %xs, %a {fqn = "mlp.w1", precision = #mxmoe.precision<mxfp8>} : (tensor<?x64xbf16>, tensor<128x64xbf16>) -> tensor<?x128xbf16>
    %o = mxmoe.linear %h, %b {fqn = "mlp.w2", precision = #mxmoe.precision<mxfp8>} : (tensor<?x128xbf16>, tensor<64x128xbf16>) -> tensor<?x64xbf16>
    mxmoe.yield %o : tensor<?x64xbf16>
  }
  return %y : tensor<?x64xbf16>
}

// A static token count whose body cannot take static shard shapes (a size
// read from the data): the warning says which op kept the loop dynamic.
// CHECK2: tiled-mlp-uncompiled.mlir:[[@LINE+4]]:10: warning: mxmoe: not compiled to kernels, inside the shard loop of tiled MLP 'fb' (run-time shard shapes: 'tensor.empty' cannot take static shard shapes; MX kernels need static shapes): fb.w (mxfp8)
func.func @fallback_fn(%x: tensor<8x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<8x64xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w) {fqn = "fb"} : (tensor<8x64xbf16>, tensor<64x64xbf16>) -> tensor<8x64xbf16> {
  ^bb0(%xs: tensor<?x64xbf16>, %a: tensor<64x64xbf16>):
    %o = mxmoe.linear %xs, %a {fqn = "fb.w", precision = #mxmoe.precision<mxfp8>} : (tensor<?x64xbf16>, tensor<64x64xbf16>) -> tensor<?x64xbf16>
    %c0 = arith.constant 0 : index
    %v = tensor.extract %xs[%c0, %c0] : tensor<?x64xbf16>
    %i = arith.fptoui %v : bf16 to i32
    %n = arith.index_cast %i : i32 to index
    %scratch = tensor.empty(%n) : tensor<?xf32>
    mxmoe.yield %o : tensor<?x64xbf16>
  }
  return %y : tensor<8x64xbf16>
}
