// Invalid numeric options of convert-mxmoe-to-gpu are an error when the
// pipeline is built (initializeOptions), naming the option and its value,
// before any pass runs: no location in the input, no module printed after
// the error. Passes built in C++ (no textual options) get the same check
// when they run, at the module's location, still without the module.
// RUN: not mxmoe-opt %s --convert-mxmoe-to-gpu=block-size=48 2>&1 | FileCheck %s
// RUN: not mxmoe-opt %s --convert-mxmoe-to-gpu="chip=sm_90a gemm-stages=9" 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not mxmoe-opt %s --convert-mxmoe-to-gpu="chip=sm_100a gemm-stages=8" 2>&1 | FileCheck %s --check-prefix=SMEM
// RUN: not mxmoe-opt %s --convert-mxmoe-to-gpu="host-launch=true reuse-kernels=true" 2>&1 | FileCheck %s --check-prefix=REUSE
// CHECK: <unknown>:0: error: convert-mxmoe-to-gpu: block-size must be a multiple of 32 in [32, 1024], got 48
// CHECK-NOT: see current operation
// CHECK-NOT: mxmoe.quantize
// STAGES: error: convert-mxmoe-to-gpu: gemm-stages must be 0 (auto) or in [2, 8], got 9
// STAGES-NOT: see current operation
// SMEM: error: convert-mxmoe-to-gpu: the grouped-GEMM configuration needs 271616 bytes of shared memory, over the 232448 of sm_100a; lower gemm-stages
// SMEM-NOT: see current operation
// REUSE: error: convert-mxmoe-to-gpu: reuse-kernels needs host-launch=false (a launch replaces its op)
// REUSE-NOT: see current operation
func.func @f(%x: tensor<64x64xbf16>) {
  %q, %s = mxmoe.quantize %x {axis = 1 : i64} : tensor<64x64xbf16> -> tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>
  return
}
