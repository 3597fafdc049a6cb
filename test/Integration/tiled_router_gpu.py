#!/usr/bin/env python3
"""The bf16 router linear of a tiled block, run as compiled: the launch
programs of test/Integration/tiled_router.mlir (`lin<N>` forward,
`r<N>.backward`) replayed by the C runtime, whose steps are the
LinearBf16.cpp kernels (mma.sync bf16 GEMM, transposes).

* 1 shard against float64: y = x W^T, dx = dy W, dW = dy^T x, each
  normwise within 4e-3 (one bf16 rounding of an f32 sum; PyTorch's
  F.linear in bf16 is checked against the same bound) and y elementwise
  within 2^-7 relative + 1e-6 absolute of float64;
* 3 and 8 shards: y and dx bit-equal to 1 shard (each output element is
  one f32 sum in the same K order, whatever shard its row is in); dW
  (summed over shards in bf16) within 1e-2 of float64;
* with a bias (`linb<N>`): y = x W^T + b and db = sum of dy over the
  tokens against float64 (4e-3; db summed over shards in bf16: 1e-2), y
  and dx of 3 shards bit-equal to 1 shard;
* fresh random data, 1000 tokens (a tile tail), N = 192, K = 520.

Usage (device): tiled_router_gpu.py OUT_DIR, with
  mxmoe-compile test/Integration/tiled_router.mlir --chip sm_90a -o OUT_DIR
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
T, N, K = 1000, 192, 520


def run(out, n, x, w, dy):
    y, = mp.Program(out, f"lin{n}")(x, w)
    dx, dw = mp.Program(out, f"r{n}.backward")(x, w, dy)
    torch.cuda.synchronize()
    return y, dx, dw


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    out = sys.argv[1]
    gen = torch.Generator().manual_seed(20261207)
    x = torch.randn(T, K, generator=gen).to(torch.bfloat16).to(dev)
    w = (torch.randn(N, K, generator=gen) * 0.05).to(torch.bfloat16).to(dev)
    dy = torch.randn(T, N, generator=gen).to(torch.bfloat16).to(dev)
    xd, wd, dyd = x.double(), w.double(), dy.double()
    ref = (xd @ wd.T, dyd @ wd, dyd.T @ xd)
    one = run(out, 1, x, w, dy)
    errs = [rel(a, r) for a, r in zip(one, ref)]
    report("1 shard: y, dx, dW vs float64 (normwise <= 4e-3)",
           max(errs) <= 4e-3, " ".join(f"{e:.2e}" for e in errs))
    tol = ref[0].abs() * 2.0 ** -7 + 1e-6
    bad = int(((one[0].double() - ref[0]).abs() > tol).sum())
    report("1 shard: y elementwise within 2^-7 of float64", bad == 0,
           f"{bad} of {T * N} outside")
    torch_err = rel(F.linear(x, w), ref[0])
    report("PyTorch F.linear (bf16) within the same bound", torch_err <= 4e-3,
           f"{torch_err:.2e} (mxmoe {errs[0]:.2e})")
    for n in (3, 8):
        res = run(out, n, x, w, dy)
        same = [torch.equal(res[i], one[i]) for i in (0, 1)]
        report(f"{n} shards: y, dx bit-equal to 1 shard", all(same),
               f"y {rel(res[0], one[0]):.1e} dx {rel(res[1], one[1]):.1e}")
        e = rel(res[2], ref[2])
        report(f"{n} shards: dW vs float64 (<= 1e-2)", e <= 1e-2, f"{e:.2e}")
    check_bias(out, x, w, dy, gen)
    return CHECKS.summary()


def check_bias(out, x, w, dy, gen):
    b = torch.randn(N, generator=gen).to(torch.bfloat16).to(dev)
    ref = (x.double() @ w.double().T + b.double(), dy.double() @ w.double(),
           dy.double().T @ x.double(), dy.double().sum(0))
    res = {}
    for n in (1, 3):
        y, = mp.Program(out, f"linb{n}")(x, w, b)
        dx, dw, db = mp.Program(out, f"rb{n}.backward")(x, w, b, dy)
        torch.cuda.synchronize()
        res[n] = (y, dx, dw, db)
    errs = [rel(a, r) for a, r in zip(res[1], ref)]
    report("bias, 1 shard: y, dx, dW, db vs float64", max(errs) <= 4e-3,
           " ".join(f"{e:.2e}" for e in errs))
    same = [torch.equal(res[3][i], res[1][i]) for i in (0, 1)]
    e3 = rel(res[3][3], ref[3])
    report("bias, 3 shards: y, dx bit-equal; db within 1e-2", all(same) and e3 <= 1e-2,
           f"db {e3:.2e}")


if __name__ == "__main__":
    sys.exit(main())
