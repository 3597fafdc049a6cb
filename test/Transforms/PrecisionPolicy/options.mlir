// RUN: mxmoe-opt %s --mxmoe-precision-policy="default-excludes=false" --verify-diagnostics --split-input-file | FileCheck %s --check-prefix=LEGAL
// RUN: mxmoe-opt %s --mxmoe-precision-policy="include=experts default-excludes=false" --split-input-file 2>/dev/null | FileCheck %s --check-prefix=INCLUDE
// RUN: mxmoe-opt %s --mxmoe-precision-policy="min-dim=128 default-excludes=false" --split-input-file 2>/dev/null | FileCheck %s --check-prefix=MINDIM
// RUN: mxmoe-opt %s --mxmoe-precision-policy="min-dim=128 default-excludes=false" --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=MINDIM-REMARK
// RUN: mxmoe-opt %s --mxmoe-precision-policy="precision=mxfp4 rounding=floor default-excludes=false exclude=layers.*.moe.router" --split-input-file 2>/dev/null | FileCheck %s --check-prefix=FP4
// RUN: mxmoe-opt %s --mxmoe-precision-policy="precision=mxfp4 default-excludes=false exclude=layers.*.moe.router" --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=FP4-REMARK

// With the excludes cleared, legality still keeps the 16-expert router gate
// in bf16 (N = 16 is not a multiple of 32) instead of failing.
// LEGAL-LABEL: func.func @router
// LEGAL: {fqn = "layers.0.moe.router.gate", precision = #mxmoe.precision<bf16>}
// INCLUDE-LABEL: func.func @router
// INCLUDE: {fqn = "layers.0.moe.router.gate", precision = #mxmoe.precision<bf16>}
// FP4-REMARK: remark: mxmoe-precision-policy: layers.0.moe.router.gate -> bf16 (rule exclude: fqn matches exclude pattern 'layers.*.moe.router')
// FP4-LABEL: func.func @router
// FP4: {fqn = "layers.0.moe.router.gate", precision = #mxmoe.precision<bf16>}
func.func @router(%x: tensor<256x64xbf16>, %w: tensor<16x64xbf16>) {
  // expected-remark @+1 {{layers.0.moe.router.gate -> bf16 (rule legality: N = 16 is not a multiple of 32 (MX blocks along every GEMM's contraction axis))}}
  %l = mxmoe.linear %x, %w {fqn = "layers.0.moe.router.gate"} : (tensor<256x64xbf16>, tensor<16x64xbf16>) -> tensor<256x16xbf16>
  return
}

// -----

// LEGAL-LABEL: func.func @mixed
// LEGAL: {fqn = "layers.1.attention.wk", precision = #mxmoe.precision<mxfp8>
// LEGAL: {fqn = "layers.1.moe.experts.w1", precision = #mxmoe.precision<mxfp8>
// LEGAL: {fqn = "layers.1.moe.shared_expert.w1", precision = #mxmoe.precision<mxfp8>
// INCLUDE-LABEL: func.func @mixed
// INCLUDE: {fqn = "layers.1.attention.wk", precision = #mxmoe.precision<bf16>}
// INCLUDE: {fqn = "layers.1.moe.experts.w1", precision = #mxmoe.precision<mxfp8>
// INCLUDE: {fqn = "layers.1.moe.shared_expert.w1", precision = #mxmoe.precision<bf16>}
// MINDIM-LABEL: func.func @mixed
// MINDIM: {fqn = "layers.1.attention.wk", precision = #mxmoe.precision<mxfp8>
// MINDIM: {fqn = "layers.1.moe.experts.w1", precision = #mxmoe.precision<mxfp8>
// MINDIM: {fqn = "layers.1.moe.shared_expert.w1", precision = #mxmoe.precision<bf16>}
// MINDIM-REMARK: mxmoe-precision-policy: layers.1.moe.shared_expert.w1 -> bf16 (rule min-dim: K = 96 < min-dim = 128)
// FP4-LABEL: func.func @mixed
// FP4: {fqn = "layers.1.attention.wk", precision = #mxmoe.precision<mxfp4>, recipe = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = floor>}
// FP4: {fqn = "layers.1.moe.experts.w1", precision = #mxmoe.precision<mxfp4>, recipe = #mxmoe.mx_recipe<f4E2M1FN, block_size = 32, rounding = floor>}
// FP4: {fqn = "layers.1.moe.shared_expert.w1", precision = #mxmoe.precision<mxfp4>
func.func @mixed(%x: tensor<256x128xbf16>, %w: tensor<128x128xbf16>, %we: tensor<4x128x128xbf16>,
                 %o: tensor<4xi32>, %small: tensor<64x96xbf16>, %ws: tensor<32x96xbf16>) {
  // expected-remark @+1 {{layers.1.attention.wk -> mxfp8 (rule default}}
  %a = mxmoe.linear %x, %w {fqn = "layers.1.attention.wk"} : (tensor<256x128xbf16>, tensor<128x128xbf16>) -> tensor<256x128xbf16>
  // expected-remark @+1 {{layers.1.moe.experts.w1 -> mxfp8 (rule default}}
  %b = mxmoe.scaled_grouped_matmul %x, %we, %o {fqn = "layers.1.moe.experts.w1"} : (tensor<256x128xbf16>, tensor<4x128x128xbf16>, tensor<4xi32>) -> tensor<256x128xbf16>
  // A shared expert with K = 96 and N = 32 is legal (multiples of 32) but
  // below min-dim = 128 (K is checked first).
  // expected-remark @+1 {{layers.1.moe.shared_expert.w1 -> mxfp8 (rule default}}
  %c = mxmoe.linear %small, %ws {fqn = "layers.1.moe.shared_expert.w1"} : (tensor<64x96xbf16>, tensor<32x96xbf16>) -> tensor<64x32xbf16>
  return
}

