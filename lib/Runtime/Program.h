//===- Program.h - a bound launch program (runtime internal) ----*- C++ -*-===//
//
// MxmoeRtProgram_: one program of a manifest.json bound to its kernels by
// Program.cpp (mxmoeRtProgramLoad) and run by ProgramRun.cpp
// (mxmoeRtProgramRun). Every pointer parameter of every step has a Source;
// tensor-map parameters have a MapSpec, encoded per run.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_LIB_RUNTIME_PROGRAM_H
#define MXMOE_LIB_RUNTIME_PROGRAM_H

#include "mxmoe-c/Runtime.h"

#include <array>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <vector>

namespace mxmoe::rt {

/// One 128-byte CUtensorMap, 64-byte aligned as the driver requires.
struct alignas(64) TensorMapBlob {
  std::array<uint8_t, 128> bytes;
};

/// Where a pointer parameter's address comes from.
struct Source {
  enum Kind { Arg, Constant, Buffer, Status, Map } kind;
  size_t index; // arg/constant/buffer index, status word, or map slot
  /// Bytes past the start of the arg, constant or buffer (a row view: a
  /// loop step's shard of a token-axis tensor).
  uint64_t offset = 0;
};

/// A tensor-map parameter bound to an operand: what to encode per run.
struct MapSpec {
  Source operand; // arg, constant or buffer
  MxmoeRtTensorMapDataType dataType;
  uint64_t inner, rows, rowStrideBytes;
  uint32_t boxInner, boxRows, swizzleBytes;
};

/// One kernel launch: the step's grid (or the kernel's), the kernel's
/// block and shared memory, the pointers' sources, the scalar sizes.
struct Step {
  std::string kernel;
  std::array<uint32_t, 3> grid, block;
  uint32_t sharedBytes;
  std::vector<Source> pointers;
  std::vector<int64_t> scalars;
};

/// An argument, intermediate buffer or constant of the program.
struct Tensor {
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t bytes;
  bool zero; // zero-filled by every run (a GEMM over an empty contraction)
};

/// Device copies of a run's tensor maps, by the addresses they describe;
/// encoded in slot `slot` of the program's page-locked staging memory
/// (so the copy is asynchronous: from pageable memory it would wait for the
/// stream).
struct MapCacheEntry {
  std::vector<uintptr_t> addresses;
  size_t slot;
  void *device;
};

/// Cached map sets per program (least recently used out).
constexpr size_t kMapCache = 64;

} // namespace mxmoe::rt

struct MxmoeRtProgram_ {
  std::string function;
  std::vector<char> image; // cubin, or PTX with a NUL
  /// The loaded image, shared by the programs of one image and context
  /// (ProgramRun.cpp's module table).
  MxmoeRtModule module = nullptr;
  /// The CUDA context of the first run: every later run must have it
  /// current (the module, constants and caches live in it).
  void *context = nullptr;
  std::vector<mxmoe::rt::Tensor> args, buffers, constants;
  std::vector<std::vector<uint8_t>> constantBytes;
  std::vector<void *> constantDevice;
  std::vector<mxmoe::rt::Step> steps;
  std::vector<mxmoe::rt::MapSpec> maps;
  std::vector<std::string> statusKernels; // the kernel of each status word
  std::vector<std::pair<MxmoeRtProgramSource, size_t>> returns;
  void *statusDevice = nullptr; // 16 bytes per status word
  std::list<mxmoe::rt::MapCacheEntry> mapCache;
  /// kMapCache slots of page-locked memory, 128 bytes per tensor map, and
  /// per slot the event after its last copy (a slot is rewritten only once
  /// that copy is done).
  void *mapStaging = nullptr;
  std::vector<void *> slotEvents;
  std::vector<size_t> freeSlots;
  /// Runs that use the program's own memory (its status words or its
  /// tensor-map cache) are ordered: such a run on another stream than the
  /// last one (`ownStream`, compared only) first waits for `ownEvent`,
  /// recorded after each of them; mxmoeRtProgramCheck waits for it.
  void *ownStream = nullptr;
  void *ownEvent = nullptr;
  /// A run completed with the program's own status words.
  bool ranOwnStatus = false;
  /// Serializes Run / Enqueue / Check of one program across threads.
  std::mutex mutex;
};

namespace mxmoe::rt {

/// Address of an operand source (arg, constant or buffer, plus its view
/// offset) in a run.
inline uintptr_t address(const MxmoeRtProgram_ &p, const Source &s,
                         void *const *args, void *const *buffers) {
  void *ptr = s.kind == Source::Arg        ? args[s.index]
              : s.kind == Source::Constant ? p.constantDevice[s.index]
                                           : buffers[s.index];
  return reinterpret_cast<uintptr_t>(ptr) + s.offset;
}

// ProgramMaps.cpp: the tensor maps of a run.

/// Encoded into the caller's page-locked `memory.tensorMapsHost` and
/// copied into its device `memory.tensorMaps`, ordered on `stream`.
MxmoeRtStatus copyMaps(const MxmoeRtProgram_ &p, void *const *args,
                       void *const *buffers, const MxmoeRtRunMemory &memory,
                       void *stream);

/// The program's cached device copy for these addresses, else encoded and
/// copied into a new cache entry (ordered on `stream`); `maps` is its
/// device address.
MxmoeRtStatus bindMaps(MxmoeRtProgram_ &p, void *const *args,
                       void *const *buffers, void *stream, uintptr_t &maps);

/// Frees the cache, its staging memory and events (the program's context
/// current, its runs done).
void freeMapCache(MxmoeRtProgram_ &p);

} // namespace mxmoe::rt

#endif // MXMOE_LIB_RUNTIME_PROGRAM_H
