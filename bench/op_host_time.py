#!/usr/bin/env python3
"""Host time per call of one routed-expert GEMM through each Python layer
of mxmoe (device): the launch program (`mxmoe.program.Program`), the
autograd function (`mx_grouped_mm_function`) and the torch.library op
(`register_torch_op`), forward alone and forward + backward, against
bf16 `torch._grouped_mm` with autograd. Each row: microseconds to enqueue
one call (mean of N calls, GPU idle at the start, no synchronization in the
loop) and the GPU-bound wall time per call. N (default 16) stays below the
deferred status checks' queue (64 calls, mxmoe.program._MAX_PENDING; a
forward + backward makes 3): past it a call waits for the oldest one's GPU
work, and the host time would include GPU time.

    python3 bench/op_host_time.py OUT_DIR FQN [N] [--profile]   # e.g. .device/grid128 qwen3_t8192.w13

--profile: cProfile of N calls of the forward program (host time by function).

OUT_DIR is an mxmoe-compile output whose FQN forward takes (x [M, K],
w [G, N, K], offsets [G]).
"""
from __future__ import annotations

import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from mxmoe import program as mp  # noqa: E402


def timed(label, call, n):
    for _ in range(5):
        call()
    torch.cuda.synchronize()
    mp.check_deferred()
    t0 = time.perf_counter()
    for _ in range(n):
        call()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    mp.check_deferred()
    t2 = time.perf_counter()
    print(f"| {label} | {1e6 * (t1 - t0) / n:.1f} | {1e6 * (t2 - t0) / n:.1f} |", flush=True)


def main() -> int:
    out_dir, fqn = sys.argv[1], sys.argv[2]
    rest = [a for a in sys.argv[3:] if a != "--profile"]
    n = int(rest[0]) if rest else 16
    fwd = mp.Program(out_dir, fqn + ".forward", check="deferred")
    (M, K), (G, N, _), _ = [a["shape"] for a in fwd.prog["args"]]
    dev = torch.device("cuda")
    x = torch.randn(M, K, device=dev, dtype=torch.bfloat16, requires_grad=True)
    w = (torch.randn(G, N, K, device=dev) / K ** 0.5).to(torch.bfloat16).requires_grad_()
    offs = torch.linspace(M / G, M, G, device=dev).to(torch.int32)
    dy = torch.randn(M, N, device=dev, dtype=torch.bfloat16)
    fn = mp.mx_grouped_mm_function(out_dir, fqn)
    op = mp.register_torch_op(out_dir, fqn, namespace="mxmoe_host_time")

    def backward(f):
        def step():
            f().backward(dy)
            x.grad = w.grad = None
        return step

    print(f"{fqn}: M {M}, K {K}, N {N}, {G} groups, {n} calls")
    print("| path | host us/call | wall us/call |")
    print("|---|---|---|")
    xd, wd = x.detach(), w.detach()
    timed("Program (forward program alone)", lambda: fwd(xd, wd, offs), n)
    with torch.no_grad():
        timed("autograd Function forward, no grad", lambda: fn.apply(xd, wd, offs), n)
        timed("torch op forward, no grad", lambda: op(xd, wd, offs), n)
        timed("bf16 torch._grouped_mm forward, no grad",
              lambda: torch._grouped_mm(xd, wd.transpose(-2, -1), offs=offs), n)
    timed("autograd Function forward + backward", backward(lambda: fn.apply(x, w, offs)), n)
    timed("torch op forward + backward", backward(lambda: op(x, w, offs)), n)
    timed("bf16 torch._grouped_mm forward + backward",
          backward(lambda: torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)), n)
    if "--profile" in sys.argv:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        torch.cuda.synchronize()
        prof.enable()
        for _ in range(n):
            fwd(xd, wd, offs)
        prof.disable()
        torch.cuda.synchronize()
        mp.check_deferred()
        pstats.Stats(prof).sort_stats("tottime").print_stats(12)
    return 0


if __name__ == "__main__":
    sys.exit(main())
