// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// #mxmoe.rounding<floor | rceil | ceil | even> as a standalone attribute.

// CHECK-LABEL: func.func @rounding_floor()
// CHECK-SAME:    attributes {mode = #mxmoe.rounding<floor>}
func.func @rounding_floor() attributes {mode = #mxmoe.rounding<floor>} {
  return
}

// CHECK-LABEL: func.func @rounding_rceil()
// CHECK-SAME:    attributes {mode = #mxmoe.rounding<rceil>}
func.func @rounding_rceil() attributes {mode = #mxmoe.rounding<rceil>} {
  return
}

// CHECK-LABEL: func.func @rounding_ceil()
// CHECK-SAME:    attributes {mode = #mxmoe.rounding<ceil>}
func.func @rounding_ceil() attributes {mode = #mxmoe.rounding<ceil>} {
  return
}

// CHECK-LABEL: func.func @rounding_even()
// CHECK-SAME:    attributes {mode = #mxmoe.rounding<even>}
func.func @rounding_even() attributes {mode = #mxmoe.rounding<even>} {
  return
}

// All four in an array, in order.
// CHECK-LABEL: func.func @rounding_all()
// CHECK-SAME:    attributes {modes = [#mxmoe.rounding<floor>, #mxmoe.rounding<rceil>, #mxmoe.rounding<ceil>, #mxmoe.rounding<even>]}
func.func @rounding_all() attributes {modes = [#mxmoe.rounding<floor>, #mxmoe.rounding<rceil>, #mxmoe.rounding<ceil>, #mxmoe.rounding<even>]} {
  return
}
