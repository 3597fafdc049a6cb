//===- ProgramMaps.cpp - the tensor maps of a program run -----------------===//
//
// A grouped-GEMM step takes TMA descriptors (CUtensorMap, 128 bytes) over
// its operands. They depend on the operands' addresses, so a run encodes
// them on the host (mxmoeRtEncodeTensorMap2D) and copies them to device
// memory: into caller memory (mxmoeRtProgramEnqueue with `tensorMaps`,
// the CUDA-graph path), or into the program's cache of device copies by
// address (kMapCache sets, least recently used out), staged through
// page-locked memory so the copy is asynchronous.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"
#include "Program.h"

using namespace mxmoe::rt;

namespace {

MxmoeRtStatus cudaFail(Driver &d, CUresult rc, const std::string &what) {
  return fail(MXMOE_RT_ERROR_CUDA, what + ": " + cudaErrorText(d, rc));
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

/// The page-locked staging memory and its slot events, once.
MxmoeRtStatus allocStaging(Driver &d, MxmoeRtProgram_ &p) {
  if (p.mapStaging)
    return MXMOE_RT_SUCCESS;
  size_t bytes = kMapCache * p.maps.size() * sizeof(TensorMapBlob);
  if (CUresult rc = d.cuMemAllocHost(&p.mapStaging, bytes)) {
    p.mapStaging = nullptr;
    return cudaFail(d, rc, "page-locked tensor-map staging");
  }
  p.slotEvents.assign(kMapCache, nullptr);
  for (size_t i = kMapCache; i-- > 0;)
    p.freeSlots.push_back(i);
  return MXMOE_RT_SUCCESS;
}

/// A staging slot for a new cache entry (the least recently used entry's,
/// evicted, once the cache is full), its last copy done. On failure no
/// slot is taken (an evicted entry stays evicted).
MxmoeRtStatus takeSlot(MxmoeRtProgram_ &p, void *stream, size_t &slot) {
  Driver &d = driver();
  if (MxmoeRtStatus s = allocStaging(d, p))
    return s;
  if (p.freeSlots.empty()) {
    if (p.mapCache.empty()) // every slot is either free or an entry's
      return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                  p.function + ": internal error: no tensor-map slot");
    MapCacheEntry old = std::move(p.mapCache.back());
    p.mapCache.pop_back();
    p.freeSlots.push_back(old.slot);
    if (MxmoeRtStatus s = mxmoeRtMemFreeAsync(old.device, stream))
      return s;
  }
  slot = p.freeSlots.back();
  void *&event = p.slotEvents[slot];
  CUresult rc = event ? d.cuEventSynchronize(event)
                      : d.cuEventCreate(&event, /*DISABLE_TIMING=*/2);
  if (rc)
    return cudaFail(d, rc, "tensor-map staging event");
  p.freeSlots.pop_back();
  return MXMOE_RT_SUCCESS;
}

/// Encodes the maps of `key` into staging slot `slot` and copies them into
/// new device memory `device`, then records the slot's event; on failure
/// nothing stays allocated.
MxmoeRtStatus fillSlot(MxmoeRtProgram_ &p, const std::vector<uintptr_t> &key,
                       size_t slot, void *stream, void *&device) {
  auto *host =
      static_cast<TensorMapBlob *>(p.mapStaging) + slot * p.maps.size();
  size_t bytes = sizeof(TensorMapBlob) * p.maps.size();
  if (MxmoeRtStatus s = encodeMaps(p, key, host))
    return s;
  if (MxmoeRtStatus s = mxmoeRtMemAllocAsync(&device, bytes, stream))
    return s;
  MxmoeRtStatus s = mxmoeRtMemcpyAsync(device, host, bytes, stream);
  Driver &d = driver();
  if (!s)
    if (CUresult rc =
            d.cuEventRecord(p.slotEvents[slot], static_cast<CUstream>(stream)))
      s = cudaFail(d, rc, "cuEventRecord");
  if (s) {
    std::string why = mxmoeRtLastError();
    mxmoeRtMemFreeAsync(device, stream);
    fail(s, why); // the first failure is the message
  }
  return s;
}

} // namespace

namespace mxmoe::rt {

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
  MapCacheEntry e{key, slot, nullptr};
  if (MxmoeRtStatus s = fillSlot(p, key, slot, stream, e.device)) {
    p.freeSlots.push_back(slot);
    return s;
  }
  maps = reinterpret_cast<uintptr_t>(e.device);
  p.mapCache.push_front(std::move(e));
  return MXMOE_RT_SUCCESS;
}

void freeMapCache(MxmoeRtProgram_ &p) {
  Driver &d = driver();
  for (MapCacheEntry &e : p.mapCache)
    mxmoeRtMemFreeAsync(e.device, nullptr);
  p.mapCache.clear();
  for (void *event : p.slotEvents)
    if (event) {
      d.cuEventSynchronize(event);
      d.cuEventDestroy(event);
    }
  p.slotEvents.clear();
  if (p.mapStaging)
    d.cuMemFreeHost(p.mapStaging);
  p.mapStaging = nullptr;
}

} // namespace mxmoe::rt
