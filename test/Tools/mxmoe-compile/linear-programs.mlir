// MX linears get launch programs: the one-group offsets are a program
// constant, the weight's [N, K] -> [1, N, K] reshape aliases the argument,
// and a reshaped result is returned with its function's shape. A linear
// with a bias (added on the host) has kernels but no program, and its
// bias_grad (an f32 reduction on the host) no kernels: warnings at the
// linear and "functions_without_program" say so.
// RUN: rm -rf %t && mxmoe-compile %s -o %t --chip sm_90a 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.json

// CHECK-DAG: linear-programs.mlir:[[#LINEAR:]]:{{[0-9]+}}: warning: mxmoe: biased.wq.forward has no launch program (host work: '{{.*}}' is not a kernel launch (e.g. a linear's bias add)); it is listed under "functions_without_program" in the manifest
// CHECK-DAG: linear-programs.mlir:[[#LINEAR]]:{{[0-9]+}}: warning: mxmoe: biased.wq.bias_grad has no launch program (host work only, no MX kernels ('{{.*}}')); it is listed under "functions_without_program" in the manifest
// MANIFEST: "functions_without_program": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "function": "biased.wq.forward",
// MANIFEST: "programs": [
// MANIFEST: "constants": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "bytes": 4,
// MANIFEST-NEXT: "dtype": "i32",
// MANIFEST-NEXT: "shape": [
// MANIFEST-NEXT: 1
// MANIFEST-NEXT: ],
// MANIFEST-NEXT: "values": [
// MANIFEST-NEXT: 256
// MANIFEST: "function": "plain.wq.forward",
// MANIFEST: "steps": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "bindings": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "arg": 0
// MANIFEST-NEXT: },
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "constant": 0
// MANIFEST: "function": "plain.wq.weight_grad",
// MANIFEST: "returns": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "buffer": {{[0-9]+}},
// MANIFEST-NEXT: "dtype": "bf16",
// MANIFEST-NEXT: "shape": [
// MANIFEST-NEXT: 128,
// MANIFEST-NEXT: 64
func.func @plain(%x: tensor<256x64xbf16>, %w: tensor<128x64xbf16>) -> tensor<256x128xbf16> {
  %y = mxmoe.linear %x, %w {fqn = "plain.wq", precision = #mxmoe.precision<mxfp8>}
      : (tensor<256x64xbf16>, tensor<128x64xbf16>) -> tensor<256x128xbf16>
  return %y : tensor<256x128xbf16>
}
func.func @biased(%x: tensor<256x64xbf16>, %w: tensor<128x64xbf16>, %b: tensor<128xbf16>) -> tensor<256x128xbf16> {
  %y = mxmoe.linear %x, %w bias %b {fqn = "biased.wq", precision = #mxmoe.precision<mxfp8>}
      : (tensor<256x64xbf16>, tensor<128x64xbf16>, tensor<128xbf16>) -> tensor<256x128xbf16>
  return %y : tensor<256x128xbf16>
}
