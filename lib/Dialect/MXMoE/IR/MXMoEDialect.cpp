//===- MXMoEDialect.cpp - mxmoe dialect -----------------------------------===//

#include "mxmoe/Dialect/MXMoE/IR/MXMoEDialect.h"
#include "mxmoe/Dialect/MXMoE/IR/MXMoEAttrs.h"
#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"

using namespace mlir;
using namespace mlir::mxmoe;

#include "mxmoe/Dialect/MXMoE/IR/MXMoEOpsDialect.cpp.inc"

void MXMoEDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.cpp.inc"
      >();
  registerAttributes();
}
