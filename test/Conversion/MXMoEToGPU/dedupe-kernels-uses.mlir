// RUN: mxmoe-opt %s --mxmoe-dedupe-kernels | FileCheck %s

// Which references mxmoe-dedupe-kernels redirects (those
// SymbolTable::replaceAllSymbolUses would): @k1 and @k3 equal @k0 (names
// apart), @k2 stores another value and @k4 has another attribute, so they
// stay. References to @k1 from the module's scope (@mxmoe_kernels::@k1, in
// a launch or nested in an attribute) and from the gpu module's own scope
// (@k1) become @k0; @k1 of the module's scope (the function @k1),
// @other::@k1, and everything inside the nested module @inner (another
// symbol table: its @mxmoe_kernels is its own) keep their meaning.
// CHECK-LABEL: func.func @host(
// CHECK-SAME: refs = [@mxmoe_kernels::@k0, @mxmoe_kernels::@k0, @other::@k1, @k1, [@mxmoe_kernels::@k2]]
// CHECK: gpu.launch_func @mxmoe_kernels::@k0
// CHECK: gpu.launch_func @mxmoe_kernels::@k2
// CHECK: gpu.launch_func @mxmoe_kernels::@k0
// CHECK: gpu.launch_func @mxmoe_kernels::@k4
// CHECK: func.func private @k1()
// CHECK: gpu.module @mxmoe_kernels
// CHECK-NEXT: gpu.func @k0(
// CHECK: gpu.func @k2(
// CHECK: gpu.func @k4(
// CHECK-NOT: gpu.func @k1(
// CHECK-NOT: gpu.func @k3(
// CHECK: func.func private @helper() attributes {ref = @k0}
// CHECK: module @inner
// CHECK-NEXT: func.func private @f() attributes {ref = @mxmoe_kernels::@k1}
// CHECK: gpu.module @mxmoe_kernels
// CHECK-NEXT: gpu.func @k1(
module attributes {gpu.container_module} {
  func.func @host(%m: memref<4xf32>) attributes {refs = [@mxmoe_kernels::@k1, @mxmoe_kernels::@k3, @other::@k1, @k1, [@mxmoe_kernels::@k2]]} {
    %c1 = arith.constant 1 : index
    gpu.launch_func @mxmoe_kernels::@k1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @mxmoe_kernels::@k2 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @mxmoe_kernels::@k3 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @mxmoe_kernels::@k4 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    return
  }
  func.func private @k1()
  gpu.module @mxmoe_kernels {
    gpu.func @k0(%m: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %m[%c0] : memref<4xf32>
      gpu.return
    }
    gpu.func @k1(%m: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %m[%c0] : memref<4xf32>
      gpu.return
    }
    gpu.func @k2(%m: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 2.0 : f32
      memref.store %v, %m[%c0] : memref<4xf32>
      gpu.return
    }
    gpu.func @k3(%m: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %m[%c0] : memref<4xf32>
      gpu.return
    }
    gpu.func @k4(%m: memref<4xf32>) kernel attributes {mxmoe.grid = array<i64: 2, 1, 1>} {
      %c0 = arith.constant 0 : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %m[%c0] : memref<4xf32>
      gpu.return
    }
    func.func private @helper() attributes {ref = @k1}
  }
  module @inner {
    func.func private @f() attributes {ref = @mxmoe_kernels::@k1}
    gpu.module @mxmoe_kernels {
      gpu.func @k1(%m: memref<4xf32>) kernel {
        gpu.return
      }
    }
  }
}
