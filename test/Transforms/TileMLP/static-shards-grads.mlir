// RUN: mxmoe-opt %s --mxmoe-tile-mlp --split-input-file | FileCheck %s

// With grad_accumulator = f32 an MX linear's weight gradient is f32. A
// parameter keeps it (summed into the f32 accumulator); where it meets the
// bf16 gradient of another use of the same weight, the bf16 one is widened.
// CHECK-LABEL: func.func @m.backward
// CHECK: %[[BW:.*]] = mxmoe.linear %{{.*}}, %{{.*}} {fqn = "m.b.weight_grad", precision = #mxmoe.precision<bf16>} : ({{.*}}) -> tensor<64x64xbf16>
// CHECK: %[[AW:.*]] = func.call @m.a.weight_grad(%{{.*}}, %{{.*}}) : (tensor<32x64xbf16>, tensor<32x64xbf16>) -> tensor<64x64xf32>
// CHECK: %[[BW32:.*]] = arith.extf %[[BW]] : tensor<64x64xbf16> to tensor<64x64xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[BW32]], %[[AW]] : tensor<64x64xf32>
// CHECK: arith.addf %{{.*}}, %[[SUM]] : tensor<64x64xf32>
func.func @shared_weight(%x: tensor<64x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w) {fqn = "m", grad_accumulator = f32}
      : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  ^bb0(%xs: tensor<?x64xbf16>, %ww: tensor<64x64xbf16>):
    %a = mxmoe.linear %xs, %ww {fqn = "m.a", precision = #mxmoe.precision<mxfp8>} : (tensor<?x64xbf16>, tensor<64x64xbf16>) -> tensor<?x64xbf16>
    %b = mxmoe.linear %a, %ww {fqn = "m.b", precision = #mxmoe.precision<bf16>} : (tensor<?x64xbf16>, tensor<64x64xbf16>) -> tensor<?x64xbf16>
    mxmoe.yield %b : tensor<?x64xbf16>
  }
  return %y : tensor<64x64xbf16>
}

// -----

// The weight of the MX linear is a slice of a fused parameter: the f32
// gradient of the slice takes the slice's type (bf16) before it is placed
// into the parameter's gradient.
// CHECK-LABEL: func.func @s.backward
// CHECK: %[[AW:.*]] = func.call @s.a.weight_grad(%{{.*}}, %{{.*}}) : ({{.*}}) -> tensor<64x64xf32>
// CHECK: %[[AWB:.*]] = arith.truncf %[[AW]] : tensor<64x64xf32> to tensor<64x64xbf16>
// CHECK: tensor.insert_slice %[[AWB]] into %{{.*}}[0, 0] [64, 64] [1, 1] : tensor<64x64xbf16> into tensor<128x64xbf16>
func.func @sliced_weight(%x: tensor<64x64xbf16>, %w: tensor<128x64xbf16>) -> tensor<64x64xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w) {fqn = "s", grad_accumulator = f32}
      : (tensor<64x64xbf16>, tensor<128x64xbf16>) -> tensor<64x64xbf16> {
  ^bb0(%xs: tensor<?x64xbf16>, %ww: tensor<128x64xbf16>):
    %w1 = tensor.extract_slice %ww[0, 0] [64, 64] [1, 1] : tensor<128x64xbf16> to tensor<64x64xbf16>
    %a = mxmoe.linear %xs, %w1 {fqn = "s.a", precision = #mxmoe.precision<mxfp8>} : (tensor<?x64xbf16>, tensor<64x64xbf16>) -> tensor<?x64xbf16>
    mxmoe.yield %a : tensor<?x64xbf16>
  }
  return %y : tensor<64x64xbf16>
}
