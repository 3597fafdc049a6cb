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
rejected it, as Python raises KernelRejectedInput.
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

import json
import os
import shlex
import subprocess
import sys
import tempfile
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
