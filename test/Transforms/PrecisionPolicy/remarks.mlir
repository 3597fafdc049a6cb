// RUN: mxmoe-opt %s --mxmoe-precision-policy="remarks=false" -verify-diagnostics -o /dev/null
// RUN: mxmoe-opt %s --mxmoe-precision-policy="report=-" 2>/dev/null | mxmoe-opt | FileCheck %s --check-prefix=IR
// RUN: mxmoe-opt %s --mxmoe-precision-policy="report=- remarks=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STDERR

// remarks=false: no remark per decision; a routed-expert GEMM that the
// legality rule keeps in bf16 (K = 2050, not a multiple of 32) is still a
// warning: it gets no MX kernels. report=- writes the JSON to stderr, so
// the IR on stdout still parses.

// IR-LABEL: func.func @f(
// IR: mxmoe.scaled_grouped_matmul {{.*}}precision = #mxmoe.precision<mxfp8>
// IR: mxmoe.scaled_grouped_matmul {{.*}}precision = #mxmoe.precision<bf16>

// STDERR: warning: mxmoe-precision-policy: routed-expert GEMM 'layers.0.moe.experts.odd' stays bf16 (rule legality: K = 2050 is not a multiple of 32
// STDERR: "decisions": [
// STDERR: "fqn": "layers.0.moe.experts.w13",
// STDERR: "fqn": "layers.0.moe.experts.odd",
// STDERR: "rule": "legality"
// STDERR-NOT: remark:

func.func @f(%x: tensor<8192x5120xbf16>, %w13: tensor<16x16384x5120xbf16>, %o: tensor<16xi32>,
             %y: tensor<4096x2050xbf16>, %w: tensor<4x512x2050xbf16>, %o4: tensor<4xi32>) {
  %h = mxmoe.scaled_grouped_matmul %x, %w13, %o {fqn = "layers.0.moe.experts.w13"} : (tensor<8192x5120xbf16>, tensor<16x16384x5120xbf16>, tensor<16xi32>) -> tensor<8192x16384xbf16>
  // expected-warning @+1 {{mxmoe-precision-policy: routed-expert GEMM 'layers.0.moe.experts.odd' stays bf16 (rule legality: K = 2050 is not a multiple of 32 (MX blocks along every GEMM's contraction axis)): it gets no MX kernels and stays in the host IR}}
  %g = mxmoe.scaled_grouped_matmul %y, %w, %o4 {fqn = "layers.0.moe.experts.odd"} : (tensor<4096x2050xbf16>, tensor<4x512x2050xbf16>, tensor<4xi32>) -> tensor<4096x512xbf16>
  return
}
