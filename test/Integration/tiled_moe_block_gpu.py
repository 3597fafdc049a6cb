#!/usr/bin/env python3
"""A tiled routed MoE block with a real bf16 router linear, run as
compiled: the launch programs of test/Integration/tiled_moe_block.mlir
(`m<N>` forward, `mb<N>.backward`) replayed by the C runtime; the router
linear, its gradients and the transposes are LinearBf16.cpp kernels.

* 2, 3 and 8 shards: forward output and input gradient bit-equal to one
  shard of all tokens (every per-token step, the router's GEMM row
  included, is independent of the shard a token is in);
* parameter gradients (router, w13, w2; summed over shards in bf16) each
  within 1e-1 of float64 and at most 1.25x one shard's error + 2e-3;
* one shard against float64 of the unquantized block (router logits x
  W_r^T, softmax top-2 with renormalization, SwiGLU experts, weighted
  sum; torch autograd for every gradient): normwise <= 1e-1;
* batch 2 (`mbatch`: [2, 500, 256] in 3 shards) bit-equal, output and
  every gradient, to the 3-shard [1000, 256] block on the same data;
* balanced and skewed routing (experts 0-3 take most rows); fresh random
  data. The router weight is [I_16 | 0] plus nothing: the logits are
  x[:, :16] exactly (distinct multiples of 1/4 per row, exact in bf16), so
  no top-2 choice depends on rounding, while the router's GEMMs still run
  over all 256 columns of random x (its weight gradient is dense).

Usage (device): tiled_moe_block_gpu.py OUT_DIR, with
  mxmoe-compile test/Integration/tiled_moe_block.mlir --chip sm_90a --recipe mx128 -o OUT_DIR
Last line `N passed, N failed`.
"""
from __future__ import annotations

import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import Checks, rel  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from mxmoe import program as mp  # noqa: E402

dev = torch.device("cuda")
CHECKS = Checks(width=60)
report = CHECKS.report
T, E, H, I, K = 1000, 16, 256, 256, 2
NAMES = ("y", "dx", "drw", "dw13", "dw2")


def inputs(skew, gen):
    perm = torch.argsort(torch.rand(T, E, generator=gen), dim=1).double()
    x = torch.randn(T, H, generator=gen).double()
    x[:, :E] = (perm - 8) / 4
    if skew:
        x[:, :4] += 4
    rw = torch.zeros(E, H, dtype=torch.double)
    rw[:, :E] = torch.eye(E, dtype=torch.double)
    w13 = torch.randn(E, 2 * I, H, generator=gen) * 0.06
    w2 = torch.randn(E, H, I, generator=gen) * 0.06
    dy = torch.randn(T, H, generator=gen)
    return [t.to(torch.bfloat16).to(dev) for t in (x, rw, w13, w2, dy)]


def forward64(x, rw, w13, w2):
    """The unquantized block in float64 on leaf copies of the inputs:
    (leaves, y, the softmax scores p [T, E], the top-2 experts [T, K])."""
    leaves = [t.double().detach().requires_grad_() for t in (x, rw, w13, w2)]
    x, rw, w13, w2 = leaves
    logits = x @ rw.T
    p = torch.softmax(logits, dim=-1)
    top = torch.topk(logits.detach(), K, dim=-1).indices
    w = p.gather(1, top)
    w = w / w.sum(-1, keepdim=True)
    y = torch.zeros_like(x)
    for k in range(K):
        e = top[:, k]
        h = torch.einsum("th,tnh->tn", x, w13[e])
        a = F.silu(h[:, :I]) * h[:, I:]
        y = y + w[:, k:k + 1] * torch.einsum("ti,thi->th", a, w2[e])
    return leaves, y, p, top


def reference(x, rw, w13, w2, dy):
    leaves, y, _, _ = forward64(x, rw, w13, w2)
    y.backward(dy.double())
    return (y.detach(), *(t.grad for t in leaves))


def run(out, n, x, rw, w13, w2, dy):
    y, = mp.Program(out, f"m{n}")(x, rw, w13, w2)
    grads = mp.Program(out, f"mb{n}.backward")(x, rw, w13, w2, dy)
    torch.cuda.synchronize()
    return (y, *grads)


def check(out, data, label):
    one = run(out, 1, *data)
    ref = reference(*data)
    err1 = [rel(a, r) for a, r in zip(one, ref)]
    report(f"{label} 1 shard vs float64", max(err1) <= 1e-1,
           " ".join(f"{n} {e:.2e}" for n, e in zip(NAMES, err1)))
    for n in (2, 3, 8):
        res = run(out, n, *data)
        same = [torch.equal(res[i], one[i]) for i in (0, 1)]
        report(f"{label} {n} shards: y, dx bit-equal to 1 shard", all(same),
               f"y {rel(res[0], one[0]):.1e} dx {rel(res[1], one[1]):.1e}")
        errs = [rel(res[i], ref[i]) for i in (2, 3, 4)]
        ok = all(e <= 1e-1 and e <= 1.25 * err1[i] + 2e-3
                 for i, e in zip((2, 3, 4), errs))
        report(f"{label} {n} shards: drw, dw13, dw2 vs float64", ok,
               " ".join(f"{e:.2e}" for e in errs))


def check_batch(out, data):
    """[2, 500, H] in 3 shards = [1000, H] in 3 shards (same partition of
    the flattened tokens), output and every gradient bit for bit."""
    flat = run(out, 3, *data)
    x, rw, w13, w2, dy = data
    y, = mp.Program(out, "mbatch")(x.view(2, 500, H), rw, w13, w2)
    grads = mp.Program(out, "mbb.backward")(x.view(2, 500, H), rw, w13, w2,
                                             dy.view(2, 500, H))
    torch.cuda.synchronize()
    got = [y.reshape(T, H), grads[0].reshape(T, H), *grads[1:]]
    report("batch 2 x 500 = 1000 tokens, 3 shards: all bit-equal",
           all(torch.equal(a, b) for a, b in zip(got, flat)))


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    gen = torch.Generator().manual_seed(20261207)
    for skew in (False, True):
        check(sys.argv[1], inputs(skew, gen), "skewed" if skew else "balanced")
    check_batch(sys.argv[1], inputs(False, gen))
    return CHECKS.summary()


if __name__ == "__main__":
    sys.exit(main())
