#!/usr/bin/env python3
"""GPU test (device): tensors of more than 2^31 elements, and misaligned
buffers rejected at launch.

Input: the directory gen_large_kernels.py wrote (manifest.json + sm_90a/).
  * quantize rowwise and columnwise (data written transposed) of a
    65600 x 32768 bf16 tensor (2,149,580,800 elements), and dequantize of the
    result's shape: the first rows and the rows past element 2^31 are
    compared bit-exactly with the numpy reference (python/mxmoe/reference.py);
  * a 2D x 3D grouped GEMM whose bf16 output has 2,181,038,080 elements
    (266240 x 8192, K 256, 4 experts, the last 100 rows past the last
    offset): rows at the start, across element 2^31 and at the end against
    a float64 reference (normwise <= 4e-3), the tail rows exactly zero and
    no output element left unwritten (pre-filled with NaN);
  * a launch with a buffer 2 or 8 bytes off 16-byte alignment is refused by
    the runtime (InvalidArgument naming the parameter), writes nothing, and
    the CUDA context keeps working (the next launch is correct).
Prints one row per check and `N passed, N failed` last.

Usage (device): large_and_misaligned_gpu.py DIR
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import Checks  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from mxmoe import reference as ref  # noqa: E402
from mxmoe import runtime as rt  # noqa: E402
import gemm_gpu  # noqa: E402  (Launcher, random codes, e4m3 decode table)

dev = torch.device("cuda")
CHECKS = Checks(width=44)
report = CHECKS.report



def kernel(manifest, function):
    return next(k for k in manifest["kernels"]
                if any(u["function"] == function for u in k["uses"]))


def step_bindings(manifest, function):
    """The bindings of the last step of `function`'s program (a grouped
    GEMM's sizes and tensor-map extents are bound there)."""
    prog = next(p for p in manifest["programs"] if p["function"] == function)
    return prog["steps"][-1]["bindings"]


def step_of(manifest, function):
    prog = next(p for p in manifest["programs"] if p["function"] == function)
    return prog["steps"][-1]


def launch(L, k, tensors, maps=None, bindings=None, step=None):
    """Launches kernel k; sizes (scalars) and the grid of kernels with
    run-time sizes come from the program step (or `bindings`)."""
    c = {"kernel": k, "bindings": bindings or (step or {}).get("bindings")
         or [{}] * len(k["params"])}
    if step and "grid" in step:
        c["grid"] = step["grid"]
    return L.launch(c, tensors, maps or {})


def rows_to_check(m):
    # first rows, the rows holding element 2^31 of a row-major [m, 32768]
    # tensor (row 65536) and the last rows.
    return [slice(0, 8), slice(65532, 65540), slice(m - 8, m)]


def same_codes(got, want):
    got = np.where(got == 0xFF, 0x7F, got)   # the sign of NaN is not meaningful
    want = np.where(want == 0xFF, 0x7F, want)
    return int((got != want).sum())


def big_quantize(L, man, axis):
    M, K = 65600, 32768
    fn = "big_quantize_rowwise" if axis == 1 else "big_quantize_columnwise"
    k, step = kernel(man, fn), step_of(man, fn)
    shape = (M, K) if axis == 1 else (K, M)
    x = torch.randn(shape, dtype=torch.bfloat16, device=dev)
    # a different magnitude per 32-block along the quantized axis
    x *= torch.exp2(torch.randint(-20, 20, (shape[0], shape[1] // 32) if axis == 1
                                  else (shape[0] // 32, shape[1]), device=dev)
                    .to(torch.bfloat16)).repeat_interleave(32, dim=1 if axis == 1 else 0)
    data = torch.empty((M, K), dtype=torch.uint8, device=dev)
    scales = torch.empty((M, K // 32), dtype=torch.uint8, device=dev)
    launch(L, k, [x, data, scales], step=step)
    rt.synchronize()
    bad = total = 0
    for rs in rows_to_check(M):
        src = (x[rs] if axis == 1 else x[:, rs].T).float().cpu().numpy()
        rd, rsc = ref.quantize(src, 1, "f8E4M3FN", "rceil")
        bad += same_codes(data[rs].cpu().numpy(), rd) + int((scales[rs].cpu().numpy() != rsc).sum())
        total += rd.size + rsc.size
    del x
    return data, scales, bad, total


def big_dequantize(L, man, data, scales):
    k = kernel(man, "big_dequantize")
    out = torch.full(data.shape, float("nan"), dtype=torch.bfloat16, device=dev)
    launch(L, k, [data, scales, out])
    rt.synchronize()
    bad = total = 0
    for rs in rows_to_check(data.shape[0]):
        want = ref.round_to_bf16(ref.dequantize(data[rs].cpu().numpy(), scales[rs].cpu().numpy(),
                                                1, "f8E4M3FN"))
        got = out[rs].float().cpu().numpy()
        same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
        bad += int((~same).sum())
        total += got.size
    # The data came from finite inputs (no NaN code): no NaN may be left.
    unwritten = int(torch.isnan(out).sum().item())
    return bad, total, unwritten


def big_gemm(L, man):
    k = kernel(man, "big_grouped_matmul")
    M, N, K, G = 266240, 8192, 256, 4
    gen = torch.Generator(device=dev)
    gen.manual_seed(7)
    A = gemm_gpu.random_codes((M, K), "f8E4M3FN", gen)
    B = gemm_gpu.random_codes((G, N, K), "f8E4M3FN", gen)
    offs = np.array([70000, 140000, 210000, M - 100], dtype=np.int32)
    sa = torch.randint(118, 136, (M, K // 32), dtype=torch.uint8, device=dev, generator=gen)
    sb = torch.randint(118, 136, (G, N, K // 32), dtype=torch.uint8, device=dev, generator=gen)
    binds = step_bindings(man, "big_grouped_matmul")
    Mp = binds[11]["value"]  # a_scale_rows: padded rows of the M-grouped scales
    sa_blk = torch.from_numpy(np.ascontiguousarray(
        ref.to_blocked_m_groups(sa.cpu().numpy(), offs, Mp)).reshape(-1)).to(dev)
    sb_blk = torch.from_numpy(np.ascontiguousarray(ref.to_blocked(sb.cpu().numpy())).reshape(-1)).to(dev)
    out = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device=dev)
    status = torch.full((1,), -1, dtype=torch.int32, device=dev)
    keep = launch(L, k, [None, sa_blk, None, sb_blk,
                         torch.tensor(offs, device=dev), out, status], {"lhs": A, "rhs": B},
                  binds)
    rt.synchronize()
    del keep
    table = gemm_gpu.table("f8E4M3FN")
    worst = 0.0
    starts = np.concatenate([[0], offs[:-1]])
    for rs in (slice(0, 256), slice(262000, 262300), slice(M - 356, M - 100)):
        g = int(np.searchsorted(offs, rs.start, side="right"))
        assert starts[g] <= rs.start and rs.stop <= offs[g]
        Ad = table[A[rs].long()] * torch.pow(2.0, sa[rs].double() - 127).repeat_interleave(32, 1)
        Bd = table[B[g].long()] * torch.pow(2.0, sb[g].double() - 127).repeat_interleave(32, 1)
        want = Ad @ Bd.T
        err = (torch.linalg.norm(out[rs].double() - want) / torch.linalg.norm(want)).item()
        worst = max(worst, err)
    tail_zero = bool((out[M - 100:] == 0).all())
    unwritten = int(torch.isnan(out).sum().item())
    return int(status.item()), worst, tail_zero, unwritten


def misaligned(L, man):
    k, step = kernel(man, "small_quantize"), step_of(man, "small_quantize")
    grid = step.get("grid", k["grid"])
    scalars = [b["value"] for b in step["bindings"] if "value" in b]
    x = torch.randn((256, 64), dtype=torch.bfloat16, device=dev)
    rd, rs = ref.quantize(x.float().cpu().numpy(), 1, "f8E4M3FN", "rceil")
    data = torch.full((256 * 64 + 64,), 0xAB, dtype=torch.uint8, device=dev)
    scales = torch.full((256 * 2,), 0xAB, dtype=torch.uint8, device=dev)
    checks = []
    for what, ptrs in (("input +2 bytes", [x.data_ptr() + 2, data.data_ptr(), scales.data_ptr()]),
                       ("data output +8 bytes", [x.data_ptr(), data.data_ptr() + 8, scales.data_ptr()])):
        try:
            L.mod.launch(k["name"], grid, k["block"], ptrs, scalars=scalars)
            rt.synchronize()
            checks.append((what, False, "launched (not refused)"))
        except rt.RuntimeError_ as e:
            untouched = bool((data == 0xAB).all()) and bool((scales == 0xAB).all())
            ok = e.status == 3 and "not 16-byte aligned" in str(e) and untouched
            checks.append((what, ok, str(e)[:90]))
    # The context survived: a correct launch right after works.
    L.mod.launch(k["name"], grid, k["block"], [x.data_ptr(), data.data_ptr(), scales.data_ptr()],
                 scalars=scalars)
    rt.synchronize()
    bad = same_codes(data[:256 * 64].cpu().numpy().reshape(256, 64), rd) + \
        int((scales.cpu().numpy().reshape(256, 2) != rs).sum())
    checks.append(("aligned launch afterwards", bad == 0, f"{bad} mismatches"))
    return checks


def main():
    root = sys.argv[1]
    man = json.load(open(os.path.join(root, "manifest.json")))
    torch.zeros(1, device=dev)
    L = gemm_gpu.Launcher(root)
    for what, ok, detail in misaligned(L, man):
        report(f"misaligned: {what}", ok, detail)
    data, scales, bad, total = big_quantize(L, man, 1)
    report("quantize rowwise 65600x32768 (>2^31)", bad == 0, f"{bad} mismatches / {total} sampled")
    bad, total, unwritten = big_dequantize(L, man, data, scales)
    report("dequantize 65600x32768 (>2^31)", bad == 0 and unwritten == 0,
           f"{bad} mismatches / {total} sampled, {unwritten} unwritten")
    del data, scales
    torch.cuda.empty_cache()
    data, scales, bad, total = big_quantize(L, man, 0)
    report("quantize columnwise 32768x65600 (>2^31)", bad == 0, f"{bad} mismatches / {total} sampled")
    del data, scales
    torch.cuda.empty_cache()
    st, err, tail_zero, unwritten = big_gemm(L, man)
    report("grouped GEMM out 266240x8192 (>2^31)", st == 0 and err <= 4e-3 and tail_zero and unwritten == 0,
           f"status {st}, rel err {err:.2e} (<= 4e-3), tail zero {tail_zero}, unwritten {unwritten}")
    return CHECKS.summary()


if __name__ == "__main__":
    sys.exit(main())
