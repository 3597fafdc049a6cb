// RUN: mxmoe-opt %s --mxmoe-expand-scaled-matmul | FileCheck %s

// A dense MX linear is the one-group grouped GEMM: [B, S, K] tokens
// flattened to [B*S, K], the weight viewed as [1, N, K], offsets = [B*S].
// CHECK-LABEL: func.func @lin
// CHECK: call @layers.0.attention.wq.forward(%arg0, %arg1, %arg2)
// CHECK: mxmoe.linear {{.*}}fqn = "layers.0.attention.wk", precision = #mxmoe.precision<bf16>
// CHECK-LABEL: func.func @layers.0.attention.wq.forward(%{{.*}}: tensor<2x128x256xbf16>, %{{.*}}: tensor<512x256xbf16>, %{{.*}}: tensor<512xbf16>) -> tensor<2x128x512xbf16>
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<2x128x256xbf16> into tensor<256x256xbf16>
// CHECK: tensor.expand_shape %arg1 {{\[\[}}0, 1], [2]] output_shape [1, 512, 256]
// CHECK: %[[OFFS:.*]] = arith.constant dense<256> : tensor<1xi32>
// CHECK: mxmoe.grouped_matmul {{.*}} offsets %[[OFFS]] {{.*}} -> tensor<256x512xbf16>
// CHECK: linalg.broadcast ins(%arg2 : tensor<512xbf16>)
// CHECK: arith.addf
// CHECK: tensor.expand_shape {{.*}} output_shape [2, 128, 512]
// CHECK-LABEL: func.func @layers.0.attention.wq.input_grad(%{{.*}}: tensor<2x128x512xbf16>, %{{.*}}: tensor<512x256xbf16>) -> tensor<2x128x256xbf16>
// CHECK: mxmoe.quantize %{{.*}} {axis = 1 : i64} : tensor<1x512x256xbf16> -> tensor<1x256x512xf8E4M3FN>
// CHECK-LABEL: func.func @layers.0.attention.wq.weight_grad(%{{.*}}: tensor<2x128x512xbf16>, %{{.*}}: tensor<2x128x256xbf16>) -> tensor<512x256xbf16>
// CHECK: mxmoe.grouped_matmul {{.*}} -> tensor<1x512x256xbf16>
// CHECK: tensor.collapse_shape {{.*}} : tensor<1x512x256xbf16> into tensor<512x256xbf16>
// A biased linear also gets d(bias) = sum of grad_out over the tokens,
// accumulated in f32 (host IR, no quantization).
// CHECK-LABEL: func.func @layers.0.attention.wq.bias_grad(%{{.*}}: tensor<2x128x512xbf16>) -> tensor<512xbf16> attributes {mxmoe.fqn = "layers.0.attention.wq", mxmoe.pass = "bias_grad"}
// CHECK: linalg.reduce ins(%{{.*}} : tensor<256x512xbf16>) outs(%{{.*}} : tensor<512xf32>) dimensions = [0]
// CHECK: arith.extf
// CHECK: arith.truncf %{{.*}} : tensor<512xf32> to tensor<512xbf16>
func.func @lin(%x: tensor<2x128x256xbf16>, %w: tensor<512x256xbf16>, %b: tensor<512xbf16>,
               %wk: tensor<128x256xbf16>) -> tensor<2x128x512xbf16> {
  %y = mxmoe.linear %x, %w bias %b {fqn = "layers.0.attention.wq", precision = #mxmoe.precision<mxfp8>}
      : (tensor<2x128x256xbf16>, tensor<512x256xbf16>, tensor<512xbf16>) -> tensor<2x128x512xbf16>
  %k = mxmoe.linear %x, %wk {fqn = "layers.0.attention.wk", precision = #mxmoe.precision<bf16>}
      : (tensor<2x128x256xbf16>, tensor<128x256xbf16>) -> tensor<2x128x128xbf16>
  return %y : tensor<2x128x512xbf16>
}
