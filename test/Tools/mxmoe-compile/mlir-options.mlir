// mxmoe-compile accepts MLIR's standard --mlir-* options as mlir-opt does,
// applied to every pass manager of the compile: IR printing after a named
// pass (by its registered argument), module-scope printing, pass
// statistics; an unknown pass name is rejected before any IR is read.
// RUN: rm -rf %t && mxmoe-compile %s -o %t --chip sm_90a --mlir-print-ir-after=mxmoe-precision-policy 2>&1 | FileCheck %s --check-prefix=AFTER
// RUN: rm -rf %t && mxmoe-compile %s -o %t --chip sm_90a --mlir-disable-threading --mlir-print-ir-module-scope --mlir-print-ir-after=convert-mxmoe-to-gpu 2>&1 | FileCheck %s --check-prefix=SCOPE
// RUN: rm -rf %t && mxmoe-compile %s -o %t --chip sm_90a --mlir-pass-statistics 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: not mxmoe-compile %s -o %t --chip sm_90a --mlir-print-ir-after=no-such-pass 2>&1 | FileCheck %s --check-prefix=BAD

// AFTER: IR Dump After MXMoEPrecisionPolicy (mxmoe-precision-policy)
// AFTER: mxmoe.scaled_grouped_matmul {{.*}}recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32
// AFTER-NOT: IR Dump After

// SCOPE: IR Dump After ConvertMXMoEToGPU (convert-mxmoe-to-gpu)
// SCOPE: gpu.module
// SCOPE: gpu.func @experts_forward__grouped_matmul_{{[0-9]+}}
// SCOPE-NOT: IR Dump After

// STATS: Pass statistics report

// BAD: for the --mlir-print-ir-after option: Cannot find option named 'no-such-pass'

func.func @moe(%x: tensor<256x128xbf16>, %w: tensor<4x64x128xbf16>, %offs: tensor<4xi32>) -> tensor<256x64xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "experts"}
      : (tensor<256x128xbf16>, tensor<4x64x128xbf16>, tensor<4xi32>) -> tensor<256x64xbf16>
  return %y : tensor<256x64xbf16>
}
