// RUN: mxmoe-opt %s -split-input-file -verify-diagnostics

// Region rules of mxmoe.fused_quantize (MXMoEMXOps.cpp:
// FusedQuantizeOp::verifyRegions).

func.func @producer_not_elementwise(%a: tensor<64x256xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {
  %q, %s = mxmoe.fused_quantize (%a) : (tensor<64x256xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {
  ^bb0(%x: tensor<64x256xbf16>):
    %init = tensor.empty() : tensor<64x256xbf16>
    // expected-error @+1 {{'linalg.generic' op in mxmoe.fused_quantize must use identity indexing maps}}
    %p = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<64x256xbf16>) outs(%init : tensor<64x256xbf16>) {
    ^bb0(%u: bf16, %out: bf16):
      linalg.yield %u : bf16
    } -> tensor<64x256xbf16>
    %q0, %s0 = mxmoe.quantize %p {axis = 1 : i64}
        : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
    mxmoe.yield %q0, %s0 : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
  }
  return %q, %s : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
}

// -----

func.func @slice_not_full_rows(%a: tensor<64x512xbf16>) -> (tensor<32x256xf8E4M3FN>, tensor<32x8xf8E8M0FNU>) {
  %q, %s = mxmoe.fused_quantize (%a) : (tensor<64x512xbf16>) -> (tensor<32x256xf8E4M3FN>, tensor<32x8xf8E8M0FNU>) {
  ^bb0(%x: tensor<64x512xbf16>):
    %half = tensor.extract_slice %x[0, 256] [32, 256] [1, 1] : tensor<64x512xbf16> to tensor<32x256xbf16>
    %init = tensor.empty() : tensor<32x256xbf16>
    // expected-error @+1 {{'linalg.generic' op input #0 must be a block argument of the enclosing mxmoe.fused_quantize or a tensor.extract_slice of one at [0, c] over all its rows with unit strides}}
    %p = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%half : tensor<32x256xbf16>) outs(%init : tensor<32x256xbf16>) {
    ^bb0(%u: bf16, %out: bf16):
      linalg.yield %u : bf16
    } -> tensor<32x256xbf16>
    %q0, %s0 = mxmoe.quantize %p {axis = 1 : i64}
        : tensor<32x256xbf16> -> tensor<32x256xf8E4M3FN>, tensor<32x8xf8E8M0FNU>
    mxmoe.yield %q0, %s0 : tensor<32x256xf8E4M3FN>, tensor<32x8xf8E8M0FNU>
  }
  return %q, %s : tensor<32x256xf8E4M3FN>, tensor<32x8xf8E8M0FNU>
}

// -----

func.func @producer_with_memory_op(%a: tensor<64x256xbf16>, %m: memref<4xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {
  %q, %s = mxmoe.fused_quantize (%a) : (tensor<64x256xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {
  ^bb0(%x: tensor<64x256xbf16>):
    %init = tensor.empty() : tensor<64x256xbf16>
    %p = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<64x256xbf16>) outs(%init : tensor<64x256xbf16>) {
    ^bb0(%u: bf16, %out: bf16):
      // expected-error @+1 {{'linalg.index' op is not allowed in the producer of mxmoe.fused_quantize (only arith and math ops on scalars)}}
      %i = linalg.index 0 : index
      %c = arith.index_cast %i : index to i32
      %f = arith.sitofp %c : i32 to bf16
      linalg.yield %f : bf16
    } -> tensor<64x256xbf16>
    %q0, %s0 = mxmoe.quantize %p {axis = 1 : i64}
        : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
    mxmoe.yield %q0, %s0 : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
  }
  return %q, %s : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
}

// -----

func.func @quantize_other_value(%a: tensor<64x256xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {
  %q, %s = mxmoe.fused_quantize (%a) : (tensor<64x256xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {
  ^bb0(%x: tensor<64x256xbf16>):
    %init = tensor.empty() : tensor<64x256xbf16>
    %p = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<64x256xbf16>) outs(%init : tensor<64x256xbf16>) {
    ^bb0(%u: bf16, %out: bf16):
      linalg.yield %u : bf16
    } -> tensor<64x256xbf16>
    // expected-error @+1 {{'mxmoe.quantize' op in mxmoe.fused_quantize must quantize the producer's result}}
    %q0, %s0 = mxmoe.quantize %x {axis = 1 : i64}
        : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
    mxmoe.yield %q0, %s0 : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
  }
  return %q, %s : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
}

// -----

func.func @yield_partial(%a: tensor<64x256xbf16>) -> tensor<64x256xf8E4M3FN> {
  %q = mxmoe.fused_quantize (%a) : (tensor<64x256xbf16>) -> (tensor<64x256xf8E4M3FN>) {
  ^bb0(%x: tensor<64x256xbf16>):
    %init = tensor.empty() : tensor<64x256xbf16>
    %p = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<64x256xbf16>) outs(%init : tensor<64x256xbf16>) {
    ^bb0(%u: bf16, %out: bf16):
      linalg.yield %u : bf16
    } -> tensor<64x256xbf16>
    %q0, %s0 = mxmoe.quantize %p {axis = 1 : i64}
        : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
    // expected-error @+1 {{'mxmoe.yield' op in mxmoe.fused_quantize must yield the (data, scales) of every quantization, in order}}
    mxmoe.yield %q0 : tensor<64x256xf8E4M3FN>
  }
  return %q : tensor<64x256xf8E4M3FN>
}

// -----

func.func @no_quantization(%a: tensor<64x256xbf16>) -> tensor<64x256xbf16> {
  // expected-error @+1 {{'mxmoe.fused_quantize' op body must hold, in order, column slices of its arguments (tensor.extract_slice) and scalar constants, one or more pairs of tensor.empty and linalg.generic (with a tensor.concat of their results along dim 1 when more than one) or one mxmoe.gather_rows, one or more mxmoe.quantize of the result and mxmoe.yield}}
  %r = mxmoe.fused_quantize (%a) : (tensor<64x256xbf16>) -> (tensor<64x256xbf16>) {
  ^bb0(%x: tensor<64x256xbf16>):
    %init = tensor.empty() : tensor<64x256xbf16>
    %p = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<64x256xbf16>) outs(%init : tensor<64x256xbf16>) {
    ^bb0(%u: bf16, %out: bf16):
      linalg.yield %u : bf16
    } -> tensor<64x256xbf16>
    mxmoe.yield %p : tensor<64x256xbf16>
  }
  return %r : tensor<64x256xbf16>
}

// -----

func.func @arg_type(%a: tensor<64x256xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {
  // expected-error @+1 {{'mxmoe.fused_quantize' op body argument #0 must have type 'tensor<64x256xbf16>', got 'tensor<64x256xf32>'}}
  %q, %s = mxmoe.fused_quantize (%a) : (tensor<64x256xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {
  ^bb0(%x: tensor<64x256xf32>):
    %init = tensor.empty() : tensor<64x256xf32>
    %p = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<64x256xf32>) outs(%init : tensor<64x256xf32>) {
    ^bb0(%u: f32, %out: f32):
      linalg.yield %u : f32
    } -> tensor<64x256xf32>
    %q0, %s0 = mxmoe.quantize %p {axis = 1 : i64}
        : tensor<64x256xf32> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
    mxmoe.yield %q0, %s0 : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
  }
  return %q, %s : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
}

// -----

// Two parts without the concat that joins them.

func.func @parts_without_concat(%a: tensor<64x128xbf16>) -> (tensor<64x128xf8E4M3FN>, tensor<64x4xf8E8M0FNU>) {
  // expected-error @+1 {{body must hold, in order}}
  %q, %s = mxmoe.fused_quantize (%a) : (tensor<64x128xbf16>) -> (tensor<64x128xf8E4M3FN>, tensor<64x4xf8E8M0FNU>) {
  ^bb0(%x: tensor<64x128xbf16>):
    %init0 = tensor.empty() : tensor<64x128xbf16>
    %p0 = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<64x128xbf16>) outs(%init0 : tensor<64x128xbf16>) {
    ^bb0(%u: bf16, %out: bf16):
      linalg.yield %u : bf16
    } -> tensor<64x128xbf16>
    %init1 = tensor.empty() : tensor<64x128xbf16>
    %p1 = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<64x128xbf16>) outs(%init1 : tensor<64x128xbf16>) {
    ^bb0(%u: bf16, %out: bf16):
      linalg.yield %u : bf16
    } -> tensor<64x128xbf16>
    %q0, %s0 = mxmoe.quantize %p1 {axis = 1 : i64} : tensor<64x128xbf16> -> tensor<64x128xf8E4M3FN>, tensor<64x4xf8E8M0FNU>
    mxmoe.yield %q0, %s0 : tensor<64x128xf8E4M3FN>, tensor<64x4xf8E8M0FNU>
  }
  return %q, %s : tensor<64x128xf8E4M3FN>, tensor<64x4xf8E8M0FNU>
}

// -----

func.func @concat_out_of_order(%a: tensor<64x128xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {
  %q, %s = mxmoe.fused_quantize (%a) : (tensor<64x128xbf16>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {
  ^bb0(%x: tensor<64x128xbf16>):
    %init0 = tensor.empty() : tensor<64x128xbf16>
    %p0 = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<64x128xbf16>) outs(%init0 : tensor<64x128xbf16>) {
    ^bb0(%u: bf16, %out: bf16):
      linalg.yield %u : bf16
    } -> tensor<64x128xbf16>
    %init1 = tensor.empty() : tensor<64x128xbf16>
    %p1 = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<64x128xbf16>) outs(%init1 : tensor<64x128xbf16>) {
    ^bb0(%u: bf16, %out: bf16):
      linalg.yield %u : bf16
    } -> tensor<64x128xbf16>
    // expected-error @+1 {{'tensor.concat' op in mxmoe.fused_quantize must concatenate the results of the linalg.generic ops before it, in order, each used by it alone}}
    %c = tensor.concat dim(1) %p1, %p0 : (tensor<64x128xbf16>, tensor<64x128xbf16>) -> tensor<64x256xbf16>
    %q0, %s0 = mxmoe.quantize %c {axis = 1 : i64} : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
    mxmoe.yield %q0, %s0 : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
  }
  return %q, %s : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
}

// -----

func.func @concat_dim0(%a: tensor<64x128xbf16>) -> (tensor<128x128xf8E4M3FN>, tensor<128x4xf8E8M0FNU>) {
  %q, %s = mxmoe.fused_quantize (%a) : (tensor<64x128xbf16>) -> (tensor<128x128xf8E4M3FN>, tensor<128x4xf8E8M0FNU>) {
  ^bb0(%x: tensor<64x128xbf16>):
    %init0 = tensor.empty() : tensor<64x128xbf16>
    %p0 = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<64x128xbf16>) outs(%init0 : tensor<64x128xbf16>) {
    ^bb0(%u: bf16, %out: bf16):
      linalg.yield %u : bf16
    } -> tensor<64x128xbf16>
    %init1 = tensor.empty() : tensor<64x128xbf16>
    %p1 = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<64x128xbf16>) outs(%init1 : tensor<64x128xbf16>) {
    ^bb0(%u: bf16, %out: bf16):
      linalg.yield %u : bf16
    } -> tensor<64x128xbf16>
    // expected-error @+1 {{'tensor.concat' op in mxmoe.fused_quantize must concatenate along dim 1}}
    %c = tensor.concat dim(0) %p0, %p1 : (tensor<64x128xbf16>, tensor<64x128xbf16>) -> tensor<128x128xbf16>
    %q0, %s0 = mxmoe.quantize %c {axis = 1 : i64} : tensor<128x128xbf16> -> tensor<128x128xf8E4M3FN>, tensor<128x4xf8E8M0FNU>
    mxmoe.yield %q0, %s0 : tensor<128x128xf8E4M3FN>, tensor<128x4xf8E8M0FNU>
  }
  return %q, %s : tensor<128x128xf8E4M3FN>, tensor<128x4xf8E8M0FNU>
}

// -----

func.func @gather_then_generic(%x: tensor<64x256xbf16>, %idx: tensor<128xi32>, %o: tensor<2xi32>) -> (tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>) {
  // expected-error @+1 {{body must hold, in order, column slices of its arguments (tensor.extract_slice) and scalar constants, one or more pairs of tensor.empty and linalg.generic (with a tensor.concat of their results along dim 1 when more than one) or one mxmoe.gather_rows, one or more mxmoe.quantize of the result and mxmoe.yield}}
  %q, %s = mxmoe.fused_quantize (%x, %idx, %o) : (tensor<64x256xbf16>, tensor<128xi32>, tensor<2xi32>) -> (tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>) {
  ^bb0(%a: tensor<64x256xbf16>, %i: tensor<128xi32>, %oo: tensor<2xi32>):
    %c = arith.constant 2.0 : f32
    %g = mxmoe.gather_rows %a[%i] {top_k = 2 : i64} : tensor<64x256xbf16>, tensor<128xi32> -> tensor<128x256xbf16>
    %q0, %s0 = mxmoe.quantize %g {axis = 1 : i64} : tensor<128x256xbf16> -> tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>
    mxmoe.yield %q0, %s0 : tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>
  }
  return %q, %s : tensor<128x256xf8E4M3FN>, tensor<128x8xf8E8M0FNU>
}

// -----

func.func @gather_not_quantized(%x: tensor<64x256xbf16>, %idx: tensor<128xi32>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {
  %q, %s = mxmoe.fused_quantize (%x, %idx) : (tensor<64x256xbf16>, tensor<128xi32>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>) {
  ^bb0(%a: tensor<64x256xbf16>, %i: tensor<128xi32>):
    %g = mxmoe.gather_rows %a[%i] {top_k = 2 : i64} : tensor<64x256xbf16>, tensor<128xi32> -> tensor<128x256xbf16>
    // expected-error @+1 {{in mxmoe.fused_quantize must quantize the producer's result}}
    %q0, %s0 = mxmoe.quantize %a {axis = 1 : i64} : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
    mxmoe.yield %q0, %s0 : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
  }
  return %q, %s : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
}
