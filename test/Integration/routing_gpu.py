#!/usr/bin/env python3
"""The routing kernels on the GPU (lib/Conversion/MXMoEToGPU/Routing.cpp):
mxmoe.gather_rows, invert_permutation, combine_rows and
combine_scores_grad, one op per program of test/Integration/routing.mlir,
on fresh random routings (a router's top-k choices sorted by expert, as
the MoE layer makes them):

  * gather_rows: bit-equal to PyTorch's `x[idx // k]` and, scaled, to
    `(s.flatten()[idx][:, None] * x[idx // k].float()).bfloat16()`;
  * combine_rows: within one bf16 rounding (plus f32 summation error) of
    float64 `sum_j s[t, j] * y[inverse[t k + j]]`, and close to PyTorch's
    `zeros.index_add(0, idx // k, y * s)`; unscaled likewise;
  * combine_scores_grad: float64 `sum_h g[t, h] * y[row, h]` within f32
    summation error;
  * rows of 100 bf16 elements (runs of 4), bf16 scores;
  * the scaled gather fused into its MX128 quantizations (rowwise
    M-grouped blocked scales and along the token axis in groups, with an
    empty group): data and scales byte-equal to the plain kernels
    quantizing the gathered rows, and a bad index rejected (status 3);
  * a routing index out of range, and indices that are not a permutation,
    rejected through the status word (status 3: KernelRejectedInput),
    with zeros in the rows they name and the other rows right.
Prints `N passed, N failed` last.

    build/bin/mxmoe-compile test/Integration/routing.mlir --chip sm_90a -o .device/rt
    python3 test/Integration/routing_gpu.py .device/rt        # device
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


def routing(g, T, k, E):
    """Flattened (token, slot) indices sorted by expert (int32) and the
    router's weights [T, k] (f32): top-k of random logits."""
    logits = torch.randn(T, E, device="cuda", generator=g)
    w, e = torch.softmax(logits, -1).topk(k, -1)
    idx = torch.argsort(e.reshape(-1), stable=True).to(torch.int32)
    return idx, w.contiguous()


def inverse(idx):
    inv = torch.empty_like(idx)
    inv[idx.long()] = torch.arange(idx.numel(), device=idx.device, dtype=idx.dtype)
    return inv


def combine64(y, idx, s, T, k):
    inv = inverse(idx).long().view(T, k)
    out = y.double()[inv]  # [T, k, H]
    if s is not None:
        out = out * s.double().unsqueeze(-1)
    return out.sum(1)


def within_rounding(got, ref, terms):
    """|got - ref| <= half a bf16 ulp of ref plus f32 summation error."""
    bound = ref.abs() * 2.0 ** -8 + terms * 2.0 ** -20 + 1e-30
    err = (got.double() - ref).abs()
    return bool((err <= bound).all()), float((err / bound).max())


def check_gather(c, d, g):
    T, k, E, H = 300, 4, 16, 256
    x = torch.randn(T, H, device="cuda", generator=g).to(torch.bfloat16)
    idx, s = routing(g, T, k, E)
    got, = mp.Program(d, "dispatch", check="sync")(x, idx)
    c.report("gather_rows == x[idx // k]", torch.equal(got, x[idx.long() // k]))
    got, = mp.Program(d, "dispatch_scaled", check="sync")(x, idx, s)
    ref = (s.reshape(-1)[idx.long()].unsqueeze(1) * x[idx.long() // k].float()).bfloat16()
    c.report("gather_rows scaled == PyTorch's product", torch.equal(got, ref))


def check_combine(c, d, g):
    T, k, E, H = 300, 4, 16, 256
    y = torch.randn(T * k, H, device="cuda", generator=g).to(torch.bfloat16)
    idx, s = routing(g, T, k, E)
    terms = combine64(y.abs(), idx, s, T, k)
    got, = mp.Program(d, "combine", check="sync")(y, idx, s)
    ok, ratio = within_rounding(got, combine64(y, idx, s, T, k), terms)
    c.report("combine_rows vs float64", ok, f"max err / bound {ratio:.3f}")
    torch_ref = torch.zeros(T, H, device="cuda", dtype=torch.bfloat16).index_add(
        0, idx.long() // k, y * s.reshape(-1)[idx.long()].unsqueeze(1).bfloat16())
    rel = float((got.double() - torch_ref.double()).norm() / torch_ref.double().norm())
    c.report("combine_rows close to PyTorch index_add", rel < 1e-2, f"rel. {rel:.2e}")
    got, = mp.Program(d, "combine_sum", check="sync")(y, idx)
    ok, ratio = within_rounding(got, combine64(y, idx, None, T, k), combine64(y.abs(), idx, None, T, k))
    c.report("combine_rows unscaled vs float64", ok, f"max err / bound {ratio:.3f}")
    gr = torch.randn(T, H, device="cuda", generator=g).to(torch.bfloat16)
    got, = mp.Program(d, "scores_grad", check="sync")(gr, y, idx)
    inv = inverse(idx).long().view(T, k)
    ref = (gr.double().unsqueeze(1) * y.double()[inv]).sum(-1)
    terms = (gr.double().abs().unsqueeze(1) * y.double().abs()[inv]).sum(-1)
    err = float(((got.double() - ref).abs() / (terms * 2.0 ** -20)).max())
    c.report("combine_scores_grad vs float64", err <= 1.0, f"max err / (sum|gy| 2^-20) {err:.3f}")


def check_odd(c, d, g):
    T, k, E, H = 30, 2, 4, 100
    x = torch.randn(T, H, device="cuda", generator=g).to(torch.bfloat16)
    idx, s32 = routing(g, T, k, E)
    s = s32.bfloat16()
    r, out, ds = mp.Program(d, "odd", check="sync")(x, idx, s)
    ref = (s.float().reshape(-1)[idx.long()].unsqueeze(1) * x[idx.long() // k].float()).bfloat16()
    c.report("H = 100: gather_rows scaled (bf16 scores)", torch.equal(r, ref))
    ok, ratio = within_rounding(out, combine64(r, idx, s, T, k), combine64(r.abs(), idx, s, T, k))
    c.report("H = 100: combine_rows vs float64", ok, f"max err / bound {ratio:.3f}")
    inv = inverse(idx).long().view(T, k)
    ref = (x.double().unsqueeze(1) * r.double()[inv]).sum(-1)
    terms = (x.double().abs().unsqueeze(1) * r.double().abs()[inv]).sum(-1)
    ok, ratio = within_rounding(ds, ref, terms)
    c.report("H = 100: combine_scores_grad (bf16) vs float64", ok, f"max err / bound {ratio:.3f}")


def check_fused(c, d, g):
    T, k, E, H = 300, 4, 8, 256
    x = torch.randn(T, H, device="cuda", generator=g).to(torch.bfloat16)
    idx, s = routing(g, T, k, E)
    counts = torch.bincount(torch.randint(0, E - 1, (T * k,), device="cuda", generator=g),
                            minlength=E)  # expert E-1 empty
    offs = counts.cumsum(0).to(torch.int32)
    fused = mp.Program(d, "dispatch_q", check="sync")(x, idx, s, offs)
    ref = mp.Program(d, "dispatch_q_ref", check="sync")(x, idx, s, offs)
    same = all(torch.equal(a.view(torch.uint8), b.view(torch.uint8)) for a, b in zip(fused, ref[1:]))
    c.report("fused gather + 2 quantizations == unfused", same)
    bad = idx.clone()
    bad[100] = T * k + 5
    ok, msg = rejected(lambda: mp.Program(d, "dispatch_q", check="sync")(x, bad, s, offs))
    c.report("fused gather: bad index rejected", ok, msg)


def rejected(fn):
    """(raised KernelRejectedInput naming routing indices, message)."""
    try:
        fn()
    except rt.KernelRejectedInput as e:
        return "routing indices" in str(e), str(e)[:90]
    return False, "no error"


def check_bad(c, d, g):
    T, k, E, H = 300, 4, 16, 256
    x = torch.randn(T, H, device="cuda", generator=g).to(torch.bfloat16)
    idx, s = routing(g, T, k, E)
    bad = idx.clone()
    bad[7] = T * k  # past the (token, slot) range
    bad[9] = -1
    prog = mp.Program(d, "dispatch", check="sync")
    ok, msg = rejected(lambda: prog(x, bad))
    c.report("index out of range rejected (gather)", ok, msg)
    out, = mp.Program(d, "dispatch", check="deferred")(x, bad)
    torch.cuda.synchronize()
    try:
        mp.check_deferred()
    except rt.KernelRejectedInput:
        pass
    keep = torch.ones(T * k, dtype=torch.bool, device="cuda")
    keep[[7, 9]] = False
    right = torch.equal(out[keep], x[idx.long()[keep] // k]) and not out[~keep].any()
    c.report("bad rows zero, other rows gathered", right)
    dup = idx.clone()
    dup[5] = dup[6]  # not a permutation: one (token, slot) twice, one never
    y = torch.randn(T * k, H, device="cuda", generator=g).to(torch.bfloat16)
    prog = mp.Program(d, "combine", check="sync")
    ok, msg = rejected(lambda: prog(y, dup, s))
    c.report("indices not a permutation rejected (combine)", ok, msg)
    ok, msg = rejected(lambda: mp.Program(d, "scores_grad", check="sync")(x, y, dup))
    c.report("not a permutation rejected (scores grad)", ok, msg)


def main():
    d = sys.argv[1]
    c = Checks(width=50)
    g = torch.Generator(device="cuda").manual_seed(20261206)
    check_gather(c, d, g)
    check_combine(c, d, g)
    check_odd(c, d, g)
    check_fused(c, d, g)
    check_bad(c, d, g)
    return c.summary()


if __name__ == "__main__":
    sys.exit(main())
