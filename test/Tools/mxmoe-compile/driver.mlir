// RUN: rm -rf %t && mxmoe-compile %s -o %t --chip sm_90a,sm_100a | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/manifest.json
// RUN: FileCheck %s --check-prefix=PTX90 < %t/sm_90a/kernels.ptx
// RUN: FileCheck %s --check-prefix=PTX100 < %t/sm_100a/kernels.ptx
// RUN: FileCheck %s --check-prefix=HEADER < %t/mxmoe_kernels.h
// RUN: FileCheck %s --check-prefix=REPORT < %t/policy-report.json
// RUN: FileCheck %s --check-prefix=USES < %t/manifest.json
// RUN: FileCheck %s --check-prefix=DEDUPE < %t/sm_90a/kernels.ptx
// RUN: %if ptxas %{ test -s %t/sm_90a/kernels.cubin && test -s %t/sm_100a/kernels.cubin %}
// RUN: not mxmoe-compile %s -o %t --chip sm_80 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: mxmoe-compile --help | FileCheck %s --check-prefix=HELP
// RUN: not mxmoe-compile %s -o %t.bad --gemm-stages 9 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not mxmoe-compile %s -o %t.bad --gemm-ctas 4294967297 2>&1 | FileCheck %s --check-prefix=CTAS
// RUN: not mxmoe-compile %s -o %t.bad --gemm-tile-n 256 2>&1 | FileCheck %s --check-prefix=TILEN
// RUN: not mxmoe-compile %s -o %t/manifest.json 2>&1 | FileCheck %s --check-prefix=NOTDIR
// Recompiling into a used directory: the old cubin is removed when this
// compile builds none, and a chip given twice is compiled once.
// RUN: rm -rf %t.re && mxmoe-compile %s -o %t.re --chip sm_90a --toolkit %t.nowhere 2>&1 | FileCheck %s --check-prefix=NOPTXAS
// RUN: mkdir -p %t.re/sm_100a && touch %t.re/sm_90a/kernels.cubin %t.re/sm_100a/kernels.cubin
// RUN: mxmoe-compile %s -o %t.re --chip sm_90a,sm_90a --toolkit %t.nowhere | FileCheck %s --check-prefix=TWICE
// RUN: not test -e %t.re/sm_90a/kernels.cubin
// RUN: not test -e %t.re/sm_100a/kernels.cubin
// RUN: FileCheck %s --check-prefix=ONECHIP < %t.re/manifest.json
// RUN: not mxmoe-compile %s -o %t.o4 --llvm-opt-level 4 2>&1 | FileCheck %s --check-prefix=OPTLEVEL
// RUN: rm -rf %t.o0 && mxmoe-compile %s -o %t.o0 --chip sm_90a --llvm-opt-level 0 && FileCheck %s --check-prefix=PTX90 < %t.o0/sm_90a/kernels.ptx
// RUN: mxmoe-compile %s -o %t.dump --chip sm_90a --dump-ir-after=mxmoe-dedupe-kernels 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: not mxmoe-compile %s -o %t.dump --chip sm_90a --dump-ir-after=no-such-pass 2>&1 | FileCheck %s --check-prefix=NOPASS
// RUN: not mxmoe-compile %t/does-not-exist.mlir -o %t 2>&1 | FileCheck %s --check-prefix=NOFILE

// LOG: mxmoe-compile: {{.*}}driver.mlir -> {{.*}} (sm_90a, sm_100a) in {{[0-9.]+}} s
// MANIFEST: "chips": [
// MANIFEST-NEXT: "sm_90a",
// MANIFEST-NEXT: "sm_100a"
// MANIFEST: "fqn": "layers.0.moe.experts.w13",
// MANIFEST-NEXT: "function": "layers.0.moe.experts.w13.forward",
// Quantize kernels take their sizes at run time too: pointers with their
// element type, then scalars; the grid is given per program step.
// MANIFEST: "grid": "per program step",
// MANIFEST-NEXT: "kernel_hash": "{{[0-9a-f]+}}",
// MANIFEST-NEXT: "name": "layers_0_moe_experts_w13_forward__quantize_0",
// MANIFEST-NEXT: "op": "mxmoe.quantize",
// MANIFEST: "element_type": "bf16",
// MANIFEST-NEXT: "index": 0,
// MANIFEST-NEXT: "kind": "device pointer (noalias)"
// MANIFEST: "index": 5,
// MANIFEST-NEXT: "kind": "scalar",
// MANIFEST-NEXT: "name": "batch",
// MANIFEST: "pass": "forward",
// MANIFEST: "name": "layers_0_moe_experts_w13_weight_grad__quantize_0",
// MANIFEST: "pass": "weight_grad",
// The sm_90a grouped GEMM: tensor-map parameters, dynamic shared memory.
// MANIFEST: "dynamic_shared_memory": 178496,
// MANIFEST: "name": "layers_0_moe_experts_w13_forward__grouped_matmul_2",
// MANIFEST-NEXT: "op": "mxmoe.grouped_matmul",
// MANIFEST-NEXT: "params": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "box": [
// MANIFEST-NEXT: 128,
// MANIFEST-NEXT: 128
// MANIFEST-NEXT: ],
// MANIFEST-NEXT: "bytes": 128,
// MANIFEST-NEXT: "data_type": "uint8",
// MANIFEST-NEXT: "index": 0,
// MANIFEST-NEXT: "kind": "tensor_map",
// The sizes are scalar parameters after the seven pointers.
// MANIFEST: "element_type": "f8E8M0FNU",
// MANIFEST-NEXT: "index": 1,
// MANIFEST-NEXT: "kind": "device pointer (noalias)"
// MANIFEST: "index": 7,
// MANIFEST-NEXT: "kind": "scalar",
// MANIFEST-NEXT: "name": "m",
// MANIFEST-NEXT: "type": "i64"
// MANIFEST: "index": 14,
// MANIFEST-NEXT: "kind": "scalar",
// MANIFEST-NEXT: "name": "b_scale_cols",
// Launch programs: the forward function's three steps and their bindings.
// MANIFEST: "programs": [
// MANIFEST: "fqn": "layers.0.moe.experts.w13",
// MANIFEST-NEXT: "function": "layers.0.moe.experts.w13.forward",
// MANIFEST-NEXT: "pass": "forward",
// MANIFEST-NEXT: "returns": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "buffer": 4
// MANIFEST: "kernel": "layers_0_moe_experts_w13_forward__quantize_0",
// MANIFEST: "kernel": "layers_0_moe_experts_w13_forward__quantize_1",
// A tensor map binding carries the bound tensor's [rows, K] extents; the
// sizes are bound as values (M, N, K, G, lhs scale rows and columns, one
// expert's rhs scale rows and columns).
// MANIFEST: "buffer": 0,
// MANIFEST-NEXT: "tensor_map": {
// MANIFEST-NEXT: "dims": [
// MANIFEST-NEXT: 512,
// MANIFEST-NEXT: 256
// MANIFEST-NEXT: ],
// MANIFEST-NEXT: "row_stride_bytes": 512
// MANIFEST: "buffer": 2,
// MANIFEST-NEXT: "tensor_map": {
// MANIFEST-NEXT: "dims": [
// MANIFEST-NEXT: 512,
// MANIFEST-NEXT: 4096
// MANIFEST: "status": true
// MANIFEST-NEXT: },
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "value": 256
// MANIFEST-NEXT: },
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "value": 1024
// MANIFEST-NEXT: },
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "value": 512
// MANIFEST-NEXT: },
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "value": 4
// MANIFEST: "kernel": "layers_0_moe_experts_w13_forward__grouped_matmul_2",
// MANIFEST-NEXT: "op": "mxmoe.grouped_matmul"
// PTX90: .target sm_90a
// PTX90: .visible .entry layers_0_moe_experts_w13_forward__quantize_0(
// PTX100: .target sm_100a
// HEADER: static const char mxmoe_ptx_sm_90a[] =
// HEADER: static const char mxmoe_ptx_sm_100a[] =
// REPORT: "fqn": "layers.0.moe.experts.w13",
// REPORT: "precision": "mxfp8",
// Layer 1 has layer 0's shapes and recipe: mxmoe-dedupe-kernels keeps one
// kernel per op kind, listed under "uses" with both layers' ops, and layer
// 1's programs launch layer 0's kernels.
// USES: "name": "layers_0_moe_experts_w13_forward__quantize_0",
// USES: "uses": [
// USES-NEXT: {
// USES-NEXT: "axis": 1,
// USES-NEXT: "fqn": "layers.0.moe.experts.w13",
// USES-NEXT: "function": "layers.0.moe.experts.w13.forward",
// USES-NEXT: "op": "mxmoe.quantize",
// USES-NEXT: "pass": "forward"
// USES-NEXT: },
// The input gradient's rowwise quantization (another shape, same kind)
// shares it too: its sizes are run-time parameters.
// USES-NEXT: {
// USES-NEXT: "axis": 1,
// USES-NEXT: "fqn": "layers.0.moe.experts.w13",
// USES-NEXT: "function": "layers.0.moe.experts.w13.input_grad",
// USES: "fqn": "layers.1.moe.experts.w13",
// USES-NEXT: "function": "layers.1.moe.experts.w13.forward",
// USES: "programs": [
// USES: "function": "layers.1.moe.experts.w13.forward",
// USES: "kernel": "layers_0_moe_experts_w13_forward__quantize_0",
// DEDUPE-NOT: layers_1_moe
// --dump-ir-after prints the module after the named pass (the context runs
// single-threaded for it); a name no pass has is an error listing them.
// DUMP: IR Dump After MXMoEDedupeKernels (mxmoe-dedupe-kernels)
// DUMP: gpu.module @mxmoe_kernels
// DUMP: mxmoe-compile: {{.*}}driver.mlir -> {{.*}} (sm_90a) in
// NOPASS: mxmoe-compile: --dump-ir-after=no-such-pass: no pass of that name ran; the pipeline's passes: {{.*}}mxmoe-dedupe-kernels{{.*}}mxmoe-precision-policy
// OPTLEVEL: error: mxmoe: llvm-opt-level must be 0, 1, 2 or 3, got 4
// OPTLEVEL-NOT: see current operation
// Bad option values: one line naming the option and value, no IR dump.
// STAGES: error: mxmoe: gemm-stages must be 0 (auto) or in [2, 8], got 9
// STAGES-NOT: see current operation
// CTAS: error: mxmoe: gemm-ctas must be in [1, 2147483647] (the GPU's SM count, e.g. 132), got 4294967297
// TILEN: error: mxmoe: gemm-tile-n must be 0 (auto), 64 or 128 (192 only when every chip is sm_90a, 256 only when every chip is sm_100a or sm_103a), got 256
// NOTDIR: mxmoe-compile: -o {{.*}}manifest.json exists and is not a directory
// NOPTXAS: mxmoe-compile: note: sm_90a: PTX only, no cubin (not built: ptxas not found at {{.*}}nowhere/bin/ptxas)
// TWICE: -> {{.*}} (sm_90a) in
// ONECHIP: "chips": [
// ONECHIP-NEXT: "sm_90a"
// ONECHIP-NEXT: ],
// --help lists the driver's options, not LLVM's backend flags.
// HELP-NOT: --amdgpu
// HELP-NOT: --nvptx
// HELP: mxmoe-compile options:
// HELP: --chip=<string> {{.*}}sm_90a, sm_100a, sm_103a
// HELP: --gemm-sm90-mma
// HELP: --tokens-per-shard
// HELP-NOT: --amdgpu
// CHIP: mxmoe-compile: unsupported chip 'sm_80'; supported: sm_90a, sm_100a, sm_103a
// NOFILE: mxmoe-compile: cannot read '{{.*}}does-not-exist.mlir' as valid mxmoe IR

func.func @moe(%x: tensor<256x512xbf16>, %w: tensor<4x1024x512xbf16>, %o: tensor<4xi32>) -> tensor<256x1024xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %o {fqn = "layers.0.moe.experts.w13"}
      : (tensor<256x512xbf16>, tensor<4x1024x512xbf16>, tensor<4xi32>) -> tensor<256x1024xbf16>
  return %y : tensor<256x1024xbf16>
}

func.func @moe1(%x: tensor<256x512xbf16>, %w: tensor<4x1024x512xbf16>, %o: tensor<4xi32>) -> tensor<256x1024xbf16> {
  %y = mxmoe.scaled_grouped_matmul %x, %w, %o {fqn = "layers.1.moe.experts.w13"}
      : (tensor<256x512xbf16>, tensor<4x1024x512xbf16>, tensor<4xi32>) -> tensor<256x1024xbf16>
  return %y : tensor<256x1024xbf16>
}
