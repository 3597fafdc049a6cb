"""Peer for the grouped-GEMM benchmark: MXFP8 grouped GEMMs written with
Triton's `tl.dot_scaled` (e4m3 data, e8m0 scales per 1x32 block along K),
the MX path Triton offers on Hopper (it upcasts to bf16 MMAs there).

Benchmark code, not part of mxmoe: mxmoe's kernels come from its lowering
passes. Both kernels assume every group size is a multiple of the tile
(BM = 128 rows for 2D x 3D, BK = 128 tokens for 2D x 2D), which holds for
the benchmark's balanced routings; `check()` validates both against a
float64 reference on a small problem before any timing.

  grouped_fwd(a, a_scale, b, b_scale, offs)   a [M, K] e4m3, a_scale [M, K/32]
      u8, b [G, N, K] e4m3, b_scale [G, N, K/32] u8 -> bf16 [M, N]
  grouped_wgrad(a, a_scale, b, b_scale, offs) a [M, T], b [N, T] (groups
      along T), scales [*, T/32] -> bf16 [G, M, N]
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _fwd_kernel(a_ptr, as_ptr, b_ptr, bs_ptr, offs_ptr, c_ptr, M, N, K, G,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    row0 = pid_m * BM
    g = 0
    for i in range(G):
        g += (tl.load(offs_ptr + i) <= row0).to(tl.int32)
    if g < G:
        rm = row0 + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        rs = tl.arange(0, BK // 32)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        bbase = b_ptr + g.to(tl.int64) * N * K
        sbase = bs_ptr + g.to(tl.int64) * N * (K // 32)
        for k0 in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None].to(tl.int64) * K + k0 + rk[None, :])
            sa = tl.load(as_ptr + rm[:, None].to(tl.int64) * (K // 32) + k0 // 32 + rs[None, :])
            b = tl.load(bbase + rn[None, :].to(tl.int64) * K + k0 + rk[:, None])
            sb = tl.load(sbase + rn[:, None].to(tl.int64) * (K // 32) + k0 // 32 + rs[None, :])
            acc = tl.dot_scaled(a, sa, "e4m3", b, sb, "e4m3", acc)
        tl.store(c_ptr + rm[:, None].to(tl.int64) * N + rn[None, :], acc.to(tl.bfloat16))


@triton.jit
def _wgrad_kernel(a_ptr, as_ptr, b_ptr, bs_ptr, offs_ptr, c_ptr, M, N, T,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    g = tl.program_id(2)
    end = tl.load(offs_ptr + g)
    start = tl.load(offs_ptr + g - 1, mask=g > 0, other=0)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    rs = tl.arange(0, BK // 32)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(start, end, BK):
        a = tl.load(a_ptr + rm[:, None].to(tl.int64) * T + k0 + rk[None, :])
        sa = tl.load(as_ptr + rm[:, None].to(tl.int64) * (T // 32) + k0 // 32 + rs[None, :])
        b = tl.load(b_ptr + rn[None, :].to(tl.int64) * T + k0 + rk[:, None])
        sb = tl.load(bs_ptr + rn[:, None].to(tl.int64) * (T // 32) + k0 // 32 + rs[None, :])
        acc = tl.dot_scaled(a, sa, "e4m3", b, sb, "e4m3", acc)
    tl.store(c_ptr + g.to(tl.int64) * M * N + rm[:, None].to(tl.int64) * N + rn[None, :],
             acc.to(tl.bfloat16))


def grouped_fwd(a, a_scale, b, b_scale, offs, BM=128, BN=128, BK=128):
    M, K = a.shape
    G, N, _ = b.shape
    c = torch.empty((M, N), dtype=torch.bfloat16, device=a.device)
    _fwd_kernel[(M // BM, N // BN)](a, a_scale, b, b_scale, offs, c, M, N, K, G,
                                    BM=BM, BN=BN, BK=BK)
    return c


def grouped_wgrad(a, a_scale, b, b_scale, offs, BM=128, BN=128, BK=128):
    M, T = a.shape
    N = b.shape[0]
    G = offs.numel()
    c = torch.empty((G, M, N), dtype=torch.bfloat16, device=a.device)
    _wgrad_kernel[(M // BM, N // BN, G)](a, a_scale, b, b_scale, offs, c, M, N, T,
                                         BM=BM, BN=BN, BK=BK)
    return c


def _deq(x, s):
    return x.double() * torch.pow(2.0, s.double() - 127).repeat_interleave(32, -1)


def check(device="cuda"):
    """Relative errors of both kernels against float64 on a small problem."""
    g = torch.Generator(device=device)
    g.manual_seed(0)
    G, M, N, K = 3, 384, 256, 256
    a = torch.randn(M, K, device=device, generator=g).to(torch.float8_e4m3fn)
    b = torch.randn(G, N, K, device=device, generator=g).to(torch.float8_e4m3fn)
    sa = torch.randint(120, 130, (M, K // 32), dtype=torch.uint8, device=device, generator=g)
    sb = torch.randint(120, 130, (G, N, K // 32), dtype=torch.uint8, device=device, generator=g)
    offs = torch.tensor([128, 256, 384], dtype=torch.int32, device=device)
    out = grouped_fwd(a, sa, b, sb, offs).double()
    ref = torch.cat([_deq(a[i * 128:(i + 1) * 128], sa[i * 128:(i + 1) * 128]) @ _deq(b[i], sb[i]).T
                     for i in range(G)])
    e_fwd = (torch.linalg.norm(out - ref) / torch.linalg.norm(ref)).item()
    T = 384
    a2 = torch.randn(M, T, device=device, generator=g).to(torch.float8_e4m3fn)
    b2 = torch.randn(N, T, device=device, generator=g).to(torch.float8_e4m3fn)
    sa2 = torch.randint(120, 130, (M, T // 32), dtype=torch.uint8, device=device, generator=g)
    sb2 = torch.randint(120, 130, (N, T // 32), dtype=torch.uint8, device=device, generator=g)
    out2 = grouped_wgrad(a2, sa2, b2, sb2, offs).double()
    A2, B2 = _deq(a2, sa2), _deq(b2, sb2)
    ref2 = torch.stack([A2[:, i * 128:(i + 1) * 128] @ B2[:, i * 128:(i + 1) * 128].T for i in range(G)])
    e_wg = (torch.linalg.norm(out2 - ref2) / torch.linalg.norm(ref2)).item()
    return e_fwd, e_wg
