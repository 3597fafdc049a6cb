// RUN: mxmoe-opt %s --mxmoe-precision-policy="report=%t.json" -o /dev/null 2>/dev/null
// RUN: FileCheck %s < %t.json
// RUN: not mxmoe-opt %s --mxmoe-precision-policy="report=/nonexistent-dir/r.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFILE

// CHECK: "decisions": [
// CHECK:   "K": 5120,
// CHECK:   "M": 8192,
// CHECK:   "N": 16384,
// CHECK:   "fqn": "layers.0.moe.experts.w13",
// CHECK:   "groups": 16,
// CHECK:   "op": "mxmoe.scaled_grouped_matmul",
// CHECK:   "precision": "mxfp8",
// CHECK:   "reason": "passes every rule",
// CHECK:   "rule": "default"
// CHECK:   "M": null,
// CHECK:   "fqn": "layers.0.moe.router.gate",
// CHECK:   "precision": "bf16",
// CHECK:   "reason": "fqn matches exclude pattern 'router.gate'",
// CHECK:   "rule": "exclude"
// CHECK: "pass": "mxmoe-precision-policy"
// NOFILE: error: mxmoe-precision-policy: cannot write report '/nonexistent-dir/r.json'
func.func @f(%x: tensor<8192x5120xbf16>, %w13: tensor<16x16384x5120xbf16>, %o: tensor<16xi32>,
             %xs: tensor<?x5120xbf16>, %router: tensor<16x5120xbf16>) {
  %h = mxmoe.scaled_grouped_matmul %x, %w13, %o {fqn = "layers.0.moe.experts.w13"} : (tensor<8192x5120xbf16>, tensor<16x16384x5120xbf16>, tensor<16xi32>) -> tensor<8192x16384xbf16>
  %l = mxmoe.linear %xs, %router {fqn = "layers.0.moe.router.gate"} : (tensor<?x5120xbf16>, tensor<16x5120xbf16>) -> tensor<?x16xbf16>
  return
}
