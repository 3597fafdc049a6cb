//===- ManifestLoopSteps.cpp - a program loop's body steps ----------------===//
//
// Dead-step removal and loop-invariant hoisting over the body of a launch
// program's loop step; see ManifestLoopSteps.h.
//
//===----------------------------------------------------------------------===//

#include "ManifestLoopSteps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace mlir::mxmoe::target::detail;

Storage mlir::mxmoe::target::detail::storageOf(const llvm::json::Object &b) {
  for (auto [key, kind] :
       {std::pair{"arg", Storage::Arg}, std::pair{"buffer", Storage::Buffer},
        std::pair{"constant", Storage::Constant}})
    if (std::optional<int64_t> i = b.getInteger(key))
      return Storage{kind, *i};
  return Storage{};
}

void mlir::mxmoe::target::detail::renameBuffers(llvm::json::Object &step,
                                                const BufferRenames &to) {
  for (llvm::json::Value &v : *step.getArray("bindings"))
    if (std::optional<int64_t> b = v.getAsObject()->getInteger("buffer"))
      if (auto it = to.find(*b); it != to.end())
        (*v.getAsObject())["buffer"] = it->second;
}

void LoopBodySteps::markUnused(int64_t buffer, llvm::StringRef why) {
  llvm::json::Object &info = *buffers[buffer].getAsObject();
  info["shape"] = llvm::json::Array{0};
  info["bytes"] = 0;
  info["unused"] = why;
}

void LoopBodySteps::dropDead(llvm::json::Array &body, std::vector<StepIO> &io,
                             size_t firstBuffer) {
  std::vector<bool> dead(body.size(), false);
  auto local = [&](const Storage &s) {
    return s.isBuffer() && static_cast<size_t>(s.index) >= firstBuffer &&
           !buffers[s.index].getAsObject()->get("loop_carried");
  };
  auto readByLive = [&](const Storage &s) {
    for (size_t j = 0; j < body.size(); ++j)
      if (!dead[j] && llvm::is_contained(io[j].reads, s))
        return true;
    return false;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < body.size(); ++i) {
      if (dead[i] || io[i].writes.empty() ||
          !llvm::all_of(io[i].writes, local) ||
          llvm::any_of(io[i].writes, readByLive))
        continue;
      dead[i] = changed = true;
    }
  }
  llvm::json::Array kept;
  std::vector<StepIO> keptIO;
  for (size_t i = 0; i < body.size(); ++i) {
    if (!dead[i]) {
      kept.push_back(std::move(body[i]));
      keptIO.push_back(std::move(io[i]));
      continue;
    }
    for (const Storage &s : io[i].writes) // they hold nothing: zero bytes
      markUnused(s.index, "written by a step that nothing reads (dropped)");
  }
  body = std::move(kept);
  io = std::move(keptIO);
}

void LoopBodySteps::hoistInvariant(llvm::json::Array &body,
                                   const std::vector<StepIO> &io,
                                   llvm::json::Array &before,
                                   BufferRenames &renamed) {
  // A step is invariant when none of its storage is a row view, it does
  // not update its input in place, nothing left in the loop writes what it
  // reads, and no other step of the body writes what it writes; to a
  // fixpoint (a hoisted step's results are then invariant inputs).
  std::vector<bool> hoisted(body.size(), false);
  auto writtenByOthers = [&](const Storage &s, size_t self, bool onlyKept) {
    for (size_t j = 0; j < body.size(); ++j)
      if (j != self && !(onlyKept && hoisted[j]) &&
          llvm::is_contained(io[j].writes, s))
        return true;
    return false;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < body.size(); ++i) {
      bool inPlace = llvm::any_of(io[i].writes, [&](const Storage &s) {
        return llvm::is_contained(io[i].reads, s);
      }); // a sum: once per iteration
      if (hoisted[i] || io[i].perIteration || inPlace ||
          llvm::any_of(io[i].reads,
                       [&](auto &s) { return writtenByOthers(s, i, true); }) ||
          llvm::any_of(io[i].writes,
                       [&](auto &s) { return writtenByOthers(s, i, false); }))
        continue;
      hoisted[i] = changed = true;
    }
  }
  llvm::json::Array kept;
  for (size_t i = 0; i < body.size(); ++i) {
    if (!hoisted[i]) {
      kept.push_back(std::move(body[i]));
      continue;
    }
    renameBuffers(*body[i].getAsObject(), renamed);
    if (!reuseHoisted(*body[i].getAsObject(), io[i], renamed))
      before.push_back(std::move(body[i]));
  }
  for (llvm::json::Value &step : kept)
    renameBuffers(*step.getAsObject(), renamed);
  body = std::move(kept);
}

bool LoopBodySteps::reuseHoisted(llvm::json::Object &step, const StepIO &io,
                                 BufferRenames &renamed) {
  // The step without its outputs: kernel, grid, input bindings, values.
  std::string sig;
  llvm::raw_string_ostream os(sig);
  os << *step.getString("kernel");
  if (const llvm::json::Value *grid = step.get("grid"))
    os << *grid;
  llvm::SmallVector<int64_t> outs;
  for (const llvm::json::Value &v : *step.getArray("bindings")) {
    const llvm::json::Object &b = *v.getAsObject();
    Storage s = storageOf(b);
    if (s.kind != Storage::None && llvm::is_contained(io.writes, s)) {
      if (!s.isBuffer() || b.get("view_bytes"))
        return false; // an output that is not a buffer of its own
      outs.push_back(s.index);
      os << "|out";
    } else {
      os << "|" << llvm::json::Value(llvm::json::Object(b));
    }
  }
  // (Only steps over arguments, constants and hoisted outputs, which no
  // step changes: another buffer might change between the loops.)
  for (const Storage &s : io.reads)
    if (s.isBuffer() && !hoistedBuffers.count(s.index))
      return false;
  hoistedBuffers.insert(outs.begin(), outs.end());
  auto [it, fresh] = hoistedOutputs.try_emplace(sig, outs);
  if (fresh || it->second.size() != outs.size())
    return false;
  // An equal step ran before this loop: its outputs serve this one.
  for (auto [mine, theirs] : llvm::zip(outs, it->second)) {
    renamed[mine] = theirs;
    markUnused(mine, "an equal loop-invariant step computed it before");
  }
  return true;
}
