// The SwiGLU that feeds w2 (F.silu(gate) * up of the w13 result h = [gate | up])
// quantized 1x128 with M-grouped blocked scales (the w2 forward's lhs),
// unfused (@<shape>_quantize: the quantize of a bf16 act PyTorch computed)
// and as one mxmoe.fused_quantize (@<shape>_fused), at Qwen3-30B-A3B and
// Llama 4 Scout routed rows for 16K tokens. bench/fused_quantize_bench.py
// runs them; build:
//   build/bin/mxmoe-opt bench/fused_quantize.mlir --convert-elementwise-to-linalg \
//     --linalg-fuse-elementwise-ops --mxmoe-fuse-quantize-producers --canonicalize > .device/fqb.mlir
//   build/bin/mxmoe-compile .device/fqb.mlir --chip sm_90a -o .device/fqb


func.func @qwen3_16k_fused(%h: tensor<131072x1536xbf16>, %offs: tensor<128xi32>) -> (tensor<131072x768xf8E4M3FN>, tensor<147328x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>) {
  %gate = tensor.extract_slice %h[0, 0] [131072, 768] [1, 1] : tensor<131072x1536xbf16> to tensor<131072x768xbf16>
  %up = tensor.extract_slice %h[0, 768] [131072, 768] [1, 1] : tensor<131072x1536xbf16> to tensor<131072x768xbf16>
  %g = arith.extf %gate : tensor<131072x768xbf16> to tensor<131072x768xf32>
  %one = arith.constant dense<1.0> : tensor<131072x768xf32>
  %ng = arith.negf %g : tensor<131072x768xf32>
  %e = math.exp %ng : tensor<131072x768xf32>
  %den = arith.addf %one, %e : tensor<131072x768xf32>
  %silu = arith.divf %g, %den : tensor<131072x768xf32>
  %sb = arith.truncf %silu : tensor<131072x768xf32> to tensor<131072x768xbf16>
  %sf = arith.extf %sb : tensor<131072x768xbf16> to tensor<131072x768xf32>
  %uf = arith.extf %up : tensor<131072x768xbf16> to tensor<131072x768xf32>
  %p = arith.mulf %sf, %uf : tensor<131072x768xf32>
  %act = arith.truncf %p : tensor<131072x768xf32> to tensor<131072x768xbf16>
  %q, %s = mxmoe.quantize %act offsets(%offs : tensor<128xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<131072x768xbf16> -> tensor<131072x768xf8E4M3FN>, tensor<147328x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  return %q, %s : tensor<131072x768xf8E4M3FN>, tensor<147328x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
}
func.func @qwen3_16k_quantize(%act: tensor<131072x768xbf16>, %offs: tensor<128xi32>) -> (tensor<131072x768xf8E4M3FN>, tensor<147328x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>) {
  %q, %s = mxmoe.quantize %act offsets(%offs : tensor<128xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<131072x768xbf16> -> tensor<131072x768xf8E4M3FN>, tensor<147328x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  return %q, %s : tensor<131072x768xf8E4M3FN>, tensor<147328x24xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
}

func.func @scout_16k_fused(%h: tensor<16384x16384xbf16>, %offs: tensor<16xi32>) -> (tensor<16384x8192xf8E4M3FN>, tensor<18304x256xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>) {
  %gate = tensor.extract_slice %h[0, 0] [16384, 8192] [1, 1] : tensor<16384x16384xbf16> to tensor<16384x8192xbf16>
  %up = tensor.extract_slice %h[0, 8192] [16384, 8192] [1, 1] : tensor<16384x16384xbf16> to tensor<16384x8192xbf16>
  %g = arith.extf %gate : tensor<16384x8192xbf16> to tensor<16384x8192xf32>
  %one = arith.constant dense<1.0> : tensor<16384x8192xf32>
  %ng = arith.negf %g : tensor<16384x8192xf32>
  %e = math.exp %ng : tensor<16384x8192xf32>
  %den = arith.addf %one, %e : tensor<16384x8192xf32>
  %silu = arith.divf %g, %den : tensor<16384x8192xf32>
  %sb = arith.truncf %silu : tensor<16384x8192xf32> to tensor<16384x8192xbf16>
  %sf = arith.extf %sb : tensor<16384x8192xbf16> to tensor<16384x8192xf32>
  %uf = arith.extf %up : tensor<16384x8192xbf16> to tensor<16384x8192xf32>
  %p = arith.mulf %sf, %uf : tensor<16384x8192xf32>
  %act = arith.truncf %p : tensor<16384x8192xf32> to tensor<16384x8192xbf16>
  %q, %s = mxmoe.quantize %act offsets(%offs : tensor<16xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<16384x8192xbf16> -> tensor<16384x8192xf8E4M3FN>, tensor<18304x256xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  return %q, %s : tensor<16384x8192xf8E4M3FN>, tensor<18304x256xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
}
func.func @scout_16k_quantize(%act: tensor<16384x8192xbf16>, %offs: tensor<16xi32>) -> (tensor<16384x8192xf8E4M3FN>, tensor<18304x256xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>) {
  %q, %s = mxmoe.quantize %act offsets(%offs : tensor<16xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<16384x8192xbf16> -> tensor<16384x8192xf8E4M3FN>, tensor<18304x256xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  return %q, %s : tensor<16384x8192xf8E4M3FN>, tensor<18304x256xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
}
// The SwiGLU's backward dh = [d gate | d up] (PyTorch autograd's bf16
// roundings) with its two MX128 quantizations (rowwise M-grouped blocked for
// w13's input gradient, along the token axis for its weight gradient): one
// fused op (@<shape>_dswiglu) against PyTorch's backward + both quantize
// kernels (@<shape>_dswiglu_unfused).
func.func @qwen3_16k_dswiglu(%da: tensor<131072x768xbf16>, %h: tensor<131072x1536xbf16>, %offs: tensor<128xi32>) -> (tensor<131072x1536xf8E4M3FN>, tensor<147328x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<1536x135040xf8E4M3FN>, tensor<1536x4604xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>) {
  %gate = tensor.extract_slice %h[0, 0] [131072, 768] [1, 1] : tensor<131072x1536xbf16> to tensor<131072x768xbf16>
  %up = tensor.extract_slice %h[0, 768] [131072, 768] [1, 1] : tensor<131072x1536xbf16> to tensor<131072x768xbf16>
  %one = arith.constant dense<1.0> : tensor<131072x768xf32>
  %daf = arith.extf %da : tensor<131072x768xbf16> to tensor<131072x768xf32>
  %uf = arith.extf %up : tensor<131072x768xbf16> to tensor<131072x768xf32>
  %ds = arith.mulf %daf, %uf : tensor<131072x768xf32>
  %dsb = arith.truncf %ds : tensor<131072x768xf32> to tensor<131072x768xbf16>
  %dsf = arith.extf %dsb : tensor<131072x768xbf16> to tensor<131072x768xf32>
  %gf = arith.extf %gate : tensor<131072x768xbf16> to tensor<131072x768xf32>
  %ng = arith.negf %gf : tensor<131072x768xf32>
  %e = math.exp %ng : tensor<131072x768xf32>
  %den = arith.addf %one, %e : tensor<131072x768xf32>
  %sig = arith.divf %one, %den : tensor<131072x768xf32>
  %oms = arith.subf %one, %sig : tensor<131072x768xf32>
  %t = arith.mulf %gf, %oms : tensor<131072x768xf32>
  %opt = arith.addf %one, %t : tensor<131072x768xf32>
  %a1 = arith.mulf %dsf, %sig : tensor<131072x768xf32>
  %dgf = arith.mulf %a1, %opt : tensor<131072x768xf32>
  %dg = arith.truncf %dgf : tensor<131072x768xf32> to tensor<131072x768xbf16>
  %gf2 = arith.extf %gate : tensor<131072x768xbf16> to tensor<131072x768xf32>
  %ng2 = arith.negf %gf2 : tensor<131072x768xf32>
  %e2 = math.exp %ng2 : tensor<131072x768xf32>
  %den2 = arith.addf %one, %e2 : tensor<131072x768xf32>
  %silu = arith.divf %gf2, %den2 : tensor<131072x768xf32>
  %sb = arith.truncf %silu : tensor<131072x768xf32> to tensor<131072x768xbf16>
  %sf = arith.extf %sb : tensor<131072x768xbf16> to tensor<131072x768xf32>
  %daf2 = arith.extf %da : tensor<131072x768xbf16> to tensor<131072x768xf32>
  %duf = arith.mulf %daf2, %sf : tensor<131072x768xf32>
  %du = arith.truncf %duf : tensor<131072x768xf32> to tensor<131072x768xbf16>
  %dh = tensor.concat dim(1) %dg, %du : (tensor<131072x768xbf16>, tensor<131072x768xbf16>) -> tensor<131072x1536xbf16>
  %q0, %s0 = mxmoe.quantize %dh offsets(%offs : tensor<128xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<131072x1536xbf16> -> tensor<131072x1536xf8E4M3FN>, tensor<147328x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  %q1, %s1 = mxmoe.quantize %dh offsets(%offs : tensor<128xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>} : tensor<131072x1536xbf16> -> tensor<1536x135040xf8E4M3FN>, tensor<1536x4604xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
  return %q0, %s0, %q1, %s1 : tensor<131072x1536xf8E4M3FN>, tensor<147328x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<1536x135040xf8E4M3FN>, tensor<1536x4604xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
}
func.func @qwen3_16k_dswiglu_unfused(%dh: tensor<131072x1536xbf16>, %offs: tensor<128xi32>) -> (tensor<131072x1536xf8E4M3FN>, tensor<147328x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<1536x135040xf8E4M3FN>, tensor<1536x4604xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>) {
  %q0, %s0 = mxmoe.quantize %dh offsets(%offs : tensor<128xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<131072x1536xbf16> -> tensor<131072x1536xf8E4M3FN>, tensor<147328x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  %q1, %s1 = mxmoe.quantize %dh offsets(%offs : tensor<128xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>} : tensor<131072x1536xbf16> -> tensor<1536x135040xf8E4M3FN>, tensor<1536x4604xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
  return %q0, %s0, %q1, %s1 : tensor<131072x1536xf8E4M3FN>, tensor<147328x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<1536x135040xf8E4M3FN>, tensor<1536x4604xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
}
func.func @scout_16k_dswiglu(%da: tensor<16384x8192xbf16>, %h: tensor<16384x16384xbf16>, %offs: tensor<16xi32>) -> (tensor<16384x16384xf8E4M3FN>, tensor<18304x512xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<16384x16864xf8E4M3FN>, tensor<16384x572xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>) {
  %gate = tensor.extract_slice %h[0, 0] [16384, 8192] [1, 1] : tensor<16384x16384xbf16> to tensor<16384x8192xbf16>
  %up = tensor.extract_slice %h[0, 8192] [16384, 8192] [1, 1] : tensor<16384x16384xbf16> to tensor<16384x8192xbf16>
  %one = arith.constant dense<1.0> : tensor<16384x8192xf32>
  %daf = arith.extf %da : tensor<16384x8192xbf16> to tensor<16384x8192xf32>
  %uf = arith.extf %up : tensor<16384x8192xbf16> to tensor<16384x8192xf32>
  %ds = arith.mulf %daf, %uf : tensor<16384x8192xf32>
  %dsb = arith.truncf %ds : tensor<16384x8192xf32> to tensor<16384x8192xbf16>
  %dsf = arith.extf %dsb : tensor<16384x8192xbf16> to tensor<16384x8192xf32>
  %gf = arith.extf %gate : tensor<16384x8192xbf16> to tensor<16384x8192xf32>
  %ng = arith.negf %gf : tensor<16384x8192xf32>
  %e = math.exp %ng : tensor<16384x8192xf32>
  %den = arith.addf %one, %e : tensor<16384x8192xf32>
  %sig = arith.divf %one, %den : tensor<16384x8192xf32>
  %oms = arith.subf %one, %sig : tensor<16384x8192xf32>
  %t = arith.mulf %gf, %oms : tensor<16384x8192xf32>
  %opt = arith.addf %one, %t : tensor<16384x8192xf32>
  %a1 = arith.mulf %dsf, %sig : tensor<16384x8192xf32>
  %dgf = arith.mulf %a1, %opt : tensor<16384x8192xf32>
  %dg = arith.truncf %dgf : tensor<16384x8192xf32> to tensor<16384x8192xbf16>
  %gf2 = arith.extf %gate : tensor<16384x8192xbf16> to tensor<16384x8192xf32>
  %ng2 = arith.negf %gf2 : tensor<16384x8192xf32>
  %e2 = math.exp %ng2 : tensor<16384x8192xf32>
  %den2 = arith.addf %one, %e2 : tensor<16384x8192xf32>
  %silu = arith.divf %gf2, %den2 : tensor<16384x8192xf32>
  %sb = arith.truncf %silu : tensor<16384x8192xf32> to tensor<16384x8192xbf16>
  %sf = arith.extf %sb : tensor<16384x8192xbf16> to tensor<16384x8192xf32>
  %daf2 = arith.extf %da : tensor<16384x8192xbf16> to tensor<16384x8192xf32>
  %duf = arith.mulf %daf2, %sf : tensor<16384x8192xf32>
  %du = arith.truncf %duf : tensor<16384x8192xf32> to tensor<16384x8192xbf16>
  %dh = tensor.concat dim(1) %dg, %du : (tensor<16384x8192xbf16>, tensor<16384x8192xbf16>) -> tensor<16384x16384xbf16>
  %q0, %s0 = mxmoe.quantize %dh offsets(%offs : tensor<16xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<16384x16384xbf16> -> tensor<16384x16384xf8E4M3FN>, tensor<18304x512xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  %q1, %s1 = mxmoe.quantize %dh offsets(%offs : tensor<16xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>} : tensor<16384x16384xbf16> -> tensor<16384x16864xf8E4M3FN>, tensor<16384x572xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
  return %q0, %s0, %q1, %s1 : tensor<16384x16384xf8E4M3FN>, tensor<18304x512xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<16384x16864xf8E4M3FN>, tensor<16384x572xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
}
func.func @scout_16k_dswiglu_unfused(%dh: tensor<16384x16384xbf16>, %offs: tensor<16xi32>) -> (tensor<16384x16384xf8E4M3FN>, tensor<18304x512xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<16384x16864xf8E4M3FN>, tensor<16384x572xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>) {
  %q0, %s0 = mxmoe.quantize %dh offsets(%offs : tensor<16xi32>) {axis = 1 : i64, scale_tile = array<i64: 1, 128>} : tensor<16384x16384xbf16> -> tensor<16384x16384xf8E4M3FN>, tensor<18304x512xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>
  %q1, %s1 = mxmoe.quantize %dh offsets(%offs : tensor<16xi32>) {axis = 0 : i64, scale_tile = array<i64: 1, 128>} : tensor<16384x16384xbf16> -> tensor<16384x16864xf8E4M3FN>, tensor<16384x572xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
  return %q0, %s0, %q1, %s1 : tensor<16384x16384xf8E4M3FN>, tensor<18304x512xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<16384x16864xf8E4M3FN>, tensor<16384x572xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>
}
