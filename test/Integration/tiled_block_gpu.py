#!/usr/bin/env python3
"""A tiled routed MoE block run as compiled: the launch programs with loop
steps that mxmoe-compile writes for the shard loops of
test/Integration/tiled_block.mlir (`b<N>` forward, `blk<N>.backward`),
replayed by the C runtime (mxmoe.program.Program), no Python shard loop.

* forward output and input gradient of 2, 3 (334 + 333 + 333 tokens: a
  `.tail` loop) and 8 shards bit-equal to one shard of all tokens: every
  per-token step (router top-2, MX128 quantization along K per routed row,
  the GEMM rows, the SwiGLU, the combine in slot order, the router's
  gradient) is independent of the shard a token is in;
* weight gradients: summed over shards in bf16 (mxmoe-tile-mlp's
  accumulators), their token-axis MX128 quantization windows restart per
  shard, so they differ from one shard's by MX rounding: each within 1e-1
  of float64 and at most 1.25x one shard's error + 2e-3;
* one shard against float64 of the unquantized block (softmax top-2 with
  renormalization, SwiGLU experts, weighted sum; torch autograd for the
  gradients, the router's included): normwise relative error <= 1e-1;
* `mxmoe.program.tiled_block_function` (the two programs as an autograd
  function) equal to the programs;
* balanced routing and skewed routing (four experts take most rows, most
  experts of a shard are empty); 3 tokens in 4 shards (fewer tokens than
  shards; `s1` / `s4`); fresh random data. The router logits are the
  hidden state (E = H = 128) with distinct values per row (multiples of
  1/16, exact in bf16), so no top-2 tie depends on rounding.

Usage (device): tiled_block_gpu.py OUT_DIR, with
  mxmoe-compile test/Integration/tiled_block.mlir --chip sm_90a --recipe mx128 -o OUT_DIR
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
E, H, I, K = 128, 128, 128, 2


def inputs(T, skew, gen):
    """x: per row a permutation of (-64..63)/16 (distinct, exact in bf16),
    plus 8 on experts 0-3 when skewed (every top 2 among them); weights
    and dy: normal."""
    perm = torch.argsort(torch.rand(T, E, generator=gen), dim=1).double()
    x = (perm - 64) / 16
    if skew:
        x[:, :4] += 8
    x = x.to(torch.bfloat16).to(dev)
    w13 = (torch.randn(E, 2 * I, H, generator=gen) * 0.08).to(torch.bfloat16).to(dev)
    w2 = (torch.randn(E, H, I, generator=gen) * 0.08).to(torch.bfloat16).to(dev)
    dy = torch.randn(T, H, generator=gen).to(torch.bfloat16).to(dev)
    return x, w13, w2, dy


def reference(x, w13, w2, dy):
    """float64 block and its gradients (torch autograd)."""
    x, w13, w2 = (t.double().detach().requires_grad_() for t in (x, w13, w2))
    p = torch.softmax(x, dim=-1)
    top = torch.topk(x.detach(), K, dim=-1).indices
    w = p.gather(1, top)
    w = w / w.sum(-1, keepdim=True)
    y = torch.zeros_like(x)
    for k in range(K):
        e = top[:, k]
        h = torch.einsum("th,tnh->tn", x, w13[e])
        a = F.silu(h[:, :I]) * h[:, I:]
        y = y + w[:, k:k + 1] * torch.einsum("ti,thi->th", a, w2[e])
    y.backward(dy.double())
    return y.detach(), x.grad, w13.grad, w2.grad


def run(out, fwd, bwd, x, w13, w2, dy):
    y, = mp.Program(out, fwd)(x, w13, w2)
    dx, dw13, dw2 = mp.Program(out, bwd)(x, w13, w2, dy)
    torch.cuda.synchronize()
    return y, dx, dw13, dw2


def check_block(out, shards, T, base, tiled, data, label):
    x, w13, w2, dy = data
    one = run(out, f"{base[0]}", f"{base[1]}.backward", x, w13, w2, dy)
    ref = reference(x, w13, w2, dy)
    names = ("y", "dx", "dw13", "dw2")
    err1 = [rel(a, r) for a, r in zip(one, ref)]
    report(f"{label} 1 shard vs float64", max(err1) <= 1e-1,
           " ".join(f"{n} {e:.2e}" for n, e in zip(names, err1)))
    for n in shards:
        res = run(out, f"{tiled[0]}{n}", f"{tiled[1]}{n}.backward", x, w13, w2, dy)
        same = [torch.equal(res[i], one[i]) for i in (0, 1)]
        report(f"{label} {n} shards: y, dx bit-equal to 1 shard", all(same),
               f"y {rel(res[0], one[0]):.1e} dx {rel(res[1], one[1]):.1e}")
        errs = [rel(res[i], ref[i]) for i in (2, 3)]
        ok = all(e <= 1e-1 and e <= 1.25 * err1[i] + 2e-3 for i, e in zip((2, 3), errs))
        report(f"{label} {n} shards: dw13, dw2 vs float64", ok,
               f"{errs[0]:.2e} {errs[1]:.2e} (1 shard {err1[2]:.2e} {err1[3]:.2e})")


def check_autograd(out, data):
    """mxmoe.program.tiled_block_function (the programs as an autograd
    function) gives the programs' results, bit for bit."""
    x, w13, w2, dy = data
    want = run(out, "b3", "blk3.backward", x, w13, w2, dy)
    block = mp.tiled_block_function(out, "b3", "blk3", check="sync")
    leaves = [t.clone().requires_grad_() for t in (x, w13, w2)]
    y = block.apply(*leaves)
    y.backward(dy)
    got = [y.detach()] + [t.grad for t in leaves]
    report("tiled_block_function (autograd) = programs", all(
        torch.equal(a, b) for a, b in zip(got, want)))


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    out = sys.argv[1]
    gen = torch.Generator().manual_seed(20261207)
    for skew in (False, True):
        label = "skewed" if skew else "balanced"
        data = inputs(1000, skew, gen)
        check_block(out, (2, 3, 8), 1000, ("b1", "blk1"), ("b", "blk"), data, label)
    data = inputs(3, False, gen)
    check_block(out, (4,), 3, ("s1", "small1"), ("s", "small"), data, "3 tokens")
    check_autograd(out, inputs(1000, False, gen))
    return CHECKS.summary()


if __name__ == "__main__":
    sys.exit(main())
