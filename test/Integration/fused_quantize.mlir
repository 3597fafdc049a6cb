// Fused quantize kernels against the unfused quantizations
// (test/Integration/fused_quantize_gpu.py): run through
// mxmoe-opt --convert-elementwise-to-linalg --linalg-fuse-elementwise-ops
// --mxmoe-fuse-quantize-producers before mxmoe-compile.

// SwiGLU of h = [gate | up] (F.silu(gate) * up), MX128 1x128 M-grouped.
func.func @swiglu_mx128(%h: tensor<512x1536xbf16>, %offs: tensor<4xi32>) -> (tensor<512x768xf8E4M3FN>, tensor<896x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>) {
  %gate = tensor.extract_slice %h[0, 0] [512, 768] [1, 1] : tensor<512x1536xbf16> to tensor<512x768xbf16>
  %up = tensor.extract_slice %h[0, 768] [512, 768] [1, 1] : tensor<512x1536xbf16> to tensor<512x768xbf16>
  %g = arith.extf %gate : tensor<512x768xbf16> to tensor<512x768xf32>
  %one = arith.constant dense<1.0> : tensor<512x768xf32>
  %ng = arith.negf %g : tensor<512x768xf32>
  %e = math.exp %ng : tensor<512x768xf32>
  %den = arith.addf %one, %e : tensor<512x768xf32>
  %silu = arith.divf %g, %den : tensor<512x768xf32>
  %sb = arith.truncf %silu : tensor<512x768xf32> to tensor<512x768xbf16>
  %sf = arith.extf %sb : tensor<512x768xbf16> to tensor<512x768xf32>
  %uf = arith.extf %up : tensor<512x768xbf16> to tensor<512x768xf32>
  %p = arith.mulf %sf, %uf : tensor<512x768xf32>
  %act = arith.truncf %p : tensor<512x768xf32> to tensor<512x768xbf16>
  %q, %s = mxmoe.quantize %act offsets(%offs : tensor<4xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<512x768xbf16> -> tensor<512x768xf8E4M3FN>, tensor<896x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  return %q, %s : tensor<512x768xf8E4M3FN>, tensor<896x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
}
func.func @swiglu_mx128_unfused(%act: tensor<512x768xbf16>, %offs: tensor<4xi32>) -> (tensor<512x768xf8E4M3FN>, tensor<896x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>) {
  %q, %s = mxmoe.quantize %act offsets(%offs : tensor<4xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<512x768xbf16> -> tensor<512x768xf8E4M3FN>, tensor<896x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  return %q, %s : tensor<512x768xf8E4M3FN>, tensor<896x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
}
// The same SwiGLU, MX (1x32) with blocked scales.
func.func @swiglu_mx32(%h: tensor<512x1536xbf16>) -> (tensor<512x768xf8E4M3FN>, tensor<512x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>) {
  %gate = tensor.extract_slice %h[0, 0] [512, 768] [1, 1] : tensor<512x1536xbf16> to tensor<512x768xbf16>
  %up = tensor.extract_slice %h[0, 768] [512, 768] [1, 1] : tensor<512x1536xbf16> to tensor<512x768xbf16>
  %g = arith.extf %gate : tensor<512x768xbf16> to tensor<512x768xf32>
  %one = arith.constant dense<1.0> : tensor<512x768xf32>
  %ng = arith.negf %g : tensor<512x768xf32>
  %e = math.exp %ng : tensor<512x768xf32>
  %den = arith.addf %one, %e : tensor<512x768xf32>
  %silu = arith.divf %g, %den : tensor<512x768xf32>
  %sb = arith.truncf %silu : tensor<512x768xf32> to tensor<512x768xbf16>
  %sf = arith.extf %sb : tensor<512x768xbf16> to tensor<512x768xf32>
  %uf = arith.extf %up : tensor<512x768xbf16> to tensor<512x768xf32>
  %p = arith.mulf %sf, %uf : tensor<512x768xf32>
  %act = arith.truncf %p : tensor<512x768xf32> to tensor<512x768xbf16>
  %q, %s = mxmoe.quantize %act {axis = 1 : i64} : tensor<512x768xbf16> -> tensor<512x768xf8E4M3FN>, tensor<512x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %q, %s : tensor<512x768xf8E4M3FN>, tensor<512x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}
func.func @swiglu_mx32_unfused(%act: tensor<512x768xbf16>) -> (tensor<512x768xf8E4M3FN>, tensor<512x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>) {
  %q, %s = mxmoe.quantize %act {axis = 1 : i64} : tensor<512x768xbf16> -> tensor<512x768xf8E4M3FN>, tensor<512x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
  return %q, %s : tensor<512x768xf8E4M3FN>, tensor<512x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>
}
// An exact producer (bf16 x f32 products are exact in f32): two
// quantizations with row-major scales (MX e4m3 rceil; MX128 e5m2 floor,
// K = 2880: a 64-wide last tile).
func.func @product(%a: tensor<200x2880xbf16>, %b: tensor<200x2880xf32>)
    -> (tensor<200x2880xf8E4M3FN>, tensor<200x90xf8E8M0FNU>, tensor<200x2880xf8E5M2>, tensor<200x90xf8E8M0FNU>) {
  %af = arith.extf %a : tensor<200x2880xbf16> to tensor<200x2880xf32>
  %p = arith.mulf %af, %b : tensor<200x2880xf32>
  %q0, %s0 = mxmoe.quantize %p {axis = 1 : i64} : tensor<200x2880xf32> -> tensor<200x2880xf8E4M3FN>, tensor<200x90xf8E8M0FNU>
  %q1, %s1 = mxmoe.quantize %p {axis = 1 : i64, rounding = #mxmoe.rounding<floor>, scale_tile = array<i64: 1, 128>} : tensor<200x2880xf32> -> tensor<200x2880xf8E5M2>, tensor<200x90xf8E8M0FNU>
  return %q0, %s0, %q1, %s1 : tensor<200x2880xf8E4M3FN>, tensor<200x90xf8E8M0FNU>, tensor<200x2880xf8E5M2>, tensor<200x90xf8E8M0FNU>
}
func.func @product_unfused(%p: tensor<200x2880xf32>)
    -> (tensor<200x2880xf8E4M3FN>, tensor<200x90xf8E8M0FNU>, tensor<200x2880xf8E5M2>, tensor<200x90xf8E8M0FNU>) {
  %q0, %s0 = mxmoe.quantize %p {axis = 1 : i64} : tensor<200x2880xf32> -> tensor<200x2880xf8E4M3FN>, tensor<200x90xf8E8M0FNU>
  %q1, %s1 = mxmoe.quantize %p {axis = 1 : i64, rounding = #mxmoe.rounding<floor>, scale_tile = array<i64: 1, 128>} : tensor<200x2880xf32> -> tensor<200x2880xf8E5M2>, tensor<200x90xf8E8M0FNU>
  return %q0, %s0, %q1, %s1 : tensor<200x2880xf8E4M3FN>, tensor<200x90xf8E8M0FNU>, tensor<200x2880xf8E5M2>, tensor<200x90xf8E8M0FNU>
}
// The same SwiGLU along its token axis in the 4 token groups (the w2
// weight gradient's operand: 1x128 windows, per-K-group blocked scales).
func.func @swiglu_mx128_jagged(%h: tensor<512x1536xbf16>, %offs: tensor<4xi32>) -> (tensor<768x608xf8E4M3FN>, tensor<768x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>) {
  %gate = tensor.extract_slice %h[0, 0] [512, 768] [1, 1] : tensor<512x1536xbf16> to tensor<512x768xbf16>
  %up = tensor.extract_slice %h[0, 768] [512, 768] [1, 1] : tensor<512x1536xbf16> to tensor<512x768xbf16>
  %g = arith.extf %gate : tensor<512x768xbf16> to tensor<512x768xf32>
  %one = arith.constant dense<1.0> : tensor<512x768xf32>
  %ng = arith.negf %g : tensor<512x768xf32>
  %e = math.exp %ng : tensor<512x768xf32>
  %den = arith.addf %one, %e : tensor<512x768xf32>
  %silu = arith.divf %g, %den : tensor<512x768xf32>
  %sb = arith.truncf %silu : tensor<512x768xf32> to tensor<512x768xbf16>
  %sf = arith.extf %sb : tensor<512x768xbf16> to tensor<512x768xf32>
  %uf = arith.extf %up : tensor<512x768xbf16> to tensor<512x768xf32>
  %p = arith.mulf %sf, %uf : tensor<512x768xf32>
  %act = arith.truncf %p : tensor<512x768xf32> to tensor<512x768xbf16>
  %q, %s = mxmoe.quantize %act offsets(%offs : tensor<4xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>} : tensor<512x768xbf16> -> tensor<768x608xf8E4M3FN>, tensor<768x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
  return %q, %s : tensor<768x608xf8E4M3FN>, tensor<768x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
}
func.func @swiglu_mx128_jagged_unfused(%act: tensor<512x768xbf16>, %offs: tensor<4xi32>) -> (tensor<768x608xf8E4M3FN>, tensor<768x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>) {
  %q, %s = mxmoe.quantize %act offsets(%offs : tensor<4xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>} : tensor<512x768xbf16> -> tensor<768x608xf8E4M3FN>, tensor<768x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
  return %q, %s : tensor<768x608xf8E4M3FN>, tensor<768x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
}
// The exact product along its token axis in 3 token groups: MX e4m3 with
// row-major scales and MX128 1x128 windows with compact scales (an f32
// quantize input: 4-element staging runs of the bf16 input).
func.func @product_jagged(%a: tensor<200x2880xbf16>, %b: tensor<200x2880xf32>, %offs: tensor<3xi32>)
    -> (tensor<2880x320xf8E4M3FN>, tensor<2880x10xf8E8M0FNU>, tensor<2880x320xf8E4M3FN>, tensor<2880x10xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>) {
  %af = arith.extf %a : tensor<200x2880xbf16> to tensor<200x2880xf32>
  %p = arith.mulf %af, %b : tensor<200x2880xf32>
  %q0, %s0 = mxmoe.quantize %p offsets(%offs : tensor<3xi32>) {axis = 0 : i64} : tensor<200x2880xf32> -> tensor<2880x320xf8E4M3FN>, tensor<2880x10xf8E8M0FNU>
  %q1, %s1 = mxmoe.quantize %p offsets(%offs : tensor<3xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>} : tensor<200x2880xf32> -> tensor<2880x320xf8E4M3FN>, tensor<2880x10xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
  return %q0, %s0, %q1, %s1 : tensor<2880x320xf8E4M3FN>, tensor<2880x10xf8E8M0FNU>, tensor<2880x320xf8E4M3FN>, tensor<2880x10xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
}
func.func @product_jagged_unfused(%p: tensor<200x2880xf32>, %offs: tensor<3xi32>)
    -> (tensor<2880x320xf8E4M3FN>, tensor<2880x10xf8E8M0FNU>, tensor<2880x320xf8E4M3FN>, tensor<2880x10xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>) {
  %q0, %s0 = mxmoe.quantize %p offsets(%offs : tensor<3xi32>) {axis = 0 : i64} : tensor<200x2880xf32> -> tensor<2880x320xf8E4M3FN>, tensor<2880x10xf8E8M0FNU>
  %q1, %s1 = mxmoe.quantize %p offsets(%offs : tensor<3xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>} : tensor<200x2880xf32> -> tensor<2880x320xf8E4M3FN>, tensor<2880x10xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
  return %q0, %s0, %q1, %s1 : tensor<2880x320xf8E4M3FN>, tensor<2880x10xf8E8M0FNU>, tensor<2880x320xf8E4M3FN>, tensor<2880x10xf8E8M0FNU, #mxmoe.scale_layout<row_major, tile = [1, 128]>>
}
// The SwiGLU's backward (PyTorch's autograd of F.silu(gate) * up in bf16):
// dh = [d gate | d up] as two parts joined by a tensor.concat, quantized
// 1x128 rowwise, M-grouped blocked (w13's input gradient lhs) and along the
// token axis in the 4 groups (w13's weight gradient operand).
func.func @dswiglu_mx128(%da: tensor<512x768xbf16>, %h: tensor<512x1536xbf16>, %offs: tensor<4xi32>) -> (tensor<512x1536xf8E4M3FN>, tensor<896x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<1536x608xf8E4M3FN>, tensor<1536x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>) {
  %gate = tensor.extract_slice %h[0, 0] [512, 768] [1, 1] : tensor<512x1536xbf16> to tensor<512x768xbf16>
  %up = tensor.extract_slice %h[0, 768] [512, 768] [1, 1] : tensor<512x1536xbf16> to tensor<512x768xbf16>
  %one = arith.constant dense<1.0> : tensor<512x768xf32>
  %daf = arith.extf %da : tensor<512x768xbf16> to tensor<512x768xf32>
  %uf = arith.extf %up : tensor<512x768xbf16> to tensor<512x768xf32>
  %ds = arith.mulf %daf, %uf : tensor<512x768xf32>
  %dsb = arith.truncf %ds : tensor<512x768xf32> to tensor<512x768xbf16>
  %dsf = arith.extf %dsb : tensor<512x768xbf16> to tensor<512x768xf32>
  %gf = arith.extf %gate : tensor<512x768xbf16> to tensor<512x768xf32>
  %ng = arith.negf %gf : tensor<512x768xf32>
  %e = math.exp %ng : tensor<512x768xf32>
  %den = arith.addf %one, %e : tensor<512x768xf32>
  %sig = arith.divf %one, %den : tensor<512x768xf32>
  %oms = arith.subf %one, %sig : tensor<512x768xf32>
  %t = arith.mulf %gf, %oms : tensor<512x768xf32>
  %opt = arith.addf %one, %t : tensor<512x768xf32>
  %a1 = arith.mulf %dsf, %sig : tensor<512x768xf32>
  %dgf = arith.mulf %a1, %opt : tensor<512x768xf32>
  %dg = arith.truncf %dgf : tensor<512x768xf32> to tensor<512x768xbf16>
  %gf2 = arith.extf %gate : tensor<512x768xbf16> to tensor<512x768xf32>
  %ng2 = arith.negf %gf2 : tensor<512x768xf32>
  %e2 = math.exp %ng2 : tensor<512x768xf32>
  %den2 = arith.addf %one, %e2 : tensor<512x768xf32>
  %silu = arith.divf %gf2, %den2 : tensor<512x768xf32>
  %sb = arith.truncf %silu : tensor<512x768xf32> to tensor<512x768xbf16>
  %sf = arith.extf %sb : tensor<512x768xbf16> to tensor<512x768xf32>
  %daf2 = arith.extf %da : tensor<512x768xbf16> to tensor<512x768xf32>
  %duf = arith.mulf %daf2, %sf : tensor<512x768xf32>
  %du = arith.truncf %duf : tensor<512x768xf32> to tensor<512x768xbf16>
  %dh = tensor.concat dim(1) %dg, %du : (tensor<512x768xbf16>, tensor<512x768xbf16>) -> tensor<512x1536xbf16>
  %q0, %s0 = mxmoe.quantize %dh offsets(%offs : tensor<4xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<512x1536xbf16> -> tensor<512x1536xf8E4M3FN>, tensor<896x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  %q1, %s1 = mxmoe.quantize %dh offsets(%offs : tensor<4xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>} : tensor<512x1536xbf16> -> tensor<1536x608xf8E4M3FN>, tensor<1536x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
  return %q0, %s0, %q1, %s1 : tensor<512x1536xf8E4M3FN>, tensor<896x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<1536x608xf8E4M3FN>, tensor<1536x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
}
func.func @dswiglu_mx128_unfused(%dh: tensor<512x1536xbf16>, %offs: tensor<4xi32>) -> (tensor<512x1536xf8E4M3FN>, tensor<896x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<1536x608xf8E4M3FN>, tensor<1536x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>) {
  %q0, %s0 = mxmoe.quantize %dh offsets(%offs : tensor<4xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<512x1536xbf16> -> tensor<512x1536xf8E4M3FN>, tensor<896x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  %q1, %s1 = mxmoe.quantize %dh offsets(%offs : tensor<4xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>} : tensor<512x1536xbf16> -> tensor<1536x608xf8E4M3FN>, tensor<1536x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
  return %q0, %s0, %q1, %s1 : tensor<512x1536xf8E4M3FN>, tensor<896x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<1536x608xf8E4M3FN>, tensor<1536x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
}
