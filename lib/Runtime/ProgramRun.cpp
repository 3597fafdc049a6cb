//===- ProgramRun.cpp - running a bound launch program --------------------===//
//
// mxmoeRtProgramRun / Check / Destroy and the queries of mxmoe-c/Runtime.h
// over a program bound by Program.cpp. A run does what
// python/mxmoe/program.py's Program.__call__ does for an eager call:
// zero-fill the "zero" buffers, set the status words to -1, bind the
// tensor maps of the run's addresses (cached), launch every step in order.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"
#include "Program.h"

#include <cstdio>
#include <map>
#include <mutex>

using namespace mxmoe::rt;

namespace {

MxmoeRtStatus cudaFail(Driver &d, CUresult rc, const std::string &what) {
  return fail(MXMOE_RT_ERROR_CUDA, what + ": " + cudaErrorText(d, rc));
}

std::string hex(const void *p) {
  char s[32];
  std::snprintf(s, sizeof(s), "%p", p);
  return s;
}

/// Null (unless 0 bytes) or misaligned caller addresses, before anything
/// is enqueued.
MxmoeRtStatus checkAddresses(const MxmoeRtProgram_ &p, void *const *ptrs,
                             const std::vector<Tensor> &specs,
                             const char *what) {
  for (size_t i = 0; i < specs.size(); ++i) {
    uintptr_t a = reinterpret_cast<uintptr_t>(ptrs[i]);
    if ((a == 0 && specs[i].bytes != 0) || a % kPointerAlignment != 0)
      return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                  "mxmoeRtProgramRun(" + p.function + "): " + what + " " +
                      std::to_string(i) + " (" + hex(ptrs[i]) +
                      ") is null or not 16-byte aligned");
  }
  return MXMOE_RT_SUCCESS;
}

/// Device memory of `bytes` holding `host` (synchronous: once per program).
MxmoeRtStatus upload(Driver &d, const void *host, size_t bytes, void *stream,
                     void **device) {
  if (MxmoeRtStatus s = mxmoeRtMemAllocAsync(device, bytes, stream))
    return s;
  if (MxmoeRtStatus s = mxmoeRtSynchronize(stream))
    return s;
  if (CUresult rc =
          d.cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(*device), host, bytes))
    return cudaFail(d, rc, "copying a program constant");
  return MXMOE_RT_SUCCESS;
}

/// Modules by (image bytes, context), shared by the programs of one
/// compile output (a model's programs all name its one cubin): loaded once,
/// unloaded with the last program using it.
struct SharedModule {
  MxmoeRtModule module;
  size_t users;
};
std::mutex moduleMutex;
std::map<std::pair<std::string, void *>, SharedModule> moduleTable;

MxmoeRtStatus acquireModule(Driver &d, MxmoeRtProgram_ &p) {
  CUcontext ctx = nullptr;
  if (CUresult rc = d.cuCtxGetCurrent(&ctx))
    return cudaFail(d, rc, "cuCtxGetCurrent");
  std::lock_guard<std::mutex> lock(moduleMutex);
  auto key = std::make_pair(std::string(p.image.begin(), p.image.end()),
                            static_cast<void *>(ctx));
  auto it = moduleTable.find(key);
  if (it == moduleTable.end()) {
    MxmoeRtModule m = nullptr;
    if (MxmoeRtStatus s = mxmoeRtModuleLoad(p.image.data(), p.image.size(), &m))
      return s;
    it = moduleTable.emplace(std::move(key), SharedModule{m, 0}).first;
  }
  ++it->second.users;
  p.module = it->second.module;
  p.moduleContext = ctx;
  return MXMOE_RT_SUCCESS;
}

void releaseModule(MxmoeRtProgram_ &p) {
  if (!p.module)
    return;
  std::lock_guard<std::mutex> lock(moduleMutex);
  auto key = std::make_pair(std::string(p.image.begin(), p.image.end()),
                            p.moduleContext);
  auto it = moduleTable.find(key);
  if (it != moduleTable.end() && --it->second.users == 0) {
    mxmoeRtModuleUnload(it->second.module);
    moduleTable.erase(it);
  }
  p.module = nullptr;
}

/// The first run's setup: the module, the constants, and the status words
/// when the run uses the program's own (`ownStatus`).
MxmoeRtStatus prepare(Driver &d, MxmoeRtProgram_ &p, void *stream,
                      bool ownStatus) {
  if (!p.module && !p.steps.empty())
    if (MxmoeRtStatus s = acquireModule(d, p))
      return s;
  while (p.constantDevice.size() < p.constants.size()) {
    const std::vector<uint8_t> &c = p.constantBytes[p.constantDevice.size()];
    void *dev = nullptr;
    if (MxmoeRtStatus s = upload(d, c.data(), c.size(), stream, &dev))
      return s;
    p.constantDevice.push_back(dev);
  }
  if (ownStatus && !p.statusDevice && !p.statusKernels.empty())
    return mxmoeRtMemAllocAsync(&p.statusDevice, 16 * p.statusKernels.size(),
                                stream);
  return MXMOE_RT_SUCCESS;
}

/// Address of an operand source in this run.
uintptr_t address(const MxmoeRtProgram_ &p, const Source &s, void *const *args,
                  void *const *buffers) {
  void *ptr = s.kind == Source::Arg        ? args[s.index]
              : s.kind == Source::Constant ? p.constantDevice[s.index]
                                           : buffers[s.index];
  return reinterpret_cast<uintptr_t>(ptr);
}

/// The tensor maps over the operand addresses `key`, into `out`.
MxmoeRtStatus encodeMaps(const MxmoeRtProgram_ &p,
                         const std::vector<uintptr_t> &key,
                         TensorMapBlob *out) {
  for (size_t i = 0; i < p.maps.size(); ++i) {
    const MapSpec &m = p.maps[i];
    if (MxmoeRtStatus s = mxmoeRtEncodeTensorMap2D(
            out[i].bytes.data(), m.dataType,
            reinterpret_cast<const void *>(key[i]), m.inner, m.rows,
            m.rowStrideBytes, m.boxInner, m.boxRows, m.swizzleBytes))
      return s;
  }
  return MXMOE_RT_SUCCESS;
}

std::vector<uintptr_t> mapAddresses(const MxmoeRtProgram_ &p, void *const *args,
                                    void *const *buffers) {
  std::vector<uintptr_t> key;
  for (const MapSpec &m : p.maps)
    key.push_back(address(p, m.operand, args, buffers));
  return key;
}

/// The run's tensor maps encoded into the caller's page-locked host memory
/// and copied into its device memory (`memory`), ordered on `stream`.
MxmoeRtStatus copyMaps(const MxmoeRtProgram_ &p, void *const *args,
                       void *const *buffers, const MxmoeRtRunMemory &memory,
                       void *stream) {
  if (reinterpret_cast<uintptr_t>(memory.tensorMaps) % 64 ||
      reinterpret_cast<uintptr_t>(memory.tensorMapsHost) % 64)
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                "mxmoeRtProgramEnqueue(" + p.function +
                    "): tensor-map memory must be 64-byte aligned");
  auto *host = static_cast<TensorMapBlob *>(memory.tensorMapsHost);
  if (MxmoeRtStatus s = encodeMaps(p, mapAddresses(p, args, buffers), host))
    return s;
  return mxmoeRtMemcpyAsync(memory.tensorMaps, host,
                            sizeof(TensorMapBlob) * p.maps.size(), stream);
}

/// A staging slot for a new cache entry (the least recently used entry's,
/// evicted, once the cache is full), its last copy done.
MxmoeRtStatus takeSlot(MxmoeRtProgram_ &p, void *stream, size_t &slot) {
  Driver &d = driver();
  if (!p.mapStaging) {
    size_t bytes = kMapCache * p.maps.size() * sizeof(TensorMapBlob);
    if (CUresult rc = d.cuMemAllocHost(&p.mapStaging, bytes))
      return cudaFail(d, rc, "page-locked tensor-map staging");
    p.slotEvents.assign(kMapCache, nullptr);
    for (size_t i = kMapCache; i-- > 0;)
      p.freeSlots.push_back(i);
  }
  if (p.freeSlots.empty()) {
    MapCacheEntry &old = p.mapCache.back();
    p.freeSlots.push_back(old.slot);
    if (MxmoeRtStatus s = mxmoeRtMemFreeAsync(old.device, stream))
      return s;
    p.mapCache.pop_back();
  }
  slot = p.freeSlots.back();
  p.freeSlots.pop_back();
  void *&event = p.slotEvents[slot];
  CUresult rc = event ? d.cuEventSynchronize(event)
                      : d.cuEventCreate(&event, /*DISABLE_TIMING=*/2);
  return rc ? cudaFail(d, rc, "tensor-map staging event") : MXMOE_RT_SUCCESS;
}

/// The device buffer of this run's tensor maps: cached by the addresses
/// they describe, else encoded and copied (ordered on `stream`).
MxmoeRtStatus bindMaps(MxmoeRtProgram_ &p, void *const *args,
                       void *const *buffers, void *stream, uintptr_t &maps) {
  std::vector<uintptr_t> key = mapAddresses(p, args, buffers);
  for (auto it = p.mapCache.begin(); it != p.mapCache.end(); ++it)
    if (it->addresses == key) {
      p.mapCache.splice(p.mapCache.begin(), p.mapCache, it);
      maps = reinterpret_cast<uintptr_t>(it->device);
      return MXMOE_RT_SUCCESS;
    }
  size_t slot = 0;
  if (MxmoeRtStatus s = takeSlot(p, stream, slot))
    return s;
  auto *host =
      static_cast<TensorMapBlob *>(p.mapStaging) + slot * p.maps.size();
  MapCacheEntry e{key, slot, nullptr};
  size_t bytes = sizeof(TensorMapBlob) * p.maps.size();
  MxmoeRtStatus s = encodeMaps(p, key, host);
  if (!s)
    s = mxmoeRtMemAllocAsync(&e.device, bytes, stream);
  if (!s && (s = mxmoeRtMemcpyAsync(e.device, host, bytes, stream)))
    mxmoeRtMemFreeAsync(e.device, stream);
  if (s) { // the slot stays free
    p.freeSlots.push_back(slot);
    return s;
  }
  Driver &d = driver();
  if (CUresult rc =
          d.cuEventRecord(p.slotEvents[slot], static_cast<CUstream>(stream)))
    return cudaFail(d, rc, "cuEventRecord");
  maps = reinterpret_cast<uintptr_t>(e.device);
  p.mapCache.push_front(std::move(e));
  return MXMOE_RT_SUCCESS;
}

/// Zero-fills and status words of a run.
MxmoeRtStatus resetWords(Driver &d, MxmoeRtProgram_ &p, void *const *buffers,
                         void *status, void *stream) {
  CUstream s = static_cast<CUstream>(stream);
  for (size_t i = 0; i < p.buffers.size(); ++i)
    if (p.buffers[i].zero && p.buffers[i].bytes)
      if (CUresult rc =
              d.cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(buffers[i]), 0,
                                p.buffers[i].bytes, s))
        return cudaFail(d, rc, "zero-filling buffer " + std::to_string(i));
  if (!p.statusKernels.empty())
    if (CUresult rc =
            d.cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(status),
                               0xFFFFFFFFu, 4 * p.statusKernels.size(), s))
      return cudaFail(d, rc, "resetting the status words");
  return MXMOE_RT_SUCCESS;
}

/// One launch per step, pointers from their sources.
MxmoeRtStatus launchSteps(MxmoeRtProgram_ &p, void *const *args,
                          void *const *buffers, uintptr_t maps,
                          uintptr_t status, void *stream) {
  std::vector<void *> ptrs;
  for (const Step &step : p.steps) {
    ptrs.clear();
    for (const Source &s : step.pointers) {
      uintptr_t a = s.kind == Source::Status ? status + 16 * s.index
                    : s.kind == Source::Map
                        ? maps + sizeof(TensorMapBlob) * s.index
                        : address(p, s, args, buffers);
      ptrs.push_back(reinterpret_cast<void *>(a));
    }
    if (MxmoeRtStatus s = mxmoeRtLaunchWithScalars(
            p.module, step.kernel.c_str(), step.grid.data(), step.block.data(),
            step.sharedBytes, stream, ptrs.data(), ptrs.size(),
            step.scalars.data(), step.scalars.size()))
      return s;
  }
  return MXMOE_RT_SUCCESS;
}

/// Counts and addresses of a run; whether `stream` is capturing a graph.
MxmoeRtStatus checkRun(Driver &d, MxmoeRtProgram_ &p, void *const *args,
                       size_t numArgs, void *const *buffers, size_t numBuffers,
                       void *stream, bool &capturing) {
  if (numArgs != p.args.size() || numBuffers != p.buffers.size() ||
      (numArgs && !args) || (numBuffers && !buffers))
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                "mxmoeRtProgramRun(" + p.function + "): expected " +
                    std::to_string(p.args.size()) + " arguments and " +
                    std::to_string(p.buffers.size()) + " buffers, got " +
                    std::to_string(numArgs) + " and " +
                    std::to_string(numBuffers));
  if (MxmoeRtStatus s = checkAddresses(p, args, p.args, "argument"))
    return s;
  if (MxmoeRtStatus s = checkAddresses(p, buffers, p.buffers, "buffer"))
    return s;
  int status = 0;
  if (CUresult rc =
          d.cuStreamIsCapturing(static_cast<CUstream>(stream), &status))
    return cudaFail(d, rc, "cuStreamIsCapturing");
  capturing = status != 0;
  return MXMOE_RT_SUCCESS;
}

/// What a captured run needs: caller memory, and constants already on the
/// device (their upload cannot be captured).
MxmoeRtStatus checkCapture(const MxmoeRtProgram_ &p,
                           const MxmoeRtRunMemory &m) {
  std::string why;
  if (!p.statusKernels.empty() && !m.statusWords)
    why = "needs caller status words";
  else if (!p.maps.empty() && (!m.tensorMaps || !m.tensorMapsHost))
    why = "needs caller tensor-map memory (device and page-locked host)";
  else if (p.constantDevice.size() < p.constants.size())
    why = "has constants: run it once outside the capture first (warm-up)";
  if (why.empty())
    return MXMOE_RT_SUCCESS;
  return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
              "mxmoeRtProgramEnqueue(" + p.function +
                  ") inside a CUDA-graph capture " + why);
}

/// A run with `memory` (NULL members: the program's own).
MxmoeRtStatus enqueue(MxmoeRtProgram_ &p, void *const *args, size_t numArgs,
                      void *const *buffers, size_t numBuffers,
                      const MxmoeRtRunMemory &memory, void *stream,
                      bool allowCapture) {
  Driver *d = nullptr;
  if (MxmoeRtStatus s = requireDriver(d))
    return s;
  bool capturing = false;
  if (MxmoeRtStatus s = checkRun(*d, p, args, numArgs, buffers, numBuffers,
                                 stream, capturing))
    return s;
  if (capturing && !allowCapture)
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                "mxmoeRtProgramRun(" + p.function +
                    "): the stream is capturing a CUDA graph; use "
                    "mxmoeRtProgramEnqueue with caller memory");
  if (capturing)
    if (MxmoeRtStatus s = checkCapture(p, memory))
      return s;
  if (MxmoeRtStatus s = prepare(*d, p, stream, !memory.statusWords))
    return s;
  uintptr_t maps = reinterpret_cast<uintptr_t>(memory.tensorMaps);
  if (!p.maps.empty()) {
    MxmoeRtStatus s = memory.tensorMaps
                          ? copyMaps(p, args, buffers, memory, stream)
                          : bindMaps(p, args, buffers, stream, maps);
    if (s)
      return s;
  }
  void *status = memory.statusWords ? memory.statusWords : p.statusDevice;
  if (MxmoeRtStatus s = resetWords(*d, p, buffers, status, stream))
    return s;
  return launchSteps(p, args, buffers, maps,
                     reinterpret_cast<uintptr_t>(status), stream);
}

} // namespace

extern "C" {

MxmoeRtStatus mxmoeRtProgramRun(MxmoeRtProgram program, void *const *args,
                                size_t numArgs, void *const *buffers,
                                size_t numBuffers, void *stream,
                                MxmoeRtCheck check) {
  if (!program)
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                "mxmoeRtProgramRun: null program");
  MxmoeRtRunMemory own = {nullptr, nullptr, nullptr};
  if (MxmoeRtStatus s = enqueue(*program, args, numArgs, buffers, numBuffers,
                                own, stream, /*allowCapture=*/false))
    return s;
  program->lastStream = stream;
  program->ran = true;
  return check == MXMOE_RT_CHECK_SYNC ? mxmoeRtProgramCheck(program)
                                      : MXMOE_RT_SUCCESS;
}

MxmoeRtStatus mxmoeRtProgramEnqueue(MxmoeRtProgram program, void *const *args,
                                    size_t numArgs, void *const *buffers,
                                    size_t numBuffers,
                                    const MxmoeRtRunMemory *memory,
                                    void *stream) {
  if (!program)
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                "mxmoeRtProgramEnqueue: null program");
  MxmoeRtRunMemory none = {nullptr, nullptr, nullptr};
  const MxmoeRtRunMemory &m = memory ? *memory : none;
  if (MxmoeRtStatus s = enqueue(*program, args, numArgs, buffers, numBuffers, m,
                                stream, /*allowCapture=*/true))
    return s;
  if (!m.statusWords) {
    program->lastStream = stream;
    program->ran = true;
  }
  return MXMOE_RT_SUCCESS;
}

MxmoeRtStatus mxmoeRtProgramCheck(MxmoeRtProgram program) {
  if (!program)
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                "mxmoeRtProgramCheck: null program");
  MxmoeRtProgram_ &p = *program;
  if (!p.ran || p.statusKernels.empty())
    return MXMOE_RT_SUCCESS;
  if (MxmoeRtStatus s = mxmoeRtSynchronize(p.lastStream))
    return s;
  Driver &d = driver();
  std::vector<int32_t> words(4 * p.statusKernels.size());
  if (CUresult rc = d.cuMemcpyDtoH(
          words.data(), reinterpret_cast<CUdeviceptr>(p.statusDevice),
          4 * words.size()))
    return cudaFail(d, rc, "reading the status words");
  for (size_t i = 0; i < p.statusKernels.size(); ++i)
    if (const char *meaning = mxmoeRtStatusMeaning(words[4 * i]))
      return fail(MXMOE_RT_ERROR_KERNEL_REJECTED_INPUT,
                  p.function + ": kernel '" + p.statusKernels[i] + "' " +
                      meaning + "; nothing was written");
  return MXMOE_RT_SUCCESS;
}

void mxmoeRtProgramDestroy(MxmoeRtProgram program) {
  if (!program)
    return;
  if (driver().handle) {
    for (MapCacheEntry &e : program->mapCache)
      mxmoeRtMemFreeAsync(e.device, program->lastStream);
    for (void *c : program->constantDevice)
      mxmoeRtMemFreeAsync(c, program->lastStream);
    mxmoeRtMemFreeAsync(program->statusDevice, program->lastStream);
    Driver &d = driver();
    for (void *event : program->slotEvents)
      if (event) {
        d.cuEventSynchronize(event);
        d.cuEventDestroy(event);
      }
    if (program->mapStaging)
      d.cuMemFreeHost(program->mapStaging);
  }
  releaseModule(*program);
  delete program;
}

size_t mxmoeRtProgramGetNumArgs(MxmoeRtProgram p) {
  return p ? p->args.size() : 0;
}
size_t mxmoeRtProgramGetNumBuffers(MxmoeRtProgram p) {
  return p ? p->buffers.size() : 0;
}
size_t mxmoeRtProgramGetNumReturns(MxmoeRtProgram p) {
  return p ? p->returns.size() : 0;
}
size_t mxmoeRtProgramGetNumSteps(MxmoeRtProgram p) {
  return p ? p->steps.size() : 0;
}
size_t mxmoeRtProgramGetNumStatusWords(MxmoeRtProgram p) {
  return p ? p->statusKernels.size() : 0;
}
size_t mxmoeRtProgramGetNumTensorMaps(MxmoeRtProgram p) {
  return p ? p->maps.size() : 0;
}
const char *mxmoeRtProgramGetStatusKernel(MxmoeRtProgram p, size_t index) {
  return p && index < p->statusKernels.size() ? p->statusKernels[index].c_str()
                                              : nullptr;
}

static MxmoeRtStatus tensorInfo(MxmoeRtProgram p, size_t index,
                                MxmoeRtTensorInfo *info, bool buffer) {
  const std::vector<Tensor> *specs =
      p ? (buffer ? &p->buffers : &p->args) : nullptr;
  if (!specs || !info || index >= specs->size())
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                std::string("mxmoeRtProgramGet") + (buffer ? "Buffer" : "Arg") +
                    ": null program or info, "
                    "or index " +
                    std::to_string(index) + " out of range");
  const Tensor &t = (*specs)[index];
  *info = {t.dtype.c_str(), t.shape.data(), t.shape.size(), t.bytes,
           t.zero ? 1 : 0};
  return MXMOE_RT_SUCCESS;
}

MxmoeRtStatus mxmoeRtProgramGetArg(MxmoeRtProgram p, size_t index,
                                   MxmoeRtTensorInfo *info) {
  return tensorInfo(p, index, info, /*buffer=*/false);
}

MxmoeRtStatus mxmoeRtProgramGetBuffer(MxmoeRtProgram p, size_t index,
                                      MxmoeRtTensorInfo *info) {
  return tensorInfo(p, index, info, /*buffer=*/true);
}

MxmoeRtStatus mxmoeRtProgramGetReturn(MxmoeRtProgram p, size_t index,
                                      MxmoeRtProgramSource *source,
                                      size_t *sourceIndex) {
  if (!p || !source || !sourceIndex || index >= p->returns.size())
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                "mxmoeRtProgramGetReturn: null argument or index " +
                    std::to_string(index) + " out of range");
  *source = p->returns[index].first;
  *sourceIndex = p->returns[index].second;
  return MXMOE_RT_SUCCESS;
}

} // extern "C"
