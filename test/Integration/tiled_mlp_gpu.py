#!/usr/bin/env python3
"""The tiled MLP (python/mxmoe/tiled.py, the PyTorch form of mxmoe.tiled_mlp)
against the untiled MLP on the GPU: same outputs and gradients (bf16
tolerance) for shard counts 1, 2, 3 and 8, `auto` and `square`, token counts
not divisible by the shard count, fewer tokens than shards, batch 2, an
output width different from the input width; parameter gradients are sums
over shards; and the same under torch.compile. Last line `N passed, N failed`.

Usage (device): tiled_mlp_gpu.py
"""
from __future__ import annotations

import math
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import Checks, rel  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from mxmoe.tiled import shard_count, tiled_mlp  # noqa: E402

dev = torch.device("cuda")
CHECKS = Checks(width=52)
report = CHECKS.report



def mlp(x, w13, w2):
    g, u = (x @ w13.T).chunk(2, -1)
    return (F.silu(g) * u) @ w2.T


def case(batch, tokens, hidden, inner, out_dim, shards, compiled=False):
    torch.manual_seed(tokens * 7 + hidden)
    x = torch.randn(batch, tokens, hidden, device=dev, dtype=torch.bfloat16)
    w13 = (torch.randn(2 * inner, hidden, device=dev) / math.sqrt(hidden)).to(torch.bfloat16)
    w2 = (torch.randn(out_dim, inner, device=dev) / math.sqrt(inner)).to(torch.bfloat16)
    dy = torch.randn(batch, tokens, out_dim, device=dev, dtype=torch.bfloat16)
    ref = [t.clone().requires_grad_() for t in (x, w13, w2)]
    mlp(*ref).backward(dy)
    y_ref = mlp(*[t.detach() for t in ref])
    tl = [t.clone().requires_grad_() for t in (x, w13, w2)]
    fn = (lambda a, b, c: tiled_mlp(mlp, a, [b, c], shards=shards))
    if compiled:
        fn = torch.compile(fn, fullgraph=True)  # no graph break
    y = fn(*tl)
    y.backward(dy)
    errs = [rel(y, y_ref)] + [rel(a.grad, b.grad) for a, b in zip(tl, ref)]
    n = shard_count(batch * tokens, hidden, shards)
    name = (f"B={batch} T={tokens} H={hidden}->{out_dim} shards={shards} (n={n})"
            + (" torch.compile(fullgraph)" if compiled else ""))
    report(name, max(errs) <= 1e-2, "rel.err y, dx, dw13, dw2: " +
           ", ".join(f"{e:.1e}" for e in errs))


def main():
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    for shards in (1, 2, 3, 8):
        case(2, 1001, 256, 384, 256, shards)        # 2002 tokens: not divisible by 3, 8
    case(1, 5, 128, 64, 128, 8)                     # fewer tokens than shards: 5 shards
    case(2, 777, 192, 256, 96, 3)                   # output width != input width
    case(1, 70000, 64, 64, 64, "auto")              # auto = ceil(70000 / 32768) = 3
    case(1, 1000, 256, 128, 256, "square")          # ceil(1000 / 256) = 4
    case(2, 1001, 256, 384, 256, 3, compiled=True)  # under torch.compile

    # Parameter gradients are sums over shards: equal to the untiled ones
    # (checked above) and not divided by the shard count.
    torch.manual_seed(1)
    x = torch.randn(64, 32, device=dev)
    w13 = torch.randn(64, 32, device=dev, requires_grad=True)
    w2 = torch.randn(32, 32, device=dev, requires_grad=True)
    tiled_mlp(mlp, x, [w13, w2], shards=4).sum().backward()
    g_tiled = w2.grad.clone()
    w2.grad = None
    mlp(x, w13, w2).sum().backward()
    report("parameter gradients summed over 4 shards (fp32)", rel(g_tiled, w2.grad) < 1e-5,
           f"rel.err {rel(g_tiled, w2.grad):.1e}")
    try:
        shard_count(10, 8, 0)
        report("shards = 0 rejected", False, "no error")
    except ValueError as e:
        report("shards = 0 rejected", "positive" in str(e), str(e))
    return CHECKS.summary()


if __name__ == "__main__":
    sys.exit(main())
