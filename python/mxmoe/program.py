"""Replays the launch programs of an mxmoe-compile output on PyTorch tensors.

mxmoe-compile writes, next to the PTX/cubin of every chip, a manifest whose
"programs" list the straight-line kernel sequences of the expanded functions
(e.g. `layers.0.moe.experts.w13.forward`, `.input_grad`, `.weight_grad`):
per step the kernel and, per kernel parameter, a binding to a function
argument, an intermediate buffer, a status buffer, a TMA descriptor over
one of those, or a value (grouped-GEMM and quantize kernels take their
sizes at run time, so one kernel serves every shape of its kind; such
steps also give their grid). `Program` allocates the intermediates and the
status words as torch tensors and hands the call to the C runtime's
executor (mxmoeRtProgramEnqueue of mxmoe-c/Runtime.h, the one
implementation of the replay, also used by C hosts such as
tools/mxmoe-run), which encodes the tensor maps, enqueues the steps on the
current CUDA stream and keeps the program's constants; then it checks
every grouped kernel's status and returns the results as torch tensors.

Status checks: a grouped kernel that rejects its offsets (status 1) or, for
a grouped GEMM, its sizes (status 2) writes nothing and sets its status
word. With check="sync" (the default of `Program`) the
call reads the status words at its end (one device synchronization) and
raises KernelRejectedInput. With check="deferred" (the default of the
autograd function and the torch op, whose callers train at full speed) the
status words are copied to pinned host memory without waiting; every later
call raises for any earlier call whose copy has completed, and
`check_deferred()` waits for all of them (call it where a training step
ends). A rejected call is always reported, at the latest there; its
outputs are undefined.

CUDA graphs: a call made while its stream is being captured
(`torch.cuda.graph`, `torch.compile(mode="reduce-overhead")`) records its
launches, the device status words' reset and a copy of them to page-locked
host memory into the graph, reads nothing back and checks nothing then
(whatever `check` says). `check_deferred()` after a replay synchronizes and
raises KernelRejectedInput for a rejection in the last replay of each
captured call. A captured call's tensor maps are encoded at capture time
for the addresses of that capture (a graph replays on the same addresses)
and copied into the graph's own device memory by the graph itself. The host
memory of both lives as long as the process (slabs of page-locked memory
set aside by calls outside a capture: PyTorch's pinned-memory allocator
cannot be used during a capture), as do the C programs. Run each program
once outside the capture first (the warm-up torch.cuda.graph asks for
anyway): that uploads its constants and sets aside the first slab.

`MXGroupedMM` wraps a forward / input_grad / weight_grad triple as a
torch.autograd.Function: forward = quantize(x), quantize(W) and the MXFP8
grouped GEMM; backward = the input and weight gradients, each with its own
MX quantization along that GEMM's contraction axis (TorchAO's MXFP8 MoE
recipe, compiled by mxmoe). `mx_linear_function` does the same for an MX
linear (one group), picking among the kernels compiled per tiled-MLP shard
size by the input's shape.
"""
from __future__ import annotations

import ctypes
import json
import os
import threading
from typing import Dict, List, Optional, Sequence

from . import runtime as rt

# The C runtime's programs by (output directory, function, chip, manifest
# modification time, device).
_RUNTIME_PROGRAMS: Dict[tuple, "rt.Program"] = {}
_RUNTIME_LOCK = threading.Lock()
_MANIFESTS: Dict[tuple, dict] = {}


def _manifest(out_dir: str) -> dict:
    """out_dir/manifest.json, parsed once per file and modification time
    (a Program per kernel sequence would otherwise re-read it each)."""
    path = os.path.abspath(os.path.join(out_dir, "manifest.json"))
    key = (path, os.path.getmtime(path))
    if key not in _MANIFESTS:
        with open(path) as f:
            _MANIFESTS[key] = json.load(f)
    return _MANIFESTS[key]
# torch.library ops registered by this process: qualified name -> (source, op).
_OPS: Dict[str, tuple] = {}


def _registered(namespace: str, fqn: str, out_dir: str, chip: str, check: str):
    """(qualified op name, its source, the op this process already
    registered under that name for the same compile output, or None).
    Registering twice returns the first op; another source for the name is
    an error (torch.library names are process-wide)."""
    qualname = f"{namespace}::{fqn.replace('.', '_')}"
    source = (os.path.abspath(out_dir), fqn, chip, check)
    if qualname not in _OPS:
        return qualname, source, None
    prev, op = _OPS[qualname]
    if prev != source:
        raise ValueError(f"torch op {qualname} is already registered for {prev}; "
                         f"pass another namespace= for {source}")
    return qualname, source, op


def _torch():
    import torch  # imported lazily: the package is usable without torch
    return torch


def _dtype(name: str):
    torch = _torch()
    return {
        "bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
        "i32": torch.int32, "f8E4M3FN": torch.float8_e4m3fn,
        "f8E5M2": torch.float8_e5m2, "f8E8M0FNU": torch.uint8,
        "f4E2M1FN": torch.uint8,
    }[name]


def _weight(w, what: str):
    """`w` made contiguous, unless its last two dimensions are a transposed
    view ([..., K, N] storage read as [..., N, K], e.g. TorchAO's `B_t` =
    W.transpose(-2, -1)): such a tensor has the expected shape only when
    N == K and would silently compute x @ W instead of x @ W^T, so it is
    rejected (ValueError) instead of copied."""
    if w.dim() >= 2 and w.shape[-1] > 1 and w.shape[-2] > 1 \
            and w.stride(-2) == 1 and w.stride(-1) != 1:
        raise ValueError(
            f"{what}: the weight must be [..., N, K] with K contiguous (y = x @ w^T); "
            f"got a transposed view (shape {list(w.shape)}, strides {list(w.stride())}), "
            f"e.g. TorchAO's B_t = W.transpose(-2, -1): pass W itself")
    return w.contiguous()


# Deferred status checks: (event, pinned host status words, kernel names,
# function) of calls that have not been checked yet.
_PENDING: List[tuple] = []
_MAX_PENDING = 64


def _drain(block: bool) -> None:
    """Checks the deferred status words whose copies have completed (all of
    them, waiting, if `block`); raises KernelRejectedInput for the first
    rejected call."""
    global _PENDING
    keep, err = [], None
    for n, entry in enumerate(_PENDING):
        event, host, names, function = entry
        if err is not None or not (block or event.query()):
            # Calls on one stream complete in order: the ones after a call
            # still running are checked by a later drain (without querying
            # each of up to _MAX_PENDING events per call).
            keep.extend(_PENDING[n:])
            break
        event.synchronize()
        for code, name in zip(host[:, 0].tolist(), names):
            if code != 0:
                err = rt.KernelRejectedInput(
                    5, f"{function}: kernel '{name}' {rt.rejection(code)} "
                       f"(deferred check: the call had returned)")
                break
    _PENDING = keep
    if err is not None:
        raise err


class _GraphHostMemory:
    """Page-locked host bytes for the calls captured into CUDA graphs: their
    tensor maps (read by every replay) and status words (written by every
    replay). Handed out once, never reused; chunks are allocated outside
    captures only (`top_up`)."""

    CHUNK = 1 << 20

    def __init__(self):
        self.chunks, self.free, self.next = [], 0, 0

    def top_up(self, nbytes: int = 0) -> None:
        """Outside a capture: a fresh chunk (of at least `nbytes`) once less
        than half a chunk, or less than `nbytes`, is left."""
        if self.free < max(self.CHUNK // 2, nbytes):
            torch = _torch()
            size = max(self.CHUNK, (nbytes + 127) // 128 * 128)
            chunk = torch.zeros(size, dtype=torch.uint8, pin_memory=True)
            self.chunks.append(chunk)
            self.next, self.free = chunk.data_ptr(), size

    def require(self, *sizes: int) -> None:
        """Raises unless `take` can hand out one piece of each size."""
        self._check(sum((n + 127) // 128 * 128 for n in sizes))

    def take(self, nbytes: int) -> int:
        """The address of `nbytes` zeroed bytes, 128-byte aligned (a tensor
        map's alignment)."""
        need = (nbytes + 127) // 128 * 128
        self._check(need)
        address = self.next
        self.next += need
        self.free -= need
        return address

    def _check(self, need: int) -> None:
        if need > self.free:
            raise RuntimeError(
                f"mxmoe: {need} bytes of page-locked memory for a CUDA-graph capture "
                f"are not set aside ({self.free} left): run the program once outside "
                "the capture first (warm-up), or call "
                "mxmoe.program.reserve_graph_memory() before capturing")


_GRAPH_HOST = _GraphHostMemory()
# Captured calls' status words: (host address, status-word count, kernel
# names, function, device index).
_CAPTURED: List[tuple] = []


def reserve_graph_memory(nbytes: int = _GraphHostMemory.CHUNK) -> None:
    """Sets aside at least `nbytes` of page-locked memory for the calls of
    later CUDA-graph captures (each takes 128 bytes per tensor map and 128
    per 8 status words, rounded up to 128 each). Outside a capture only."""
    _GRAPH_HOST.top_up(nbytes)


def _check_captured() -> None:
    """Reads the status words the last replay of every captured call wrote
    (after synchronizing their devices); raises for the first rejection and
    clears its words (reported once per replay)."""
    if not _CAPTURED:
        return
    torch = _torch()
    for d in {entry[4] for entry in _CAPTURED}:
        torch.cuda.synchronize(d)
    for address, n, names, function, _ in _CAPTURED:
        words = (ctypes.c_int32 * (4 * n)).from_address(address)
        for i, name in enumerate(names):
            if words[4 * i] != 0:
                code = words[4 * i]
                ctypes.memset(address, 0, 16 * n)
                raise rt.KernelRejectedInput(
                    5, f"{function}: kernel '{name}' {rt.rejection(code)} "
                       f"(CUDA graph: the last replay of a captured call)")


def check_deferred() -> None:
    """Waits for every call made with check="deferred" and raises
    KernelRejectedInput if any of them rejected its offsets or sizes; then
    checks the last replay of every call captured into a CUDA graph (see the
    module docstring)."""
    _drain(block=True)
    _check_captured()


def kernel_steps(steps):
    """The kernel steps of a program's `steps`, a loop step's body once
    (manifest loop steps: {"loop": {"count", "steps", ...}})."""
    for s in steps:
        if "loop" in s:
            yield from kernel_steps(s["loop"]["steps"])
        else:
            yield s


def buffer_lives(prog: dict):
    """Per buffer its life (first, last) in step positions (loop bodies
    once, in order), or None where no step binds it. A buffer bound only
    inside one loop body is an intermediate of every iteration, written
    before it is read: it lives from its first to its last step there. A
    loop-carried, zero-filled or in-place one, or one also bound elsewhere (a hoisted weight quantization read by
    every iteration, a result written shard by shard) lives through the
    whole of every loop that binds it."""
    n = len(prog["buffers"])
    uses = [[] for _ in range(n)]  # (position, loop span or None)
    at = 0
    for s in prog["steps"]:
        if "loop" in s:
            body = list(kernel_steps(s["loop"]["steps"]))
            span = (at, at + len(body) - 1)
            for k, step in enumerate(body):
                for b in step["bindings"]:
                    if "buffer" in b:
                        uses[b["buffer"]].append((at + k, span))
            at += len(body)
        else:
            for b in s["bindings"]:
                if "buffer" in b:
                    uses[b["buffer"]].append((at, None))
            at += 1
    lives = [None] * n
    for j, u in enumerate(uses):
        if not u:
            continue
        spans = {sp for _, sp in u}
        info = prog["buffers"][j]
        # (A loop-carried buffer, a zero-filled one and one a step binds
        # twice, in place, keep their values from one iteration to the
        # next.)
        carried = (info.get("loop_carried") or info.get("zero")
                   or len({p for p, _ in u}) < len(u))
        if len(spans) == 1 and None not in spans and not carried:
            lives[j] = (min(p for p, _ in u), max(p for p, _ in u))
            continue
        lives[j] = (min(p if sp is None else sp[0] for p, sp in u),
                    max(p if sp is None else sp[1] for p, sp in u))
    return lives


def memory_plan(prog: dict, align: int = 1024):
    """(workspace bytes, per buffer its byte offset in the workspace or
    None) for a manifest program: every intermediate (a buffer the program
    does not return) lives from the first step that binds it to the last
    (buffer_lives: loop steps; from step 0 when the run zero-fills it), and
    intermediates whose lives
    do not overlap share bytes (the steps run in order on one stream).
    Greedy by size: each buffer at the lowest `align`-aligned offset free
    of the placed buffers that live at the same time. Returned buffers and
    buffers no step binds get None (allocated on their own)."""
    n = len(prog["buffers"])
    lives = buffer_lives(prog)
    first = [lv and lv[0] for lv in lives]
    last = [lv and lv[1] for lv in lives]
    returned = {r["buffer"] for r in prog["returns"] if "buffer" in r}
    offsets, placed, top = [None] * n, [], 0
    order = sorted((j for j in range(n) if first[j] is not None and j not in returned),
                   key=lambda j: -prog["buffers"][j]["bytes"])
    for j in order:
        size = -(-prog["buffers"][j]["bytes"] // align) * align
        start = 0 if prog["buffers"][j].get("zero") else first[j]
        busy = sorted((o, o + sz) for o, sz, a, z in placed if a <= last[j] and start <= z)
        at = 0
        for lo, hi in busy:
            if at + size <= lo:
                break
            at = max(at, hi)
        offsets[j] = at
        placed.append((at, size, start, last[j]))
        top = max(top, at + size)
    return max(top, 1), offsets


class Program:
    """One program of a manifest, ready to run on `chip` (sm_90a here).

    The replay itself is the C runtime's executor (mxmoeRtProgram* of
    mxmoe-c/Runtime.h, `runtime.Program`, one per device): it binds the
    steps to their kernels, keeps the constants and the tensor maps of
    eager calls (cached by the addresses they describe), and enqueues the
    zero-fills, the status-word reset and the launches. This class
    allocates the intermediates and the status words as torch tensors,
    hands them over with the arguments, and checks the status words (see
    the module docstring)."""

    def __init__(self, out_dir: str, function: str, chip: str = "sm_90a",
                 check: str = "sync"):
        if check not in ("sync", "deferred"):
            raise ValueError(f"check must be 'sync' or 'deferred', got {check!r}")
        self.check = check
        manifest = _manifest(out_dir)
        progs = {p["function"]: p for p in manifest.get("programs", [])}
        if function not in progs:
            raise KeyError(f"no program '{function}' in {out_dir}/manifest.json "
                           f"(have: {', '.join(sorted(progs))})")
        self.prog = progs[function]
        built = {k["name"] for k in manifest["kernels"] if k["chip"] == chip}
        missing = [s["kernel"] for s in kernel_steps(self.prog["steps"]) if s["kernel"] not in built]
        if missing:
            raise KeyError(f"kernels {missing} not built for {chip}")
        self._where = (os.path.abspath(out_dir), function, chip)
        # A recompile into the same directory is a new manifest: new programs.
        self._mtime = os.path.getmtime(os.path.join(out_dir, "manifest.json"))
        self._arg_checks = [(list(s["shape"]), _dtype(s["dtype"])) for s in self.prog["args"]]
        # Per buffer: (shape, torch dtype) to allocate (packed FP4 data stays
        # bytes). A buffer the manifest marks "zero" (the output of a GEMM
        # with contraction extent 0, which no kernel writes) is zero-filled
        # by the run itself.
        torch = _torch()
        self._buffer_specs = [
            ([b["bytes"]], torch.uint8) if b["dtype"] == "f4E2M1FN"
            else (b["shape"], _dtype(b["dtype"])) for b in self.prog["buffers"]]
        self._workspace_bytes, self._offsets = memory_plan(self.prog)

    def _runtime(self, dev) -> "rt.Program":
        """The C program of this device (bound once, never unloaded; the C
        executor needs one program per device: its module, constants and
        caches live in the context of its first run)."""
        key = self._where + (self._mtime, dev.index)
        hit = _RUNTIME_PROGRAMS.get(key)
        if hit is None:
            with _RUNTIME_LOCK:
                hit = _RUNTIME_PROGRAMS.get(key)
                if hit is None:
                    hit = _RUNTIME_PROGRAMS[key] = rt.Program(*self._where)
        return hit

    def _check_args(self, args):
        spec = self._arg_checks
        if len(args) != len(spec):
            raise ValueError(f"{self.prog['function']}: expected {len(spec)} arguments, got {len(args)}")
        for i, (a, (shape, want)) in enumerate(zip(args, spec)):
            if list(a.shape) != shape or a.dtype != want or not a.is_contiguous() or not a.is_cuda:
                raise ValueError(
                    f"{self.prog['function']}: argument {i} must be a contiguous CUDA "
                    f"tensor {shape} {want}, got {list(a.shape)} {a.dtype}"
                    f"{'' if a.is_contiguous() else ' (not contiguous)'}")
            if a.device != args[0].device:
                raise ValueError(
                    f"{self.prog['function']}: argument {i} is on {a.device}, "
                    f"argument 0 on {args[0].device}: all on one device")

    def __call__(self, *args, return_buffers: bool = False):
        """Runs the program on `args` (contiguous CUDA tensors of the
        manifest's shapes and dtypes) on the current stream; returns the
        results (fresh tensors, or the arguments a program returns as they
        are). The grouped kernels' status words share one device buffer,
        read at the end (check="sync": the only synchronization) or later
        (check="deferred", see the module docstring): a nonzero status
        raises KernelRejectedInput naming the kernel."""
        torch = _torch()
        self._check_args(args)
        # The arguments' device (else the current one) is current for the
        # call: its stream, its allocations and the C program's context.
        dev = args[0].device if args else torch.device("cuda", torch.cuda.current_device())
        if dev.index != torch.cuda.current_device():
            with torch.cuda.device(dev):
                return self._call(args, dev, return_buffers)
        return self._call(args, dev, return_buffers)

    def _call(self, args, dev, return_buffers):
        torch = _torch()
        capturing = torch.cuda.is_current_stream_capturing()
        if not capturing:
            _GRAPH_HOST.top_up()
            if self.check == "deferred":
                _drain(block=len(_PENDING) >= _MAX_PENDING)
        # The raw cudaStream_t of the current stream (one C call; the Stream
        # object of torch.cuda.current_stream cost 25 us per call).
        stream = torch._C._cuda_getCurrentRawStream(dev.index)
        program = self._runtime(dev)
        if return_buffers:  # every intermediate kept for inspection
            bufs = [torch.empty(shape, dtype=dtype, device=dev)
                    for shape, dtype in self._buffer_specs]
            ptrs = [t.data_ptr() for t in bufs]
        else:
            # Intermediates at their memory_plan offsets in one workspace
            # (stream order makes the reuse safe); results on their own.
            work = torch.empty(self._workspace_bytes, dtype=torch.uint8, device=dev)
            base = work.data_ptr()
            bufs = [torch.empty(shape, dtype=dtype, device=dev) if off is None else None
                    for (shape, dtype), off in zip(self._buffer_specs, self._offsets)]
            ptrs = [t.data_ptr() if t is not None else base + off
                    for t, off in zip(bufs, self._offsets)]
        n_status = program.num_status_words
        # One int32 status word per grouped kernel, 16 bytes apart (every
        # kernel parameter must be 16-byte aligned); the run sets them to -1.
        status = (torch.empty((n_status, 4), dtype=torch.int32, device=dev)
                  if n_status else None)
        maps = maps_host = status_host = 0
        if capturing:
            # A captured call's maps: encoded now into page-locked memory
            # that lives as long as the process and copied into the graph's
            # device memory by a memcpy node of the graph (every replay).
            # Its host memory is taken before anything is recorded, so a
            # capture without enough set aside records nothing.
            nbytes = 128 * program.num_tensor_maps
            _GRAPH_HOST.require(nbytes, 16 * n_status)
            if nbytes:
                maps_buffer = torch.empty(nbytes, dtype=torch.uint8, device=dev)
                maps, maps_host = maps_buffer.data_ptr(), _GRAPH_HOST.take(nbytes)
            if n_status:
                status_host = _GRAPH_HOST.take(16 * n_status)
        program.enqueue([a.data_ptr() for a in args], ptrs, stream,
                        status.data_ptr() if n_status else 0, maps, maps_host)
        if n_status:
            self._status(status, program.status_kernels, status_host, dev)
        out = []
        for r in self.prog["returns"]:
            t = args[r["arg"]] if "arg" in r else bufs[r["buffer"]]
            # A reshape in the function returns the same bytes re-shaped.
            if "shape" in r and r.get("dtype") != "f4E2M1FN" and list(t.shape) != r["shape"]:
                t = t.view(r["shape"])
            out.append(t)
        if return_buffers:
            return out, bufs
        return out

    def _status(self, status, names, captured_host, dev) -> None:
        """The status words of a call: recorded for check_deferred (in a
        capture: copied by the graph to `captured_host`, page-locked),
        queued (check="deferred") or read now."""
        torch = _torch()
        function = self.prog["function"]
        if captured_host:
            address = captured_host
            stream = torch._C._cuda_getCurrentRawStream(dev.index)
            rt.memcpy_async(address, status.data_ptr(), status.numel() * 4, stream)
            _CAPTURED.append((address, len(names), names, function, dev.index))
        elif self.check == "deferred":
            host = torch.empty(status.shape, dtype=status.dtype, pin_memory=True)
            host.copy_(status, non_blocking=True)
            event = torch.cuda.Event()
            event.record()  # on the current stream, as the launches
            _PENDING.append((event, host, names, function))
        else:
            for code, name in zip(status[:, 0].tolist(), names):
                if code != 0:
                    raise rt.KernelRejectedInput(5, f"kernel '{name}' {rt.rejection(code)}")


def mx_grouped_mm_function(out_dir: str, fqn: str, chip: str = "sm_90a",
                           check: str = "deferred"):
    """torch.autograd.Function for the routed-expert GEMM `fqn`:
    y = x @ W[g]^T per token group (x [M, K] bf16, W [G, N, K] bf16, offsets
    [G] int32 end offsets), forward and both gradients through mxmoe's MXFP8
    kernels. Shapes are the ones the IR was compiled for. `check`: see the
    module docstring (deferred: call check_deferred() where a step ends)."""
    torch = _torch()
    fwd = Program(out_dir, fqn + ".forward", chip, check)
    dgrad = Program(out_dir, fqn + ".input_grad", chip, check)
    wgrad = Program(out_dir, fqn + ".weight_grad", chip, check)
    saves_weight = _saves_quantized_weight(fwd)

    class MXGroupedMM(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, offsets):
            outs = fwd(x, w, offsets)
            # quantize-weights-once builds: input_grad takes the forward's
            # transposed quantized weight instead of w.
            ctx.save_for_backward(x, offsets, *(outs[1:] if saves_weight else (w,)))
            return outs[0]

        @staticmethod
        def backward(ctx, grad_out):
            x, offsets, *wq = ctx.saved_tensors
            g = grad_out.contiguous()
            gx = dgrad(g, *wq, offsets)[0] if ctx.needs_input_grad[0] else None
            gw = wgrad(g, x, offsets)[0] if ctx.needs_input_grad[1] else None
            return gx, gw, None

    return MXGroupedMM


def tiled_block_function(out_dir: str, function: str, fqn: str,
                         chip: str = "sm_90a", check: str = "deferred"):
    """torch.autograd.Function for a tiled MLP compiled whole: `function`
    (its forward, e.g. "moe") and "<fqn>.backward" are launch programs with
    loop steps (mxmoe-compile: a static shard loop whose body is all
    kernels, docs/mxmoe-compile.md), replayed by the C runtime shard by
    shard; the backward recomputes each shard's forward. apply(*args) takes
    the function's arguments (contiguous CUDA tensors of the compiled
    shapes: token-axis input first, then the weights) and returns its
    result, or a tuple of its results when it has several (a tiled MLP's
    `summed_results`, e.g. a router's per-expert statistics for a
    load-balancing loss: their gradients flow back through the backward
    program too); with `save_routing` the forward runs `<fqn>.forward` and
    keeps the routing it returns for the backward; backward returns one
    gradient per argument (summed over
    shards in the parameters' dtype). Raises KeyError when either function
    has no program (the manifest's functions_without_program says
    why)."""
    torch = _torch()
    fwd = Program(out_dir, function, chip, check)
    bwd = Program(out_dir, fqn + ".backward", chip, check)
    if len(bwd.prog["returns"]) != len(fwd.prog["args"]):
        raise ValueError(f"{fqn}.backward returns {len(bwd.prog['returns'])} "
                         f"gradients for the {len(fwd.prog['args'])} arguments of {function}")
    # save_routing: @"<fqn>.forward" returns the results, then the saved
    # routing (weights, experts per router), which the backward reads
    # after the arguments.
    n_results = len(fwd.prog["returns"])
    saving = [p for p in _manifest(out_dir)["programs"] if p["function"] == fqn + ".forward"]
    if saving and len(saving[0]["returns"]) > n_results:
        fwd = Program(out_dir, fqn + ".forward", chip, check)

    class TiledBlock(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            outs = fwd(*args)
            ctx.save_for_backward(*args, *outs[n_results:])
            outs = outs[:n_results]
            return outs[0] if len(outs) == 1 else tuple(outs)

        @staticmethod
        def backward(ctx, *grad_outs):
            # (Autograd passes zeros for outputs that took no gradient.)
            grads = bwd(*ctx.saved_tensors, *(g.contiguous() for g in grad_outs))
            return tuple(g if need else None
                         for g, need in zip(grads, ctx.needs_input_grad))

    return TiledBlock


def _saves_quantized_weight(fwd) -> bool:
    """Whether `fwd` (a grouped GEMM's forward program) returns the weight
    quantized for input_grad after y (mxmoe-compile
    --quantize-weights-once): (y, transposed data, its blocked scales)."""
    return len(fwd.prog["returns"]) == 3


def tiled_mlp_partition(out_dir: str, fqn: Optional[str],
                        function: Optional[str] = None) -> dict:
    """The shard partition the tiled MLP `fqn` was compiled for (the
    manifest's "tiled_mlps" entry): "shards" and "tokens" in total and, per
    static shard loop, its shards [first, first + count) of "shard_tokens"
    tokens and the "function_suffix" of its MX linears' functions ("" or
    ".tail"). Pass `shards=partition["shards"]` to `mxmoe.tiled.tiled_mlp`
    so that every shard has compiled kernels. `function` (the function
    holding it) tells apart tiled MLPs of one fqn in nested modules, or
    without an fqn (fqn=None). KeyError when the manifest has no such tiled
    MLP; ValueError when its shard shapes are only known at run time (its
    MX linears were not compiled)."""
    manifest = _manifest(out_dir)
    for entry in manifest.get("tiled_mlps", []):
        if entry["fqn"] == fqn and function in (None, entry["function"]):
            if not entry.get("static"):
                raise ValueError(f"tiled MLP '{fqn}' has run-time shard shapes: "
                                 "its MX linears have no kernels (see \"uncompiled\")")
            return entry
    raise KeyError(f"no tiled MLP '{fqn}'" + (f" in @{function}" if function else "")
                   + f" in {out_dir}/manifest.json (have: "
                   + ", ".join(f"{e['fqn']} (@{e['function']})"
                               for e in manifest.get("tiled_mlps", [])) + ")")


def _linear_variants(out_dir: str, fqn: str, chip: str, check: str):
    """The compiled variants of the MX linear `fqn` (no bias): {x shape:
    (forward, input_grad, weight_grad)} over `<fqn>.*` and, for a tiled
    MLP's second shard size, `<fqn>.tail.*`; returns (pick, N) where
    pick(x) gives the variant of x's shape or raises ValueError."""
    manifest = _manifest(out_dir)
    names = sorted(p["function"][: -len(".forward")]
                   for p in manifest.get("programs", [])
                   if p.get("fqn") == fqn and p.get("pass") == "forward")
    if not names:
        without = [f["function"] for f in manifest.get("functions_without_program", [])
                   if f["function"].startswith(fqn + ".")]
        raise KeyError(f"no forward program of linear '{fqn}' in {out_dir}/manifest.json"
                       + (f" ({', '.join(without)}: host work, e.g. a bias add)"
                          if without else ""))
    variants = {}
    for name in names:
        fwd = Program(out_dir, name + ".forward", chip, check)
        if len(fwd.prog["args"]) != 2:
            raise ValueError(f"{name}.forward takes {len(fwd.prog['args'])} arguments; "
                             "the MX linear functions serve linears without bias")
        variants[tuple(fwd.prog["args"][0]["shape"])] = (
            fwd, Program(out_dir, name + ".input_grad", chip, check),
            Program(out_dir, name + ".weight_grad", chip, check))
    n = next(iter(variants.values()))[0].prog["args"][1]["shape"][0]

    def pick(x):
        v = variants.get(tuple(x.shape))
        if v is None:
            raise ValueError(f"linear '{fqn}': compiled for inputs "
                             f"{sorted(list(s) for s in variants)}, got {list(x.shape)}")
        return v
    return pick, n


def mx_linear_function(out_dir: str, fqn: str, chip: str = "sm_90a",
                       check: str = "deferred"):
    """torch.autograd.Function for the MX linear `fqn` (mxmoe.linear without
    bias): y = x @ W^T (x [T, K] bf16, W [N, K] bf16), forward and both
    gradients through mxmoe's MXFP8 kernels (`<fqn>.forward`, `.input_grad`,
    `.weight_grad`; the one-group case of the grouped GEMM).

    A linear inside a tiled MLP's static shard loops is compiled once per
    shard size: `<fqn>.*` for the first loop's shards and `<fqn>.tail.*` for
    the second's (mxmoe-tile-mlp). Every compiled variant is loaded and a
    call picks the one whose x shape matches; another shape raises
    ValueError naming the compiled ones. `check`: see the module docstring.
    Usage: `y = mx_linear_function(out, "mlp.w13").apply(x, w)`.
    Under torch.compile use `register_linear_op` (one graph node)."""
    torch = _torch()
    pick, _ = _linear_variants(out_dir, fqn, chip, check)

    class MXLinear(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return pick(x)[0](x.contiguous(), _weight(w, fqn))[0]

        @staticmethod
        def backward(ctx, grad_out):
            x, w = ctx.saved_tensors
            _, dgrad, wgrad = pick(x)
            g = grad_out.contiguous()
            gx = dgrad(g, _weight(w, fqn))[0] if ctx.needs_input_grad[0] else None
            gw = wgrad(g, x.contiguous())[0] if ctx.needs_input_grad[1] else None
            # A weight gradient compiled in f32 (grad_accumulator = f32)
            # is returned in the weight's dtype, as autograd requires.
            return gx, (gw.to(w.dtype) if gw is not None else None)

    return MXLinear


def register_linear_op(out_dir: str, fqn: str, chip: str = "sm_90a",
                       namespace: str = "mxmoe", check: str = "deferred"):
    """Registers `torch.ops.<namespace>.<name>(x, w)` (name = fqn with '.'
    -> '_') for the MX linear `fqn`: the programs of `mx_linear_function`
    (every compiled shard size, picked by x's shape) as a torch.library
    custom op with a fake kernel and an autograd formula, so a tiled MLP
    that calls it traces under torch.compile without graph breaks.
    Returns the op."""
    torch = _torch()
    qualname, source, op = _registered(namespace, fqn, out_dir, chip, check)
    if op is not None:
        return op
    pick, n = _linear_variants(out_dir, fqn, chip, check)

    @torch.library.custom_op(qualname, mutates_args=(),
                             schema="(Tensor x, Tensor w) -> Tensor")
    def op(x, w):
        return pick(x)[0](x.contiguous(), _weight(w, fqn))[0]

    @op.register_fake
    def _(x, w):
        return x.new_empty((*x.shape[:-1], n))

    @torch.library.custom_op(qualname + "_backward", mutates_args=(),
                             schema="(Tensor grad, Tensor x, Tensor w) -> Tensor[]")
    def backward_op(grad, x, w):
        _, dgrad, wgrad = pick(x)
        g = grad.contiguous()
        return [dgrad(g, _weight(w, fqn))[0], wgrad(g, x.contiguous())[0].to(w.dtype)]

    @backward_op.register_fake
    def _(grad, x, w):
        return [torch.empty_like(x), torch.empty_like(w)]

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        gx, gw = backward_op(grad, x, w)
        return gx, gw

    op.register_autograd(backward, setup_context=setup_context)
    _OPS[qualname] = (source, op)
    return op


def register_torch_op(out_dir: str, fqn: str, chip: str = "sm_90a",
                      namespace: str = "mxmoe", check: str = "deferred"):
    """Registers `torch.ops.<namespace>.<name>(x, w, offsets)` (name = fqn
    with '.' -> '_') as a torch.library custom op over the compiled
    forward/input_grad/weight_grad programs, with a fake (meta) kernel for
    tracing and an autograd formula, so it runs under torch.compile as one
    graph node (fullgraph=True works). `check`: see the module docstring.
    Returns the op. For a build with --quantize-weights-once (the forward
    also returns the weight quantized for input_grad) the op returns [y,
    wt, wt_scales] and saves wt for the backward; what this function
    returns is then a Python function (x, w, offsets) -> y over it (the op
    is its `.op`)."""
    torch = _torch()
    qualname, source, op = _registered(namespace, fqn, out_dir, chip, check)
    if op is not None:
        return op
    fwd = Program(out_dir, fqn + ".forward", chip, check)
    dgrad = Program(out_dir, fqn + ".input_grad", chip, check)
    wgrad = Program(out_dir, fqn + ".weight_grad", chip, check)
    out_spec = fwd.prog["buffers"][fwd.prog["returns"][0]["buffer"]]
    if _saves_quantized_weight(fwd):
        op = _register_weights_once_op(qualname, fqn, fwd, dgrad, wgrad)
        _OPS[qualname] = (source, op)
        return op

    # Explicit schemas: annotations are strings under `from __future__
    # import annotations`, which infer_schema cannot resolve.
    @torch.library.custom_op(qualname, mutates_args=(),
                             schema="(Tensor x, Tensor w, Tensor offsets) -> Tensor")
    def op(x, w, offsets):
        # The program's result is a fresh tensor: no copy.
        return fwd(x.contiguous(), _weight(w, fqn), offsets.contiguous())[0]

    @op.register_fake
    def _(x, w, offsets):
        return x.new_empty(out_spec["shape"], dtype=_dtype(out_spec["dtype"]))

    @torch.library.custom_op(
        qualname + "_backward", mutates_args=(),
        schema="(Tensor grad, Tensor x, Tensor w, Tensor offsets) -> Tensor[]")
    def backward_op(grad, x, w, offsets):
        g = grad.contiguous()
        # The saved inputs as the forward took them (contiguous copies of
        # strided ones; a transposed view never got this far).
        return [dgrad(g, _weight(w, fqn), offsets.contiguous())[0],
                wgrad(g, x.contiguous(), offsets.contiguous())[0]]

    @backward_op.register_fake
    def _(grad, x, w, offsets):
        return [torch.empty_like(x), torch.empty_like(w)]

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    def backward(ctx, grad):
        x, w, offsets = ctx.saved_tensors
        gx, gw = backward_op(grad, x, w, offsets)
        return gx, gw, None

    op.register_autograd(backward, setup_context=setup_context)
    _OPS[qualname] = (source, op)
    return op


def register_swiglu_experts_op(out_dir: str, fqn: str, chip: str = "sm_90a",
                               namespace: str = "mxmoe", check: str = "deferred"):
    """Registers `torch.ops.<namespace>.<name>` (name = fqn with '.' -> '_')
    over the compiled programs of an `mxmoe.swiglu_experts`: the routed
    experts' w13 grouped GEMM, SwiGLU and w2 grouped GEMM in MX, the SwiGLU
    and its backward computed inside the quantize kernels. Returns
    `experts(x, w13, w2, offsets, indices=None, scores=None) -> y`.

    Unrouted op (`<fqn>.forward` (x, w13, w2, offsets) -> (y, h)): x [M, H]
    bf16 rows sorted by expert, w13 [E, 2I, H] ([w1; w3]), w2 [E, H, I],
    offsets [E] int32 end offsets; y [M, H]. Saves x and h = x w13^T.

    Routed op (`routing(indices, scores)` in the IR: the MoE dispatch and
    combine compiled in): x [T, H] token rows, indices [T * top_k] int32
    (the flattened (token, slot) index of each routed row in expert order:
    `argsort(topk_experts.flatten(), stable=True)`), scores [T, top_k] (the
    router's weights, f32 or as compiled), offsets over the routed rows; y
    [T, H] = sum over a token's routed rows of score * expert output.
    Gradients flow to x, w13, w2 and scores. Saves x, h [M, 2I] and the
    experts' routed output [M, H].

    A build with --quantize-weights-once (MX128) also saves the forward's
    transposed fp8 copies of w13 and w2 with their scales (1 byte per
    weight element) for the backward's input gradients.

    Shapes are the compiled ones. A torch.library custom op with a fake
    kernel and an autograd formula (torch.compile fullgraph=True). `check`:
    see the module docstring."""
    torch = _torch()
    qualname, source, op = _registered(namespace, fqn, out_dir, chip, check)
    if op is not None:
        return op
    fwd = Program(out_dir, fqn + ".forward", chip, check)
    bwd = Program(out_dir, fqn + ".backward", chip, check)
    routed = len(fwd.prog["args"]) == 6
    out_specs = [fwd.prog["buffers"][r["buffer"]] for r in fwd.prog["returns"]]
    kept = 2 if routed else 1  # h (and the routed output y) after the result
    once = len(out_specs) - 1 - kept  # --quantize-weights-once: 4 copies
    names = "x, w13, w2, offsets" + (", indices, scores" if routed else "")

    @torch.library.custom_op(qualname, mutates_args=(),
                             schema=f"(Tensor {names.replace(', ', ', Tensor ')}) -> Tensor[]")
    def op(x, w13, w2, offsets, *routing):
        return list(fwd(x.contiguous(), _weight(w13, fqn + " w13"), _weight(w2, fqn + " w2"),
                        offsets.contiguous(), *(t.contiguous() for t in routing)))

    @op.register_fake
    def _(x, w13, w2, offsets, *routing):
        return [x.new_empty(s["shape"], dtype=_dtype(s["dtype"])) for s in out_specs]

    saved = "x, h" + (", y, " if routed else ", ") + "w13, w2, offsets" + \
        (", indices, scores" if routed else "") + \
        "".join(f", wt{i}" for i in range(once))

    @torch.library.custom_op(
        qualname + "_backward", mutates_args=(),
        schema=f"(Tensor grad, Tensor {saved.replace(', ', ', Tensor ')}) -> Tensor[]")
    def backward_op(grad, x, h, *rest):
        rest = list(rest)
        w = 1 if routed else 0  # position of w13 in rest
        rest[w] = _weight(rest[w], fqn + " w13")
        rest[w + 1] = _weight(rest[w + 1], fqn + " w2")
        return list(bwd(grad.contiguous(), x.contiguous(), h,
                        *(t.contiguous() for t in rest)))

    @backward_op.register_fake
    def _(grad, x, h, *rest):
        w13, w2 = (rest[1], rest[2]) if routed else (rest[0], rest[1])
        grads = [torch.empty_like(x), torch.empty_like(w13), torch.empty_like(w2)]
        if routed:
            grads.append(torch.empty_like(rest[5]))  # the scores
        return grads

    def setup_context(ctx, inputs, output):
        x, w13, w2, offsets, *routing = inputs
        saved_out, copies = output[1:1 + kept], output[1 + kept:]
        ctx.save_for_backward(x, *saved_out, w13, w2, offsets, *routing, *copies)
        ctx.mark_non_differentiable(*output[1:])
        ctx.set_materialize_grads(False)

    def backward(ctx, grads):
        saved_tensors = ctx.saved_tensors
        g = backward_op(grads[0], *saved_tensors)
        if routed:
            return g[0], g[1], g[2], None, None, g[3]
        return g[0], g[1], g[2], None

    op.register_autograd(backward, setup_context=setup_context)

    def swiglu_experts(x, w13, w2, offsets, indices=None, scores=None):
        if routed != (indices is not None) or (indices is None) != (scores is None):
            raise ValueError(f"{fqn}: compiled {'with' if routed else 'without'} routing: "
                             f"pass {'indices and scores' if routed else 'no indices or scores'}")
        return op(x, w13, w2, offsets, *((indices, scores) if routed else ()))[0]

    swiglu_experts.op = op
    swiglu_experts.routed = routed
    _OPS[qualname] = (source, swiglu_experts)
    return swiglu_experts


def _register_weights_once_op(qualname, fqn, fwd, dgrad, wgrad):
    """register_torch_op for a --quantize-weights-once build: the custom op
    `<qualname>` returns [y, wt, wt_scales] (the weight quantized once, in
    the input gradient's orientation, saved for the backward instead of
    w); the function returned takes (x, w, offsets) and returns y, as the
    op of other builds does."""
    torch = _torch()
    specs = fwd.prog["returns"]  # y, wt, wt_scales, each with its shape and dtype

    @torch.library.custom_op(qualname, mutates_args=(),
                             schema="(Tensor x, Tensor w, Tensor offsets) -> Tensor[]")
    def op(x, w, offsets):
        return list(fwd(x.contiguous(), _weight(w, fqn), offsets.contiguous()))

    @op.register_fake
    def _(x, w, offsets):
        return [x.new_empty(s["shape"], dtype=_dtype(s["dtype"])) for s in specs]

    @torch.library.custom_op(
        qualname + "_backward", mutates_args=(),
        schema="(Tensor grad, Tensor x, Tensor wt, Tensor wt_scales, Tensor offsets) -> Tensor[]")
    def backward_op(grad, x, wt, wt_scales, offsets):
        g = grad.contiguous()
        offsets = offsets.contiguous()
        return [dgrad(g, wt, wt_scales, offsets)[0], wgrad(g, x.contiguous(), offsets)[0]]

    @backward_op.register_fake
    def _(grad, x, wt, wt_scales, offsets):
        w = wgrad.prog["returns"][0]
        return [torch.empty_like(x), x.new_empty(w["shape"], dtype=_dtype(w["dtype"]))]

    def setup_context(ctx, inputs, output):
        x, w, offsets = inputs
        ctx.save_for_backward(x, offsets, output[1], output[2])
        ctx.mark_non_differentiable(output[1], output[2])
        # No zero gradients for wt and its scales (1 byte per weight element).
        ctx.set_materialize_grads(False)

    def backward(ctx, grads):
        x, offsets, wt, wts = ctx.saved_tensors
        gx, gw = backward_op(grads[0], x, wt, wts, offsets)
        return gx, gw, None

    op.register_autograd(backward, setup_context=setup_context)

    def mx_grouped_mm(x, w, offsets):
        return op(x, w, offsets)[0]

    mx_grouped_mm.op = op
    return mx_grouped_mm
