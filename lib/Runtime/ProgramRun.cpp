//===- ProgramRun.cpp - running a bound launch program --------------------===//
//
// mxmoeRtProgramRun / Enqueue / Check / Destroy and the queries of
// mxmoe-c/Runtime.h over a program bound by Program.cpp. A run zero-fills
// the "zero" buffers, sets the status words to -1, binds the tensor maps
// of the run's addresses (ProgramMaps.cpp) and launches every step in
// order. Runs of one program are serialized by its mutex; runs that use its
// own memory (status words, tensor-map cache) are ordered across streams
// by an event; every run must have the context of the first one current.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"
#include "Program.h"

#include "mxmoe/KernelStatus.h"

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
MxmoeRtStatus checkAddresses(const MxmoeRtProgram_ &p, const char *entry,
                             void *const *ptrs,
                             const std::vector<Tensor> &specs,
                             const char *what) {
  for (size_t i = 0; i < specs.size(); ++i) {
    uintptr_t a = reinterpret_cast<uintptr_t>(ptrs[i]);
    if ((a == 0 && specs[i].bytes != 0) || a % kPointerAlignment != 0)
      return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                  std::string(entry) + "(" + p.function + "): " + what + " " +
                      std::to_string(i) + " (" + hex(ptrs[i]) +
                      ") is null or not 16-byte aligned");
  }
  return MXMOE_RT_SUCCESS;
}

/// Device memory of `bytes` holding `host` (synchronous: once per program);
/// on failure nothing stays allocated.
MxmoeRtStatus upload(Driver &d, const void *host, size_t bytes, void *stream,
                     void **device) {
  if (MxmoeRtStatus s = mxmoeRtMemAllocAsync(device, bytes, stream))
    return s;
  MxmoeRtStatus s = mxmoeRtSynchronize(stream);
  if (!s)
    if (CUresult rc =
            d.cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(*device), host, bytes))
      s = cudaFail(d, rc, "copying a program constant");
  if (s) {
    std::string why = mxmoeRtLastError();
    mxmoeRtMemFreeAsync(*device, stream);
    *device = nullptr;
    fail(s, why);
  }
  return s;
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

MxmoeRtStatus acquireModule(MxmoeRtProgram_ &p) {
  std::lock_guard<std::mutex> lock(moduleMutex);
  auto key =
      std::make_pair(std::string(p.image.begin(), p.image.end()), p.context);
  auto it = moduleTable.find(key);
  if (it == moduleTable.end()) {
    MxmoeRtModule m = nullptr;
    if (MxmoeRtStatus s = mxmoeRtModuleLoad(p.image.data(), p.image.size(), &m))
      return s;
    it = moduleTable.emplace(std::move(key), SharedModule{m, 0}).first;
  }
  ++it->second.users;
  p.module = it->second.module;
  return MXMOE_RT_SUCCESS;
}

/// The program's image is loaded in its context (by it or a program of the
/// same image): acquiring it then makes no driver call.
bool moduleLoaded(const MxmoeRtProgram_ &p) {
  if (p.module || p.steps.empty())
    return true;
  std::lock_guard<std::mutex> lock(moduleMutex);
  return moduleTable.count(std::make_pair(
             std::string(p.image.begin(), p.image.end()), p.context)) != 0;
}

void releaseModule(MxmoeRtProgram_ &p) {
  if (!p.module)
    return;
  std::lock_guard<std::mutex> lock(moduleMutex);
  auto key =
      std::make_pair(std::string(p.image.begin(), p.image.end()), p.context);
  auto it = moduleTable.find(key);
  if (it != moduleTable.end() && --it->second.users == 0) {
    mxmoeRtModuleUnload(it->second.module);
    moduleTable.erase(it);
  }
  p.module = nullptr;
}

/// The current context is the program's (recorded by its first run).
MxmoeRtStatus checkContext(Driver &d, MxmoeRtProgram_ &p, const char *entry) {
  CUcontext ctx = nullptr;
  if (CUresult rc = d.cuCtxGetCurrent(&ctx))
    return cudaFail(d, rc, "cuCtxGetCurrent");
  if (!p.context)
    p.context = ctx;
  if (p.context == ctx)
    return MXMOE_RT_SUCCESS;
  return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
              std::string(entry) + "(" + p.function +
                  "): the current CUDA context is not the one of the "
                  "program's first run (its module and memory live there); "
                  "make that device's context current, or load one program "
                  "per device");
}

/// The first run's setup: the module, the constants, and the status words
/// when the run uses the program's own (`ownStatus`).
MxmoeRtStatus prepare(Driver &d, MxmoeRtProgram_ &p, void *stream,
                      bool ownStatus) {
  if (!p.module && !p.steps.empty())
    if (MxmoeRtStatus s = acquireModule(p))
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

/// A run using the program's own memory on another stream than the last
/// such run waits for that run first (so status words and cached maps are
/// never in use by two streams, and evictions free after their last use).
MxmoeRtStatus orderOwn(Driver &d, MxmoeRtProgram_ &p, void *stream) {
  if (!p.ownEvent || p.ownStream == stream)
    return MXMOE_RT_SUCCESS;
  if (CUresult rc =
          d.cuStreamWaitEvent(static_cast<CUstream>(stream), p.ownEvent, 0))
    return cudaFail(d, rc, "cuStreamWaitEvent");
  return MXMOE_RT_SUCCESS;
}

MxmoeRtStatus recordOwn(Driver &d, MxmoeRtProgram_ &p, void *stream) {
  if (!p.ownEvent)
    if (CUresult rc = d.cuEventCreate(&p.ownEvent, /*DISABLE_TIMING=*/2)) {
      p.ownEvent = nullptr;
      return cudaFail(d, rc, "cuEventCreate");
    }
  if (CUresult rc = d.cuEventRecord(p.ownEvent, static_cast<CUstream>(stream)))
    return cudaFail(d, rc, "cuEventRecord");
  p.ownStream = stream;
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

/// Counts and addresses of a run.
MxmoeRtStatus checkRun(MxmoeRtProgram_ &p, const char *entry, void *const *args,
                       size_t numArgs, void *const *buffers,
                       size_t numBuffers) {
  if (numArgs != p.args.size() || numBuffers != p.buffers.size() ||
      (numArgs && !args) || (numBuffers && !buffers))
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                std::string(entry) + "(" + p.function + "): expected " +
                    std::to_string(p.args.size()) + " arguments and " +
                    std::to_string(p.buffers.size()) + " buffers, got " +
                    std::to_string(numArgs) + " and " +
                    std::to_string(numBuffers));
  if (MxmoeRtStatus s = checkAddresses(p, entry, args, p.args, "argument"))
    return s;
  return checkAddresses(p, entry, buffers, p.buffers, "buffer");
}

/// Alignment and pairing of caller run memory.
MxmoeRtStatus checkMemory(const MxmoeRtProgram_ &p, const MxmoeRtRunMemory &m) {
  std::string why;
  if (reinterpret_cast<uintptr_t>(m.statusWords) % 16)
    why = "the status words must be 16-byte aligned";
  else if (!m.tensorMaps != !m.tensorMapsHost)
    why = "give both tensor-map memories (device and page-locked host) "
          "or neither";
  if (why.empty())
    return MXMOE_RT_SUCCESS;
  return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
              "mxmoeRtProgramEnqueue(" + p.function + "): " + why);
}

/// What a captured run needs: caller memory, and the module and constants
/// already there (loading and uploading cannot be captured).
MxmoeRtStatus checkCapture(const MxmoeRtProgram_ &p,
                           const MxmoeRtRunMemory &m) {
  std::string why;
  if (!p.statusKernels.empty() && !m.statusWords)
    why = "needs caller status words";
  else if (!p.maps.empty() && !m.tensorMaps)
    why = "needs caller tensor-map memory (device and page-locked host)";
  else if (!moduleLoaded(p) || p.constantDevice.size() < p.constants.size())
    why = "needs its module and constants loaded: run it once outside the "
          "capture first (warm-up)";
  if (why.empty())
    return MXMOE_RT_SUCCESS;
  return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
              "mxmoeRtProgramEnqueue(" + p.function +
                  ") inside a CUDA-graph capture " + why);
}

/// Whether `stream` is capturing a CUDA graph; a capture is refused by
/// mxmoeRtProgramRun and checked by checkCapture.
MxmoeRtStatus checkStream(Driver &d, const MxmoeRtProgram_ &p,
                          const MxmoeRtRunMemory &m, void *stream,
                          bool allowCapture, bool &capturing) {
  int status = 0;
  if (CUresult rc =
          d.cuStreamIsCapturing(static_cast<CUstream>(stream), &status))
    return cudaFail(d, rc, "cuStreamIsCapturing");
  capturing = status != 0;
  if (capturing && !allowCapture)
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                "mxmoeRtProgramRun(" + p.function +
                    "): the stream is capturing a CUDA graph; use "
                    "mxmoeRtProgramEnqueue with caller memory");
  return capturing ? checkCapture(p, m) : MXMOE_RT_SUCCESS;
}

/// Tensor maps, resets and launches of a run whose checks passed.
MxmoeRtStatus launch(Driver &d, MxmoeRtProgram_ &p, void *const *args,
                     void *const *buffers, const MxmoeRtRunMemory &memory,
                     void *stream) {
  if (MxmoeRtStatus s = prepare(d, p, stream, !memory.statusWords))
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
  if (MxmoeRtStatus s = resetWords(d, p, buffers, status, stream))
    return s;
  return launchSteps(p, args, buffers, maps,
                     reinterpret_cast<uintptr_t>(status), stream);
}

/// A run with `memory` (NULL members: the program's own).
MxmoeRtStatus enqueue(MxmoeRtProgram_ &p, const char *entry, void *const *args,
                      size_t numArgs, void *const *buffers, size_t numBuffers,
                      const MxmoeRtRunMemory &memory, void *stream,
                      bool allowCapture) {
  Driver *d = nullptr;
  if (MxmoeRtStatus s = requireDriver(d))
    return s;
  if (MxmoeRtStatus s = checkRun(p, entry, args, numArgs, buffers, numBuffers))
    return s;
  if (MxmoeRtStatus s = checkMemory(p, memory))
    return s;
  if (MxmoeRtStatus s = checkContext(*d, p, entry))
    return s;
  bool capturing = false;
  if (MxmoeRtStatus s =
          checkStream(*d, p, memory, stream, allowCapture, capturing))
    return s;
  bool ownStatus = !memory.statusWords && !p.statusKernels.empty();
  bool own = ownStatus || (!memory.tensorMaps && !p.maps.empty());
  if (own)
    if (MxmoeRtStatus s = orderOwn(*d, p, stream))
      return s;
  MxmoeRtStatus s = launch(*d, p, args, buffers, memory, stream);
  if (own) { // even after a failure: a partial run is ordered too
    std::string why = s ? mxmoeRtLastError() : "";
    MxmoeRtStatus r = recordOwn(*d, p, stream);
    if (s)
      return fail(s, why);
    s = r;
  }
  if (!s && ownStatus)
    p.ranOwnStatus = true;
  return s;
}

/// Makes the program's context current for a call that may come from any
/// thread; restores the previous one.
struct ProgramContext {
  Driver &d;
  CUcontext saved = nullptr;
  bool set = false;
  ProgramContext(Driver &d, const MxmoeRtProgram_ &p) : d(d) {
    if (p.context && !d.cuCtxGetCurrent(&saved) && saved != p.context)
      set = !d.cuCtxSetCurrent(static_cast<CUcontext>(p.context));
  }
  ~ProgramContext() {
    if (set)
      d.cuCtxSetCurrent(saved);
  }
};

/// mxmoeRtProgramCheck, the program locked.
MxmoeRtStatus check(MxmoeRtProgram_ &p) {
  if (!p.ranOwnStatus || p.statusKernels.empty())
    return MXMOE_RT_SUCCESS;
  Driver &d = driver();
  ProgramContext scope(d, p);
  if (CUresult rc = d.cuEventSynchronize(p.ownEvent))
    return cudaFail(d, rc, "waiting for the program's last run");
  std::vector<int32_t> words(4 * p.statusKernels.size());
  if (CUresult rc = d.cuMemcpyDtoH(
          words.data(), reinterpret_cast<CUdeviceptr>(p.statusDevice),
          4 * words.size()))
    return cudaFail(d, rc, "reading the status words");
  for (size_t i = 0; i < p.statusKernels.size(); ++i)
    if (const char *meaning = mxmoeRtStatusMeaning(words[4 * i]))
      return fail(MXMOE_RT_ERROR_KERNEL_REJECTED_INPUT,
                  p.function + ": kernel '" + p.statusKernels[i] + "' " +
                      meaning + mxmoe::kernelStatusSuffix(words[4 * i]));
  return MXMOE_RT_SUCCESS;
}

/// `body(program)` with the program locked; a null program, or an exception
/// (host memory exhausted), is an error status, never a throw into C.
template <typename F>
MxmoeRtStatus guarded(const char *entry, MxmoeRtProgram program, F body) {
  if (!program)
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                std::string(entry) + ": null program");
  try {
    std::lock_guard<std::mutex> lock(program->mutex);
    return body(*program);
  } catch (const std::exception &e) {
    return fail(MXMOE_RT_ERROR_INTERNAL, std::string(entry) + "(" +
                                             program->function +
                                             "): " + e.what());
  }
}

} // namespace

extern "C" {

MxmoeRtStatus mxmoeRtProgramRun(MxmoeRtProgram program, void *const *args,
                                size_t numArgs, void *const *buffers,
                                size_t numBuffers, void *stream,
                                MxmoeRtCheck mode) {
  const char *entry = "mxmoeRtProgramRun";
  return guarded(entry, program, [&](MxmoeRtProgram_ &p) {
    MxmoeRtRunMemory own = {nullptr, nullptr, nullptr};
    if (MxmoeRtStatus s = enqueue(p, entry, args, numArgs, buffers, numBuffers,
                                  own, stream, /*allowCapture=*/false))
      return s;
    return mode == MXMOE_RT_CHECK_SYNC ? check(p) : MXMOE_RT_SUCCESS;
  });
}

MxmoeRtStatus mxmoeRtProgramEnqueue(MxmoeRtProgram program, void *const *args,
                                    size_t numArgs, void *const *buffers,
                                    size_t numBuffers,
                                    const MxmoeRtRunMemory *memory,
                                    void *stream) {
  const char *entry = "mxmoeRtProgramEnqueue";
  return guarded(entry, program, [&](MxmoeRtProgram_ &p) {
    MxmoeRtRunMemory none = {nullptr, nullptr, nullptr};
    return enqueue(p, entry, args, numArgs, buffers, numBuffers,
                   memory ? *memory : none, stream, /*allowCapture=*/true);
  });
}

MxmoeRtStatus mxmoeRtProgramCheck(MxmoeRtProgram program) {
  return guarded("mxmoeRtProgramCheck", program, check);
}

void mxmoeRtProgramDestroy(MxmoeRtProgram program) {
  if (!program)
    return;
  Driver &d = driver();
  if (d.handle && program->context) {
    ProgramContext scope(d, *program);
    if (program->ownEvent) {
      d.cuEventSynchronize(program->ownEvent);
      d.cuEventDestroy(program->ownEvent);
    }
    freeMapCache(*program);
    for (void *c : program->constantDevice)
      mxmoeRtMemFreeAsync(c, nullptr);
    mxmoeRtMemFreeAsync(program->statusDevice, nullptr);
    releaseModule(*program);
  }
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
