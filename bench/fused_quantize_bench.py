#!/usr/bin/env python3
"""The SwiGLU that feeds w2, then its MX128 quantization (1x128, M-grouped
blocked scales): PyTorch's `F.silu(g) * u` + mxmoe's quantize kernel
(what the MoE layer runs today) against one mxmoe.fused_quantize kernel
(bench/fused_quantize.mlir; build commands there), at Qwen3-30B-A3B and
Llama 4 Scout routed rows for 16K tokens (device).

GPU time per call from torch.profiler (kernel time only: the two paths'
kernels, without host launch gaps), and the fused kernel's bytes (h read,
codes and scales written) per second against a copy of h. Then the same
for the SwiGLU's backward: PyTorch's autograd of the SwiGLU (as the layer
runs it) + mxmoe's rowwise and token-axis MX128 quantizations of dh,
against the two fused kernels (bench/fused_quantize.mlir's
@<shape>_dswiglu), with the count of output bytes that differ (the
fused exp is MLIR's polynomial, PyTorch's is CUDA's expf). Checks the two
paths' outputs equal (data and scales) on the timed data. Prints a table
and one JSON row per (shape, path); with `--jsonl FILE` the rows are
appended there.

    python3 bench/fused_quantize_bench.py .device/fqb [--jsonl bench/results/fused_quantize_bench_<date>.jsonl]
"""
from __future__ import annotations

import datetime
import json
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from mxmoe import program as mp  # noqa: E402

SHAPES = {"qwen3_16k": (131072, 768, 128), "scout_16k": (16384, 8192, 16)}
COMMAND = "python3 bench/fused_quantize_bench.py .device/fqb"


def gpu_ms(step, iters=20):
    """Kernel ms per call of `step` (torch.profiler, CUDA kernels only)."""
    from torch.profiler import ProfilerActivity, profile
    step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            step()
        torch.cuda.synchronize()
    total = sum(e.device_time for e in prof.events()
                if e.device_type == torch.autograd.DeviceType.CUDA)
    return total / 1e3 / iters


def bench_dswiglu(d, dev, date):
    """The SwiGLU's backward and dh's two MX128 quantizations (rowwise,
    token axis): PyTorch autograd (chunk, silu, mul backward, as the layer
    runs them) + mxmoe's two quantize kernels against the fused kernels."""
    rows = []
    print(f"{'shape':>10} {'rows x I':>12} | {'autograd + 2 quantize ms':>24} | {'fused ms':>8} | "
          f"{'fused / unfused':>15} | codes differing")
    for name, (M, I, G) in SHAPES.items():
        torch.manual_seed(0)
        h = (torch.randn(M, 2 * I, device="cuda") * 3).to(torch.bfloat16).requires_grad_()
        da = torch.randn(M, I, device="cuda").to(torch.bfloat16)
        offs = torch.tensor([(g + 1) * M // G - (7 if g < G - 1 else 0) for g in range(G)],
                            dtype=torch.int32, device="cuda")
        quantize = mp.Program(d, f"{name}_dswiglu_unfused")
        fused = mp.Program(d, f"{name}_dswiglu")
        g, u = h.chunk(2, -1)
        act = F.silu(g) * u

        def unfused_step():
            (dh,) = torch.autograd.grad(act, h, da, retain_graph=True)
            return quantize(dh, offs)

        hd = h.detach()
        a, b = unfused_step(), fused(da, hd, offs)
        differ = sum(int((x.view(torch.uint8) != y.view(torch.uint8)).sum()) for x, y in zip(a, b))
        total = sum(x.numel() for x in a)
        t_unfused = gpu_ms(unfused_step)
        t_fused = gpu_ms(lambda: fused(da, hd, offs))
        print(f"{name:>10} {M:>7}x{I:<4} | {t_unfused:24.3f} | {t_fused:8.3f} | "
              f"{t_unfused / t_fused:14.2f}x | {differ} of {total}")
        for path, t in (("torch autograd + 2 mxmoe quantize", t_unfused), ("mxmoe fused_quantize", t_fused)):
            rows.append(dict(what="dswiglu_mx128_quantize_rowwise_and_token_axis", shape=[M, 2 * I],
                             groups=G, impl=path, metric="gpu_time", value=round(t * 1e3, 2), unit="us",
                             bytes_differing=differ, bytes_compared=total, device=dev, date=date,
                             command=COMMAND))
        del h, da, act, g, u
    return rows


def main():
    d = sys.argv[1]
    jsonl = sys.argv[sys.argv.index("--jsonl") + 1] if "--jsonl" in sys.argv else None
    dev = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    rows = []
    print(f"{'shape':>10} {'rows x I':>12} | {'torch + quantize ms':>19} | {'fused ms':>8} | "
          f"{'fused / unfused':>15} | {'fused TB/s':>10} | {'copy TB/s':>9} | equal")
    for name, (M, I, G) in SHAPES.items():
        torch.manual_seed(0)
        h = (torch.randn(M, 2 * I, device="cuda") * 3).to(torch.bfloat16)
        # Balanced groups, each not a multiple of 128 rows.
        offs = torch.tensor([(g + 1) * M // G - (7 if g < G - 1 else 0) for g in range(G)],
                            dtype=torch.int32, device="cuda")
        quantize = mp.Program(d, f"{name}_quantize")
        fused = mp.Program(d, f"{name}_fused")

        def unfused_step():
            return quantize((F.silu(h[:, :I]) * h[:, I:]).contiguous(), offs)

        a, b = unfused_step(), fused(h, offs)
        equal = all(torch.equal(x.view(torch.uint8), y.view(torch.uint8)) for x, y in zip(a, b))
        t_unfused = gpu_ms(unfused_step)
        t_fused = gpu_ms(lambda: fused(h, offs))
        y = torch.empty_like(h)
        t_copy = gpu_ms(lambda: y.copy_(h))
        moved = h.numel() * 2 + b[0].numel() + b[1].numel()
        bw, copy_bw = moved / t_fused / 1e9, 2 * h.numel() * 2 / t_copy / 1e9
        print(f"{name:>10} {M:>7}x{I:<4} | {t_unfused:19.3f} | {t_fused:8.3f} | "
              f"{t_unfused / t_fused:14.2f}x | {bw:10.2f} | {copy_bw:9.2f} | {equal}")
        for path, t in (("torch silu*u + mxmoe quantize", t_unfused), ("mxmoe fused_quantize", t_fused)):
            rows.append(dict(what="swiglu_mx128_quantize", shape=[M, 2 * I], groups=G, impl=path,
                             metric="gpu_time", value=round(t * 1e3, 2), unit="us",
                             equal_outputs=equal, device=dev, date=date, command=COMMAND))
        rows.append(dict(what="swiglu_mx128_quantize", shape=[M, 2 * I], groups=G, impl="copy of h",
                         metric="gpu_time", value=round(t_copy * 1e3, 2), unit="us",
                         bandwidth_tbs=round(copy_bw, 3), device=dev, date=date, command=COMMAND))
    rows += bench_dswiglu(d, dev, date)
    for r in rows:
        print(json.dumps(r))
    if jsonl:
        with open(jsonl, "a") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    return 0 if all(r.get("equal_outputs", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
