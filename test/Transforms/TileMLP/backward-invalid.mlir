// RUN: mxmoe-opt %s --mxmoe-tile-mlp --split-input-file --verify-diagnostics


func.func @no_rule(%x: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %y = mxmoe.tiled_mlp shards = 2 (%x) {fqn = "t"} : (tensor<64x32xf32>) -> tensor<64x32xf32> {
  ^bb0(%xs: tensor<?x32xf32>):
    // expected-error @+1 {{'math.sin' op mxmoe-tile-mlp backward: no gradient rule for this op in a tiled_mlp body (supported: arith.addf/subf/mulf/divf/negf, math.exp, math.tanh, tensor.extract_slice, expand_shape, collapse_shape, mxmoe.linear, scaled_grouped_matmul, swiglu_experts, mxmoe.router_topk, gather_rows, combine_rows, linalg.reduce sums)}}
    %t = math.sin %xs : tensor<?x32xf32>
    mxmoe.yield %t : tensor<?x32xf32>
  }
  return %y : tensor<64x32xf32>
}

// -----

// A declaration of the backward function with the wrong type.
// expected-error @+1 {{'func.func' op mxmoe-tile-mlp: the declaration of 'd.backward' must have type '(tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>'}}
func.func private @d.backward(tensor<64x32xf32>) -> tensor<64x32xf32>
func.func @decl(%x: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %y = mxmoe.tiled_mlp shards = 2 (%x) {fqn = "d"} : (tensor<64x32xf32>) -> tensor<64x32xf32> {
  ^bb0(%xs: tensor<?x32xf32>):
    mxmoe.yield %xs : tensor<?x32xf32>
  }
  return %y : tensor<64x32xf32>
}
