// Grouped matmuls the tcgen05 lowering (sm_100a, sm_103a) rejects, each
// with the rule it breaks.
// RUN: mxmoe-opt %s --split-input-file --verify-diagnostics --convert-mxmoe-to-gpu=chip=sm_100a
// RUN: mxmoe-opt %s --split-input-file --verify-diagnostics --convert-mxmoe-to-gpu=chip=sm_103a

// FP4 rows must be a multiple of 128 elements (gpt-oss' hidden 2880 is
// not: pad the weights' K to 2944).
func.func @fp4_k_2880(%a: tensor<256x2880xf8E4M3FN>, %as: tensor<384x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                      %w: tensor<2x256x2880xf4E2M1FN>, %ws: tensor<2x256x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                      %offs: tensor<2xi32>) -> tensor<256x256xbf16> {
  // expected-error @+1 {{f4E2M1FN operands need a contraction extent that is a multiple of 128 (TMA 16U4_ALIGN16B rows), got 2880}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<256x2880xf8E4M3FN>, tensor<384x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x256x2880xf4E2M1FN>, tensor<2x256x92xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x256xbf16>
  return %o : tensor<256x256xbf16>
}

// -----

func.func @fp4_wgrad(%g: tensor<256x1152xf8E5M2>, %gs: tensor<256x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
                     %x: tensor<384x1152xf4E2M1FN>, %xs: tensor<384x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
                     %offs: tensor<4xi32>) -> tensor<4x256x384xf32> {
  // expected-error @+1 {{f4E2M1FN operands are lowered for 2D x 3D grouped matmuls only}}
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<256x1152xf8E5M2>, tensor<256x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
         tensor<384x1152xf4E2M1FN>, tensor<384x48xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, per_k_group>>,
         tensor<4xi32>) -> tensor<4x256x384xf32>
  return %o : tensor<4x256x384xf32>
}

// -----

func.func @fp6(%a: tensor<256x1024xf6E2M3FN>, %as: tensor<256x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
               %w: tensor<2x128x1024xf8E4M3FN>, %ws: tensor<2x128x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
               %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  // expected-error @+1 {{lowering supports f8E4M3FN, f8E5M2 and f4E2M1FN operands (FP6 is not implemented), got 'f6E2M3FN' x 'f8E4M3FN'}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<256x1024xf6E2M3FN>, tensor<256x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x1024xf8E4M3FN>, tensor<2x128x32xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}
