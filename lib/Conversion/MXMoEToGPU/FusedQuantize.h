//===- FusedQuantize.h - producer of a fused quantize kernel -*- C++ -*-===//
//
// Internal to convert-mxmoe-to-gpu: while the kernel of an
// mxmoe.fused_quantize is generated (FusedQuantize.cpp), the quantize
// generators' input loads (loadHPBlock), parameter list (createKernel with
// a RuntimeShapeSpec) and host arguments (KernelGen::finish) consult the
// active FusedSource: the producer's inputs replace the quantize input and
// its scalar body is evaluated at every loaded element (or, for a gather
// producer, the loads read the routed rows' token rows).
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_LIB_CONVERSION_MXMOETOGPU_FUSEDQUANTIZE_H
#define MXMOE_LIB_CONVERSION_MXMOETOGPU_FUSEDQUANTIZE_H

#include "KernelGen.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::mxmoe::kernels {

struct FusedSource {
  /// One producer input: the block argument it reads, its first column
  /// and row width (elements), its element type and, inside the kernel,
  /// its view.
  struct Input {
    BlockArgument arg;
    int64_t col, rowWidth;
    Type elem;
    Value mem;
  };

  /// One part of the producer: its generic, its first result column and
  /// its first input in `inputs`.
  struct Part {
    linalg::GenericOp producer;
    int64_t col0;
    unsigned firstInput;
  };

  explicit FusedSource(FusedQuantizeOp op);

  /// Parameter views: the first input's element type replaces the
  /// quantize input's (views[0]); the other inputs (every part's) are
  /// appended.
  void bind(SmallVectorImpl<Type> &views);
  /// Inside the kernel: records the views of the producer inputs.
  void bindViews(ValueRange views);
  /// Whether `mem` is the view standing for the quantize input.
  bool isAnchor(Value mem) const { return anchor && mem == anchor; }
  /// The `count` contiguous producer results at flat index `base` of the
  /// quantize input (a run within one row), in the producer's result
  /// element type (the quantize input's).
  SmallVector<Value> loadRun(KB &b, Value base, int64_t count);
  /// loadRun of one MX block (32 elements), as f32 (loadHPBlock).
  SmallVector<Value> load(KB &b, Value base);
  SmallVector<Value> loadFromPart(KB &b, unsigned p, Value r, Value c,
                                  int64_t count);
  SmallVector<Value> evalPart(KB &b, const Part &part, Value r, Value c,
                              int64_t count);
  /// loadRun as one vector<count x element> (the jagged kernel's 16-byte
  /// staging loads, QuantizeJagged.cpp).
  Value loadVector(KB &b, Value base, int64_t count);
  /// A gather producer's run: row r of the result is source row
  /// indices[r] / top_k (times scores[indices[r]]); an index out of range
  /// reads zeros and raises the status word to 3.
  SmallVector<Value> loadGathered(KB &b, Value r, Value c, int64_t count);
  /// The fused op's host arguments for the inner quantize kernel's `inner`.
  SmallVector<HostArg> hostArgs(ArrayRef<HostArg> inner);

  FusedQuantizeOp op;
  QuantizeOp quantize;
  /// The producer when it is a gather (inputs: source, indices, scores).
  GatherRowsOp gather;
  /// The kernel's status word (set by the group-table prologue).
  Value status;
  SmallVector<Part> parts;
  int64_t width;             ///< row length of the producer's result
  SmallVector<Input> inputs; ///< every part's, in order
  unsigned firstExtraView = 0;
  Value anchor;
  bool used = false;     ///< a load went through loadRun
  gpu::GPUFuncOp kernel; ///< set by KernelGen::finish
};

/// The fused quantization being generated on this thread (null outside
/// KernelGen::genFusedQuantize).
extern thread_local FusedSource *activeFusedSource;

} // namespace mlir::mxmoe::kernels

#endif // MXMOE_LIB_CONVERSION_MXMOETOGPU_FUSEDQUANTIZE_H
