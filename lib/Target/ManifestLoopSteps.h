//===- ManifestLoopSteps.h - a program loop's body steps --------*- C++ -*-===//
//
// The passes over the body of a launch program's loop step
// (ManifestPrograms.cpp, docs/mxmoe-compile.md "Loop steps"): what each
// step reads and writes, dropping steps whose results nothing reads, and
// hoisting loop-invariant steps (a weight's quantization) before the loop,
// reusing an equal step hoisted by an earlier loop.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_LIB_TARGET_MANIFESTLOOPSTEPS_H
#define MXMOE_LIB_TARGET_MANIFESTLOOPSTEPS_H

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <map>
#include <vector>

namespace mlir::mxmoe::target::detail {

/// The storage a step binding names: one of the program's arguments,
/// buffers or constants, whole (a row view of it counts as all of it).
struct Storage {
  enum Kind : uint8_t { None, Arg, Buffer, Constant };
  Kind kind = None;
  int64_t index = 0;

  bool operator==(const Storage &o) const {
    return kind == o.kind && index == o.index;
  }
  bool isBuffer() const { return kind == Buffer; }
};

/// The storage of a binding ({"arg": i}, {"buffer": i} or {"constant": i},
/// with or without a view); None for a status or value binding.
Storage storageOf(const llvm::json::Object &binding);

/// What a step of a loop body reads and writes, and whether any of its
/// bindings is a per-iteration row view ("iteration_bytes").
struct StepIO {
  llvm::SmallVector<Storage> reads, writes;
  bool perIteration = false;
};

/// Buffer renames: a buffer -> the equal one that stands for it.
using BufferRenames = std::map<int64_t, int64_t>;

/// The passes over loop bodies of one program, whose buffer table is
/// `buffers` (buffers these passes leave without a writer get zero bytes
/// and an "unused" reason).
class LoopBodySteps {
public:
  explicit LoopBodySteps(llvm::json::Array &buffers) : buffers(buffers) {}

  /// Drops the steps of `body` (with `io`, one per step) whose results
  /// nothing reads (the recomputed forward's combined output in a
  /// backward): every buffer they write was made in this body (from
  /// `firstBuffer` on), is not loop-carried, and no step of the body reads
  /// it; to a fixpoint.
  void dropDead(llvm::json::Array &body, std::vector<StepIO> &io,
                size_t firstBuffer);

  /// Moves the steps of `body` that compute the same thing every iteration
  /// to `before` (the steps before the loop), or drops them where an equal
  /// step hoisted earlier (by this loop or an earlier one) computed their
  /// outputs; the buffers so replaced are added to `renamed` and renamed
  /// in the steps left in `body`.
  void hoistInvariant(llvm::json::Array &body, const std::vector<StepIO> &io,
                      llvm::json::Array &before, BufferRenames &renamed);

private:
  bool reuseHoisted(llvm::json::Object &step, const StepIO &io,
                    BufferRenames &renamed);
  void markUnused(int64_t buffer, llvm::StringRef why);

  llvm::json::Array &buffers;
  /// Per hoisted step's signature (kernel, grid, inputs), its outputs.
  llvm::StringMap<llvm::SmallVector<int64_t>> hoistedOutputs;
  llvm::DenseSet<int64_t> hoistedBuffers;
};

/// Renames the buffers that `step`'s bindings name.
void renameBuffers(llvm::json::Object &step, const BufferRenames &to);

} // namespace mlir::mxmoe::target::detail

#endif // MXMOE_LIB_TARGET_MANIFESTLOOPSTEPS_H
