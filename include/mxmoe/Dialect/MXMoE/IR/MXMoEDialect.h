//===- MXMoEDialect.h - mxmoe dialect ---------------------------*- C++ -*-===//
//
// The mxmoe dialect: MX-format grouped GEMMs and tiled MLPs for MoE training.
// Definition: MXMoEDialect.td.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_DIALECT_MXMOE_IR_MXMOEDIALECT_H
#define MXMOE_DIALECT_MXMOE_IR_MXMOEDIALECT_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "mxmoe/Dialect/MXMoE/IR/MXMoEOpsDialect.h.inc"

#endif // MXMOE_DIALECT_MXMOE_IR_MXMOEDIALECT_H
