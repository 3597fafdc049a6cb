"""Launch mxmoe kernels from Python through the project's C runtime.

Thin ctypes binding of include/mxmoe-c/Runtime.h (libmxmoe_runtime.so, which
opens the CUDA driver itself): load PTX/cubin, launch kernels on raw device
pointers (e.g. ``torch.Tensor.data_ptr()``), check the status buffer of
grouped kernels. Failures raise RuntimeError subclasses carrying the
runtime's message (CUDA error name and kernel).

The library is found through $MXMOE_RUNTIME_LIB, else next to the installed
package (mxmoe/_lib), else <repo>/build/lib.
"""
from __future__ import annotations

import ctypes
import os
from typing import Sequence

_lib = None

STATUS_NAMES = {
    1: "NoDriver", 2: "CudaError", 3: "InvalidArgument", 4: "KernelNotFound",
    5: "KernelRejectedInput",
}


class RuntimeError_(RuntimeError):
    """Base class of runtime failures; `status` is the MxmoeRtStatus."""

    def __init__(self, status: int, message: str):
        super().__init__(f"{STATUS_NAMES.get(status, status)}: {message}")
        self.status = status


class KernelRejectedInput(RuntimeError_):
    """A grouped kernel rejected its offsets or sizes (and wrote nothing)."""


def rejection(status: int) -> str:
    """What a grouped kernel's nonzero status word means: the C runtime's
    mxmoeRtStatusMeaning (one text for both bindings)."""
    text = _load().mxmoeRtStatusMeaning(int(status))
    if text is None:
        raise ValueError("status 0 is not a rejection")
    return text.decode()


def library_path(env_var: str, filename: str) -> str:
    """$env_var if set, else the installed package's copy (mxmoe/_lib, from
    `pip install .`), else <repo>/build/lib/<filename> (a source checkout;
    shared by the runtime and compiler bindings)."""
    env = os.environ.get(env_var)
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    installed = os.path.join(here, "_lib", filename)
    if os.path.isfile(installed):
        return installed
    return os.path.join(here, "..", "..", "build", "lib", filename)


def _load():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(library_path("MXMOE_RUNTIME_LIB", "libmxmoe_runtime.so"))
        lib.mxmoeRtModuleLoad.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                          ctypes.POINTER(ctypes.c_void_p)]
        lib.mxmoeRtModuleUnload.argtypes = [ctypes.c_void_p]
        lib.mxmoeRtModuleUnload.restype = None
        lib.mxmoeRtLaunch.argtypes = [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint32),
            ctypes.POINTER(ctypes.c_uint32), ctypes.c_uint32, ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
        lib.mxmoeRtLaunchWithScalars.argtypes = [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint32),
            ctypes.POINTER(ctypes.c_uint32), ctypes.c_uint32, ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t]
        lib.mxmoeRtSynchronize.argtypes = [ctypes.c_void_p]
        lib.mxmoeRtMemcpyAsync.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                           ctypes.c_size_t, ctypes.c_void_p]
        lib.mxmoeRtMemAllocAsync.argtypes = [ctypes.POINTER(ctypes.c_void_p),
                                             ctypes.c_size_t, ctypes.c_void_p]
        lib.mxmoeRtMemFreeAsync.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.mxmoeRtCheckStatus.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        lib.mxmoeRtLastError.restype = ctypes.c_char_p
        lib.mxmoeRtStatusMeaning.argtypes = [ctypes.c_int32]
        lib.mxmoeRtStatusMeaning.restype = ctypes.c_char_p
        lib.mxmoeRtEncodeTensorMap2D.argtypes = [
            ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64,
            ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32]
        _declare_program(lib)
        _lib = lib
    return _lib


class RunMemory(ctypes.Structure):
    """MxmoeRtRunMemory: caller memory of one program run."""
    _fields_ = [("statusWords", ctypes.c_void_p), ("tensorMaps", ctypes.c_void_p),
                ("tensorMapsHost", ctypes.c_void_p)]


def _declare_program(lib) -> None:
    """ctypes signatures of the mxmoeRtProgram* executor."""
    P, S, V = ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)
    lib.mxmoeRtProgramLoad.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                                       ctypes.c_char_p, ctypes.POINTER(P)]
    lib.mxmoeRtProgramDestroy.argtypes = [P]
    lib.mxmoeRtProgramDestroy.restype = None
    for name in ("Args", "Buffers", "Returns", "Steps", "StatusWords", "TensorMaps"):
        f = getattr(lib, f"mxmoeRtProgramGetNum{name}")
        f.argtypes, f.restype = [P], S
    lib.mxmoeRtProgramGetStatusKernel.argtypes = [P, S]
    lib.mxmoeRtProgramGetStatusKernel.restype = ctypes.c_char_p
    lib.mxmoeRtProgramEnqueue.argtypes = [P, V, S, V, S, ctypes.POINTER(RunMemory), P]
    lib.mxmoeRtProgramCheck.argtypes = [P]


class Program:
    """A launch program of a compile output bound to its kernels by the C
    runtime (mxmoeRtProgramLoad: the executor of mxmoe-c/Runtime.h). Its
    module, constants and cached tensor maps live in the CUDA context
    current at its first run; it is never unloaded (a CUDA graph that
    captured one of its runs may outlive any Python reference to it)."""

    def __init__(self, out_dir: str, function: str, chip: str):
        lib = _load()
        self._p = ctypes.c_void_p()
        _check(lib.mxmoeRtProgramLoad(out_dir.encode(), function.encode(), chip.encode(),
                                      ctypes.byref(self._p)))
        self.num_args = lib.mxmoeRtProgramGetNumArgs(self._p)
        self.num_buffers = lib.mxmoeRtProgramGetNumBuffers(self._p)
        self.num_status_words = lib.mxmoeRtProgramGetNumStatusWords(self._p)
        self.num_tensor_maps = lib.mxmoeRtProgramGetNumTensorMaps(self._p)
        self.status_kernels = [lib.mxmoeRtProgramGetStatusKernel(self._p, i).decode()
                               for i in range(self.num_status_words)]
        self._args = ctypes.c_void_p * max(1, self.num_args)
        self._bufs = ctypes.c_void_p * max(1, self.num_buffers)

    def enqueue(self, args: Sequence[int], buffers: Sequence[int], stream: int,
                status_words: int = 0, tensor_maps: int = 0,
                tensor_maps_host: int = 0) -> None:
        """mxmoeRtProgramEnqueue on device addresses (see RunMemory: 0 =
        the program's own status words / tensor-map cache)."""
        mem = RunMemory(status_words or None, tensor_maps or None, tensor_maps_host or None)
        _check(_lib.mxmoeRtProgramEnqueue(
            self._p, self._args(*args), len(args), self._bufs(*buffers), len(buffers),
            ctypes.byref(mem), ctypes.c_void_p(stream or None)))

    def check(self) -> None:
        """mxmoeRtProgramCheck: waits for the last run that used the
        program's own memory; raises KernelRejectedInput if its status
        words hold a rejection."""
        _check(_lib.mxmoeRtProgramCheck(self._p))


def _check(status: int) -> None:
    if status != 0:
        msg = _load().mxmoeRtLastError().decode()
        cls = KernelRejectedInput if status == 5 else RuntimeError_
        raise cls(status, msg)


def synchronize(stream: int = 0) -> None:
    _check(_load().mxmoeRtSynchronize(ctypes.c_void_p(stream or None)))


def memcpy_async(dst: int, src: int, nbytes: int, stream: int = 0) -> None:
    """cuMemcpyAsync of `nbytes` between device or page-locked host
    addresses on `stream` (a raw cudaStream_t; 0 the default stream);
    captured as a memcpy node inside a CUDA stream capture."""
    _check(_load().mxmoeRtMemcpyAsync(ctypes.c_void_p(dst), ctypes.c_void_p(src),
                                      nbytes, ctypes.c_void_p(stream or None)))


def mem_alloc_async(nbytes: int, stream: int = 0) -> int:
    """Device address of `nbytes` allocated by cuMemAllocAsync on `stream`
    (outside any framework allocator); free with mem_free_async."""
    p = ctypes.c_void_p()
    _check(_load().mxmoeRtMemAllocAsync(ctypes.byref(p), nbytes, ctypes.c_void_p(stream or None)))
    return p.value


def mem_free_async(address: int, stream: int = 0) -> None:
    """cuMemFreeAsync of a mem_alloc_async address, ordered on `stream`."""
    _check(_load().mxmoeRtMemFreeAsync(ctypes.c_void_p(address), ctypes.c_void_p(stream or None)))


def check_status(status_ptr: int, kernel: str) -> None:
    """Raises KernelRejectedInput if the grouped kernel's status is nonzero."""
    _check(_load().mxmoeRtCheckStatus(ctypes.c_void_p(status_ptr), kernel.encode()))


TENSOR_MAP_DATA_TYPES = {"uint8": 0, "16U4_ALIGN16B": 1}


def encode_tensor_map_2d(address: int, inner: int, rows: int, row_stride: int,
                         box_inner: int, box_rows: int, swizzle: int = 128,
                         data_type: str = "uint8") -> bytes:
    """128-byte CUtensorMap of a row-major [rows, inner] tensor of
    `data_type` elements ("uint8", or "16U4_ALIGN16B" for packed fp4) at
    device `address` (see mxmoeRtEncodeTensorMap2D); copy it to device
    memory for a kernel's "tensor_map" parameter."""
    buf = (ctypes.c_uint8 * 192)()
    base = ctypes.addressof(buf)
    aligned = (base + 63) // 64 * 64
    if data_type not in TENSOR_MAP_DATA_TYPES:
        raise ValueError(f"unknown tensor map data type {data_type!r}")
    _check(_load().mxmoeRtEncodeTensorMap2D(
        ctypes.c_void_p(aligned), TENSOR_MAP_DATA_TYPES[data_type],
        ctypes.c_void_p(address), inner, rows,
        row_stride, box_inner, box_rows, swizzle))
    return bytes(buf[aligned - base:aligned - base + 128])


def tensor_map_for(param: dict, address: int, binding: dict = None) -> bytes:
    """Tensor map of a kernel's "tensor_map" parameter (box, swizzle, data
    type) over the bound tensor at `address`: its "dims" ([K, rows] in
    elements) and "row_stride_bytes" come from the program step's binding
    (`binding["tensor_map"]`), or from `param` itself when it has them."""
    extent = binding.get("tensor_map") if binding else None
    if not isinstance(extent, dict):
        extent = param
    if "dims" not in extent:
        raise ValueError("tensor map without dims: pass the step's binding")
    inner, rows = extent["dims"]
    box_inner, box_rows = param["box"]
    swz = {"none": 0, "32B": 32, "64B": 64, "128B": 128}[param["swizzle"]]
    return encode_tensor_map_2d(address, inner, rows, extent["row_stride_bytes"],
                                box_inner, box_rows, swz,
                                param.get("data_type", "uint8"))


class Module:
    """A loaded PTX/cubin image (in the current CUDA context, e.g. torch's)."""

    def __init__(self, image: bytes):
        lib = _load()
        self._mod = ctypes.c_void_p()
        _check(lib.mxmoeRtModuleLoad(image, len(image), ctypes.byref(self._mod)))

    def launch(self, name: str, grid: Sequence[int], block: Sequence[int],
               pointers: Sequence[int], shared_bytes: int = 0,
               stream: int = 0, scalars: Sequence[int] = ()) -> None:
        """Launch kernel `name` on its device-pointer parameters, then its
        i64 `scalars` (the sizes of grouped-GEMM and quantize kernels,
        manifest params of kind "scalar", which follow the pointers)."""
        g = (ctypes.c_uint32 * 3)(*grid)
        b = (ctypes.c_uint32 * 3)(*block)
        ptrs = (ctypes.c_void_p * max(1, len(pointers)))(*pointers)
        ints = (ctypes.c_int64 * max(1, len(scalars)))(*scalars)
        _check(_load().mxmoeRtLaunchWithScalars(
            self._mod, name.encode(), g, b, shared_bytes,
            ctypes.c_void_p(stream or None), ptrs, len(pointers), ints, len(scalars)))

    def prepare(self, name: str, grid: Sequence[int], block: Sequence[int],
                shared_bytes: int = 0, scalars: Sequence[int] = ()):
        """launch() with everything but the pointers and the stream fixed:
        returns f(pointers, stream) (the per-call work of a replayed
        program step: one ctypes array and the launch)."""
        lib, mod, key = _load(), self._mod, name.encode()
        g = (ctypes.c_uint32 * 3)(*grid)
        b = (ctypes.c_uint32 * 3)(*block)
        ints = (ctypes.c_int64 * max(1, len(scalars)))(*scalars)
        n_ints = len(scalars)

        def launch(pointers: Sequence[int], stream: int = 0) -> None:
            ptrs = (ctypes.c_void_p * max(1, len(pointers)))(*pointers)
            _check(lib.mxmoeRtLaunchWithScalars(
                mod, key, g, b, shared_bytes, ctypes.c_void_p(stream or None),
                ptrs, len(pointers), ints, n_ints))
        return launch

    def __del__(self):
        if _lib is not None and getattr(self, "_mod", None):
            _lib.mxmoeRtModuleUnload(self._mod)
            self._mod = None
