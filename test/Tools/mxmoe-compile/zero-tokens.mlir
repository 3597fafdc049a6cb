// RUN: rm -rf %t && mxmoe-compile %s -o %t --chip sm_90a --recipe mx128 --toolkit %t.nowhere 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: %python %S/Inputs/print_programs.py %t/manifest.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=IR < %t/model.mlir
// RUN: rm -rf %t32 && mxmoe-compile %s -o %t32 --chip sm_90a,sm_100a --recipe mx32 --toolkit %t.nowhere
// RUN: %python %S/Inputs/print_programs.py %t32/manifest.json | FileCheck %s --check-prefix=MX32
// RUN: rm -rf %t.k0 && mxmoe-compile %S/Inputs/zero-contraction.mlir -o %t.k0 --chip sm_90a --toolkit %t.nowhere 2>&1 | FileCheck %s --check-prefix=K0LOG
// RUN: %python %S/Inputs/print_programs.py %t.k0/manifest.json | FileCheck %s --check-prefix=K0
// RUN: rm -rf %t.g1 && mxmoe-compile %S/Inputs/zero-tokens-one-expert.mlir -o %t.g1 --chip sm_90a --recipe mx128 --toolkit %t.nowhere
// RUN: %python %S/Inputs/print_programs.py %t.g1/manifest.json | FileCheck %s --check-prefix=G1

// A routed-expert GEMM over zero tokens (an empty batch, as PyTorch's
// grouped GEMMs accept): it compiles. The forward and the input gradient
// have nothing to compute: no kernel, the result is a zero-byte buffer,
// and the quantizations of their operands are dropped with them. The
// weight gradient over zero tokens (four experts) is all zeros and still
// runs: its token-group quantizations write the groups' padding and the
// grouped GEMM writes zeros for every (empty) expert.

// LOG-NOT: error
// LOG-NOT: warning
// LOG: mxmoe-compile:

// CHECK: e.forward steps=[] returns=[buffer 0 [0, 128] bf16] buffers=[0]
// CHECK: e.input_grad steps=[] returns=[buffer 0 [0, 256] bf16] buffers=[0]
// CHECK: e.weight_grad steps=[e_weight_grad__quantize_0, e_weight_grad__quantize_0, e_weight_grad__grouped_matmul_2] returns=[buffer 4 [4, 128, 256] bf16]

// IR-LABEL: func.func @e.forward(
// IR-NOT:     mxmoe.quantize
// IR:         %[[E:.*]] = tensor.empty() {mxmoe.empty_result} : tensor<0x128xbf16>
// IR-NEXT:    return %[[E]]
// IR-LABEL: func.func @e.weight_grad(
// IR:         mxmoe.grouped_matmul

// MX32: e.forward steps=[] returns=[buffer 0 [0, 128] bf16] buffers=[0]
// MX32: e.input_grad steps=[] returns=[buffer 0 [0, 256] bf16] buffers=[0]
// MX32: e.weight_grad steps=[e_weight_grad__quantize_0, e_weight_grad__quantize_0, e_weight_grad__grouped_matmul_2]

// K = 0 (x [64, 0]): the forward's output [64, 128] is zeros, a buffer
// the program zero-fills; no kernel at all.
// K0LOG: no MX kernels for sm_90a (no MX op was compiled: every MX op has nothing to compute
// K0: e.forward steps=[] returns=[buffer 4 [64, 128] bf16] buffers=[0, 0, 0, 0, 16384 zero]
// K0: e.input_grad steps=[] returns=[buffer 2 [64, 0] bf16]
// K0: e.weight_grad steps=[] returns=[buffer 2 [4, 128, 0] bf16]

// One expert over zero tokens: its token-group quantizations have no
// padding to write (empty results), so the weight gradient contracts over
// 0 tokens: zeros, no kernel.
// G1: e.forward steps=[] returns=[buffer 2 [0, 128] bf16] buffers=[0, 0, 0]
// G1: e.weight_grad steps=[] returns=[buffer 0 [1, 128, 256] bf16] buffers=[65536 zero]

func.func @e(%x: tensor<0x256xbf16>, %w: tensor<4x128x256xbf16>,
             %offs: tensor<4xi32>) -> tensor<0x128xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %offs {fqn = "e"}
      : (tensor<0x256xbf16>, tensor<4x128x256xbf16>, tensor<4xi32>)
      -> tensor<0x128xbf16>
  return %y : tensor<0x128xbf16>
}
