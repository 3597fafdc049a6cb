// One pipeline, two front doors: `mxmoe-opt --mxmoe-default-pipeline` runs
// the passes mxmoe-compile runs for one chip. With until=kernels it prints
// the IR mxmoe-compile writes to model.mlir; with until=ptx (the default)
// the gpu.binary holds the PTX of mxmoe-compile's <chip>/kernels.ptx, byte
// for byte. Checked for the MX32 and MX128 recipes on sm_90a and for
// sm_100a (tcgen05); the test fails on any difference.
// RUN: rm -rf %t && mkdir -p %t
//
// RUN: mxmoe-compile %s --chip sm_90a -o %t/c90 --toolkit ""
// RUN: mxmoe-opt %s --mxmoe-default-pipeline="chip=sm_90a until=kernels" -o %t/k90.mlir
// RUN: diff -B %t/c90/model.mlir %t/k90.mlir
// RUN: mxmoe-opt %s --mxmoe-default-pipeline="chip=sm_90a" -o %t/p90.mlir
// RUN: %python %S/../../Inputs/extract_ptx.py < %t/p90.mlir > %t/p90.ptx
// RUN: cmp %t/p90.ptx %t/c90/sm_90a/kernels.ptx
//
// RUN: mxmoe-compile %s --chip sm_90a --recipe mx128 -o %t/c90x --toolkit ""
// RUN: mxmoe-opt %s --mxmoe-default-pipeline="chip=sm_90a recipe=mx128 until=kernels" -o %t/k90x.mlir
// RUN: diff -B %t/c90x/model.mlir %t/k90x.mlir
// RUN: mxmoe-opt %s --mxmoe-default-pipeline="chip=sm_90a recipe=mx128" -o %t/p90x.mlir
// RUN: %python %S/../../Inputs/extract_ptx.py < %t/p90x.mlir > %t/p90x.ptx
// RUN: cmp %t/p90x.ptx %t/c90x/sm_90a/kernels.ptx
//
// quantize-weights-once: the forward returns the transposed weight
// (manifest: three returns), input_grad takes it.
// RUN: mxmoe-compile %s --chip sm_90a --recipe mx128 --quantize-weights-once -o %t/c90o --toolkit ""
// RUN: mxmoe-opt %s --mxmoe-default-pipeline="chip=sm_90a recipe=mx128 quantize-weights-once until=kernels" -o %t/k90o.mlir
// RUN: diff -B %t/c90o/model.mlir %t/k90o.mlir
// RUN: mxmoe-opt %s --mxmoe-default-pipeline="chip=sm_90a recipe=mx128 quantize-weights-once" -o %t/p90o.mlir
// RUN: %python %S/../../Inputs/extract_ptx.py < %t/p90o.mlir > %t/p90o.ptx
// RUN: cmp %t/p90o.ptx %t/c90o/sm_90a/kernels.ptx
// RUN: FileCheck %s --check-prefix=ONCE < %t/c90o/model.mlir
//
// RUN: mxmoe-compile %s --chip sm_100a -o %t/c100 --toolkit ""
// RUN: mxmoe-opt %s --mxmoe-default-pipeline="chip=sm_100a" -o %t/p100.mlir
// RUN: %python %S/../../Inputs/extract_ptx.py < %t/p100.mlir > %t/p100.ptx
// RUN: cmp %t/p100.ptx %t/c100/sm_100a/kernels.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t/p100.ptx
//
// Each grouped GEMM carries the kernel configuration mxmoe-select-gemm-config
// attached from the gemm-* options, right before convert-mxmoe-to-gpu
// built its kernel.
// RUN: FileCheck %s --check-prefix=CONFIG < %t/c90x/model.mlir
// RUN: mxmoe-opt %s --mxmoe-default-pipeline="chip=sm_100a until=kernels gemm-tile-n=64 gemm-stages=3 gemm-ctas=148" | FileCheck %s --check-prefix=CONFIG100
//
// The model-level passes leave convert-mxmoe-to-gpu nothing to warn about
// (test/Conversion/MXMoEToGPU/model-level-ops-warning.mlir).
// RUN: mxmoe-opt %s --mxmoe-default-pipeline="chip=sm_90a until=kernels" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOWARN --allow-empty
// NOWARN-NOT: warning
//
// Enum options are rejected when parsed, with the valid values.
// RUN: not mxmoe-opt %s --mxmoe-default-pipeline="recipe=mx64" 2>&1 | FileCheck %s --check-prefix=RECIPE
// RUN: not mxmoe-opt %s --mxmoe-default-pipeline="chip=sm_80" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not mxmoe-opt %s --mxmoe-default-pipeline="until=cubin" 2>&1 | FileCheck %s --check-prefix=UNTIL
// RUN: not mxmoe-opt %s --mxmoe-default-pipeline="rounding=nearest" 2>&1 | FileCheck %s --check-prefix=ROUND
// RUN: not mxmoe-opt %s --mxmoe-default-pipeline="tile-rule=cube" 2>&1 | FileCheck %s --check-prefix=RULE
// RUN: not mxmoe-opt %s --mxmoe-default-pipeline="gemm-sm90-mma=int8" 2>&1 | FileCheck %s --check-prefix=MMA

// PTX: .target sm_100a
// PTX: tcgen05.mma

// RECIPE: for the --recipe option: 'mx64' is not one of: mx32, mx128, auto
// CHIP: for the --chip option: 'sm_80' is not one of: sm_90a, sm_100a, sm_103a
// UNTIL: for the --until option: 'cubin' is not one of: model, kernels, ptx
// ROUND: for the --rounding option: 'nearest' is not one of: floor, rceil, ceil, even
// RULE: for the --tile-rule option: 'cube' is not one of: tokens, square
// MMA: for the --gemm-sm90-mma option: 'int8' is not one of: auto, fp8, bf16

func.func @moe(%x: tensor<512x256xbf16>, %w13: tensor<4x256x256xbf16>,
               %w2: tensor<4x256x256xbf16>, %offs: tensor<4xi32>) -> tensor<512x256xbf16> {
  %h = mxmoe.scaled_grouped_matmul %x, %w13, %offs {fqn = "experts.w13"}
      : (tensor<512x256xbf16>, tensor<4x256x256xbf16>, tensor<4xi32>) -> tensor<512x256xbf16>
  %y = mxmoe.scaled_grouped_matmul %h, %w2, %offs {fqn = "experts.w2"}
      : (tensor<512x256xbf16>, tensor<4x256x256xbf16>, tensor<4xi32>) -> tensor<512x256xbf16>
  return %y : tensor<512x256xbf16>
}

// CONFIG-LABEL: func.func @experts.w13.forward(
// CONFIG:        mxmoe.grouped_matmul {{.*}}{mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 192, stages = 4, ctas = 132>, mxmoe.kernel = @mxmoe_kernels::@{{.*}}__grouped_matmul_{{[0-9]+}},
// CONFIG-LABEL: func.func @experts.w13.weight_grad(
// CONFIG:        mxmoe.grouped_matmul {{.*}}{mxmoe.gemm_config = #mxmoe.gemm_config<strategy = wgmma_fp8_promote_k128, tile_m = 128, tile_n = 128, stages = 4, ctas = 132>, mxmoe.kernel =
// CONFIG100-LABEL: func.func @experts.w13.forward(
// CONFIG100:     mxmoe.grouped_matmul {{.*}}{mxmoe.gemm_config = #mxmoe.gemm_config<strategy = tcgen05_mxf8f6f4, tile_m = 128, tile_n = 64, stages = 3, ctas = 148>, mxmoe.kernel =

// ONCE-LABEL: func.func @experts.w13.forward(
// ONCE-SAME:     -> (tensor<{{.*}}xbf16>, tensor<{{.*}}xf8E4M3FN>, tensor<{{.*}}xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>)
// ONCE:          mxmoe.quantize_weight {{.*}}mxmoe.kernel = @mxmoe_kernels::@{{.*}}__quantize_weight_0
