// RUN: rm -rf %t && mxmoe-compile %s --chip sm_90a -o %t --toolkit %t/none 2>&1 | FileCheck %s
// RUN: %python %S/Inputs/print_programs.py %t/manifest.json | FileCheck %s --check-prefix=PROG

// Launch programs of accumulating grouped GEMMs (`accumulate %acc`,
// lib/Target/ManifestPrograms.cpp): the GEMM updates its accumulator's
// buffer in place, so the accumulator must be a kernel's fresh result in
// the same block that nothing else reads; otherwise the function has no
// program (it would need a copy) instead of a program that overwrites a
// value still read. Loop-carried sums (mxmoe-accumulate-in-gemm's) are
// loop-program.mlir's.

// The accumulator is a reshape of a returned value: both would share one
// buffer.
// CHECK-DAG: warning: mxmoe: alias has no launch program ({{.*}}'mxmoe.grouped_matmul': accumulates in place into a value that is read afterwards or is not a kernel's fresh result in its block (the program would need a copy))
// An accumulator from outside the loop: every shard would add into it again.
// CHECK-DAG: warning: mxmoe: loopalias has no launch program ({{.*}}'mxmoe.grouped_matmul': accumulates in place into a value that is read afterwards or is not a kernel's fresh result in its block (the program would need a copy))
// A kernel's fresh result read only by the GEMM: updated in place (the
// second GEMM's output is the first one's buffer).
// PROG: fresh steps=[{{[a-z]+}}__grouped_matmul_{{[0-9]}}, {{[a-z]+}}__grouped_matmul_{{[0-9]}}] returns=[buffer 0 [4, 128, 128] bf16]

func.func @alias(%g: tensor<128x640xf8E4M3FN>, %gs: tensor<128x20xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>,
                 %x: tensor<128x640xf8E4M3FN>, %xs: tensor<128x20xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>,
                 %offs: tensor<4xi32>,
                 %a: tensor<512x256xf8E4M3FN>, %as: tensor<1024x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, %b: tensor<4x128x256xf8E4M3FN>, %bs: tensor<4x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, %o: tensor<4xi32>)
    -> (tensor<512x128xbf16>, tensor<4x128x128xbf16>) {
  %y = mxmoe.grouped_matmul %a scales %as, %b scales %bs offsets %o : (tensor<512x256xf8E4M3FN>, tensor<1024x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128]>>, tensor<4x128x256xf8E4M3FN>, tensor<4x128x8xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [128, 128]>>, tensor<4xi32>) -> tensor<512x128xbf16>
  %acc = tensor.expand_shape %y [[0, 1], [2]] output_shape [4, 128, 128] : tensor<512x128xbf16> into tensor<4x128x128xbf16>
  %r = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs accumulate %acc
      : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, tensor<4xi32>, tensor<4x128x128xbf16>) -> tensor<4x128x128xbf16>
  return %y, %r : tensor<512x128xbf16>, tensor<4x128x128xbf16>
}

func.func @loopalias(%g: tensor<128x640xf8E4M3FN>, %gs: tensor<128x20xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>,
                 %x: tensor<128x640xf8E4M3FN>, %xs: tensor<128x20xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>,
                 %offs: tensor<4xi32>) -> tensor<4x128x128xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %p = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, tensor<4xi32>) -> tensor<4x128x128xbf16>
  %e = tensor.empty() : tensor<4x128x128xbf16>
  %cst = arith.constant 0.0 : bf16
  %z = linalg.fill ins(%cst : bf16) outs(%e : tensor<4x128x128xbf16>) -> tensor<4x128x128xbf16>
  %res = scf.for %i = %c0 to %c2 step %c1 iter_args(%d = %z) -> (tensor<4x128x128xbf16>) {
    %r = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs accumulate %p
      : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, tensor<4xi32>, tensor<4x128x128xbf16>) -> tensor<4x128x128xbf16>
    %s = arith.addf %d, %r : tensor<4x128x128xbf16>
    scf.yield %s : tensor<4x128x128xbf16>
  } {mxmoe.shard_tokens = 128 : i64}
  return %res : tensor<4x128x128xbf16>
}

func.func @fresh(%g: tensor<128x640xf8E4M3FN>, %gs: tensor<128x20xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>,
                 %x: tensor<128x640xf8E4M3FN>, %xs: tensor<128x20xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>,
                 %offs: tensor<4xi32>) -> tensor<4x128x128xbf16> {
  %p = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, tensor<4xi32>) -> tensor<4x128x128xbf16>
  %r = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs accumulate %p
      : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU, #mxmoe.scale_layout<blocked_128x4, tile = [1, 128], per_k_group>>, tensor<4xi32>, tensor<4x128x128xbf16>) -> tensor<4x128x128xbf16>
  return %r : tensor<4x128x128xbf16>
}
