#!/usr/bin/env python3
"""One MoE layer, forward + backward, mxmoe MXFP8 kernels vs the bf16
PyTorch path, at the Llama4 Scout and Qwen3-30B-A3B shapes (device).

The layer: bf16 router (linear + softmax + top-k), permutation of the
tokens by expert, w13 grouped GEMM, SwiGLU, w2 grouped GEMM, weighted
un-permutation. Where the compile output has the experts as one
mxmoe.swiglu_experts (`<fqn>.experts`), a third path per output,
"mxmoe <label> block", runs w13, SwiGLU and w2 through it (the SwiGLU
and its backward inside the quantize kernels); where it has the routed
block (`<fqn>.routed`: `mxmoe.swiglu_experts` with `routing`), "mxmoe
<label> routed" also runs the gather of routed rows and the weighted
combine through it (gathers fused into the quantize kernels, a
deterministic compiled combine instead of `index_add`). The mxmoe path runs both grouped GEMMs (forward, input and
weight gradients: quantize + MXFP8 GEMM kernels) through the torch.library
ops compiled from bench/moe_layer.mlir; the bf16 path uses
torch._grouped_mm. Prints tokens/s and peak memory per path and shape.

    ./build/bin/mxmoe-compile bench/moe_layer.mlir --chip sm_90a -o .device/layer
    python3 bench/moe_layer_bench.py .device/layer        # device
    python3 bench/moe_layer_bench.py .device/layer --profile   # + GPU time per kernel class and per mxmoe kernel

Several compile outputs in one run (one row per recipe, `path` "mxmoe <label>"):

    ./build/bin/mxmoe-compile bench/moe_layer.mlir --chip sm_90a --recipe mx128 -o .device/layer128
    python3 bench/moe_layer_bench.py mx128=.device/layer128 mx32=.device/layer32 --profile

The shape grid of bench/moe_layer_shapes.py (Scout, Qwen3, DeepSeek-V3
EP=8 slice, gpt-oss-20b at 8K, 16K and 64K tokens; `--models` /
`--tokens` pick a subset, as there):

    python3 bench/moe_layer_shapes.py -o .device/layer_grid.mlir
    ./build/bin/mxmoe-compile .device/layer_grid.mlir --chip sm_90a --recipe mx128 -o .device/grid128
    ./build/bin/mxmoe-compile .device/layer_grid.mlir --chip sm_90a --recipe mx32 -o .device/grid32
    python3 bench/moe_layer_bench.py mx128=.device/grid128 mx32=.device/grid32 --grid --profile

With --profile each path's step also runs 3 times under torch.profiler and
the GPU time per iteration is split into mxmoe grouped-GEMM kernels, mxmoe
quantize kernels and PyTorch kernels (the rest of the wall time is GPU
idle: host overhead and synchronization); `mxmoe_ms_by_kernel` gives each
mxmoe kernel's GPU ms and launches per iteration. Every row also has
`host_ms`: the host time to enqueue one step on an idle GPU (a step whose
host_ms approaches ms_fwd_bwd is host-bound). With --graph each row also
has `ms_cuda_graph`: the step captured once with torch.cuda.graph and
replayed (no per-step host work). With --host-profile each path's step
also runs 20 times under cProfile, and the functions with the most host
time of their own are printed to stderr. `--paths a,b` keeps only the
paths named (e.g. "bf16 torch._grouped_mm,mxmoe mx128 routed").
"""
from __future__ import annotations

import json
import math
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from mxmoe import program as mp  # noqa: E402
import moe_layer_shapes  # noqa: E402
from cli import option  # noqa: E402

SHAPES = {"scout": dict(T=8192, k=1, E=16, H=5120, I=8192),
          "qwen3": dict(T=4096, k=8, E=128, H=2048, I=768)}


def layer(x, router, w13, w2, k, E, gmm13, gmm2, experts=None, routed=None):
    probs = torch.softmax((x @ router.T).float(), -1)
    topv, topi = probs.topk(k, -1)
    flat = topi.reshape(-1)
    order = torch.argsort(flat, stable=True)
    token = order // k
    # Tokens per expert without a device sync (torch.bincount reads the
    # maximum back to size its output), as TorchTitan's histc.
    counts = torch.zeros(E, dtype=torch.int64, device=x.device).scatter_add_(0, flat, torch.ones_like(flat))
    offs = torch.cumsum(counts, 0).to(torch.int32)
    if routed is not None:  # dispatch, experts and weighted combine compiled
        return routed(x, w13, w2, offs, order.to(torch.int32), topv)
    if experts is not None:  # w13, SwiGLU and w2 as one compiled block
        y = experts(x[token].contiguous(), w13, w2, offs)
    else:
        h = gmm13(x[token].contiguous(), w13, offs)
        g, u = h.chunk(2, -1)
        y = gmm2((F.silu(g) * u).contiguous(), w2, offs)
    wts = topv.reshape(-1)[order].unsqueeze(1).to(y.dtype)
    return torch.zeros_like(x).index_add(0, token, y * wts)


def bf16_gmm(x, w, offs):
    return torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)


def gpu_time_breakdown(step, iters=3):
    """GPU ms per iteration of `step`, by kernel class (torch.profiler)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            step()
        torch.cuda.synchronize()
    cls = {"mxmoe_gemm_ms": 0.0, "mxmoe_quantize_ms": 0.0, "mxmoe_routing_ms": 0.0,
           "torch_ms": 0.0}
    routing = ("__gather_rows", "__invert_permutation", "__combine_rows", "__combine_scores_grad")
    kernels = {}  # kernel name -> [ms per iteration, launches per iteration]
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        us = e.device_time if hasattr(e, "device_time") else e.cuda_time
        key = ("mxmoe_gemm_ms" if "grouped_matmul" in e.name else
               "mxmoe_quantize_ms" if "__quantize" in e.name else
               "mxmoe_routing_ms" if any(r in e.name for r in routing) else "torch_ms")
        cls[key] += us / 1e3 / iters
        k = kernels.setdefault(e.name[:60], [0.0, 0.0])
        k[0] += us / 1e3 / iters
        k[1] += 1 / iters
    out = {k: round(v, 3) for k, v in cls.items()}
    by_time = sorted(kernels.items(), key=lambda kv: -kv[1][0])
    mine = lambda n: "grouped_matmul" in n or "__quantize" in n or any(r in n for r in routing)  # noqa: E731
    out["mxmoe_ms_by_kernel"] = {n: [round(t, 3), round(c, 2)] for n, (t, c) in by_time if mine(n)}
    torch_top = [(n, tc) for n, tc in by_time if not mine(n)]
    out["torch_ms_by_kernel"] = {n: [round(t, 3), round(c, 2)] for n, (t, c) in torch_top[:10]}
    return out


def host_ms(step, iters=5):
    """Host ms to enqueue one step, each starting on an idle GPU."""
    import time
    total = 0.0
    for _ in range(iters):
        torch.cuda.synchronize()
        t = time.perf_counter()
        step()
        total += time.perf_counter() - t
    torch.cuda.synchronize()
    return total / iters * 1e3


def host_profile(step, label, iters=20, top=25):
    """cProfile of `iters` steps (each on an idle GPU, as host_ms): the
    functions with the most host time of their own, printed (stderr)."""
    import cProfile
    import io
    import pstats
    prof = cProfile.Profile()
    for _ in range(iters):
        torch.cuda.synchronize()
        prof.enable()
        step()
        prof.disable()
    torch.cuda.synchronize()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out).sort_stats("tottime")
    print(f"== host profile: {label}, {iters} steps (ms are totals over them)",
          file=sys.stderr)
    stats.print_stats(top)
    stats.sort_stats("cumtime").print_callees(r"custom_ops.py.*backend_impl")
    print(out.getvalue(), file=sys.stderr, flush=True)


def graph_ms(step, iters=10):
    """GPU ms per step when the step is captured once into a CUDA graph and
    replayed (no host work per step; mxmoe's status words are checked after
    the replays)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    g.replay()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(iters):
        g.replay()
    b.record()
    torch.cuda.synchronize()
    mp.check_deferred()
    del g
    return a.elapsed_time(b) / iters



def shapes(argv):
    """[(fqn prefix, model, dict(T, k, E, H, I))]: bench/moe_layer.mlir's two
    shapes, or with --grid the grid of bench/moe_layer_shapes.py."""
    if "--grid" not in argv:
        return [(n, n, s) for n, s in SHAPES.items()]
    models = (option(argv, "--models") or ",".join(moe_layer_shapes.MODELS)).split(",")
    tokens = [int(t) for t in (option(argv, "--tokens") or
                               ",".join(map(str, moe_layer_shapes.TOKENS))).split(",")]
    return [(n, n.rsplit("_t", 1)[0], s) for n, s in moe_layer_shapes.grid(models, tokens)]


def compile_outputs(argv):
    """[(path label, out dir)]: `label=dir` arguments, or one bare dir
    (labelled "MXFP8", the row format of the earlier tables)."""
    outs = []
    values = {argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--models", "--tokens", "--paths")}
    for a in argv:
        if a.startswith("--") or a in values:
            continue
        label, _, d = a.rpartition("=")
        outs.append((label or "MXFP8", d))
    return outs


def main():
    outs = compile_outputs(sys.argv[1:])
    profile = "--profile" in sys.argv[1:]
    dev = torch.device("cuda")
    rows = []
    for fqn, name, s in shapes(sys.argv[1:]):
        T, k, E, H, I = s["T"], s["k"], s["E"], s["H"], s["I"]
        paths = [("bf16 torch._grouped_mm", (bf16_gmm, bf16_gmm, None, None))]
        for label, d in outs:
            ns = "mxmoe_bench_" + "".join(c if c.isalnum() else "_" for c in label)
            paths.append((f"mxmoe {label}",
                          (mp.register_torch_op(d, f"{fqn}.w13", namespace=ns),
                           mp.register_torch_op(d, f"{fqn}.w2", namespace=ns), None, None)))
            # The experts compiled as one mxmoe.swiglu_experts, where the
            # IR has it (bench/moe_layer_shapes.py, bench/moe_layer.mlir).
            fns = {p["function"] for p in json.load(open(os.path.join(d, "manifest.json")))["programs"]}
            if f"{fqn}.experts.forward" in fns:
                paths.append((f"mxmoe {label} block", (None, None, mp.register_swiglu_experts_op(
                    d, f"{fqn}.experts", namespace=ns), None)))
            if f"{fqn}.routed.forward" in fns:
                paths.append((f"mxmoe {label} routed", (None, None, None, mp.register_swiglu_experts_op(
                    d, f"{fqn}.routed", namespace=ns))))
        if option(sys.argv[1:], "--paths"):  # e.g. "bf16 torch._grouped_mm,mxmoe mx128 routed"
            keep = option(sys.argv[1:], "--paths").split(",")
            paths = [p for p in paths if p[0] in keep]
        torch.manual_seed(0)
        x = torch.randn(T, H, device=dev, dtype=torch.bfloat16, requires_grad=True)
        router = (torch.randn(E, H, device=dev) / math.sqrt(H)).to(torch.bfloat16).requires_grad_()
        w13 = (torch.randn(E, 2 * I, H, device=dev) / math.sqrt(H)).to(torch.bfloat16).requires_grad_()
        w2 = (torch.randn(E, H, I, device=dev) / math.sqrt(I)).to(torch.bfloat16).requires_grad_()
        dy = torch.randn(T, H, device=dev, dtype=torch.bfloat16)
        for path, (g13, g2, block, routed) in paths:
            def step():
                y = layer(x, router, w13, w2, k, E, g13, g2, block, routed)
                y.backward(dy)
                for t in (x, router, w13, w2):
                    t.grad = None
            step()
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            iters = 10
            a.record()
            for _ in range(iters):
                step()
            b.record()
            torch.cuda.synchronize()
            mp.check_deferred()  # the torch ops check their offsets without syncing
            ms = a.elapsed_time(b) / iters
            peak = (torch.cuda.max_memory_allocated() - base) / 2**30
            r = {"shape": name, "path": path, "tokens": T, "top_k": k, "experts": E,
                 "hidden": H, "expert_dim": I, "ms_fwd_bwd": round(ms, 3),
                 "tokens_per_s": round(T / ms * 1e3), "peak_gib_above_params": round(peak, 2),
                 "host_ms": round(host_ms(step), 3)}
            if "--graph" in sys.argv[1:]:
                r["ms_cuda_graph"] = round(graph_ms(step), 3)
            if profile:
                r.update(gpu_time_breakdown(step))
            if "--host-profile" in sys.argv[1:]:
                host_profile(step, f"{name} {T} {path}")
            rows.append(r)
            print(json.dumps(r), flush=True)
        del x, router, w13, w2, dy, paths
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
