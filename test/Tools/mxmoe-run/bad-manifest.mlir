// mxmoeRtProgramLoad checks every step of a manifest against its kernel's
// parameters before anything can run: one binding per parameter, of the
// parameter's kind (pointer, i64 scalar, tensor map), pointers before
// scalars (the order mxmoeRtLaunchWithScalars passes them), a nonzero
// grid, and tensor maps that fit their operand. Each defect below is
// written into a copy of a good manifest by Inputs/mutate_manifest.py.
// RUN: rm -rf %t && mxmoe-compile %s --chip sm_90a -o %t > /dev/null
// RUN: mxmoe-run %t experts.w13.forward --describe | FileCheck %s --check-prefix=GOOD
// RUN: %python %S/Inputs/mutate_manifest.py %t %t.m missing-binding
// RUN: not mxmoe-run %t.m experts.w13.forward --describe 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: %python %S/Inputs/mutate_manifest.py %t %t.m pointer-for-scalar
// RUN: not mxmoe-run %t.m experts.w13.forward --describe 2>&1 | FileCheck %s --check-prefix=PTR4SCALAR
// RUN: %python %S/Inputs/mutate_manifest.py %t %t.m scalar-for-pointer
// RUN: not mxmoe-run %t.m experts.w13.forward --describe 2>&1 | FileCheck %s --check-prefix=SCALAR4PTR
// RUN: %python %S/Inputs/mutate_manifest.py %t %t.m map-too-big
// RUN: not mxmoe-run %t.m experts.w13.forward --describe 2>&1 | FileCheck %s --check-prefix=MAPBIG
// RUN: %python %S/Inputs/mutate_manifest.py %t %t.m map-stride
// RUN: not mxmoe-run %t.m experts.w13.forward --describe 2>&1 | FileCheck %s --check-prefix=MAPSTRIDE
// RUN: %python %S/Inputs/mutate_manifest.py %t %t.m zero-grid
// RUN: not mxmoe-run %t.m experts.w13.forward --describe 2>&1 | FileCheck %s --check-prefix=GRID
// RUN: %python %S/Inputs/mutate_manifest.py %t %t.m i32-scalar
// RUN: not mxmoe-run %t.m experts.w13.forward --describe 2>&1 | FileCheck %s --check-prefix=I32
// RUN: %python %S/Inputs/mutate_manifest.py %t %t.m pointer-after-scalar
// RUN: not mxmoe-run %t.m experts.w13.forward --describe 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: %python %S/Inputs/mutate_manifest.py %t %t.m unknown-kind
// RUN: not mxmoe-run %t.m experts.w13.forward --describe 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: %python %S/Inputs/mutate_manifest.py %t %t.m arg-out-of-range
// RUN: not mxmoe-run %t.m experts.w13.forward --describe 2>&1 | FileCheck %s --check-prefix=RANGE

// GOOD: program experts.w13.forward: 3 args, 5 buffers, 3 steps, 1 returns
// MISSING: mxmoeRtProgramLoad({{.*}}): experts.w13.forward step 2: 14 bindings for the 15 parameters (at most 64) of kernel experts_w13_forward__grouped_matmul_2
// PTR4SCALAR: experts.w13.forward step 0 binding 5: binds a pointer to a scalar parameter
// SCALAR4PTR: experts.w13.forward step 0 binding 0: binds a scalar to a pointer parameter
// MAPBIG: experts.w13.forward step 2 binding 2: tensor map of 1537 rows x 256 elements, row stride 256 bytes, does not fit its 393216-byte operand
// MAPSTRIDE: experts.w13.forward step 2 binding 0: tensor map of 512 rows x 256 elements, row stride 128 bytes, does not fit its 131072-byte operand
// GRID: experts.w13.forward step 0: a zero extent in the grid of kernel experts_w13_forward__quantize_0
// I32: experts.w13.forward step 0 binding 5: scalar parameters are i64, not 'i32'
// ORDER: experts.w13.forward step 0 binding 5: a pointer parameter after a scalar one
// KIND: experts.w13.forward step 0 binding 0: unknown parameter kind 'texture'
// RANGE: experts.w13.forward step 0 binding 0: arg 7 out of range (3)

func.func @experts(%x: tensor<512x256xbf16>, %w13: tensor<4x384x256xbf16>,
                   %offsets: tensor<4xi32>) -> tensor<512x384xbf16> {
  %h = mxmoe.scaled_grouped_matmul %x, %w13, %offsets {fqn = "experts.w13"}
      : (tensor<512x256xbf16>, tensor<4x384x256xbf16>, tensor<4xi32>)
      -> tensor<512x384xbf16>
  return %h : tensor<512x384xbf16>
}
