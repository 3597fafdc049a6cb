// A model whose only routed-expert GEMM cannot be MX (K = 2050, not a
// multiple of 32) compiles (exit 0: the legality rule falls back, it never
// fails), but says so: the policy's warning at the op, and the reason why
// no chip got kernels (nothing is "uncompiled": the op is bf16 by decision).
// RUN: rm -rf %t && mxmoe-compile %s -o %t --chip sm_90a 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.json

// CHECK: no-mx-ops.mlir:[[#@LINE+5]]:{{[0-9]+}}: warning: mxmoe-precision-policy: routed-expert GEMM 'experts' stays bf16 (rule legality: K = 2050 is not a multiple of 32
// CHECK: mxmoe-compile: no MX kernels for sm_90a (no MX op was compiled: the precision policy kept every op in bf16; every decision and its rule: {{.*}}policy-report.json)
// MANIFEST: "uncompiled": []

func.func @moe(%x: tensor<4096x2050xbf16>, %w: tensor<4x512x2050xbf16>, %offs: tensor<4xi32>) -> tensor<4096x512xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "experts"}
      : (tensor<4096x2050xbf16>, tensor<4x512x2050xbf16>, tensor<4xi32>) -> tensor<4096x512xbf16>
  return %y : tensor<4096x512xbf16>
}
