// RUN: rm -rf %t && mxmoe-compile %s --chip sm_90a -o %t --toolkit %t/none 2>&1 | FileCheck %s
// RUN: %python %S/Inputs/print_programs.py %t/manifest.json | FileCheck %s --check-prefix=PROG

// Hand-written static shard loops (mxmoe.shard_tokens) around a routing
// kernel: which ones a launch program can replay
// (lib/Target/ManifestPrograms.cpp), and why not, in mxmoe-compile's
// warning and the manifest's functions_without_program.

// An initial value feeding two loop-carried values: both would be updated
// in place in one buffer.
// CHECK: warning: mxmoe: twice has no launch program (host control flow: a launch program replays static shard loops of kernels and calls, but 'scf.for': a loop-carried value whose initial value has other uses (it is updated in place))
// A slice of some columns is no row view.
// CHECK: warning: mxmoe: column has no launch program ({{.*}}'tensor.extract_slice': not a range of whole rows (a column slice))
// Shards of 31 rows of 2 f32: the second starts at byte 248, not a
// multiple of 16.
// CHECK: warning: mxmoe: unaligned has no launch program ({{.*}}'tensor.insert_slice': a row view at a byte offset that is not a multiple of 16 (kernels take 16-byte aligned pointers))
// The well-formed loop: two shards of 32 rows, each written in place
// (32 x 128 bf16 = 8192 bytes of input, 32 x 2 f32 = 256 of output per
// shard).
// PROG: ok steps=[loop x2[twice__router_topk_0@0+8192@0+256]] returns=[buffer 0 [64, 2] f32]
// PROG-NOT: twice
// PROG-NOT: column
// PROG-NOT: unaligned

func.func @twice(%x: tensor<64x128xbf16>) -> (tensor<64x2xf32>, tensor<64x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %e = tensor.empty() : tensor<64x2xf32>
  %r:2 = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %e, %b = %e) -> (tensor<64x2xf32>, tensor<64x2xf32>) {
    %o = arith.muli %i, %c32 : index
    %s = tensor.extract_slice %x[%o, 0] [32, 128] [1, 1] : tensor<64x128xbf16> to tensor<32x128xbf16>
    %w, %ex = mxmoe.router_topk %s {top_k = 2 : i64, score = #mxmoe.router_score<softmax>} : tensor<32x128xbf16> -> tensor<32x2xf32>, tensor<32x2xi32>
    %ia = tensor.insert_slice %w into %a[%o, 0] [32, 2] [1, 1] : tensor<32x2xf32> into tensor<64x2xf32>
    %ib = tensor.insert_slice %w into %b[%o, 0] [32, 2] [1, 1] : tensor<32x2xf32> into tensor<64x2xf32>
    scf.yield %ia, %ib : tensor<64x2xf32>, tensor<64x2xf32>
  } {mxmoe.shard_tokens = 32 : i64}
  return %r#0, %r#1 : tensor<64x2xf32>, tensor<64x2xf32>
}
func.func @ok(%x: tensor<64x128xbf16>) -> tensor<64x2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %e = tensor.empty() : tensor<64x2xf32>
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %e) -> (tensor<64x2xf32>) {
    %o = arith.muli %i, %c32 : index
    %s = tensor.extract_slice %x[%o, 0] [32, 128] [1, 1] : tensor<64x128xbf16> to tensor<32x128xbf16>
    %w, %ex = mxmoe.router_topk %s {top_k = 2 : i64, score = #mxmoe.router_score<softmax>} : tensor<32x128xbf16> -> tensor<32x2xf32>, tensor<32x2xi32>
    %ia = tensor.insert_slice %w into %a[%o, 0] [32, 2] [1, 1] : tensor<32x2xf32> into tensor<64x2xf32>
    scf.yield %ia : tensor<64x2xf32>
  } {mxmoe.shard_tokens = 32 : i64}
  return %r : tensor<64x2xf32>
}
func.func @column(%x: tensor<64x128xbf16>) -> tensor<64x2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %e = tensor.empty() : tensor<64x2xf32>
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %e) -> (tensor<64x2xf32>) {
    %o = arith.muli %i, %c32 : index
    %s = tensor.extract_slice %x[%o, 0] [32, 64] [1, 1] : tensor<64x128xbf16> to tensor<32x64xbf16>
    %w, %ex = mxmoe.router_topk %s {top_k = 2 : i64, score = #mxmoe.router_score<softmax>} : tensor<32x64xbf16> -> tensor<32x2xf32>, tensor<32x2xi32>
    %ia = tensor.insert_slice %w into %a[%o, 0] [32, 2] [1, 1] : tensor<32x2xf32> into tensor<64x2xf32>
    scf.yield %ia : tensor<64x2xf32>
  } {mxmoe.shard_tokens = 32 : i64}
  return %r : tensor<64x2xf32>
}
func.func @unaligned(%x: tensor<64x8xbf16>) -> tensor<64x2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c31 = arith.constant 31 : index
  %e = tensor.empty() : tensor<64x2xf32>
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %e) -> (tensor<64x2xf32>) {
    %o = arith.muli %i, %c31 : index
    %s = tensor.extract_slice %x[%o, 0] [31, 8] [1, 1] : tensor<64x8xbf16> to tensor<31x8xbf16>
    %w, %ex = mxmoe.router_topk %s {top_k = 2 : i64, score = #mxmoe.router_score<softmax>} : tensor<31x8xbf16> -> tensor<31x2xf32>, tensor<31x2xi32>
    %ia = tensor.insert_slice %w into %a[%o, 0] [31, 2] [1, 1] : tensor<31x2xf32> into tensor<64x2xf32>
    scf.yield %ia : tensor<64x2xf32>
  } {mxmoe.shard_tokens = 31 : i64}
  return %r : tensor<64x2xf32>
}
