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
