//===- MXMoEDialect.cpp - mxmoe dialect -----------------------------------===//

#include "mxmoe/Dialect/MXMoE/IR/MXMoEDialect.h"
#include "mxmoe/Dialect/MXMoE/IR/MXMoEAttrs.h"
#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

#include "llvm/ADT/StringSwitch.h"

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

namespace {

/// `mxmoe.kernel_args` entry `a` of `op`: a #mxmoe.kernel_arg whose
/// operand or result index is one of op's. (An annotated destination-style
/// op bufferized by one-shot-bufferize, e.g. a shard loop's
/// linalg.transpose, has no results: its result i is written into its
/// init operand i.)
LogicalResult verifyBinding(Operation *op, Attribute a) {
  auto arg = dyn_cast<KernelArgAttr>(a);
  if (!arg)
    return failure();
  switch (arg.getKind()) {
  case KernelArgKind::operand:
  case KernelArgKind::tensor_map:
    return success(arg.getIndex() < static_cast<int64_t>(op->getNumOperands()));
  case KernelArgKind::result: {
    int64_t results = op->getNumResults();
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op);
        dps && dps.hasPureBufferSemantics())
      results = dps.getNumDpsInits();
    return success(arg.getIndex() < results);
  }
  case KernelArgKind::status:
  case KernelArgKind::value:
    return success();
  }
  return failure();
}

/// The value constraints beyond the declared types.
LogicalResult verifyValue(Operation *op, NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto error = [&](const Twine &what) {
    return op->emitError() << "'" << name << "' " << what << ", got "
                           << attr.getValue();
  };
  if (auto dims = dyn_cast<DenseI64ArrayAttr>(attr.getValue())) {
    if (dims.size() != 3 ||
        llvm::any_of(dims.asArrayRef(), [](int64_t d) { return d < 1; }))
      return error("must be three extents [x, y, z], each >= 1");
    return success();
  }
  if (auto i = dyn_cast<IntegerAttr>(attr.getValue());
      i && i.getValue().isNegative())
    return error("must be >= 0");
  if (auto args = dyn_cast<ArrayAttr>(attr.getValue()))
    for (Attribute a : args)
      if (failed(verifyBinding(op, a)))
        return error("entries must be #mxmoe.kernel_arg<...> naming this "
                     "op's operands (operand, tensor_map) or results "
                     "(result), or status or value");
  return success();
}

template <typename... T> bool isOf(Attribute a) { return isa<T...>(a); }

} // namespace

LogicalResult MXMoEDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  using TypeCheck = bool (*)(Attribute);
  StringRef name = attr.getName().getValue();
  // The declared type of each attribute (MXMoEDialect.td).
  TypeCheck typeOk =
      llvm::StringSwitch<TypeCheck>(name)
          .Cases(GridAttrHelper::getNameStr(), BlockAttrHelper::getNameStr(),
                 isOf<DenseI64ArrayAttr>)
          .Cases(DynamicSmemAttrHelper::getNameStr(),
                 TmemColumnsAttrHelper::getNameStr(),
                 TiledMlpIdAttrHelper::getNameStr(),
                 NumShardsAttrHelper::getNameStr(),
                 ShardTokensAttrHelper::getNameStr(), isOf<IntegerAttr>)
          .Cases(MmaAttrHelper::getNameStr(), FqnAttrHelper::getNameStr(),
                 PassAttrHelper::getNameStr(),
                 DynamicShardsAttrHelper::getNameStr(), isOf<StringAttr>)
          .Case(KernelAttrHelper::getNameStr(), isOf<SymbolRefAttr>)
          .Case(KernelArgsAttrHelper::getNameStr(), isOf<ArrayAttr>)
          .Cases(EmptyResultAttrHelper::getNameStr(),
                 ZeroResultAttrHelper::getNameStr(), isOf<UnitAttr>)
          .Cases(TiledMlpAttrHelper::getNameStr(),
                 TiledMlpBackwardAttrHelper::getNameStr(),
                 isOf<StringAttr, UnitAttr>)
          .Case(GradAccumulatorAttrHelper::getNameStr(), isOf<TypeAttr>)
          .Case(GemmConfigAttrHelper::getNameStr(), isOf<GemmConfigAttr>)
          .Default(nullptr);
  if (!typeOk)
    return op->emitError() << "unknown mxmoe attribute '" << name
                           << "' (MXMoEDialect.td lists the known ones)";
  if (!typeOk(attr.getValue()))
    return op->emitError() << "'" << name
                           << "' has the wrong type: " << attr.getValue();
  if (name == GemmConfigAttrHelper::getNameStr() && !isa<GroupedMatmulOp>(op))
    return op->emitError() << "'" << name
                           << "' configures a grouped-GEMM kernel: only "
                              "mxmoe.grouped_matmul carries it";
  return verifyValue(op, attr);
}
