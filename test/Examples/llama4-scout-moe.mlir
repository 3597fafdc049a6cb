// The bundled default input (the README's run command) parses, verifies and
// round-trips; its linears and grouped GEMMs carry the TorchTitan FQNs.
// RUN: mxmoe-opt %mxmoe_src_root/examples/llama4_scout_moe.mlir | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %mxmoe_src_root/examples/llama4_scout_moe.mlir --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// CHECK-LABEL: func.func @attention
// CHECK: mxmoe.linear %{{.*}}, %{{.*}} {fqn = "layers.0.attention.wq"} : (tensor<8192x5120xbf16>, tensor<5120x5120xbf16>) -> tensor<8192x5120xbf16>
// CHECK: mxmoe.linear %{{.*}}, %{{.*}} {fqn = "layers.0.attention.wk"} : (tensor<8192x5120xbf16>, tensor<1024x5120xbf16>) -> tensor<8192x1024xbf16>
// CHECK: mxmoe.linear %{{.*}}, %{{.*}} {fqn = "layers.0.attention.wv"} : (tensor<8192x5120xbf16>, tensor<1024x5120xbf16>) -> tensor<8192x1024xbf16>
// CHECK: mxmoe.linear %{{.*}}, %{{.*}} {fqn = "layers.0.attention.wo"}

// CHECK-LABEL: func.func @moe
// CHECK: mxmoe.linear {{.*}} {fqn = "layers.0.moe.router.gate"} : (tensor<8192x5120xbf16>, tensor<16x5120xbf16>) -> tensor<8192x16xbf16>
// CHECK: mxmoe.scaled_grouped_matmul {{.*}} {fqn = "layers.0.moe.experts.w13"} : (tensor<8192x5120xbf16>, tensor<16x16384x5120xbf16>, tensor<16xi32>) -> tensor<8192x16384xbf16>
// CHECK: mxmoe.scaled_grouped_matmul {{.*}} {fqn = "layers.0.moe.experts.w2"} : (tensor<8192x8192xbf16>, tensor<16x5120x8192xbf16>, tensor<16xi32>) -> tensor<8192x5120xbf16>
// CHECK: mxmoe.tiled_mlp shards = auto ({{.*}}) {fqn = "layers.0.moe.shared_expert"}
// CHECK: ^bb0(%shard: tensor<?x5120xbf16>
// CHECK: mxmoe.yield %{{.*}} : tensor<?x5120xbf16>

// CHECK-LABEL: func.func @output
// CHECK: mxmoe.linear {{.*}} {fqn = "output"} : (tensor<8192x5120xbf16>, tensor<202048x5120xbf16>) -> tensor<8192x202048xbf16>
