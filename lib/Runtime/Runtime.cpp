//===- Runtime.cpp - mxmoe kernel runtime over the CUDA driver API --------===//
//
// The driver API is resolved with dlopen/dlsym, so this library builds and
// links without the CUDA toolkit. Prototypes follow the CUDA driver API
// reference (cuda.h, CUDA 12/13); only the handful of entry points below are
// used.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"
#include "mxmoe/KernelStatus.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace mxmoe::rt {

thread_local std::string lastError;

MxmoeRtStatus fail(MxmoeRtStatus status, std::string message) {
  lastError = std::move(message);
  return status;
}

template <typename F> bool resolve(void *handle, const char *name, F &fn) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  return fn != nullptr;
}

Driver &driver() {
  static Driver d;
  static std::once_flag once;
  std::call_once(once, [] {
    const char *lib = "libcuda.so.1";
    d.handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!d.handle) {
      const char *why = dlerror();
      d.loadError = std::string("cannot open ") + lib +
                    " (no NVIDIA driver on this machine?): " + (why ? why : "");
      return;
    }
    bool ok =
        resolve(d.handle, "cuInit", d.cuInit) &&
        resolve(d.handle, "cuGetErrorName", d.cuGetErrorName) &&
        resolve(d.handle, "cuGetErrorString", d.cuGetErrorString) &&
        resolve(d.handle, "cuCtxGetCurrent", d.cuCtxGetCurrent) &&
        resolve(d.handle, "cuCtxSetCurrent", d.cuCtxSetCurrent) &&
        resolve(d.handle, "cuDeviceGet", d.cuDeviceGet) &&
        resolve(d.handle, "cuDevicePrimaryCtxRetain",
                d.cuDevicePrimaryCtxRetain) &&
        resolve(d.handle, "cuModuleLoadData", d.cuModuleLoadData) &&
        resolve(d.handle, "cuModuleUnload", d.cuModuleUnload) &&
        resolve(d.handle, "cuModuleGetFunction", d.cuModuleGetFunction) &&
        resolve(d.handle, "cuLaunchKernel", d.cuLaunchKernel) &&
        resolve(d.handle, "cuStreamSynchronize", d.cuStreamSynchronize) &&
        resolve(d.handle, "cuCtxSynchronize", d.cuCtxSynchronize) &&
        resolve(d.handle, "cuMemcpyDtoH_v2", d.cuMemcpyDtoH) &&
        resolve(d.handle, "cuMemcpyAsync", d.cuMemcpyAsync) &&
        resolve(d.handle, "cuMemAllocAsync", d.cuMemAllocAsync) &&
        resolve(d.handle, "cuMemFreeAsync", d.cuMemFreeAsync) &&
        resolve(d.handle, "cuFuncSetAttribute", d.cuFuncSetAttribute) &&
        resolve(d.handle, "cuMemsetD8Async", d.cuMemsetD8Async) &&
        resolve(d.handle, "cuMemsetD32Async", d.cuMemsetD32Async) &&
        resolve(d.handle, "cuMemcpyHtoD_v2", d.cuMemcpyHtoD) &&
        resolve(d.handle, "cuStreamIsCapturing", d.cuStreamIsCapturing) &&
        resolve(d.handle, "cuMemAllocHost_v2", d.cuMemAllocHost) &&
        resolve(d.handle, "cuMemFreeHost", d.cuMemFreeHost) &&
        resolve(d.handle, "cuEventCreate", d.cuEventCreate) &&
        resolve(d.handle, "cuEventRecord", d.cuEventRecord) &&
        resolve(d.handle, "cuEventSynchronize", d.cuEventSynchronize) &&
        resolve(d.handle, "cuEventDestroy_v2", d.cuEventDestroy) &&
        resolve(d.handle, "cuStreamWaitEvent", d.cuStreamWaitEvent) &&
        resolve(d.handle, "cuTensorMapEncodeTiled", d.cuTensorMapEncodeTiled);
    if (!ok) {
      d.loadError = "libcuda.so.1 lacks a driver API entry point";
      d.handle = nullptr;
      return;
    }
    if (CUresult rc = d.cuInit(0); rc != 0) {
      d.loadError = "cuInit failed with CUDA error " + std::to_string(rc);
      d.handle = nullptr;
    }
  });
  return d;
}

std::string cudaErrorText(Driver &d, CUresult rc) {
  const char *name = nullptr, *text = nullptr;
  if (d.cuGetErrorName)
    d.cuGetErrorName(rc, &name);
  if (d.cuGetErrorString)
    d.cuGetErrorString(rc, &text);
  std::string s = name ? name : ("CUDA error " + std::to_string(rc));
  if (text)
    s += std::string(" (") + text + ")";
  return s;
}

/// Makes sure a context is current (the primary context of device 0 if the
/// thread has none, as PyTorch would create).
MxmoeRtStatus ensureContext(Driver &d) {
  CUcontext ctx = nullptr;
  if (CUresult rc = d.cuCtxGetCurrent(&ctx); rc != 0)
    return fail(MXMOE_RT_ERROR_CUDA,
                "cuCtxGetCurrent: " + cudaErrorText(d, rc));
  if (ctx)
    return MXMOE_RT_SUCCESS;
  CUdevice dev = 0;
  if (CUresult rc = d.cuDeviceGet(&dev, 0); rc != 0)
    return fail(MXMOE_RT_ERROR_CUDA, "cuDeviceGet(0): " + cudaErrorText(d, rc));
  if (CUresult rc = d.cuDevicePrimaryCtxRetain(&ctx, dev); rc != 0)
    return fail(MXMOE_RT_ERROR_CUDA,
                "cuDevicePrimaryCtxRetain: " + cudaErrorText(d, rc));
  if (CUresult rc = d.cuCtxSetCurrent(ctx); rc != 0)
    return fail(MXMOE_RT_ERROR_CUDA,
                "cuCtxSetCurrent: " + cudaErrorText(d, rc));
  return MXMOE_RT_SUCCESS;
}

MxmoeRtStatus requireDriver(Driver *&out) {
  Driver &d = driver();
  if (!d.handle)
    return fail(MXMOE_RT_ERROR_NO_DRIVER, d.loadError);
  out = &d;
  return ensureContext(d);
}

} // namespace mxmoe::rt

using namespace mxmoe::rt;

struct MxmoeRtModule_ {
  CUmodule module = nullptr;
};

extern "C" {

MxmoeRtStatus mxmoeRtModuleLoad(const void *image, size_t size,
                                MxmoeRtModule *module) {
  if (!image || size == 0 || !module)
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                "mxmoeRtModuleLoad: image, size and module must be non-null "
                "and non-zero");
  *module = nullptr;
  Driver *d = nullptr;
  if (MxmoeRtStatus s = requireDriver(d); s != MXMOE_RT_SUCCESS)
    return s;
  // PTX must be NUL-terminated for cuModuleLoadData.
  std::string ptx;
  const char *bytes = static_cast<const char *>(image);
  bool isElf = size >= 4 && bytes[0] == 0x7f && bytes[1] == 'E' &&
               bytes[2] == 'L' && bytes[3] == 'F';
  const void *data = image;
  if (!isElf && bytes[size - 1] != '\0') {
    ptx.assign(bytes, size);
    data = ptx.c_str();
  }
  CUmodule mod = nullptr;
  if (CUresult rc = d->cuModuleLoadData(&mod, data); rc != 0)
    return fail(MXMOE_RT_ERROR_CUDA,
                "cuModuleLoadData: " + cudaErrorText(*d, rc));
  *module = new MxmoeRtModule_{mod};
  return MXMOE_RT_SUCCESS;
}

void mxmoeRtModuleUnload(MxmoeRtModule module) {
  if (!module)
    return;
  Driver &d = driver();
  if (d.handle && module->module)
    d.cuModuleUnload(module->module);
  delete module;
}

MxmoeRtStatus mxmoeRtLaunch(MxmoeRtModule module, const char *kernel,
                            const uint32_t grid[3], const uint32_t block[3],
                            uint32_t sharedBytes, void *stream,
                            void *const *pointers, size_t numPointers) {
  return mxmoeRtLaunchWithScalars(module, kernel, grid, block, sharedBytes,
                                  stream, pointers, numPointers, nullptr, 0);
}

MxmoeRtStatus
mxmoeRtLaunchWithScalars(MxmoeRtModule module, const char *kernel,
                         const uint32_t grid[3], const uint32_t block[3],
                         uint32_t sharedBytes, void *stream,
                         void *const *pointers, size_t numPointers,
                         const int64_t *scalars, size_t numScalars) {
  if (!module || !kernel || !grid || !block || (numPointers > 0 && !pointers) ||
      (numScalars > 0 && !scalars))
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                "mxmoeRtLaunch: null module, kernel name, grid, block, "
                "pointer or scalar array");
  if (numPointers + numScalars > 64)
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                std::string("mxmoeRtLaunch(") + kernel +
                    "): more than 64 parameters");
  for (int i = 0; i < 3; ++i)
    if (grid[i] == 0 || block[i] == 0)
      return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                  std::string("mxmoeRtLaunch(") + kernel +
                      "): grid and block dimensions must be >= 1");
  // The kernels use 16-byte vector accesses and read tensor maps / scale
  // atoms with bulk copies: a misaligned buffer would fault inside the
  // kernel (CUDA_ERROR_MISALIGNED_ADDRESS), which poisons the whole CUDA
  // context. Reject it here instead, naming the parameter.
  for (size_t i = 0; i < numPointers; ++i)
    if (reinterpret_cast<uintptr_t>(pointers[i]) % kPointerAlignment != 0) {
      char addr[32];
      std::snprintf(addr, sizeof(addr), "%p", pointers[i]);
      return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                  std::string("mxmoeRtLaunch(") + kernel + "): parameter " +
                      std::to_string(i) + " (" + addr +
                      ") is not 16-byte aligned; mxmoe kernels need "
                      "16-byte aligned buffers");
    }
  Driver *d = nullptr;
  if (MxmoeRtStatus s = requireDriver(d); s != MXMOE_RT_SUCCESS)
    return s;
  CUfunction fn = nullptr;
  if (CUresult rc = d->cuModuleGetFunction(&fn, module->module, kernel);
      rc != 0)
    return fail(MXMOE_RT_ERROR_NOT_FOUND,
                std::string("kernel '") + kernel +
                    "' not found in the module: " + cudaErrorText(*d, rc));
  // Above 48 KiB, dynamic shared memory must be opted into per function
  // (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8).
  if (sharedBytes > 48 * 1024)
    if (CUresult rc =
            d->cuFuncSetAttribute(fn, 8, static_cast<int>(sharedBytes));
        rc != 0)
      return fail(
          MXMOE_RT_ERROR_CUDA,
          std::string("cuFuncSetAttribute(") + kernel +
              ", max dynamic shared memory = " + std::to_string(sharedBytes) +
              "): " + cudaErrorText(*d, rc));
  void *values[64];
  int64_t ints[64];
  void *params[64];
  for (size_t i = 0; i < numPointers; ++i) {
    values[i] = pointers[i];
    params[i] = &values[i];
  }
  for (size_t i = 0; i < numScalars; ++i) {
    ints[i] = scalars[i];
    params[numPointers + i] = &ints[i];
  }
  if (CUresult rc = d->cuLaunchKernel(
          fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
          sharedBytes, static_cast<CUstream>(stream), params, nullptr);
      rc != 0)
    return fail(MXMOE_RT_ERROR_CUDA, std::string("cuLaunchKernel(") + kernel +
                                         "): " + cudaErrorText(*d, rc));
  return MXMOE_RT_SUCCESS;
}

MxmoeRtStatus mxmoeRtEncodeTensorMap2D(void *tensorMap,
                                       MxmoeRtTensorMapDataType dataType,
                                       const void *globalAddress,
                                       uint64_t innerElements, uint64_t rows,
                                       uint64_t rowStrideBytes,
                                       uint32_t boxInner, uint32_t boxRows,
                                       uint32_t swizzleBytes) {
  std::string where =
      "mxmoeRtEncodeTensorMap2D(dims {" + std::to_string(innerElements) + ", " +
      std::to_string(rows) + "}, box {" + std::to_string(boxInner) + ", " +
      std::to_string(boxRows) + "})";
  if (!tensorMap || !globalAddress)
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                where + ": null tensor map or global address");
  bool packed4 = dataType == MXMOE_RT_TENSOR_MAP_16U4_ALIGN16B;
  if (dataType != MXMOE_RT_TENSOR_MAP_UINT8 && !packed4)
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                where + ": unknown data type " +
                    std::to_string(static_cast<int>(dataType)));
  // cuTensorMapEncodeTiled's alignment rules (CUDA driver API, tensor map
  // object management): 16 bytes, 32 for the unpacking 4-bit type.
  uint64_t align = packed4 ? 32 : 16;
  if (reinterpret_cast<uintptr_t>(globalAddress) % align != 0 ||
      rowStrideBytes % align != 0)
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                where +
                    ": the global address and the row stride must be "
                    "multiples of " +
                    std::to_string(align) + " bytes");
  if (packed4 && (innerElements % 128 != 0 || boxInner % 128 != 0))
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                where + ": 16U4_ALIGN16B needs inner dimension and box "
                        "multiples of 128 elements");
  if (innerElements == 0 || rows == 0 || boxInner == 0 || boxRows == 0 ||
      boxInner > 256 || boxRows > 256)
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                where + ": dimensions must be >= 1 and box sizes <= 256");
  int swizzle = 0; // CU_TENSOR_MAP_SWIZZLE_NONE / 32B / 64B / 128B = 0..3
  switch (swizzleBytes) {
  case 0:
    swizzle = 0;
    break;
  case 32:
    swizzle = 1;
    break;
  case 64:
    swizzle = 2;
    break;
  case 128:
    swizzle = 3;
    break;
  default:
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                where + ": swizzle must be 0, 32, 64 or 128 bytes");
  }
  // Shared-memory bytes of the inner box: one per element (the 4-bit type
  // is unpacked to one byte per element, half of it padding).
  if (swizzleBytes != 0 && boxInner > swizzleBytes)
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                where + ": the inner box (bytes) must not exceed the swizzle");
  Driver *d = nullptr;
  if (MxmoeRtStatus s = requireDriver(d); s != MXMOE_RT_SUCCESS)
    return s;
  uint64_t dims[2] = {innerElements, rows};
  uint64_t strides[1] = {rowStrideBytes};
  uint32_t box[2] = {boxInner, boxRows};
  uint32_t elementStrides[2] = {1, 1};
  // CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0, _16U4_ALIGN16B = 14 (cuda.h),
  // INTERLEAVE_NONE = 0, L2_PROMOTION_L2_256B = 3, FLOAT_OOB_FILL_NONE = 0
  // (zeros).
  int cuType = packed4 ? 14 : 0;
  if (CUresult rc = d->cuTensorMapEncodeTiled(
          tensorMap, cuType, 2, const_cast<void *>(globalAddress), dims,
          strides, box, elementStrides, 0, swizzle, 3, 0);
      rc != 0)
    return fail(MXMOE_RT_ERROR_CUDA,
                where + ": cuTensorMapEncodeTiled: " + cudaErrorText(*d, rc));
  return MXMOE_RT_SUCCESS;
}

MxmoeRtStatus mxmoeRtSynchronize(void *stream) {
  Driver *d = nullptr;
  if (MxmoeRtStatus s = requireDriver(d); s != MXMOE_RT_SUCCESS)
    return s;
  CUresult rc = stream ? d->cuStreamSynchronize(static_cast<CUstream>(stream))
                       : d->cuCtxSynchronize();
  if (rc != 0)
    return fail(MXMOE_RT_ERROR_CUDA,
                "synchronize (an earlier kernel failed?): " +
                    cudaErrorText(*d, rc));
  return MXMOE_RT_SUCCESS;
}

MxmoeRtStatus mxmoeRtMemcpyAsync(void *dst, const void *src, size_t bytes,
                                 void *stream) {
  if (bytes == 0)
    return MXMOE_RT_SUCCESS;
  if (!dst || !src)
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                "mxmoeRtMemcpyAsync: null source or destination");
  Driver *d = nullptr;
  if (MxmoeRtStatus s = requireDriver(d); s != MXMOE_RT_SUCCESS)
    return s;
  if (CUresult rc = d->cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                     reinterpret_cast<CUdeviceptr>(src), bytes,
                                     static_cast<CUstream>(stream));
      rc != 0)
    return fail(MXMOE_RT_ERROR_CUDA, "mxmoeRtMemcpyAsync of " +
                                         std::to_string(bytes) +
                                         " bytes: " + cudaErrorText(*d, rc));
  return MXMOE_RT_SUCCESS;
}

MxmoeRtStatus mxmoeRtMemAllocAsync(void **ptr, size_t bytes, void *stream) {
  if (ptr)
    *ptr = nullptr;
  if (!ptr || bytes == 0)
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                "mxmoeRtMemAllocAsync: null result pointer or 0 bytes");
  Driver *d = nullptr;
  if (MxmoeRtStatus s = requireDriver(d); s != MXMOE_RT_SUCCESS)
    return s;
  if (MxmoeRtStatus s = ensureContext(*d); s != MXMOE_RT_SUCCESS)
    return s;
  CUdeviceptr p = 0;
  if (CUresult rc =
          d->cuMemAllocAsync(&p, bytes, static_cast<CUstream>(stream));
      rc != 0)
    return fail(MXMOE_RT_ERROR_CUDA, "mxmoeRtMemAllocAsync of " +
                                         std::to_string(bytes) +
                                         " bytes: " + cudaErrorText(*d, rc));
  *ptr = reinterpret_cast<void *>(p);
  return MXMOE_RT_SUCCESS;
}

MxmoeRtStatus mxmoeRtMemFreeAsync(void *ptr, void *stream) {
  if (!ptr)
    return MXMOE_RT_SUCCESS;
  Driver *d = nullptr;
  if (MxmoeRtStatus s = requireDriver(d); s != MXMOE_RT_SUCCESS)
    return s;
  if (CUresult rc = d->cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(ptr),
                                      static_cast<CUstream>(stream));
      rc != 0)
    return fail(MXMOE_RT_ERROR_CUDA,
                "mxmoeRtMemFreeAsync: " + cudaErrorText(*d, rc));
  return MXMOE_RT_SUCCESS;
}

MxmoeRtStatus mxmoeRtCheckStatus(const void *statusBuffer, const char *kernel) {
  if (!statusBuffer)
    return fail(MXMOE_RT_ERROR_INVALID_ARGUMENT,
                "mxmoeRtCheckStatus: null status buffer");
  if (MxmoeRtStatus s = mxmoeRtSynchronize(nullptr); s != MXMOE_RT_SUCCESS)
    return s;
  Driver &d = driver();
  int32_t status = 0;
  if (CUresult rc = d.cuMemcpyDtoH(
          &status, reinterpret_cast<CUdeviceptr>(statusBuffer), sizeof(status));
      rc != 0)
    return fail(MXMOE_RT_ERROR_CUDA,
                "reading the kernel status: " + cudaErrorText(d, rc));
  if (status != 0)
    return fail(MXMOE_RT_ERROR_KERNEL_REJECTED_INPUT,
                std::string("kernel '") + (kernel ? kernel : "?") + "' " +
                    mxmoeRtStatusMeaning(status) +
                    mxmoe::kernelStatusSuffix(status));
  return MXMOE_RT_SUCCESS;
}

const char *mxmoeRtStatusMeaning(int32_t status) {
  if (status == mxmoe::kKernelStatusDone)
    return nullptr;
  if (const char *text = mxmoe::kernelStatusText(status))
    return text;
  thread_local std::string unknown;
  unknown = "wrote unknown status " + std::to_string(status);
  return unknown.c_str();
}

const char *mxmoeRtLastError(void) { return lastError.c_str(); }

} // extern "C"
