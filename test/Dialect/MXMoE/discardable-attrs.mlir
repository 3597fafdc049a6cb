// RUN: mxmoe-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect | FileCheck %s

// The attributes the passes attach to ops of other dialects (declared in
// MXMoEDialect.td): well-formed ones round-trip.

// CHECK-LABEL: gpu.module @kernels
// CHECK: gpu.func @k() kernel attributes {mxmoe.block = array<i64: 128, 1, 1>, mxmoe.dynamic_smem = 1024 : i64, mxmoe.grid = array<i64: 132, 1, 1>, mxmoe.mma = "wgmma_fp8_promote_k128"}
// CHECK-LABEL: func.func @well_formed
// CHECK-SAME: mxmoe.fqn = "layers.0.w13"
// CHECK: arith.addi {{.*}} {mxmoe.kernel = @kernels::@k, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<tensor_map 1>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<status>, #mxmoe.kernel_arg<value -3>]}
// CHECK: {mxmoe.grad_accumulator = f32, mxmoe.num_shards = 2 : i64, mxmoe.shard_tokens = 64 : i64, mxmoe.tiled_mlp = "layers.0.mlp", mxmoe.tiled_mlp_id = 0 : i64}
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k() kernel attributes {mxmoe.block = array<i64: 128, 1, 1>, mxmoe.dynamic_smem = 1024 : i64, mxmoe.grid = array<i64: 132, 1, 1>, mxmoe.mma = "wgmma_fp8_promote_k128"} {
      gpu.return
    }
  }
  func.func @well_formed(%a: i32, %b: i32, %lb: index, %ub: index, %s: index) -> i32
      attributes {mxmoe.fqn = "layers.0.w13", mxmoe.pass = "forward"} {
    %c = arith.addi %a, %b {mxmoe.kernel = @kernels::@k, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<tensor_map 1>, #mxmoe.kernel_arg<result 0>, #mxmoe.kernel_arg<status>, #mxmoe.kernel_arg<value -3>]} : i32
    scf.for %i = %lb to %ub step %s {
    } {mxmoe.tiled_mlp = "layers.0.mlp", mxmoe.tiled_mlp_id = 0 : i64, mxmoe.num_shards = 2 : i64, mxmoe.shard_tokens = 64 : i64, mxmoe.grad_accumulator = f32}
    return %c : i32
  }
}

// -----

func.func @unknown() {
  // expected-error @+1 {{unknown mxmoe attribute 'mxmoe.grids' (MXMoEDialect.td lists the known ones)}}
  "test.op"() {mxmoe.grids = array<i64: 1, 1, 1>} : () -> ()
  return
}

// -----

func.func @wrong_type() {
  // expected-error @+1 {{'mxmoe.grid' has the wrong type: [1, 1, 1]}}
  "test.op"() {mxmoe.grid = [1, 1, 1]} : () -> ()
  return
}

// -----

func.func @grid_rank() {
  // expected-error @+1 {{'mxmoe.grid' must be three extents [x, y, z], each >= 1, got array<i64: 132, 1>}}
  "test.op"() {mxmoe.grid = array<i64: 132, 1>} : () -> ()
  return
}

// -----

func.func @block_zero() {
  // expected-error @+1 {{'mxmoe.block' must be three extents [x, y, z], each >= 1, got array<i64: 0, 1, 1>}}
  "test.op"() {mxmoe.block = array<i64: 0, 1, 1>} : () -> ()
  return
}

// -----

func.func @negative_smem() {
  // expected-error @+1 {{'mxmoe.dynamic_smem' must be >= 0, got -16 : i64}}
  "test.op"() {mxmoe.dynamic_smem = -16 : i64} : () -> ()
  return
}

// -----

// A binding past the op's operands would make the manifest writer read an
// operand that does not exist.
func.func @binding_out_of_range(%a: i32) -> i32 {
  // expected-error @+1 {{'mxmoe.kernel_args' entries must be #mxmoe.kernel_arg<...> naming this op's operands (operand, tensor_map) or results (result), or status or value, got [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 2>]}}
  %b = arith.addi %a, %a {mxmoe.kernel = @k, mxmoe.kernel_args = [#mxmoe.kernel_arg<operand 0>, #mxmoe.kernel_arg<operand 2>]} : i32
  return %b : i32
}

// -----

// The string bindings of earlier versions are not accepted.
func.func @binding_string(%a: i32) -> i32 {
  // expected-error @+1 {{'mxmoe.kernel_args' entries must be}}
  %b = arith.addi %a, %a {mxmoe.kernel_args = ["operand:0"]} : i32
  return %b : i32
}

// -----

func.func @binding_result_out_of_range(%a: i32) -> i32 {
  // expected-error @+1 {{'mxmoe.kernel_args' entries must be}}
  %b = arith.addi %a, %a {mxmoe.kernel_args = [#mxmoe.kernel_arg<result 1>]} : i32
  return %b : i32
}

// -----

func.func @binding_kind(%a: i32) -> i32 {
  // expected-error @+1 {{expected operand, result, tensor_map, status or value, got input}}
  %b = arith.addi %a, %a {mxmoe.kernel_args = [#mxmoe.kernel_arg<input 0>]} : i32
  return %b : i32
}

// -----

func.func @binding_negative(%a: i32) -> i32 {
  // expected-error @+1 {{kernel_arg operand index must be >= 0, got -1}}
  %b = arith.addi %a, %a {mxmoe.kernel_args = [#mxmoe.kernel_arg<operand -1>]} : i32
  return %b : i32
}

// -----

func.func @binding_not_string(%a: i32) -> i32 {
  // expected-error @+1 {{'mxmoe.kernel_args' entries must be}}
  %b = arith.addi %a, %a {mxmoe.kernel_args = [0]} : i32
  return %b : i32
}

// -----

func.func @unit_result(%a: i32) -> i32 {
  // expected-error @+1 {{'mxmoe.zero_result' has the wrong type: true}}
  %b = arith.addi %a, %a {mxmoe.zero_result = true} : i32
  return %b : i32
}
