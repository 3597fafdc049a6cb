"""Launch mxmoe kernels (PTX from the compiler) through the CUDA driver API.

A thin ctypes layer over libcuda: load PTX or cubin, look up kernels,
launch them on raw device pointers (e.g. torch.Tensor.data_ptr()). Errors
raise CudaError with the CUDA error name and the kernel involved.
"""
from __future__ import annotations

import ctypes
from typing import Sequence

_cuda = None


class CudaError(RuntimeError):
    pass


def _lib():
    global _cuda
    if _cuda is None:
        _cuda = ctypes.CDLL("libcuda.so.1")
        _check(_cuda.cuInit(0), "cuInit")
    return _cuda


def _check(rc: int, what: str) -> None:
    if rc != 0:
        name = ctypes.c_char_p()
        lib = _cuda
        if lib is not None:
            lib.cuGetErrorName(rc, ctypes.byref(name))
        raise CudaError(f"{what}: {name.value.decode() if name.value else rc}")


class Module:
    """A loaded PTX/cubin image (in the current CUDA context, e.g. torch's)."""

    def __init__(self, image: bytes):
        lib = _lib()
        self._mod = ctypes.c_void_p()
        if not image.endswith(b"\0"):
            image = image + b"\0"
        buf = ctypes.create_string_buffer(image)
        _check(lib.cuModuleLoadData(ctypes.byref(self._mod), buf),
               "cuModuleLoadData")
        self._funcs = {}

    def function(self, name: str):
        if name not in self._funcs:
            f = ctypes.c_void_p()
            _check(_lib().cuModuleGetFunction(ctypes.byref(f), self._mod,
                                              name.encode()),
                   f"cuModuleGetFunction({name})")
            self._funcs[name] = f
        return self._funcs[name]

    def launch(self, name: str, grid: Sequence[int], block: Sequence[int],
               pointers: Sequence[int], shared_bytes: int = 0,
               stream: int = 0) -> None:
        """Launch kernel `name`; every parameter is a device pointer."""
        f = self.function(name)
        args = [ctypes.c_void_p(p) for p in pointers]
        params = (ctypes.c_void_p * len(args))(
            *[ctypes.cast(ctypes.byref(a), ctypes.c_void_p) for a in args])
        rc = _lib().cuLaunchKernel(
            f, ctypes.c_uint(grid[0]), ctypes.c_uint(grid[1]),
            ctypes.c_uint(grid[2]), ctypes.c_uint(block[0]),
            ctypes.c_uint(block[1]), ctypes.c_uint(block[2]),
            ctypes.c_uint(shared_bytes), ctypes.c_void_p(stream), params, None)
        _check(rc, f"cuLaunchKernel({name})")

    def __del__(self):
        if _cuda is not None and getattr(self, "_mod", None):
            _cuda.cuModuleUnload(self._mod)
