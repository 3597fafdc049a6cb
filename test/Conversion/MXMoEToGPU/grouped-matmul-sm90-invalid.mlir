// Operands and options the sm_90a grouped-GEMM lowering rejects, each with a
// diagnostic naming the rule.
// RUN: mxmoe-opt %s --convert-mxmoe-to-gpu=chip=sm_90a --split-input-file --verify-diagnostics
// RUN: not mxmoe-opt %s --split-input-file --convert-mxmoe-to-gpu="chip=sm_90a gemm-tile-n=96" 2>&1 | FileCheck %s --check-prefix=TILE
// RUN: not mxmoe-opt %S/grouped-matmul-sm90.mlir --convert-mxmoe-to-gpu="chip=sm_90a gemm-tile-n=192" 2>&1 | FileCheck %s --check-prefix=TILE192
// RUN: not mxmoe-opt %S/grouped-matmul-sm90.mlir --convert-mxmoe-to-gpu="chip=sm_90a gemm-stages=8" 2>&1 | FileCheck %s --check-prefix=SMEM
// RUN: not mxmoe-opt %S/grouped-matmul-sm90.mlir --convert-mxmoe-to-gpu="chip=sm_90a gemm-sm90-mma=bf16 gemm-stages=3" 2>&1 | FileCheck %s --check-prefix=SMEMUP
// RUN: not mxmoe-opt %s --split-input-file --convert-mxmoe-to-gpu="chip=sm_90a gemm-sm90-mma=int8" 2>&1 | FileCheck %s --check-prefix=MMA
// RUN: not mxmoe-opt %s --split-input-file --convert-mxmoe-to-gpu="chip=sm_90a gemm-stages=1" 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not mxmoe-opt %s --split-input-file --convert-mxmoe-to-gpu="chip=sm_80" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not mxmoe-opt %s --split-input-file --mxmoe-to-nvvm="chip=sm_80" 2>&1 | FileCheck %s --check-prefix=CHIPLIST
// TILE: gemm-tile-n must be 0 (auto), 64, 128 or 192 (sm_90a) or 0, 64, 128 or 256 (sm_100a, sm_103a), got 96
// Tile N 192 is the MX128 2D x 3D bf16-output kernel's only (these are MX32).
// TILE192: error: 'mxmoe.grouped_matmul' op gemm-tile-n=192 is the tile of the sm_90a MX128 2D x 3D kernels with bf16 output (fp8 strategy); this grouped matmul needs 64 or 128 (or 0, auto)
// SMEM: error: 'mxmoe.grouped_matmul' op the grouped-GEMM configuration needs 354624 bytes of shared memory, over the 232448 of sm_90a (fp8 kernel); lower gemm-stages
// SMEMUP: error: 'mxmoe.grouped_matmul' op the grouped-GEMM configuration needs 233792 bytes of shared memory, over the 232448 of sm_90a (bf16 upcast kernel); lower gemm-stages or choose gemm-sm90-mma=fp8
// MMA: for the --gemm-sm90-mma option: 'int8' is not one of: auto, fp8, bf16
// STAGES: convert-mxmoe-to-gpu: gemm-stages must be 0 (auto) or in [2, 8], got 1
// `chip` is a typed option: a bad value is rejected when the option is
// parsed, before any IR is read, with the valid values (no module dump),
// in the TableGen pass option as in the pipeline's.
// CHIP: for the --chip option: 'sm_80' is not one of: sm_90a, sm_100a, sm_103a
// CHIPLIST: for the --chip option: 'sm_80' is not one of: sm_90a, sm_100a, sm_103a
// CHIP-NOT: builtin.module

func.func @fp4(%a: tensor<256x256xf4E2M1FN>, %as: tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
               %w: tensor<2x128x256xf4E2M1FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
               %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  // expected-error @+1 {{sm_90a lowering supports f8E4M3FN and f8E5M2 operands (wgmma has no FP6/FP4 inputs), got 'f4E2M1FN' x 'f4E2M1FN'}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<256x256xf4E2M1FN>, tensor<512x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf4E2M1FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}

// -----

func.func @row_major_scales(%a: tensor<256x256xf8E4M3FN>, %as: tensor<256x8xf8E8M0FNU>,
                            %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU>,
                            %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  // expected-error @+1 {{sm_90a lowering reads blocked_128x4 scales (one 512-byte atom per 128 rows x 128 K); run mxmoe-pack-scales or swizzle the scales first}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<256x256xf8E4M3FN>, tensor<256x8xf8E8M0FNU>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU>,
         tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}

// -----

func.func @bf16(%a: tensor<256x256xbf16>, %w: tensor<2x128x256xbf16>,
                %offs: tensor<2xi32>) -> tensor<256x128xbf16> {
  // expected-error @+1 {{sm_90a lowering needs MX operands (bf16 grouped GEMMs are left to torch._grouped_mm / cuBLAS)}}
  %o = mxmoe.grouped_matmul %a, %w offsets %offs
      : (tensor<256x256xbf16>, tensor<2x128x256xbf16>, tensor<2xi32>) -> tensor<256x128xbf16>
  return %o : tensor<256x128xbf16>
}

// -----

func.func @dynamic(%a: tensor<?x256xf8E4M3FN>, %as: tensor<?x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                   %w: tensor<2x128x256xf8E4M3FN>, %ws: tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
                   %offs: tensor<2xi32>) -> tensor<?x128xbf16> {
  // expected-error @+1 {{GPU lowering needs static shapes, got 'tensor<?x256xf8E4M3FN>'}}
  %o = mxmoe.grouped_matmul %a scales %as, %w scales %ws offsets %offs
      : (tensor<?x256xf8E4M3FN>, tensor<?x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2x128x256xf8E4M3FN>, tensor<2x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4>>,
         tensor<2xi32>) -> tensor<?x128xbf16>
  return %o : tensor<?x128xbf16>
}
