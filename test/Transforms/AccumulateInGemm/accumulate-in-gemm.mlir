// RUN: mxmoe-opt %s --split-input-file --mxmoe-accumulate-in-gemm | FileCheck %s

// A shard loop's weight-gradient sums (mxmoe-tile-mlp's backward) fold into
// the called weight-gradient GEMMs: the call goes to a private clone whose
// GEMMs `accumulate` into the loop-carried sums, passed as new arguments;
// the callee itself is unchanged.

// CHECK-LABEL: func.func @sum_bf16(
// CHECK:         scf.for {{.*}} iter_args(%[[DW:.+]] = %{{.+}}, %[[DX:.+]] = %{{.+}})
// CHECK:           %[[R:.+]]:2 = func.call @wgrad.accumulate(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[DW]])
// CHECK-NOT:       arith.addf %[[DW]]
// CHECK:           %[[SX:.+]] = arith.addf %[[DX]], %[[R]]#1
// CHECK:           scf.yield %[[R]]#0, %[[SX]]
// CHECK-LABEL: func.func @wgrad(
// CHECK:         mxmoe.grouped_matmul
// CHECK-NOT:     accumulate
// CHECK:         return
// CHECK-LABEL: func.func private @wgrad.accumulate(
// CHECK-SAME:    %[[ACC:[a-z0-9_]+]]: tensor<4x128x64xbf16>) -> (tensor<4x128x64xbf16>, tensor<16xf32>)
// CHECK:         mxmoe.grouped_matmul {{.*}} accumulate %[[ACC]] {{.*}} -> tensor<4x128x64xbf16>
func.func @sum_bf16(%g: tensor<128x640xf8E4M3FN>, %gs: tensor<128x20xf8E8M0FNU>,
                    %x: tensor<64x640xf8E4M3FN>, %xs: tensor<64x20xf8E8M0FNU>,
                    %offs: tensor<4xi32>) -> (tensor<4x128x64xbf16>, tensor<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant dense<0.0> : tensor<4x128x64xbf16>
  %zx = arith.constant dense<0.0> : tensor<16xf32>
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%dw = %z, %dx = %zx)
      -> (tensor<4x128x64xbf16>, tensor<16xf32>) {
    %w:2 = func.call @wgrad(%g, %gs, %x, %xs, %offs)
        : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU>, tensor<64x640xf8E4M3FN>, tensor<64x20xf8E8M0FNU>, tensor<4xi32>) -> (tensor<4x128x64xbf16>, tensor<16xf32>)
    %s = arith.addf %dw, %w#0 : tensor<4x128x64xbf16>
    %sx = arith.addf %dx, %w#1 : tensor<16xf32>
    scf.yield %s, %sx : tensor<4x128x64xbf16>, tensor<16xf32>
  }
  return %r#0, %r#1 : tensor<4x128x64xbf16>, tensor<16xf32>
}
func.func @wgrad(%g: tensor<128x640xf8E4M3FN>, %gs: tensor<128x20xf8E8M0FNU>,
                 %x: tensor<64x640xf8E4M3FN>, %xs: tensor<64x20xf8E8M0FNU>,
                 %offs: tensor<4xi32>) -> (tensor<4x128x64xbf16>, tensor<16xf32>) {
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU>, tensor<64x640xf8E4M3FN>, tensor<64x20xf8E8M0FNU>, tensor<4xi32>) -> tensor<4x128x64xbf16>
  %v = arith.constant dense<1.0> : tensor<16xf32>
  return %o, %v : tensor<4x128x64xbf16>, tensor<16xf32>
}

// -----

// An f32 accumulator: the widening goes too, the clone's GEMM produces f32
// (no bf16 rounding of the shard's gradient).
// CHECK-LABEL: func.func @sum_f32(
// CHECK:         scf.for {{.*}} iter_args(%[[DW:.+]] = %{{.+}})
// CHECK-NEXT:      %[[R:.+]] = func.call @wgrad.accumulate({{.*}}, %[[DW]]) : ({{.*}}, tensor<4x128x64xf32>) -> tensor<4x128x64xf32>
// CHECK-NEXT:      scf.yield %[[R]]
// CHECK-LABEL: func.func private @wgrad.accumulate(
// CHECK:         mxmoe.grouped_matmul {{.*}} accumulate %{{.+}} {{.*}} -> tensor<4x128x64xf32>
func.func @sum_f32(%g: tensor<128x640xf8E4M3FN>, %gs: tensor<128x20xf8E8M0FNU>,
                   %x: tensor<64x640xf8E4M3FN>, %xs: tensor<64x20xf8E8M0FNU>,
                   %offs: tensor<4xi32>) -> tensor<4x128x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant dense<0.0> : tensor<4x128x64xf32>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%dw = %z) -> (tensor<4x128x64xf32>) {
    %w = func.call @wgrad(%g, %gs, %x, %xs, %offs)
        : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU>, tensor<64x640xf8E4M3FN>, tensor<64x20xf8E8M0FNU>, tensor<4xi32>) -> tensor<4x128x64xbf16>
    %e = arith.extf %w : tensor<4x128x64xbf16> to tensor<4x128x64xf32>
    %s = arith.addf %e, %dw : tensor<4x128x64xf32>
    scf.yield %s : tensor<4x128x64xf32>
  }
  return %r : tensor<4x128x64xf32>
}
func.func @wgrad(%g: tensor<128x640xf8E4M3FN>, %gs: tensor<128x20xf8E8M0FNU>,
                 %x: tensor<64x640xf8E4M3FN>, %xs: tensor<64x20xf8E8M0FNU>,
                 %offs: tensor<4xi32>) -> tensor<4x128x64xbf16> {
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU>, tensor<64x640xf8E4M3FN>, tensor<64x20xf8E8M0FNU>, tensor<4xi32>) -> tensor<4x128x64xbf16>
  return %o : tensor<4x128x64xbf16>
}

// -----

// Left alone: the running sum is read by something else in the body, and
// the GEMM's result is also used inside the callee.
// CHECK-LABEL: func.func @not_folded(
// CHECK:         func.call @wgrad2(
// CHECK:         arith.addf
// CHECK:         func.call @wgrad3(
// CHECK:         arith.addf
// CHECK-NOT:     accumulate
func.func @not_folded(%g: tensor<128x640xf8E4M3FN>, %gs: tensor<128x20xf8E8M0FNU>,
                      %x: tensor<64x640xf8E4M3FN>, %xs: tensor<64x20xf8E8M0FNU>,
                      %offs: tensor<4xi32>) -> (tensor<4x128x64xbf16>, tensor<4x128x64xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant dense<0.0> : tensor<4x128x64xbf16>
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %z, %b = %z)
      -> (tensor<4x128x64xbf16>, tensor<4x128x64xbf16>) {
    %w = func.call @wgrad2(%g, %gs, %x, %xs, %offs, %a)
        : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU>, tensor<64x640xf8E4M3FN>, tensor<64x20xf8E8M0FNU>, tensor<4xi32>, tensor<4x128x64xbf16>) -> tensor<4x128x64xbf16>
    %s = arith.addf %a, %w : tensor<4x128x64xbf16>
    %v = func.call @wgrad3(%g, %gs, %x, %xs, %offs)
        : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU>, tensor<64x640xf8E4M3FN>, tensor<64x20xf8E8M0FNU>, tensor<4xi32>) -> tensor<4x128x64xbf16>
    %t = arith.addf %b, %v : tensor<4x128x64xbf16>
    scf.yield %s, %t : tensor<4x128x64xbf16>, tensor<4x128x64xbf16>
  }
  return %r#0, %r#1 : tensor<4x128x64xbf16>, tensor<4x128x64xbf16>
}
func.func @wgrad2(%g: tensor<128x640xf8E4M3FN>, %gs: tensor<128x20xf8E8M0FNU>,
                  %x: tensor<64x640xf8E4M3FN>, %xs: tensor<64x20xf8E8M0FNU>,
                  %offs: tensor<4xi32>, %unused: tensor<4x128x64xbf16>) -> tensor<4x128x64xbf16> {
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU>, tensor<64x640xf8E4M3FN>, tensor<64x20xf8E8M0FNU>, tensor<4xi32>) -> tensor<4x128x64xbf16>
  return %o : tensor<4x128x64xbf16>
}
func.func @wgrad3(%g: tensor<128x640xf8E4M3FN>, %gs: tensor<128x20xf8E8M0FNU>,
                  %x: tensor<64x640xf8E4M3FN>, %xs: tensor<64x20xf8E8M0FNU>,
                  %offs: tensor<4xi32>) -> tensor<4x128x64xbf16> {
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU>, tensor<64x640xf8E4M3FN>, tensor<64x20xf8E8M0FNU>, tensor<4xi32>) -> tensor<4x128x64xbf16>
  %o2 = arith.addf %o, %o : tensor<4x128x64xbf16>
  return %o : tensor<4x128x64xbf16>
}

// -----

// An f64 accumulator is left alone (a grouped GEMM produces bf16 or f32);
// a callee's argument attributes stay in step with its arguments.
// CHECK-LABEL: func.func @f64_and_attrs(
// CHECK:         arith.extf {{.*}} to tensor<4x128x64xf64>
// CHECK:         arith.addf
// CHECK:         func.call @wgrad_attrs.accumulate(
// CHECK-NOT:     arith.addf
// CHECK-LABEL: func.func private @wgrad_attrs.accumulate(
// CHECK-SAME:    %{{.+}}: tensor<128x640xf8E4M3FN> {test.tag}
// CHECK-SAME:    %{{.+}}: tensor<4x128x64xbf16>) -> tensor<4x128x64xbf16>
func.func @f64_and_attrs(%g: tensor<128x640xf8E4M3FN>, %gs: tensor<128x20xf8E8M0FNU>,
                         %x: tensor<64x640xf8E4M3FN>, %xs: tensor<64x20xf8E8M0FNU>,
                         %offs: tensor<4xi32>) -> (tensor<4x128x64xf64>, tensor<4x128x64xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant dense<0.0> : tensor<4x128x64xf64>
  %zb = arith.constant dense<0.0> : tensor<4x128x64xbf16>
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%dw = %z, %dv = %zb)
      -> (tensor<4x128x64xf64>, tensor<4x128x64xbf16>) {
    %w = func.call @wgrad_f64(%g, %gs, %x, %xs, %offs)
        : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU>, tensor<64x640xf8E4M3FN>, tensor<64x20xf8E8M0FNU>, tensor<4xi32>) -> tensor<4x128x64xbf16>
    %e = arith.extf %w : tensor<4x128x64xbf16> to tensor<4x128x64xf64>
    %s = arith.addf %dw, %e : tensor<4x128x64xf64>
    %v = func.call @wgrad_attrs(%g, %gs, %x, %xs, %offs)
        : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU>, tensor<64x640xf8E4M3FN>, tensor<64x20xf8E8M0FNU>, tensor<4xi32>) -> tensor<4x128x64xbf16>
    %t = arith.addf %dv, %v : tensor<4x128x64xbf16>
    scf.yield %s, %t : tensor<4x128x64xf64>, tensor<4x128x64xbf16>
  }
  return %r#0, %r#1 : tensor<4x128x64xf64>, tensor<4x128x64xbf16>
}
func.func @wgrad_f64(%g: tensor<128x640xf8E4M3FN>, %gs: tensor<128x20xf8E8M0FNU>,
                     %x: tensor<64x640xf8E4M3FN>, %xs: tensor<64x20xf8E8M0FNU>,
                     %offs: tensor<4xi32>) -> tensor<4x128x64xbf16> {
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU>, tensor<64x640xf8E4M3FN>, tensor<64x20xf8E8M0FNU>, tensor<4xi32>) -> tensor<4x128x64xbf16>
  return %o : tensor<4x128x64xbf16>
}
func.func @wgrad_attrs(%g: tensor<128x640xf8E4M3FN> {test.tag}, %gs: tensor<128x20xf8E8M0FNU>,
                       %x: tensor<64x640xf8E4M3FN>, %xs: tensor<64x20xf8E8M0FNU>,
                       %offs: tensor<4xi32>) -> tensor<4x128x64xbf16> {
  %o = mxmoe.grouped_matmul %g scales %gs, %x scales %xs offsets %offs
      : (tensor<128x640xf8E4M3FN>, tensor<128x20xf8E8M0FNU>, tensor<64x640xf8E4M3FN>, tensor<64x20xf8E8M0FNU>, tensor<4xi32>) -> tensor<4x128x64xbf16>
  return %o : tensor<4x128x64xbf16>
}
