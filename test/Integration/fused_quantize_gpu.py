#!/usr/bin/env python3
"""mxmoe.fused_quantize on the GPU: each fused kernel against the unfused
path (the producer computed by PyTorch, then mxmoe's own quantize kernel
of the same quantization), on fresh random data.

test/Integration/fused_quantize.mlir, prepared on the build machine:

    build/bin/mxmoe-opt test/Integration/fused_quantize.mlir \\
        --convert-elementwise-to-linalg --linalg-fuse-elementwise-ops \\
        --mxmoe-fuse-quantize-producers --canonicalize > .device/fq.mlir
    build/bin/mxmoe-compile .device/fq.mlir --chip sm_90a -o .device/fq

Checks:
  * `product` (a bf16 x f32 product: exact in f32, so PyTorch computes
    the producer's values bit for bit): both fused quantizations (MX e4m3
    RCEIL and MX128 e5m2 FLOOR, row-major scales, K = 2880 with a 64-wide
    last tile) byte-equal to the unfused kernels, data and scales;
  * `swiglu_mx128` (M-grouped blocked 1x128 scales, 4 groups with a
    group of 1 row and an empty one) and `swiglu_mx32` (blocked): the
    SwiGLU silu(g) * u with the exp of MLIR's polynomial approximation
    against PyTorch's F.silu (CUDA's expf): every scale equal, codes equal
    except where the two bf16 products differ (counted; those differ by
    one code step at most, in at most 0.1 % of the elements);
  * along the token axis in token groups (the jagged kernel, the weight
    gradient's operand): `product_jagged` (3 groups, one empty; MX
    row-major and MX128 compact scales; f32 quantize input) byte-equal to
    the unfused kernels, and `swiglu_mx128_jagged` (per-K-group blocked
    scales) against PyTorch's SwiGLU as above;
  * `dswiglu_mx128`: the SwiGLU's backward dh = [d gate | d up] (a
    producer of two parts joined by a tensor.concat) quantized rowwise and
    along the token axis, against PyTorch's autograd dh quantized by
    mxmoe's kernels: scales equal, codes as above.
Prints `N passed, N failed` last.

Usage (device): fused_quantize_gpu.py DIR
"""
from __future__ import annotations

import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import Checks  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from mxmoe import program as mp  # noqa: E402


def same_bytes(a, b):
    return torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


def code_step(a, b):
    """Largest difference of the e4m3 codes a and b (as ordered integers)."""
    def ordered(t):
        u = t.view(torch.uint8).to(torch.int32)
        mag = u & 0x7F
        return torch.where(u >= 0x80, -mag, mag)
    return int((ordered(a) - ordered(b)).abs().max())


def check_product(c, d):
    g = torch.Generator(device="cuda").manual_seed(11)
    a = torch.randn(200, 2880, device="cuda", generator=g).to(torch.bfloat16)
    b = torch.randn(200, 2880, device="cuda", generator=g) * \
        torch.exp2(torch.randint(-8, 8, (200, 1), device="cuda", generator=g).float())
    fused = mp.Program(d, "product")(a, b)
    ref = mp.Program(d, "product_unfused")(a.float() * b)
    for i, what in enumerate(["MX e4m3 rceil data", "MX scales", "MX128 e5m2 floor data",
                              "MX128 scales"]):
        c.report(f"product: {what}", same_bytes(fused[i], ref[i]))


def check_product_jagged(c, d):
    g = torch.Generator(device="cuda").manual_seed(13)
    a = torch.randn(200, 2880, device="cuda", generator=g).to(torch.bfloat16)
    b = torch.randn(200, 2880, device="cuda", generator=g) * \
        torch.exp2(torch.randint(-8, 8, (200, 1), device="cuda", generator=g).float())
    offs = torch.tensor([77, 77, 200], dtype=torch.int32, device="cuda")
    fused = mp.Program(d, "product_jagged")(a, b, offs)
    ref = mp.Program(d, "product_jagged_unfused")(a.float() * b, offs)
    for i, what in enumerate(["MX data", "MX scales", "MX128 data", "MX128 compact scales"]):
        c.report(f"product_jagged: {what}", same_bytes(fused[i], ref[i]))


def check_swiglu(c, d, name, grouped):
    g = torch.Generator(device="cuda").manual_seed(12)
    M, I = 512, 768
    h = (torch.randn(M, 2 * I, device="cuda", generator=g) * 3).to(torch.bfloat16)
    args = [h]
    if grouped:
        # Groups of 200, 1, 0 and 311 rows.
        args.append(torch.tensor([200, 201, 201, 512], dtype=torch.int32, device="cuda"))
    fused = mp.Program(d, name)(*args)
    act = (F.silu(h[:, :I]) * h[:, I:]).contiguous()
    ref = mp.Program(d, name + "_unfused")(act, *args[1:])
    scales_ok = same_bytes(fused[1], ref[1])
    differ = (fused[0].view(torch.uint8) != ref[0].view(torch.uint8)).sum().item()
    step = code_step(fused[0], ref[0]) if differ else 0
    c.report(f"{name}: scales equal to unfused", scales_ok)
    n = fused[0].numel()
    c.report(f"{name}: codes (differ {differ} of {n}, step <= 1)",
             step <= 1 and differ <= M * I // 1000, f"step {step}")


def check_dswiglu(c, d):
    """dh of the SwiGLU from the fused kernels against PyTorch's autograd
    dh quantized by mxmoe's kernels (rowwise and along the token axis)."""
    g = torch.Generator(device="cuda").manual_seed(14)
    M, I = 512, 768
    h = (torch.randn(M, 2 * I, device="cuda", generator=g) * 3).to(torch.bfloat16)
    da = torch.randn(M, I, device="cuda", generator=g).to(torch.bfloat16)
    offs = torch.tensor([200, 201, 201, 512], dtype=torch.int32, device="cuda")
    hh = h.clone().requires_grad_()
    (F.silu(hh[:, :I]) * hh[:, I:]).backward(da)
    fused = mp.Program(d, "dswiglu_mx128")(da, h, offs)
    ref = mp.Program(d, "dswiglu_mx128_unfused")(hh.grad.contiguous(), offs)
    for i, what in ((0, "rowwise"), (2, "token axis")):
        differ = (fused[i].view(torch.uint8) != ref[i].view(torch.uint8)).sum().item()
        step = code_step(fused[i], ref[i]) if differ else 0
        c.report(f"dswiglu_mx128 {what}: scales equal to unfused", same_bytes(fused[i + 1], ref[i + 1]))
        c.report(f"dswiglu_mx128 {what}: codes (differ {differ} of {fused[i].numel()}, step <= 1)",
                 step <= 1 and differ <= 2 * M * I // 1000, f"step {step}")


def main():
    d = sys.argv[1]
    c = Checks()
    check_product(c, d)
    check_swiglu(c, d, "swiglu_mx128", grouped=True)
    check_swiglu(c, d, "swiglu_mx32", grouped=False)
    check_product_jagged(c, d)
    check_swiglu(c, d, "swiglu_mx128_jagged", grouped=True)
    check_dswiglu(c, d)
    return c.summary()


if __name__ == "__main__":
    sys.exit(main())
