#!/usr/bin/env python3
"""mxmoe.torch.scaled_grouped_mm (the TorchAO-style drop-in) on the GPU.

Two steps, because the GPU machine has the runtime but no LLVM/MLIR (the
compiler library needs libMLIR.so):

  dropin_gpu.py --fill DIR     (build machine, no torch) fills a kernel cache
                               DIR for CASES: per case the kernels compiled
                               once (at its first M), every M bound to them by
                               a programs-only compile; plus DIR/direct/*: a
                               full, independent compile at one M per case.
  dropin_gpu.py DIR            (GPU machine) runs with MXMOE_CACHE_DIR=DIR and
                               a compiler that refuses to run: every call must
                               be a cache hit.

Per case and M (random bf16 data, ragged offsets with an empty group and
rows past the last offset): forward, input and weight gradients through
autograd against float64 of the bf16 operands (relative Frobenius error <
0.1, MX quantization of both operands), rows past the last offset zero;
the programs bound by the cache byte-identical to an independent full
compile; the 2D x 2D form equal to the autograd weight gradient;
wgrad_with_hp against float64 (< 0.02); torch.compile(fullgraph=True)
equal to eager; a torch.cuda.graph capture replayed on new data equal to
eager; TorchAO's layout trap (a contiguous [E, K, N] B_t with
N == K) and decreasing offsets refused. Prints `N passed, N failed` last.
"""
from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

# (experts, K, N, token counts, recipe): the first M compiles the kernels.
CASES = [
    (8, 512, 768, [1000, 4097, 0], "auto"),
    (4, 2880, 2880, [2048], "auto"),  # gpt-oss w2: K tail (2880 = 22.5 x 128), N == K
    (8, 512, 768, [1536], "mx32"),
]
DIRECT_M = {0: 4097, 1: 2048, 2: 1536}  # case -> M of its independent compile
TOOLKIT = "/usr/local/cuda"


def options(recipe):
    return {"recipe": recipe, "rounding": "rceil", "toolkit": TOOLKIT}


def fill(root: str) -> None:
    from mxmoe import compiler, kernel_cache
    cache = kernel_cache.KernelCache(root)
    for i, (e, k, n, ms, recipe) in enumerate(CASES):
        for m in ms:
            cache.grouped_mm(m=m, k=k, n=n, experts=e, chip="sm_90a", options=options(recipe))
        ir = kernel_cache.grouped_mm_ir(DIRECT_M[i], k, n, e)
        compiler.compile(ir, chips=["sm_90a"], **options(recipe)).write(
            os.path.join(root, "direct", str(i)))
    print(json.dumps(cache.stats))


def main(root: str) -> int:
    import torch
    sys.path.insert(0, HERE)
    from checks import Checks
    from mxmoe import program
    from mxmoe import torch as mt

    checks = Checks(width=66)
    os.environ["MXMOE_CACHE_DIR"] = root

    def refuse(*a, **kw):
        raise RuntimeError("the kernel cache compiled: not filled for this case")

    cache = mt.kernel_cache_in_use()
    cache._compile = refuse
    gen = torch.Generator(device="cuda").manual_seed(2026)
    for i, (e, k, n, ms, recipe) in enumerate(CASES):
        for m in ms:
            run_case(checks, mt, program, gen, i, e, k, n, m, recipe, root)
    traps(checks, mt, program, gen)
    checks.report("every call a cache hit (no compiler here)",
                  cache.stats["kernels"] == cache.stats["programs"] == 0, json.dumps(cache.stats))
    return checks.summary()


def offsets(m, e, gen):
    import torch
    if m == 0:
        return torch.zeros(e, dtype=torch.int32, device="cuda")
    cuts = torch.sort(torch.randint(0, m + 1, (e - 1,), generator=gen, device="cuda")).values
    ends = torch.cat([cuts, torch.tensor([m - m // 9], device="cuda")]).to(torch.int32)
    ends[1] = ends[0]  # an empty group
    return torch.minimum(ends, ends[-1])  # monotone; the last m // 9 rows in no group


def reference(x, w, dy, offs):
    """float64 y, dx, dw per group."""
    import torch
    x64, w64, dy64 = x.double(), w.double(), dy.double()
    y, dx, dw = torch.zeros_like(dy64), torch.zeros_like(x64), torch.zeros_like(w64)
    start = 0
    for g, end in enumerate(offs.tolist()):
        y[start:end] = x64[start:end] @ w64[g].T
        dx[start:end] = dy64[start:end] @ w64[g]
        dw[g] = dy64[start:end].T @ x64[start:end]
        start = end
    return y, dx, dw


def rel(a, b):
    d = (a.detach().double() - b).norm()
    return float(d / b.norm()) if b.norm() > 0 else float(d)


def run_case(checks, mt, program, gen, i, e, k, n, m, recipe, root):
    import torch
    tag = f"E{e} K{k} N{n} M{m} {recipe}"
    x = torch.randn(m, k, generator=gen, device="cuda").bfloat16().requires_grad_()
    w = (torch.randn(e, n, k, generator=gen, device="cuda") * 0.05).bfloat16().requires_grad_()
    dy = torch.randn(m, n, generator=gen, device="cuda").bfloat16()
    offs = offsets(m, e, gen)
    y = mt.scaled_grouped_mm(x, w.transpose(-2, -1), offs, recipe=recipe)
    y.backward(dy)
    program.check_deferred()
    ry, rdx, rdw = reference(x.detach(), w.detach(), dy, offs)
    errs = [rel(y, ry), rel(x.grad, rdx), rel(w.grad, rdw)]
    tail = int(offs[-1]) if m else 0
    zero_tail = bool((y[tail:] == 0).all() and (x.grad[tail:] == 0).all())
    ok = all(v < 0.1 for v in errs) and zero_tail and (m == 0 or y.abs().sum() > 0)
    checks.report(f"{tag}: y, dx, dw vs fp64", ok,
                  "rel.err " + ", ".join(f"{v:.2e}" for v in errs) + f"; rows past {tail} zero: {zero_tail}")
    if m == 0:
        return
    dw2 = mt.scaled_grouped_mm(dy.t(), x.detach(), offs, recipe=recipe)
    checks.report(f"{tag}: 2D x 2D form == autograd dw", bool(torch.equal(dw2, w.grad)),
                  f"{list(dw2.shape)}")
    if m == DIRECT_M.get(i):
        d = os.path.join(root, "direct", str(i))
        f = program.mx_grouped_mm_function(d, mt.kernel_cache.FUNCTION, check="sync")
        x2, w2 = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
        y2 = f.apply(x2, w2, offs)
        y2.backward(dy)
        same = all(torch.equal(a, b) for a, b in ((y, y2), (x.grad, x2.grad), (w.grad, w2.grad)))
        checks.report(f"{tag}: cache-bound programs == independent compile", same, "bitwise y, dx, dw")
        compiled(checks, mt, tag, x, w, dy, offs, recipe, y)
        hp(checks, mt, tag, x, w, dy, offs, recipe, rdw)
        graphed(checks, mt, program, gen, tag, x, w, dy, offs, recipe)


def compiled(checks, mt, tag, x, w, dy, offs, recipe, y_eager):
    import torch

    def step(x, w, offs):
        return mt.scaled_grouped_mm(x, w.transpose(-2, -1), offs, recipe=recipe)
    x3, w3 = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    try:
        y3 = torch.compile(step, fullgraph=True)(x3, w3, offs)
        y3.backward(dy)
        same = torch.equal(y3, y_eager) and torch.equal(x3.grad, x.grad) and torch.equal(w3.grad, w.grad)
        detail = "bitwise y, dx, dw"
    except Exception as err:  # reported as the failure
        same, detail = False, repr(err)[:200]
    checks.report(f"{tag}: torch.compile(fullgraph=True) == eager", same, detail)


def graphed(checks, mt, program, gen, tag, x, w, dy, offs, recipe):
    """Forward and both gradients captured with torch.cuda.graph (after the
    side-stream warm-up), replayed on new data copied into the static
    inputs: bitwise equal to the same step run eagerly."""
    import torch

    def step(x, w, offs, dy):
        y = mt.scaled_grouped_mm(x, w.transpose(-2, -1), offs, recipe=recipe)
        return [y, *torch.autograd.grad(y, (x, w), dy)]
    static = [x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_(),
              offs.clone(), dy.clone()]
    from cuda_graph_gpu import capture  # side-stream warm-up, then the capture
    try:
        g, outs = capture(step, static)
        new = [torch.randn(x.shape, generator=gen, device="cuda").bfloat16(),
               (torch.randn(w.shape, generator=gen, device="cuda") * 0.05).bfloat16(),
               offs, torch.randn(dy.shape, generator=gen, device="cuda").bfloat16()]
        with torch.no_grad():
            for t, n in zip(static, new):
                t.copy_(n)
        g.replay()
        torch.cuda.synchronize()
        program.check_deferred()
        eager = step(new[0].requires_grad_(), new[1].requires_grad_(), offs, new[3])
        same = all(torch.equal(a, b) for a, b in zip(outs, eager))
        detail = "replay on new data: bitwise y, dx, dw"
    except Exception as err:  # reported as the failure
        same, detail = False, repr(err)[:200]
    checks.report(f"{tag}: CUDA graph replay == eager", same, detail)


def hp(checks, mt, tag, x, w, dy, offs, recipe, rdw):
    x4, w4 = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    mt.scaled_grouped_mm(x4, w4.transpose(-2, -1), offs, recipe=recipe,
                         wgrad_with_hp=True).backward(dy)
    err = rel(w4.grad, rdw)
    checks.report(f"{tag}: wgrad_with_hp dw vs fp64", err < 0.02, f"rel.err {err:.2e}")


def traps(checks, mt, program, gen):
    import torch
    e, k, m = 4, 2880, 2048
    x = torch.randn(m, k, generator=gen, device="cuda").bfloat16()
    b_t = torch.randn(e, k, k, generator=gen, device="cuda").bfloat16()  # contiguous [E, K, N]
    offs = offsets(m, e, gen)
    try:
        mt.scaled_grouped_mm(x, b_t, offs)
        msg = "accepted"
    except ValueError as err:
        msg = str(err)
    checks.report("N == K, contiguous [E, K, N] B_t refused", "strides (8294400, 1, 2880)" in msg,
                  msg[:150])
    bad = torch.flip(offs, [0]).contiguous()
    try:
        mt.scaled_grouped_mm(x, b_t.transpose(-2, -1).contiguous().transpose(-2, -1), bad)
        program.check_deferred()
        msg = "no error"
    except Exception as err:  # KernelRejectedInput expected
        msg = f"{type(err).__name__}: {err}"
    checks.report("decreasing offsets rejected", msg.startswith("KernelRejectedInput"), msg[:150])


if __name__ == "__main__":
    if sys.argv[1] == "--fill":
        fill(sys.argv[2])
    else:
        sys.exit(main(sys.argv[1]))
