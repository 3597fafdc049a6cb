#!/usr/bin/env python3
"""GEMMs over zero tokens on the GPU (an empty batch, as PyTorch's grouped
GEMMs accept): test/Integration/zero_tokens.mlir compiled with M = 0.

For each compile output given (e.g. MX32 and MX128 builds):
  * the forward and the input-gradient programs run (no kernel) and
    return [0, N] and [0, K] tensors;
  * the weight-gradient program writes exact zeros for every expert into
    an output that the caching allocator filled with NaN first (at 8
    experts by its kernels; at one expert, a contraction over 0 tokens, by
    the program's zero-filled buffer);
  * the autograd function (forward + backward) on x of 0 rows gives y
    [0, N], dx [0, K] and dW == 0 (what torch._grouped_mm does with 0
    tokens is printed beside it).
Prints `N passed, N failed` last.

Usage (device): zero_tokens_gpu.py DIR [DIR ...]  (mxmoe-compile outputs)
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

CHECKS = Checks(width=48)
N, K = 320, 384
# (fqn, experts): at one expert the weight gradient contracts over 0
# tokens (no kernel, a zero-filled buffer); at eight its kernels run.
GEMMS = (("zero", 8), ("one", 1))


def run(d: str, fqn: str, E: int) -> None:
    dev = torch.device("cuda")
    tag = f"{os.path.basename(d.rstrip('/'))} {fqn}"
    x = torch.empty(0, K, dtype=torch.bfloat16, device=dev)
    w = torch.randn(E, N, K, dtype=torch.bfloat16, device=dev)
    offs = torch.zeros(E, dtype=torch.int32, device=dev)
    dy = torch.empty(0, N, dtype=torch.bfloat16, device=dev)
    fwd = mp.Program(d, fqn + ".forward", check="sync")
    dgrad = mp.Program(d, fqn + ".input_grad", check="sync")
    wgrad = mp.Program(d, fqn + ".weight_grad", check="sync")
    # A --quantize-weights-once build's forward also returns the weight
    # quantized for input_grad (not empty: it still runs).
    y, *wq = fwd(x, w, offs)
    CHECKS.report(f"{tag}: forward shape", list(y.shape) == [0, N], f"{list(y.shape)}")
    gx = dgrad(dy, *(wq or [w]), offs)[0]
    CHECKS.report(f"{tag}: input_grad shape", list(gx.shape) == [0, K], f"{list(gx.shape)}")
    # NaN in the memory the weight gradient is about to get: its zeros
    # must be written, not found.
    junk = torch.full((E, N, K), float("nan"), dtype=torch.bfloat16, device=dev)
    del junk
    gw = wgrad(dy, x, offs)[0]
    torch.cuda.synchronize()
    CHECKS.report(f"{tag}: weight_grad exact zeros", list(gw.shape) == [E, N, K]
                  and bool((gw == 0).all()), f"nonzero {int((gw != 0).sum())}")
    fn = mp.mx_grouped_mm_function(d, fqn)
    xa = x.clone().requires_grad_(True)
    wa = w.clone().requires_grad_(True)
    ya = fn.apply(xa, wa, offs)
    ya.sum().backward()
    mp.check_deferred()
    ok = (list(ya.shape) == [0, N] and list(xa.grad.shape) == [0, K]
          and bool((wa.grad == 0).all()))
    CHECKS.report(f"{tag}: autograd forward + backward", ok,
                  f"y {list(ya.shape)}, dx {list(xa.grad.shape)}, dW nonzero {int((wa.grad != 0).sum())}")
    try:  # for the record: what PyTorch's bf16 grouped GEMM does
        ref = torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)
        print(f"{tag}: torch._grouped_mm on 0 tokens: {list(ref.shape)}")
    except RuntimeError as e:
        print(f"{tag}: torch._grouped_mm on 0 tokens raises: {str(e).splitlines()[0]}")


def main() -> int:
    for d in sys.argv[1:]:
        for fqn, experts in GEMMS:
            run(d, fqn, experts)
    return CHECKS.summary()


if __name__ == "__main__":
    sys.exit(main())
