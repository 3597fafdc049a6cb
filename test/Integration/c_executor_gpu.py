#!/usr/bin/env python3
"""The C executor of launch programs on the GPU (mxmoeRtProgram* of
mxmoe-c/Runtime.h, through the C host build/bin/mxmoe-run) against
Python's replay (mxmoe.program.Program) of the same compile output.

For every program of each compile output given: fresh random arguments
(bf16 activations and weights, monotone group offsets ending at the token
count with an empty group, valid fp8 / e8m0 bytes where a program takes
quantized weights), written to files; mxmoe-run runs the program on
device copies and writes its results; Python runs it on the same
arguments. Results must be byte-identical (the same kernels, deterministic).
Then a decreasing offsets vector: mxmoe-run exits 1 naming the kernel that
rejected it, as Python raises KernelRejectedInput. Then one C program
(runtime.Program) on several streams: a run using the program's own memory
waits for the previous one on another stream (a device sleep before it
shows the wait), runs with caller memory overlap, 4 threads x 25 runs
give Python's results, and a run with another CUDA context current is
refused.
Prints `N passed, N failed` last.

Usage (device): c_executor_gpu.py [--bench] MXMOE_RUN DIR [DIR ...]
--bench also prints, per directory, the host time per call of each
forward program: Python's Program (check="deferred", no synchronization
in the loop) against the C executor (mxmoe-run --repeat), and the wall
time per call of both (until the GPU is done).
MXMOE_RUN is the C host's command line, e.g. build/bin/mxmoe-run, or
"compute-sanitizer --error-exitcode 9 build/bin/mxmoe-run" (a sanitizer
error then fails the program's check).
"""
from __future__ import annotations

import ctypes
import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import Checks  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from mxmoe import program as mp  # noqa: E402
from mxmoe import runtime as rt  # noqa: E402

CHECKS = Checks(width=64)
DTYPES = mp._dtype  # the torch dtype Program takes for a manifest dtype


def offsets(m: int, groups: int, gen) -> torch.Tensor:
    """Monotone end offsets of `groups` groups over m tokens, group 1 empty."""
    cuts = torch.sort(torch.randint(0, m + 1, (groups - 1,), generator=gen)).values
    ends = torch.cat([cuts, torch.tensor([m])]).to(torch.int32)
    if groups > 2:
        ends[1] = ends[0]
    return ends


def make_arg(spec: dict, m: int, gen) -> torch.Tensor:
    shape, dt = spec["shape"], spec["dtype"]
    if dt == "i32":
        return offsets(m, shape[0], gen) if len(shape) == 1 and shape[0] > 1 \
            else torch.full(shape, m, dtype=torch.int32)
    if dt == "f8E4M3FN":  # any byte but the NaNs 0x7f / 0xff
        b = torch.randint(0, 0x7f, shape, generator=gen, dtype=torch.uint8) | \
            (torch.randint(0, 2, shape, generator=gen, dtype=torch.uint8) << 7)
        return b.view(DTYPES(dt))
    if dt == "f8E8M0FNU":  # 2^-7 .. 2^7
        b = torch.randint(120, 135, shape, generator=gen, dtype=torch.uint8)
        return b.view(DTYPES(dt))
    return torch.randn(shape, generator=gen, dtype=torch.float32).to(DTYPES(dt))


def as_bytes(t: torch.Tensor) -> bytes:
    return t.detach().contiguous().cpu().view(torch.uint8).numpy().tobytes()


def c_run(tool: str, d: str, fn: str, args, work: str):
    """mxmoe-run on `args`: (exit code, stderr, result bytes)."""
    for i, a in enumerate(args):
        with open(os.path.join(work, f"arg{i}.bin"), "wb") as f:
            f.write(as_bytes(a))
    p = subprocess.run(shlex.split(tool) + [d, fn, "--inputs", work, "--outputs", work],
                       capture_output=True, text=True)
    outs, i = [], 0
    while os.path.exists(os.path.join(work, f"ret{i}.bin")):
        outs.append(open(os.path.join(work, f"ret{i}.bin"), "rb").read())
        os.remove(os.path.join(work, f"ret{i}.bin"))
        i += 1
    return p.returncode, p.stderr.strip(), outs


def check_program(tool: str, d: str, prog: dict, gen) -> None:
    fn, tag = prog["function"], f"{os.path.basename(d.rstrip('/'))} {prog['function']}"
    m = prog["args"][0]["shape"][0]
    host = [make_arg(a, m, gen) for a in prog["args"]]
    dev = [h.cuda() for h in host]
    with tempfile.TemporaryDirectory() as work:
        rc, err, c_outs = c_run(tool, d, fn, host, work)
    py_outs = [as_bytes(t) for t in mp.Program(d, fn, check="sync")(*dev)]
    same = rc == 0 and len(c_outs) == len(py_outs) and all(
        a == b for a, b in zip(c_outs, py_outs))
    sizes = ", ".join(str(len(b)) for b in py_outs)
    CHECKS.report(f"{tag}: C == Python", same,
                  f"{len(py_outs)} results ({sizes} bytes)" if rc == 0 else err[-300:])


def check_rejected(tool: str, d: str, prog: dict, gen) -> None:
    """Offsets that decrease: the grouped kernel rejects them."""
    fn = prog["function"]
    m = prog["args"][0]["shape"][0]
    host = [make_arg(a, m, gen) for a in prog["args"]]
    k = next(i for i, a in enumerate(prog["args"])
             if a["dtype"] == "i32" and a["shape"][0] > 1)
    host[k] = torch.flip(host[k], [0]).contiguous()
    with tempfile.TemporaryDirectory() as work:
        rc, err, _ = c_run(tool, d, fn, host, work)
    try:
        mp.Program(d, fn, check="sync")(*[h.cuda() for h in host])
        py = "no error"
    except rt.KernelRejectedInput as e:
        py = str(e)
    ok = rc == 1 and "rejected its group offsets" in err and "rejected" in py
    CHECKS.report(f"{os.path.basename(d.rstrip('/'))} {fn}: bad offsets rejected",
                  ok, err[-160:])


def _raw_run(p, args, bufs, stream, status=None, maps=None):
    """One run of C program `p` on raw stream `stream`: the program's own
    status words / tensor-map cache unless given (status: an int32 tensor,
    maps: a (device, pinned host) pair of uint8 tensors)."""
    p.enqueue([a.data_ptr() for a in args], [b.data_ptr() for b in bufs], stream,
              status.data_ptr() if status is not None else 0,
              maps[0].data_ptr() if maps else 0, maps[1].data_ptr() if maps else 0)


def _results(prog: dict, bufs) -> list:
    return [as_bytes(bufs[r["buffer"]]) for r in prog["returns"]]


def _sleeping_run(p, prog, dev, bufs, wait_stream, **memory):
    """A run on a fresh stream after ~0.2 s of device sleep there; then a run
    on `wait_stream`: whether that one was still waiting 50 ms later."""
    a = torch.cuda.Stream()
    with torch.cuda.stream(a):
        torch.cuda._sleep(400_000_000)  # cycles: ~0.2 s at the H200's clock
        _raw_run(p, dev, bufs[0], a.cuda_stream, **memory.get("first", {}))
    with torch.cuda.stream(wait_stream):
        _raw_run(p, dev, bufs[1], wait_stream.cuda_stream, **memory.get("second", {}))
        done = torch.cuda.Event()
        done.record(wait_stream)
    time.sleep(0.05)
    waiting = not done.query()
    torch.cuda.synchronize()
    return waiting


def check_streams(d: str, prog: dict, gen) -> None:
    """Runs of one C program on several streams and threads: runs using its
    own memory are ordered, runs with caller memory overlap, concurrent
    calls from threads give the reference results."""
    fn, tag = prog["function"], f"{os.path.basename(d.rstrip('/'))} {prog['function']}"
    m = prog["args"][0]["shape"][0]
    dev = [make_arg(a, m, gen).cuda() for a in prog["args"]]
    py = mp.Program(d, fn, check="sync")
    ref = [as_bytes(t) for t in py(*dev)]
    p = rt.Program(os.path.abspath(d), fn, "sm_90a")

    def fresh():
        return [torch.empty(s, dtype=t, device="cuda") for s, t in py._buffer_specs]

    # The first run loads the module and uploads the constants (waiting for
    # its stream): not the run to time.
    _raw_run(p, dev, fresh(), torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()

    def caller_memory():
        n = max(1, p.num_tensor_maps)
        return {"status": torch.empty((max(1, p.num_status_words), 4), dtype=torch.int32,
                                      device="cuda"),
                "maps": (torch.empty(128 * n, dtype=torch.uint8, device="cuda"),
                         torch.empty(128 * n, dtype=torch.uint8, pin_memory=True))}

    bufs = [fresh(), fresh()]
    waited = _sleeping_run(p, prog, dev, bufs, torch.cuda.Stream())
    p.check()
    same = all(_results(prog, b) == ref for b in bufs)
    CHECKS.report(f"{tag}: own memory, 2 streams: ordered", waited and same,
                  f"second run waited for the first: {waited}; results == Python: {same}")
    bufs = [fresh(), fresh()]
    overlapped = not _sleeping_run(p, prog, dev, bufs, torch.cuda.Stream(),
                                   first=caller_memory(), second=caller_memory())
    same = all(_results(prog, b) == ref for b in bufs)
    CHECKS.report(f"{tag}: caller memory, 2 streams: overlap", overlapped and same,
                  f"second run overlapped the first: {overlapped}; results == Python: {same}")
    check_threads(p, prog, dev, ref, fresh, tag)
    check_other_context(p, dev, fresh, tag)


def check_threads(p, prog, dev, ref, fresh, tag, threads=4, runs=25) -> None:
    """`threads` Python threads (ctypes drops the GIL in the C calls), each on
    its own stream, run the program with its own memory `runs` times."""
    outs, errors = [None] * threads, []

    def worker(i):
        try:
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                bufs = [fresh() for _ in range(runs)]
                for b in bufs:
                    _raw_run(p, dev, b, s.cuda_stream)
                s.synchronize()
                outs[i] = [_results(prog, b) for b in bufs]
        except Exception as e:  # reported below
            errors.append(repr(e))

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    p.check()
    same = not errors and all(r == ref for o in outs for r in o)
    CHECKS.report(f"{tag}: {threads} threads x {runs} runs", same,
                  errors[0][:200] if errors else "all results == Python")


def check_other_context(p, dev, fresh, tag) -> None:
    """A run with another CUDA context current than the first run's is an
    error naming it, and enqueues nothing."""
    cuda = ctypes.CDLL("libcuda.so.1")
    ctx, cur = ctypes.c_void_p(), ctypes.c_void_p()
    if hasattr(cuda, "cuCtxCreate_v4"):  # CUDA 13: (ctx, params, flags, device)
        rc = cuda.cuCtxCreate_v4(ctypes.byref(ctx), None, 0, 0)
    else:
        rc = cuda.cuCtxCreate_v2(ctypes.byref(ctx), 0, 0)
    if rc != 0:
        CHECKS.report(f"{tag}: other context rejected", False, f"cuCtxCreate failed: {rc}")
        return
    try:  # cuCtxCreate made it current on this thread
        _raw_run(p, dev, fresh(), 0)
        msg = "ran"
    except rt.RuntimeError_ as e:
        msg = str(e)
    finally:
        cuda.cuCtxPopCurrent_v2(ctypes.byref(cur))
        cuda.cuCtxDestroy_v2(ctx)
    CHECKS.report(f"{tag}: other context rejected",
                  "not the one of the program's first run" in msg, msg[-160:])


def bench(tool: str, d: str, prog: dict, gen, n: int = 200) -> None:
    """Host and wall microseconds per call, Python vs C, one program."""
    fn = prog["function"]
    m = prog["args"][0]["shape"][0]
    host = [make_arg(a, m, gen) for a in prog["args"]]
    dev = [h.cuda() for h in host]
    p = mp.Program(d, fn, check="deferred")
    for _ in range(10):
        p(*dev)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        p(*dev)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    mp.check_deferred()
    t2 = time.perf_counter()
    with tempfile.TemporaryDirectory() as work:
        for i, a in enumerate(host):
            with open(os.path.join(work, f"arg{i}.bin"), "wb") as f:
                f.write(as_bytes(a))
        out = subprocess.run(shlex.split(tool) + [d, fn, "--inputs", work, "--outputs",
                                                  work, "--repeat", str(n)],
                             capture_output=True, text=True).stdout.strip()
    print(f"| {os.path.basename(d.rstrip('/'))} {fn} | {len(prog['steps'])} | "
          f"{1e6 * (t1 - t0) / n:.1f} | {1e6 * (t2 - t0) / n:.1f} | {out} |", flush=True)


def main() -> int:
    do_bench = "--bench" in sys.argv
    argv = [a for a in sys.argv[1:] if a != "--bench"]
    tool, dirs = argv[0], argv[1:]
    gen = torch.Generator().manual_seed(2026)
    for d in dirs:
        manifest = json.load(open(os.path.join(d, "manifest.json")))
        for prog in manifest["programs"]:
            check_program(tool, d, prog, gen)
        grouped = [p for p in manifest["programs"]
                   if p["function"].endswith(".forward") and p["args"][0]["shape"][0] > 0
                   and any(a["dtype"] == "i32" and a["shape"][0] > 1 for a in p["args"])]
        if grouped:
            check_rejected(tool, d, grouped[0], gen)
            check_streams(d, grouped[0], gen)
    if do_bench:
        print("| program | steps | Python host us/call | Python wall us/call | C (mxmoe-run) |")
        print("|---|---|---|---|---|")
        for d in dirs:
            manifest = json.load(open(os.path.join(d, "manifest.json")))
            for prog in manifest["programs"]:
                if prog["function"].endswith(".forward") and prog["steps"]:
                    bench(tool, d, prog, gen)
    return CHECKS.summary()


if __name__ == "__main__":
    sys.exit(main())
