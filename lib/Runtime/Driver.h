//===- Driver.h - the CUDA driver API as the runtime opens it ---*- C++ -*-===//
//
// Internal to libmxmoe_runtime (Runtime.cpp, Program.cpp): the driver API
// entry points resolved with dlopen/dlsym from libcuda.so.1 (prototypes
// from the CUDA driver API reference, cuda.h of CUDA 12/13), the calling
// thread's last error, and the helpers every C entry point uses.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_LIB_RUNTIME_DRIVER_H
#define MXMOE_LIB_RUNTIME_DRIVER_H

#include "mxmoe-c/Runtime.h"

#include <cstdint>
#include <string>

namespace mxmoe::rt {

/// Alignment (bytes) every buffer passed to a kernel must have: the
/// manifest's "alignment" rule (16-byte vector loads and stores).
constexpr uintptr_t kPointerAlignment = 16;

using CUresult = int;
using CUdevice = int;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
using CUcontext = CUctx_st *;
using CUmodule = CUmod_st *;
using CUfunction = CUfunc_st *;
using CUstream = CUstream_st *;
using CUdeviceptr = unsigned long long;

struct Driver {
  void *handle = nullptr;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char **) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char **) = nullptr;
  CUresult (*cuCtxGetCurrent)(CUcontext *) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice *, int) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule *, const void *) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule,
                                  const char *) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t,
                            CUstream) = nullptr;
  CUresult (*cuMemAllocAsync)(CUdeviceptr *, size_t, CUstream) = nullptr;
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int) = nullptr;
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t,
                              CUstream) = nullptr;
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t,
                               CUstream) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t) = nullptr;
  CUresult (*cuMemAllocHost)(void **, size_t) = nullptr;
  CUresult (*cuMemFreeHost)(void *) = nullptr;
  // CUevent handles as void *; flags 2 = CU_EVENT_DISABLE_TIMING.
  CUresult (*cuEventCreate)(void **, unsigned) = nullptr;
  CUresult (*cuEventRecord)(void *, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(void *) = nullptr;
  CUresult (*cuEventDestroy)(void *) = nullptr;
  CUresult (*cuStreamWaitEvent)(CUstream, void *, unsigned) = nullptr;
  // CUstreamCaptureStatus: 0 = not capturing.
  CUresult (*cuStreamIsCapturing)(CUstream, int *) = nullptr;
  // cuTensorMapEncodeTiled (CUDA 12.0+): CUtensorMap*, dataType, rank,
  // globalAddress, globalDim, globalStrides, boxDim, elementStrides,
  // interleave, swizzle, l2Promotion, oobFill.
  CUresult (*cuTensorMapEncodeTiled)(void *, int, uint32_t, void *,
                                     const uint64_t *, const uint64_t *,
                                     const uint32_t *, const uint32_t *, int,
                                     int, int, int) = nullptr;
  std::string loadError;
};

/// The driver, opened once per process; `handle` is null when it could not
/// be (then `loadError` says why).
Driver &driver();

/// Sets the calling thread's last error (mxmoeRtLastError) and returns
/// `status`.
MxmoeRtStatus fail(MxmoeRtStatus status, std::string message);

/// "CUDA_ERROR_X (text)" of a driver result.
std::string cudaErrorText(Driver &d, CUresult rc);

/// The driver with a current context (device 0's primary context when the
/// thread has none), or MXMOE_RT_ERROR_NO_DRIVER / _CUDA.
MxmoeRtStatus requireDriver(Driver *&out);

} // namespace mxmoe::rt

#endif // MXMOE_LIB_RUNTIME_DRIVER_H
