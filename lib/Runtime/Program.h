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
  void *moduleContext = nullptr;
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
  void *lastStream = nullptr;
  bool ran = false;
};

#endif // MXMOE_LIB_RUNTIME_PROGRAM_H
