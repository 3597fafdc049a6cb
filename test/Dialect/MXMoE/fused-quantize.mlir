// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// mxmoe.fused_quantize: an elementwise producer and the quantizations of
// its result in one op (MXMoEOps.td), here the SwiGLU of a gate/up GEMM
// result h = [gate | up] computed as PyTorch's F.silu(gate) * up does (f32
// math, one bf16 rounding after silu and one after the product), quantized
// 1x128 with M-grouped blocked scales (the down projection's lhs) and
// rowwise MX with row-major scales.

// CHECK-LABEL: func.func @swiglu_mx128(
// CHECK:         mxmoe.fused_quantize(%{{.*}}, %{{.*}}) : (tensor<256x1536xbf16>, tensor<4xi32>) -> (tensor<256x768xf8E4M3FN>, tensor<1024x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>)
// CHECK:         ^bb0(%[[H:.*]]: tensor<256x1536xbf16>, %[[O:.*]]: tensor<4xi32>):
// CHECK:           tensor.extract_slice %[[H]][0, 768] [256, 768] [1, 1]
// CHECK:           tensor.empty() : tensor<256x768xbf16>
// CHECK:           linalg.generic
// CHECK:             math.exp
// CHECK:           mxmoe.quantize %{{.*}} offsets(%[[O]] : tensor<4xi32>)
// CHECK:           mxmoe.yield
func.func @swiglu_mx128(%h: tensor<256x1536xbf16>, %offs: tensor<4xi32>)
    -> (tensor<256x768xf8E4M3FN>, tensor<1024x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>) {
  %q, %s = mxmoe.fused_quantize (%h, %offs) : (tensor<256x1536xbf16>, tensor<4xi32>)
      -> (tensor<256x768xf8E4M3FN>, tensor<1024x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>) {
  ^bb0(%hh: tensor<256x1536xbf16>, %o: tensor<4xi32>):
    %gate = tensor.extract_slice %hh[0, 0] [256, 768] [1, 1] : tensor<256x1536xbf16> to tensor<256x768xbf16>
    %up = tensor.extract_slice %hh[0, 768] [256, 768] [1, 1] : tensor<256x1536xbf16> to tensor<256x768xbf16>
    %init = tensor.empty() : tensor<256x768xbf16>
    %act = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>,
                         affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%gate, %up : tensor<256x768xbf16>, tensor<256x768xbf16>)
        outs(%init : tensor<256x768xbf16>) {
    ^bb0(%g: bf16, %u: bf16, %out: bf16):
      %one = arith.constant 1.0 : f32
      %gf = arith.extf %g : bf16 to f32
      %ng = arith.negf %gf : f32
      %e = math.exp %ng : f32
      %den = arith.addf %one, %e : f32
      %silu = arith.divf %gf, %den : f32
      %sb = arith.truncf %silu : f32 to bf16
      %sf = arith.extf %sb : bf16 to f32
      %uf = arith.extf %u : bf16 to f32
      %p = arith.mulf %sf, %uf : f32
      %pb = arith.truncf %p : f32 to bf16
      linalg.yield %pb : bf16
    } -> tensor<256x768xbf16>
    %q0, %s0 = mxmoe.quantize %act offsets(%o : tensor<4xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>}
        : tensor<256x768xbf16> -> tensor<256x768xf8E4M3FN>, tensor<1024x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
    mxmoe.yield %q0, %s0 : tensor<256x768xf8E4M3FN>, tensor<1024x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  }
  return %q, %s : tensor<256x768xf8E4M3FN>, tensor<1024x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
}

// Two inputs of their own, two quantizations of the one product (MX and
// MX128 rowwise, row-major scales).

// CHECK-LABEL: func.func @product_two_quantizations(
// CHECK:         mxmoe.fused_quantize(%{{.*}}, %{{.*}}) : (tensor<64x256xbf16>, tensor<64x256xf32>) -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E5M2>, tensor<64x8xf8E8M0FNU>)
// CHECK-COUNT-2:   mxmoe.quantize
func.func @product_two_quantizations(%a: tensor<64x256xbf16>, %b: tensor<64x256xf32>)
    -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E5M2>, tensor<64x8xf8E8M0FNU>) {
  %r:4 = mxmoe.fused_quantize (%a, %b) : (tensor<64x256xbf16>, tensor<64x256xf32>)
      -> (tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E5M2>, tensor<64x8xf8E8M0FNU>) {
  ^bb0(%x: tensor<64x256xbf16>, %y: tensor<64x256xf32>):
    %init = tensor.empty() : tensor<64x256xf32>
    %p = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>,
                         affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%x, %y : tensor<64x256xbf16>, tensor<64x256xf32>) outs(%init : tensor<64x256xf32>) {
    ^bb0(%u: bf16, %v: f32, %out: f32):
      %uf = arith.extf %u : bf16 to f32
      %m = arith.mulf %uf, %v : f32
      linalg.yield %m : f32
    } -> tensor<64x256xf32>
    %q0, %s0 = mxmoe.quantize %p {axis = 1 : i64}
        : tensor<64x256xf32> -> tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>
    %q1, %s1 = mxmoe.quantize %p {axis = 1 : i64, rounding = #mxmoe.rounding<floor>, scale_tile = array<i64: 1, 128>}
        : tensor<64x256xf32> -> tensor<64x256xf8E5M2>, tensor<64x8xf8E8M0FNU>
    mxmoe.yield %q0, %s0, %q1, %s1 : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E5M2>, tensor<64x8xf8E8M0FNU>
  }
  return %r#0, %r#1, %r#2, %r#3 : tensor<64x256xf8E4M3FN>, tensor<64x8xf8E8M0FNU>, tensor<64x256xf8E5M2>, tensor<64x8xf8E8M0FNU>
}

// The SwiGLU quantized along its token axis in token groups (the weight
// gradient's operand: 1x128 windows, data transposed, per-K-group blocked
// scales).

// CHECK-LABEL: func.func @swiglu_mx128_jagged(
// CHECK:         mxmoe.fused_quantize(%{{.*}}, %{{.*}}) : (tensor<256x1536xbf16>, tensor<4xi32>) -> (tensor<768x384xf8E4M3FN>, tensor<768x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>)
// CHECK:           mxmoe.quantize %{{.*}} offsets(%{{.*}} : tensor<4xi32>) {axis = 0 : i64
func.func @swiglu_mx128_jagged(%h: tensor<256x1536xbf16>, %offs: tensor<4xi32>)
    -> (tensor<768x384xf8E4M3FN>, tensor<768x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>) {
  %q, %s = mxmoe.fused_quantize (%h, %offs) : (tensor<256x1536xbf16>, tensor<4xi32>)
      -> (tensor<768x384xf8E4M3FN>, tensor<768x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>) {
  ^bb0(%hh: tensor<256x1536xbf16>, %o: tensor<4xi32>):
    %gate = tensor.extract_slice %hh[0, 0] [256, 768] [1, 1] : tensor<256x1536xbf16> to tensor<256x768xbf16>
    %up = tensor.extract_slice %hh[0, 768] [256, 768] [1, 1] : tensor<256x1536xbf16> to tensor<256x768xbf16>
    %init = tensor.empty() : tensor<256x768xbf16>
    %act = linalg.generic {
        indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>,
                         affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%gate, %up : tensor<256x768xbf16>, tensor<256x768xbf16>)
        outs(%init : tensor<256x768xbf16>) {
    ^bb0(%g: bf16, %u: bf16, %out: bf16):
      %one = arith.constant 1.0 : f32
      %gf = arith.extf %g : bf16 to f32
      %ng = arith.negf %gf : f32
      %e = math.exp %ng : f32
      %den = arith.addf %one, %e : f32
      %silu = arith.divf %gf, %den : f32
      %sb = arith.truncf %silu : f32 to bf16
      %sf = arith.extf %sb : bf16 to f32
      %uf = arith.extf %u : bf16 to f32
      %p = arith.mulf %sf, %uf : f32
      %pb = arith.truncf %p : f32 to bf16
      linalg.yield %pb : bf16
    } -> tensor<256x768xbf16>
    %q0, %s0 = mxmoe.quantize %act offsets(%o : tensor<4xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>}
        : tensor<256x768xbf16> -> tensor<768x384xf8E4M3FN>, tensor<768x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
    mxmoe.yield %q0, %s0 : tensor<768x384xf8E4M3FN>, tensor<768x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
  }
  return %q, %s : tensor<768x384xf8E4M3FN>, tensor<768x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
}

// A producer of two parts: the SwiGLU's backward dh = [d gate | d up]
// (test/Dialect/MXMoE/fuse-quantize-producers.mlir forms it), two
// formulas joined by a tensor.concat along dim 1, quantized rowwise and
// along the token axis.

// CHECK-LABEL: func.func @dswiglu_mx128(
// CHECK:         mxmoe.fused_quantize(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK-COUNT-2:   linalg.generic
// CHECK:           tensor.concat dim(1)
// CHECK-COUNT-2:   mxmoe.quantize %concat
func.func @dswiglu_mx128(%arg0: tensor<256x768xbf16>, %arg1: tensor<256x1536xbf16>, %arg2: tensor<4xi32>) -> (tensor<256x1536xf8E4M3FN>, tensor<1024x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<1536x384xf8E4M3FN>, tensor<1536x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>) {
  %0:4 = mxmoe.fused_quantize(%arg0, %arg1, %arg2) : (tensor<256x768xbf16>, tensor<256x1536xbf16>, tensor<4xi32>) -> (tensor<256x1536xf8E4M3FN>, tensor<1024x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<1536x384xf8E4M3FN>, tensor<1536x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>) {
  ^bb0(%arg3: tensor<256x768xbf16>, %arg4: tensor<256x1536xbf16>, %arg5: tensor<4xi32>):
    %cst = arith.constant 1.000000e+00 : f32
    %extracted_slice = tensor.extract_slice %arg4[0, 768] [256, 768] [1, 1] : tensor<256x1536xbf16> to tensor<256x768xbf16>
    %extracted_slice_0 = tensor.extract_slice %arg4[0, 0] [256, 768] [1, 1] : tensor<256x1536xbf16> to tensor<256x768xbf16>
    %1 = tensor.empty() : tensor<256x768xbf16>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg3, %extracted_slice, %extracted_slice_0 : tensor<256x768xbf16>, tensor<256x768xbf16>, tensor<256x768xbf16>) outs(%1 : tensor<256x768xbf16>) {
    ^bb0(%in: bf16, %in_3: bf16, %in_4: bf16, %out: bf16):
      %5 = arith.extf %in_4 : bf16 to f32
      %6 = arith.negf %5 : f32
      %7 = math.exp %6 : f32
      %8 = arith.addf %7, %cst : f32
      %9 = arith.divf %cst, %8 : f32
      %10 = arith.extf %in : bf16 to f32
      %11 = arith.extf %in_3 : bf16 to f32
      %12 = arith.mulf %10, %11 : f32
      %13 = arith.truncf %12 : f32 to bf16
      %14 = arith.extf %13 : bf16 to f32
      %15 = arith.mulf %14, %9 : f32
      %16 = arith.subf %cst, %9 : f32
      %17 = arith.mulf %5, %16 : f32
      %18 = arith.addf %17, %cst : f32
      %19 = arith.mulf %15, %18 : f32
      %20 = arith.truncf %19 : f32 to bf16
      linalg.yield %20 : bf16
    } -> tensor<256x768xbf16>
    %3 = tensor.empty() : tensor<256x768xbf16>
    %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg3, %extracted_slice_0 : tensor<256x768xbf16>, tensor<256x768xbf16>) outs(%3 : tensor<256x768xbf16>) {
    ^bb0(%in: bf16, %in_3: bf16, %out: bf16):
      %5 = arith.extf %in : bf16 to f32
      %6 = arith.extf %in_3 : bf16 to f32
      %7 = arith.negf %6 : f32
      %8 = math.exp %7 : f32
      %9 = arith.addf %8, %cst : f32
      %10 = arith.divf %6, %9 : f32
      %11 = arith.truncf %10 : f32 to bf16
      %12 = arith.extf %11 : bf16 to f32
      %13 = arith.mulf %5, %12 : f32
      %14 = arith.truncf %13 : f32 to bf16
      linalg.yield %14 : bf16
    } -> tensor<256x768xbf16>
    %concat = tensor.concat dim(1) %2, %4 : (tensor<256x768xbf16>, tensor<256x768xbf16>) -> tensor<256x1536xbf16>
    %data, %scales = mxmoe.quantize %concat offsets(%arg5 : tensor<4xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<256x1536xbf16> -> tensor<256x1536xf8E4M3FN>, tensor<1024x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
    %data_1, %scales_2 = mxmoe.quantize %concat offsets(%arg5 : tensor<4xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>} : tensor<256x1536xbf16> -> tensor<1536x384xf8E4M3FN>, tensor<1536x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
    mxmoe.yield %data, %scales, %data_1, %scales_2 : tensor<256x1536xf8E4M3FN>, tensor<1024x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<1536x384xf8E4M3FN>, tensor<1536x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
  }
  return %0#0, %0#1, %0#2, %0#3 : tensor<256x1536xf8E4M3FN>, tensor<1024x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<1536x384xf8E4M3FN>, tensor<1536x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
}
