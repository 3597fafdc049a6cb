// --programs-only stops after kernel generation: the manifest (kernel rows
// with their kernel_hash, launch programs) and model.mlir, no PTX, cubin
// or header. The grouped-GEMM and quantize kernels take their sizes at run
// time, so another token count gives the same kernels (equal hashes) and
// only other program values: what mxmoe.kernel_cache binds new sizes with.
// RUN: rm -rf %t.full %t.prog %t.other
// RUN: mxmoe-compile %s --chip sm_90a --recipe mx128 -o %t.full > /dev/null
// RUN: mxmoe-compile %s --chip sm_90a --recipe mx128 --programs-only -o %t.prog 2>&1 | FileCheck %s --check-prefix=DRIVER
// RUN: not ls %t.prog/sm_90a %t.prog/mxmoe_kernels.h 2>&1 | FileCheck %s --check-prefix=NOFILES
// RUN: FileCheck %s --check-prefix=MANIFEST < %t.prog/manifest.json
// RUN: not grep -q '"ptx"\|"cubin"' %t.prog/manifest.json
// RUN: sed 's/512x/700x/g' %s > %t.other.mlir
// RUN: mxmoe-compile %t.other.mlir --chip sm_90a --recipe mx128 --programs-only -o %t.other > /dev/null
// RUN: %python %S/Inputs/compare_kernel_hashes.py %t.full %t.prog %t.other | FileCheck %s --check-prefix=HASHES
// RUN: not mxmoe-run %t.prog experts.forward --describe 2>&1 | FileCheck %s --check-prefix=NOLOAD

// DRIVER: mxmoe-compile: {{.*}} -> {{.*}}.prog (sm_90a) in
// NOFILES-DAG: {{.*}}sm_90a{{.*}}No such file or directory
// NOFILES-DAG: {{.*}}mxmoe_kernels.h{{.*}}No such file or directory
// MANIFEST: "kernel_hash": "{{[0-9a-f]+}}"
// MANIFEST-NOT: "cubin"
// MANIFEST: "programs_only": true
// HASHES: 6 kernels; full == programs-only: True; 512 tokens == 700 tokens: True; values differ: True
// NOLOAD: mxmoeRtProgramLoad({{.*}}): manifest.json is a programs-only compile (mxmoe-compile --programs-only): no kernel images to load

func.func @experts(%x: tensor<512x256xbf16>, %w13: tensor<4x384x256xbf16>,
                   %offsets: tensor<4xi32>) -> tensor<512x384xbf16> {
  %h = mxmoe.scaled_grouped_matmul %x, %w13, %offsets {fqn = "experts"}
      : (tensor<512x256xbf16>, tensor<4x384x256xbf16>, tensor<4xi32>)
      -> tensor<512x384xbf16>
  return %h : tensor<512x384xbf16>
}
