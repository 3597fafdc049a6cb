//===- Passes.h - mxmoe model-level passes ----------------------*- C++ -*-===//

#ifndef MXMOE_DIALECT_MXMOE_TRANSFORMS_PASSES_H
#define MXMOE_DIALECT_MXMOE_TRANSFORMS_PASSES_H

#include "mxmoe/Dialect/MXMoE/IR/MXMoEDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <string>
#include <vector>

namespace mlir::mxmoe {

#define GEN_PASS_DECL
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h.inc"

/// The default exclude patterns of mxmoe-precision-policy.
std::vector<std::string> getDefaultPrecisionExcludes();

/// True when the dot-separated components of `pattern` occur as a
/// contiguous run of the components of `fqn` ("*" matches any component).
bool fqnMatches(llvm::StringRef fqn, llvm::StringRef pattern);

} // namespace mlir::mxmoe

#endif // MXMOE_DIALECT_MXMOE_TRANSFORMS_PASSES_H
