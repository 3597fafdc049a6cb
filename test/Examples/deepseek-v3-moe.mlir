// RUN: mxmoe-opt %mxmoe_src_root/examples/deepseek_v3_moe.mlir | mxmoe-opt | FileCheck %s
// CHECK-LABEL: func.func @attention
// CHECK: {fqn = "layers.3.attention.wkv_a"} : (tensor<4096x7168xbf16>, tensor<576x7168xbf16>) -> tensor<4096x576xbf16>
// CHECK-LABEL: func.func @moe
// CHECK: {fqn = "layers.3.moe.experts.w13"} : (tensor<32768x7168xbf16>, tensor<256x4096x7168xbf16>, tensor<256xi32>) -> tensor<32768x4096xbf16>
// CHECK-LABEL: func.func @output
