#!/usr/bin/env python3
"""The routing-decision kernels on the GPU (RouterTopK.cpp, SortByExpert.cpp):
mxmoe.router_topk and mxmoe.sort_by_expert, the functions of
test/Integration/router.mlir, against a float64 PyTorch reference of the
op descriptions (MXMoEOps.td) on fresh random logits:

  * router_topk: every row's experts distinct and in range; their float64
    keys non-increasing and none below an unchosen candidate's (within
    1e-6: the kernel's exp is a polynomial approximation, so keys closer
    than that may swap), the group-limited choice inside the float64 best
    groups (same tolerance); at least 99 % of the rows in exactly the
    reference's order; weights within 1e-5 (relative) of the float64
    weights of the chosen experts. Softmax and sigmoid, bias, groups,
    renormalization, scaling, E not a multiple of 32, top_k above 32,
    bf16 / f16 / f32 logits;
  * exact ties choose the lower expert index first; a NaN row still gives
    distinct experts in range, and NaN weights;
  * sort_by_expert: indices equal to PyTorch's stable argsort of the
    flattened choices, offsets to the cumulative expert counts (empty
    experts included); 262144 and 3711 entries;
  * expert ids outside [0, E): status 4 (KernelRejectedInput), the valid
    choices sorted as if the bad ones were absent, the bad ones after them
    in order, and the indices still a permutation;
  * router_topk_grad: the logits' gradient against float64 autograd of
    softmax / sigmoid, gather, renormalization and scaling, at the
    forward kernel's own choices: within one rounding of the result type
    (bf16: 2^-8 relative) plus 4e-6 of the row's largest gradient (f32
    arithmetic); a bad expert id gives status 4.
Prints `N passed, N failed` last.

    build/bin/mxmoe-compile test/Integration/router.mlir --chip sm_90a -o .device/router
    python3 test/Integration/router_gpu.py .device/router        # device
"""
from __future__ import annotations

import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import Checks  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from mxmoe import program as mp  # noqa: E402
from mxmoe import runtime as rt  # noqa: E402

TOL = 1e-6


def reference(logits, k, score, bias=None, renorm=False, factor=1.0, groups=None):
    """float64 scores, keys, candidate mask and the reference experts
    (stable: ties to the lower index)."""
    x = logits.double()
    s = torch.softmax(x, -1) if score == "softmax" else torch.sigmoid(x)
    key = s + bias.double() if bias is not None else s.clone()
    cand = torch.ones_like(key, dtype=torch.bool)
    if groups:
        G, g = groups
        T, E = key.shape
        gk = key.view(T, G, E // G).topk(min(2, E // G), -1).values.sum(-1)
        best = torch.sort(gk, dim=-1, descending=True, stable=True).indices[:, :g]
        chosen = torch.zeros(T, G, dtype=torch.bool, device=key.device)
        chosen.scatter_(1, best, True)
        cand = chosen.repeat_interleave(E // G, 1)
    masked = key.masked_fill(~cand, float("-inf"))
    experts = torch.sort(masked, dim=-1, descending=True, stable=True).indices[:, :k]
    return s, key, cand, experts


def weights_of(s, experts, renorm, factor):
    w = s.gather(1, experts.long())
    if renorm:
        w = w / (w.sum(-1, keepdim=True) + 1e-20)
    return w * factor


def check_choice(c, label, got_w, got_e, ref, k, renorm, factor):
    s, key, cand, ref_e = ref
    T, E = key.shape
    e = got_e.long()
    in_range = bool(((e >= 0) & (e < E)).all())
    distinct = bool((e.sort(-1).values.diff(dim=-1) != 0).all()) if k > 1 else True
    c.report(f"{label}: experts distinct, in range", in_range and distinct)
    if not (in_range and distinct):
        return
    ke = key.gather(1, e)
    order_ok = bool((ke.diff(dim=-1) <= TOL).all()) if k > 1 else True
    unchosen = key.masked_fill(~cand, float("-inf")).scatter(1, e, float("-inf"))
    cover = bool((ke.min(-1).values >= unchosen.max(-1).values - TOL).all())
    in_cand = bool(cand.gather(1, e).all())
    if not in_cand:  # a group swapped for one within TOL of its key
        in_cand = bool((~cand.gather(1, e)).sum() <= 0.01 * T)
    same = float((e == ref_e).all(-1).double().mean())
    c.report(f"{label}: keys ordered, top-k covers", order_ok and cover and in_cand,
             f"rows in reference order {100 * same:.1f} %")
    c.report(f"{label}: >= 99 % rows in reference order", same >= 0.99, f"{100 * same:.2f} %")
    ref_w = weights_of(s, e, renorm, factor)
    rel = float(((got_w.double() - ref_w).abs() / ref_w.abs().clamp_min(1e-30)).max())
    c.report(f"{label}: weights vs float64", rel <= 1e-5, f"max rel. {rel:.2e}")


def check_routers(c, d, g):
    dev = "cuda"
    x = torch.randn(1000, 128, device=dev, generator=g).bfloat16()
    w, e, idx, offs = mp.Program(d, "qwen3", check="sync")(x)
    check_choice(c, "qwen3 softmax k8/E128", w, e, reference(x, 8, "softmax"), 8, True, 1.0)
    ref_idx = torch.sort(e.reshape(-1).long(), stable=True).indices.to(torch.int32)
    counts = torch.bincount(e.reshape(-1).long(), minlength=128)
    c.report("qwen3: sort_by_expert of the kernel's choices", torch.equal(idx, ref_idx)
             and torch.equal(offs, counts.cumsum(0).to(torch.int32)))

    x = torch.randn(500, 256, device=dev, generator=g)
    bias = 0.1 * torch.randn(256, device=dev, generator=g)
    w, e = mp.Program(d, "deepseek", check="sync")(x, bias)
    ref = reference(x, 8, "sigmoid", bias, groups=(8, 4))
    check_choice(c, "deepseek sigmoid+bias groups 8/4", w, e, ref, 8, True, 2.5)

    x = torch.randn(777, 16, device=dev, generator=g).bfloat16()
    w, e = mp.Program(d, "llama4", check="sync")(x)
    check_choice(c, "llama4 sigmoid k1/E16", w, e, reference(x, 1, "sigmoid"), 1, False, 1.0)

    x = torch.randn(333, 60, device=dev, generator=g).half()
    w, e = mp.Program(d, "odd", check="sync")(x)
    check_choice(c, "softmax k6/E60 f16", w, e, reference(x, 6, "softmax"), 6, True, 1.0)

    x = torch.randn(64, 96, device=dev, generator=g)
    w, e = mp.Program(d, "wide", check="sync")(x)
    check_choice(c, "softmax k40/E96", w, e, reference(x, 40, "softmax"), 40, False, 1.0)


def check_ties_nan(c, d, g):
    x = torch.zeros(1000, 128, device="cuda").bfloat16()
    x[1::2] = torch.randint(0, 3, (500, 128), device="cuda", generator=g).bfloat16()
    w, e, _, _ = mp.Program(d, "qwen3", check="sync")(x)
    ref_e = reference(x, 8, "softmax")[3]
    c.report("exact ties: lower expert index first", torch.equal(e.long(), ref_e))
    x = torch.randn(1000, 128, device="cuda", generator=g).bfloat16()
    x[3, 5] = float("nan")
    w, e, idx, offs = mp.Program(d, "qwen3", check="sync")(x)
    row = e[3].long()
    ok = bool(((row >= 0) & (row < 128)).all()) and row.unique().numel() == 8
    c.report("NaN logit: experts distinct, in range; weights NaN",
             ok and bool(w[3].isnan().all()) and bool(w[4].isfinite().all()))


def check_sort(c, d, g):
    for fn, T, k, E in (("sort_big", 32768, 8, 128), ("sort_odd", 1237, 3, 60)):
        # Skewed: experts >= E / 2 get few tokens, the last two none.
        p = torch.ones(E, device="cuda")
        p[E // 2:] = 0.05
        p[-2:] = 0
        e = torch.multinomial(p, T * k, replacement=True, generator=g).view(T, k).to(torch.int32)
        idx, offs = mp.Program(d, fn, check="sync")(e)
        ref = torch.sort(e.reshape(-1).long(), stable=True).indices.to(torch.int32)
        counts = torch.bincount(e.reshape(-1).long(), minlength=E)
        c.report(f"{fn}: indices == stable argsort", torch.equal(idx, ref))
        c.report(f"{fn}: offsets == cumsum(counts), empty experts",
                 torch.equal(offs, counts.cumsum(0).to(torch.int32)) and int(counts[-1]) == 0)
    e = torch.randint(0, 60, (1237, 3), device="cuda", generator=g, dtype=torch.int32)
    bad = e.clone()
    bad[10, 1], bad[500, 0], bad[1200, 2] = 60, -1, 1 << 30
    try:
        mp.Program(d, "sort_odd", check="sync")(bad)
        c.report("bad expert ids rejected (status 4)", False, "no error")
    except rt.KernelRejectedInput as err:
        c.report("bad expert ids rejected (status 4)", "expert ids" in str(err), str(err)[:80])
    idx, offs = mp.Program(d, "sort_odd", check="deferred")(bad)
    torch.cuda.synchronize()
    try:
        mp.check_deferred()
    except rt.KernelRejectedInput:
        pass
    flat = bad.reshape(-1).long()
    okm = (flat >= 0) & (flat < 60)
    key = torch.where(okm, flat, torch.full_like(flat, 60))
    ref = torch.sort(key, stable=True).indices.to(torch.int32)
    counts = torch.bincount(flat[okm], minlength=60)
    perm = torch.equal(idx.sort().values, torch.arange(idx.numel(), device="cuda", dtype=torch.int32))
    c.report("bad ids: valid sorted, bad ones last, a permutation",
             torch.equal(idx, ref) and perm and torch.equal(offs, counts.cumsum(0).to(torch.int32)))


def autograd64(x, e, g, score, renorm, factor):
    """float64 autograd of the router's weights at experts `e`."""
    x64 = x.double().requires_grad_()
    s = torch.softmax(x64, -1) if score == "softmax" else torch.sigmoid(x64)
    w = s.gather(1, e.long())
    if renorm:
        w = w / (w.sum(-1, keepdim=True) + 1e-20)
    (w * factor * g.double()).sum().backward()
    return x64.grad


def check_grads(c, d, g):
    cases = (("qwen3_grad", "qwen3", (1000, 128), torch.bfloat16, "softmax", True, 1.0, 2.0 ** -8),
             ("deepseek_grad", None, (500, 256), torch.float32, "sigmoid", True, 2.5, 2.0 ** -23),
             ("llama4_grad", "llama4", (777, 16), torch.bfloat16, "sigmoid", False, 1.0, 2.0 ** -23))
    for fn, fwd, shape, dt, score, renorm, factor, ulp in cases:
        x = torch.randn(*shape, device="cuda", generator=g).to(dt)
        k = 8 if fn != "llama4_grad" else 1
        if fwd:
            e = mp.Program(d, fwd, check="sync")(x)[1]
        else:  # any distinct choices: the gradient does not depend on how
            e = torch.rand(*shape, device="cuda", generator=g).topk(k, -1).indices.to(torch.int32)
        dw = torch.randn(shape[0], k, device="cuda", generator=g)
        got, = mp.Program(d, fn, check="sync")(x, e, dw)
        ref = autograd64(x, e, dw, score, renorm, factor)
        bound = ref.abs() * ulp + 4e-6 * ref.abs().amax(-1, keepdim=True) + 1e-30
        ratio = float(((got.double() - ref).abs() / bound).max())
        c.report(f"{fn}: vs float64 autograd", ratio <= 1.0, f"max err / bound {ratio:.3f}")
    x = torch.randn(1000, 128, device="cuda", generator=g).bfloat16()
    e = torch.randint(0, 128, (1000, 8), device="cuda", generator=g, dtype=torch.int32)
    e[5, 3] = 128
    dw = torch.randn(1000, 8, device="cuda", generator=g)
    try:
        mp.Program(d, "qwen3_grad", check="sync")(x, e, dw)
        c.report("router_topk_grad: bad expert id rejected (status 4)", False, "no error")
    except rt.KernelRejectedInput as err:
        c.report("router_topk_grad: bad expert id rejected (status 4)", "expert ids" in str(err))


def main():
    d = sys.argv[1]
    c = Checks(width=52)
    g = torch.Generator(device="cuda").manual_seed(20261207)
    check_routers(c, d, g)
    check_ties_nan(c, d, g)
    check_sort(c, d, g)
    check_grads(c, d, g)
    return c.summary()


if __name__ == "__main__":
    sys.exit(main())
