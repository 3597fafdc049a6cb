// REQUIRES: fuzzer
// RUN: mxmoe-fuzz-pipeline %s 2>&1 | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t && split-file %s %t
// RUN: mxmoe-fuzz-pipeline %t/transpose.mlir %t/broadcast.mlir %t/valid.mlir 2>&1 | FileCheck %s --check-prefix=MORE

// Regression (mxmoe-fuzz-pipeline, a mutant of
// Transforms/TileMLP/tiled-vs-untiled-cpu.mlir): a known upstream bug, not
// in mxmoe. MLIR 22's custom parsers of linalg.reduce / linalg.broadcast
// (`dimensions = [...]`) and linalg.transpose (`permutation = [...]`) store
// the result of DenseI64ArrayAttr::parse without checking it, so a
// malformed list such as `dimensions = [x]` crashes the parser with a SEGV
// in NamedAttrList::set (mlir-opt-22 and mxmoe-opt crash the same way).
// The fuzzer skips such inputs (avoidsLinalgArrayParserBug); this checks
// it does so, and still runs well-formed ones.

// CHECK: Executed {{.*}}upstream-linalg-array-parser.mlir
// CHECK-NOT: ERROR
// MORE: Executed {{.*}}transpose.mlir
// MORE: Executed {{.*}}broadcast.mlir
// MORE: Executed {{.*}}valid.mlir
// MORE-NOT: ERROR

func.func @reduce(%v: tensor<4xf32>, %z: tensor<f32>) -> tensor<f32> {
  %m = linalg.reduce ins(%v : tensor<4xf32>) outs(%z : tensor<f32>) dimensions = [x]
    (%in: f32, %acc: f32) {
      %x = arith.maximumf %in, %acc : f32
      linalg.yield %x : f32
    }
  return %m : tensor<f32>
}

//--- transpose.mlir
func.func @transpose(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %t = linalg.transpose ins(%a : tensor<4x8xf32>) outs(%b : tensor<8x4xf32>) permutation = [1, 99999999999999999999]
  return %t : tensor<8x4xf32>
}

//--- broadcast.mlir
func.func @broadcast(%a: tensor<8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %t = linalg.broadcast ins(%a : tensor<8xf32>) outs(%b : tensor<4x8xf32>) dimensions = 0
  return %t : tensor<4x8xf32>
}

//--- valid.mlir
func.func @transpose(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %t = linalg.transpose ins(%a : tensor<4x8xf32>) outs(%b : tensor<8x4xf32>) permutation = [1, 0]
  return %t : tensor<8x4xf32>
}
