//===- KernelGen.cpp - helpers shared by the kernel generators ------------===//
//
// MX geometry and element checks, thread decomposition and group lookup
// shared by the lowerings of convert-mxmoe-to-gpu (KernelGen.h).
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;
using ::mxmoe::MXElementKind;

namespace {

FailureOr<MXGeometry> getGeometry(Operation *op, RankedTensorType hp,
                                  RankedTensorType data, int64_t axis) {
  ArrayRef<int64_t> s = hp.getShape();
  MXGeometry g;
  g.len = data.getShape().back(); // the padded token axis when jagged
  if (s.size() == 2) {
    g.hpBatch = s[0] * s[1];
    if (axis == 1)
      g.rows = s[0], g.hpRow = s[1], g.hpAlong = 1;
    else
      g.rows = s[1], g.hpRow = 1, g.hpAlong = s[1];
    return g;
  }
  g.batch = s[0];
  g.hpBatch = s[1] * s[2];
  if (axis == 2)
    g.rows = s[1], g.hpRow = s[2], g.hpAlong = 1;
  else if (axis == 1)
    g.rows = s[2], g.hpRow = 1, g.hpAlong = s[2];
  else
    return op->emitOpError("GPU lowering supports 3-D quantization along "
                           "axis 1 or 2 (per-expert weights), not axis 0");
  return g;
}

FailureOr<MXElementKind> getSupportedKind(Operation *op, Type elem) {
  std::optional<MXElementKind> kind = getMXElementKind(elem);
  if (kind && (*kind == MXElementKind::E4M3 || *kind == MXElementKind::E5M2 ||
               *kind == MXElementKind::E2M1))
    return *kind;
  return op->emitOpError("GPU lowering of ")
         << elem
         << " data is not implemented yet (supported: f8E4M3FN, "
            "f8E5M2, f4E2M1FN)";
}

} // namespace

FailureOr<std::pair<MXElementKind, MXGeometry>>
mlir::mxmoe::kernels::getMXKernelShape(Operation *op, RankedTensorType hp,
                                       RankedTensorType data, int64_t axis) {
  FailureOr<MXElementKind> kind = getSupportedKind(op, data.getElementType());
  if (failed(kind))
    return failure();
  FailureOr<MXGeometry> geo = getGeometry(op, hp, data, axis);
  if (failed(geo))
    return failure();
  return std::make_pair(*kind, *geo);
}

void mlir::mxmoe::kernels::decompose(KB &b, Value t, const MXGeometry &g,
                                     int64_t rs, int64_t cs, Value &bi,
                                     Value &r, Value &c) {
  if (g.rowwise()) {
    c = b.rem(t, cs);
    r = b.rem(b.div(t, cs), rs);
  } else {
    r = b.rem(t, rs);
    c = b.rem(b.div(t, rs), cs);
  }
  bi = b.div(t, rs * cs);
}

Value mlir::mxmoe::kernels::largestStartLE(KB &b, GroupTable &t, unsigned unit,
                                           Value key) {
  Value count = b.countLE(t.starts[unit], t.numGroups, key);
  return b.sub(count, b.idx(1));
}

std::string KernelGen::functionPart(Operation *op) {
  auto fn = op->getParentOfType<FunctionOpInterface>();
  std::string fnName = fn ? fn.getName().str() : "kernel";
  for (char &ch : fnName)
    if (!llvm::isAlnum(ch) && ch != '_')
      ch = '_';
  return fnName;
}

std::string KernelGen::name(StringRef kind, Operation *op) {
  std::string fnName = functionPart(op);
  return (fnName + "__" + kind + "_" + Twine(counters[fnName]++)).str();
}
