//===- ManifestUtils.h - helpers of the manifest writers --------*- C++ -*-===//
//
// Shared by Manifest.cpp (kernel rows, tiled MLPs, uncompiled ops) and
// ManifestPrograms.cpp (launch programs).
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_LIB_TARGET_MANIFESTUTILS_H
#define MXMOE_LIB_TARGET_MANIFESTUTILS_H

#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::mxmoe::target::detail {

inline std::string typeString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

/// The `fqn` and `pass` of an expanded function (mxmoe.fqn, mxmoe.pass),
/// where it has them.
inline void addFunctionTags(Operation *fn, llvm::json::Object &o) {
  if (auto fqn = fn->getAttrOfType<StringAttr>(
          MXMoEDialect::FqnAttrHelper::getNameStr()))
    o["fqn"] = fqn.getValue();
  if (auto pass = fn->getAttrOfType<StringAttr>(
          MXMoEDialect::PassAttrHelper::getNameStr()))
    o["pass"] = pass.getValue();
}

/// Shape, element type, bytes and scale layout of a tensor type.
inline llvm::json::Object tensorInfo(Type t) {
  auto tt = cast<RankedTensorType>(t);
  llvm::json::Array shape;
  for (int64_t d : tt.getShape())
    shape.push_back(d);
  int64_t bits = tt.getElementType().getIntOrFloatBitWidth();
  llvm::json::Object o{{"shape", std::move(shape)},
                       {"dtype", typeString(tt.getElementType())},
                       {"bytes", (tt.getNumElements() * bits + 7) / 8}};
  if (Attribute enc = tt.getEncoding()) {
    std::string e;
    llvm::raw_string_ostream os(e);
    enc.print(os);
    o["layout"] = e;
  }
  return o;
}

/// An op with nothing to compute (convert-mxmoe-to-gpu: empty results are
/// zero-byte buffers, the zeros of a GEMM with contraction extent 0 a
/// zero-filled buffer): a value of the program, no step.
inline bool isComputeFree(Operation &op) {
  return op.hasAttr(MXMoEDialect::EmptyResultAttrHelper::getNameStr()) ||
         op.hasAttr(MXMoEDialect::ZeroResultAttrHelper::getNameStr());
}

} // namespace mlir::mxmoe::target::detail

#endif // MXMOE_LIB_TARGET_MANIFESTUTILS_H
