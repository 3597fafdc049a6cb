#!/usr/bin/env python3
"""Runs the sm_90a MX grouped-GEMM kernels on the GPU against a float64
reference, and (with --bench) times them next to PyTorch's grouped GEMMs.

Input: the directory gen_gemm_kernels.py wrote (cases.json + sm_90a/). Each
correctness case draws fresh random MXFP8 operands (every finite e4m3/e5m2
code, scale bytes 118..135, never all zeros) and a routing (balanced, Zipf
skewed, with empty groups, or ending before the last row), lays the scales
out as mxmoe-pack-scales does (M-grouped / per-expert / per-K-group blocked
128x4, via python/mxmoe/reference.py), launches the kernel through the
mxmoe runtime, and checks:
  * normwise relative error ||out - ref||_F / ||ref||_F against the float64
    product of the dequantized operands: <= 4e-3 (bf16 out), <= 1e-4 (f32);
  * rows past the last offset and empty groups' weight gradients are
    exactly zero (the output is pre-filled with NaN, so unwritten = fail);
  * offsets that decrease or pass the token axis: status 1, output untouched.
Prints one table row per case and `N passed, N failed` last.

Usage (device): gemm_gpu.py DIR [--only a,b] [--bench] [--runtime LIB]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from mxmoe import reference as ref  # noqa: E402
from mxmoe import runtime as rt  # noqa: E402

dev = torch.device("cuda")


def decode_table(elem):
    v = ref.element_value(np.arange(256, dtype=np.uint8), elem).astype(np.float64)
    return torch.tensor(v, dtype=torch.float64, device=dev)


TABLES = {}


def table(elem):
    if elem not in TABLES:
        TABLES[elem] = decode_table(elem)
    return TABLES[elem]


def random_codes(shape, elem, gen):
    x = torch.randint(0, 256, shape, dtype=torch.uint8, device=dev, generator=gen)
    vals = table(elem)[x.long()]
    bad = ~torch.isfinite(vals)
    x[bad] = 0x38  # 1.0 in e4m3 / 0.5.. in e5m2: any finite code
    return x


def routing_sizes(kind, G, total, rng, sizes_given=None):
    if kind == "zipf":
        w = 1.0 / np.arange(1, G + 1) ** 1.2
        rng.shuffle(w)
        sizes = np.floor(w / w.sum() * total).astype(np.int64)
        sizes[np.argmax(sizes)] += total - sizes.sum()
    elif kind == "empty":
        alive = rng.random(G) < 0.6
        alive[rng.integers(G)] = True
        if G > 1:
            alive[rng.integers(G)] = False
        cuts = np.sort(rng.integers(0, total + 1, int(alive.sum()) - 1))
        part = np.diff(np.concatenate([[0], cuts, [total]]))
        sizes = np.zeros(G, np.int64)
        sizes[alive] = part
    elif kind == "sizes":  # the case's own group sizes
        sizes = np.array(sizes_given, np.int64)
    elif kind == "short":  # ragged groups ending before the last row
        used = int(total * 0.8)
        cuts = np.sort(rng.integers(0, used + 1, G - 1))
        sizes = np.diff(np.concatenate([[0], cuts, [used]]))
    else:  # balanced, ragged by one row here and there
        sizes = np.full(G, total // G, np.int64)
        sizes[: total - sizes.sum()] += 1
    return np.cumsum(sizes).astype(np.int32)


class Launcher:
    def __init__(self, root):
        path = os.path.join(root, "sm_90a", "kernels.cubin")
        if not os.path.exists(path):
            path = os.path.join(root, "sm_90a", "kernels.ptx")
        data = open(path, "rb").read()
        if path.endswith(".ptx"):
            data += b"\0"
        self.mod = rt.Module(data)

    def launch(self, c, tensors, maps, sizes=None):
        """tensors: pointer params in order (None for tensor-map slots); the
        size scalars are the case's bindings, or `sizes` {name: value}."""
        kernel, bindings = c["kernel"], c["bindings"]
        ptrs, scalars, keep = [], [], []
        for p, b, tns in zip(kernel["params"], bindings, tensors + [None] * 8):
            if p["kind"] == "tensor_map":
                blob = rt.tensor_map_for(p, maps[p["operand"]].data_ptr(), b)
                d = torch.frombuffer(bytearray(blob), dtype=torch.uint8).to(dev)
                keep.append(d)
                ptrs.append(d.data_ptr())
            elif p["kind"] == "scalar":
                scalars.append((sizes or {}).get(p["name"], b["value"]))
            else:
                ptrs.append(tns.data_ptr())
        grid = c.get("grid") or kernel["grid"]  # per step for run-time sizes
        self.mod.launch(kernel["name"], grid, kernel["block"], ptrs,
                        shared_bytes=kernel["dynamic_shared_memory"], scalars=scalars)
        return keep


def scale_bytes(lo, hi, shape, gen, tile=(1, 1)):
    """Random e8m0 bytes in [lo, hi) of shape [..., R, C] (C scale columns
    of 1x32 blocks), equal over tiles of tile[0] rows x tile[1] columns
    (MX128: (1, 4) for 1x128, (128, 4) for 128x128 blocks)."""
    *lead, R, C = shape
    r, cb = tile
    coarse = torch.randint(lo, hi, (*lead, -(-R // r), -(-C // cb)), dtype=torch.uint8,
                           device=dev, generator=gen)
    fine = coarse.repeat_interleave(r, -2).repeat_interleave(cb, -1)
    return fine[..., :R, :C].contiguous()


def make_operands(c, offs, gen):
    """Device tensors + float64 reference of one case. Scale bytes are drawn
    from [lo, hi) = c["scales"] (default 118..135: block scales 2^-9..2^8),
    or per operand from c["scales_a"] / c["scales_b"]; MX128 cases draw one
    byte per 1x128 (lhs, and both 2D x 2D operands: per 128-token window
    from each group's padded start) or 128x128 (2D x 3D rhs) tile."""
    G = c["G"]
    lo, hi = c.get("scales_a", c.get("scales", (118, 136)))
    blo, bhi = c.get("scales_b", c.get("scales", (118, 136)))
    row_tile = (1, 4) if c.get("mx128") else (1, 1)
    if c["kind"] == "2Dx3D":
        M, N, K = c["M"], c["N"], c["K"]
        A = random_codes((M, K), c["a"], gen)
        B = random_codes((G, N, K), c["b"], gen)
        sa = scale_bytes(lo, hi, (M, K // 32), gen, row_tile)
        sb = scale_bytes(blo, bhi, (G, N, K // 32), gen, (128, 4) if c.get("mx128") else (1, 1))
        sa_blk = ref.to_blocked_m_groups(sa.cpu().numpy(), offs, c["Mp"])
        sb_blk = ref.to_blocked(sb.cpu().numpy())
        pa = torch.pow(2.0, sa.double() - 127).repeat_interleave(32, 1)
        pb = torch.pow(2.0, sb.double() - 127).repeat_interleave(32, 2)
        Ad = table(c["a"])[A.long()] * pa
        Bd = table(c["b"])[B.long()] * pb
        out_ref = torch.zeros((M, N), dtype=torch.float64, device=dev)
        begin = 0
        for g, end in enumerate(offs.tolist()):
            if end > begin:
                out_ref[begin:end] = Ad[begin:end] @ Bd[g].T
            begin = end
    else:
        M, N, Tp = c["M"], c["N"], c["Tp"]
        starts = ref.padded_starts(offs, 32) * 32
        A = torch.zeros((M, Tp), dtype=torch.uint8, device=dev)
        B = torch.zeros((N, Tp), dtype=torch.uint8, device=dev)
        sa = torch.zeros((M, Tp // 32), dtype=torch.uint8, device=dev)
        sb = torch.zeros((N, Tp // 32), dtype=torch.uint8, device=dev)
        begin = 0
        for g, end in enumerate(offs.tolist()):
            m, p = end - begin, int(starts[g])
            if m > 0:
                A[:, p:p + m] = random_codes((M, m), c["a"], gen)
                B[:, p:p + m] = random_codes((N, m), c["b"], gen)
                kb = -(-m // 32)
                sa[:, p // 32:p // 32 + kb] = scale_bytes(lo, hi, (M, kb), gen, row_tile)
                sb[:, p // 32:p // 32 + kb] = scale_bytes(blo, bhi, (N, kb), gen, row_tile)
            begin = end
        sa_blk = ref.to_blocked_k_groups(sa.cpu().numpy(), offs, c["Qp"])
        sb_blk = ref.to_blocked_k_groups(sb.cpu().numpy(), offs, c["Qp"])
        Ad = table(c["a"])[A.long()] * torch.pow(2.0, sa.double() - 127).repeat_interleave(32, 1)
        Bd = table(c["b"])[B.long()] * torch.pow(2.0, sb.double() - 127).repeat_interleave(32, 1)
        out_ref = torch.zeros((G, M, N), dtype=torch.float64, device=dev)
        begin = 0
        for g, end in enumerate(offs.tolist()):
            m, p = end - begin, int(starts[g])
            if m > 0:
                out_ref[g] = Ad[:, p:p + m] @ Bd[:, p:p + m].T
            begin = end
    dev_sa = torch.from_numpy(np.ascontiguousarray(sa_blk).reshape(-1)).to(dev)
    dev_sb = torch.from_numpy(np.ascontiguousarray(sb_blk).reshape(-1)).to(dev)
    return A, dev_sa, B, dev_sb, out_ref


def out_dtype(c):
    return torch.float32 if c["out"] == "f32" else torch.bfloat16


def run_case(L, c, seed):
    rng = np.random.default_rng(seed)
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed)
    total = c["M"] if c["kind"] == "2Dx3D" else c["T"]
    offs = routing_sizes(c["routing"], c["G"], total, rng, c.get("sizes"))
    A, sa, B, sb, out_ref = make_operands(c, offs, gen)
    offs_d = torch.tensor(offs, dtype=torch.int32, device=dev)
    out = torch.full(tuple(out_ref.shape), float("nan"), dtype=out_dtype(c), device=dev)
    acc = None
    if c.get("accumulate"):  # out = acc + product, acc random (not zeros)
        acc = (torch.randn(tuple(out_ref.shape), generator=gen, device=dev, dtype=torch.float64)
               * out_ref.std()).to(out_dtype(c))
        out.copy_(acc)
        out_ref = out_ref + acc.double()
    status = torch.full((1,), -1, dtype=torch.int32, device=dev)
    keep = L.launch(c, [None, sa, None, sb, offs_d, out, status],
                    {"lhs": A, "rhs": B})
    rt.synchronize()
    del keep
    st = int(status.item())
    o = out.double()
    err = (torch.linalg.norm(o - out_ref) / torch.linalg.norm(out_ref)).item()
    bound = 1e-4 if c["out"] == "f32" else 4e-3
    if c["out"] == "f32" and c["kernel"].get("mma") == "wgmma_fp8_promote_k128":
        # f32 out of the fp8 wgmma (gemm-sm90-mma=fp8): its internal
        # accumulation keeps about 14 bits (DeepSeek-V3 report, arXiv
        # 2412.19437 section 3.3.2); measured 1.3e-4 to 2.2e-4.
        bound = 5e-4
    notes = []
    ok = st == 0 and math.isfinite(err) and err <= bound
    if c["kind"] == "2Dx3D":
        tail = o[int(offs[-1]):]
        if tail.numel() and not bool((tail == 0).all()):
            ok = False
            notes.append("tail rows not zero")
    else:
        sizes = np.diff(np.concatenate([[0], offs]))
        for g in np.nonzero(sizes == 0)[0]:
            want = acc[g].double() if acc is not None else 0  # acc unchanged
            if not bool((o[g] == want).all()):
                ok = False
                notes.append(f"empty group {g} not {'acc' if acc is not None else 'zero'}")
        notes.append(f"{int((sizes == 0).sum())} empty")
    # Bad offsets: decreasing, then past the token axis the kernel sees (M,
    # or the padded token axis Tp of 2D x 2D operands).
    extent = c["M"] if c["kind"] == "2Dx3D" else c["Tp"]
    for bad_name, bad in (("decreasing", offs[::-1].copy()),
                          ("past-end", np.full_like(offs, extent + 32))):
        if len(offs) == 1 and bad_name == "decreasing":
            bad = np.array([-1], np.int32)
        sentinel = torch.full_like(out, 7.0)
        status.fill_(-1)
        keep = L.launch(c, [None, sa, None, sb,
                            torch.tensor(bad, dtype=torch.int32, device=dev),
                            sentinel, status], {"lhs": A, "rhs": B})
        rt.synchronize()
        if int(status.item()) != 1 or not bool((sentinel == 7.0).all()):
            ok = False
            notes.append(f"{bad_name} offsets not rejected")
    # Bad sizes (run-time parameters): K not a multiple of 32, G = 0 or
    # negative, K past 2^31, a scale extent other than the blocked layout's.
    for bad_name, sizes in (("K % 32", {"k": c["K"] - 16}), ("G = 0", {"groups": 0}),
                            ("G < 0", {"groups": -1}), ("K >= 2^31", {"k": 2**31 + 128}),
                            ("b_scale_rows", {"b_scale_rows": c["bindings"][13]["value"] + 128})):
        sentinel = torch.full_like(out, 7.0)
        status.fill_(-1)
        keep = L.launch(c, [None, sa, None, sb, offs_d, sentinel, status],
                        {"lhs": A, "rhs": B}, sizes)
        rt.synchronize()
        if int(status.item()) != 2 or not bool((sentinel == 7.0).all()):
            ok = False
            notes.append(f"{bad_name} sizes not rejected (status {int(status.item())})")
    return ok, err, bound, st, notes


def deepgemm_peer():
    """DeepGEMM's SM90 FP8 grouped GEMMs (1x128 / 128x128 power-of-two
    scales in fp32 containers, 128-aligned expert segments) through
    bench/deepgemm_peer.py, when $MXMOE_DEEPGEMM names a built DeepGEMM
    snapshot (a benchmark peer in a git-ignored folder; never committed).
    Returns fn(c, T, timeit) -> TF/s, or None."""
    if not os.environ.get("MXMOE_DEEPGEMM"):
        return None
    sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
    import deepgemm_peer as dgb  # noqa: E402
    errs = dgb.run_checks()
    print(json.dumps({"deepgemm_check": errs}, default=str))
    if not (errs["m_grouped_rel_err"] < 5e-2 and errs["k_grouped_rel_err"] < 5e-2):
        return None

    def tflops(c, T, timeit):
        actual, aligned = dgb.segments(T, c["G"])
        if c["kind"] == "2Dx3D":
            a, b, d, m_idx, _ = dgb.make_m_grouped(actual, aligned, c["N"], c["K"])
            fn = lambda: dgb.call_m_grouped(a, b, d, m_idx)  # noqa: E731
            flops = 2.0 * T * c["N"] * c["K"]
        else:
            a, b, d, layout, _ = dgb.make_k_grouped(aligned, c["M"], c["N"])
            fn = lambda: dgb.call_k_grouped(a, b, d, aligned, layout)  # noqa: E731
            flops = 2.0 * T * c["M"] * c["N"]
        return flops / timeit(fn) / 1e12
    return tflops


def bench(L, cases, bf16_only=False):
    """TFLOP/s of mxmoe's kernel and its peers on `cases`; bf16_only keeps
    only the torch bf16 peer (quick comparisons of kernel variants)."""
    rows = []
    dgp = None if bf16_only else deepgemm_peer()
    # Peer: Triton tl.dot_scaled MXFP8 grouped GEMMs (bench/triton_mx_grouped.py),
    # validated against float64 before timing.
    try:
        if bf16_only:
            raise RuntimeError("--bf16-peer-only")
        sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
        import triton_mx_grouped as tmx
        e_fwd, e_wg = tmx.check()
        print(json.dumps({"triton_dot_scaled_check": {"fwd_rel_err": e_fwd, "wgrad_rel_err": e_wg}}))
        if not (e_fwd < 1e-2 and e_wg < 1e-2):
            tmx = None
    except Exception as ex:  # noqa: BLE001
        print(json.dumps({"triton_dot_scaled_check": f"unavailable: {type(ex).__name__}: {ex}"}))
        tmx = None

    def timeit(fn, iters=10):
        fn()
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(iters):
            fn()
        e.record()
        torch.cuda.synchronize()
        return s.elapsed_time(e) / iters * 1e-3

    for c in cases:
        model, T, what = c["bench"]
        rng = np.random.default_rng(0)
        gen = torch.Generator(device=dev)
        gen.manual_seed(0)
        G = c["G"]
        offs = routing_sizes("balanced", G, T, rng)
        offs_d = torch.tensor(offs, dtype=torch.int32, device=dev)
        if c["kind"] == "2Dx3D":
            M, N, K = c["M"], c["N"], c["K"]
            flops = 2.0 * M * N * K
            A = random_codes((M, K), c["a"], gen)
            B = random_codes((G, N, K), c["b"], gen)
            sa = torch.randint(120, 130, (c["Mp"] * c["Cp"],), dtype=torch.uint8, device=dev, generator=gen)
            sb = torch.randint(120, 130, (G * c["Np"] * c["Cp"],), dtype=torch.uint8, device=dev, generator=gen)
            out = torch.empty((M, N), dtype=torch.bfloat16, device=dev)
            a16 = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
            b16 = torch.randn(G, N, K, device=dev, dtype=torch.bfloat16).transpose(-2, -1)
            peer = {"torch._grouped_mm bf16": lambda: torch._grouped_mm(a16, b16, offs=offs_d)}
            a8 = a16.to(torch.float8_e4m3fn)
            b8 = torch.randn(G, N, K, device=dev).to(torch.float8_e4m3fn).transpose(-2, -1)
            sa_r = torch.ones(M, device=dev)
            sb_r = torch.ones(G, N, device=dev)
            peer["torch._scaled_grouped_mm fp8 rowwise"] = lambda: torch._scaled_grouped_mm(
                a8, b8, sa_r, sb_r, offs=offs_d, out_dtype=torch.bfloat16)
            if tmx is not None and all(int(x) % 128 == 0 for x in np.diff(np.concatenate([[0], offs]))):
                ta = A.view(torch.float8_e4m3fn)
                tb = B.view(torch.float8_e4m3fn)
                tsa = torch.randint(120, 130, (M, K // 32), dtype=torch.uint8, device=dev)
                tsb = torch.randint(120, 130, (G, N, K // 32), dtype=torch.uint8, device=dev)
                peer["triton tl.dot_scaled mxfp8"] = lambda: tmx.grouped_fwd(ta, tsa, tb, tsb, offs_d)
        else:
            M, N, Tp = c["M"], c["N"], c["Tp"]
            flops = 2.0 * M * N * T
            A = random_codes((M, Tp), c["a"], gen)
            B = random_codes((N, Tp), c["b"], gen)
            rp_a, rp_b = -(-M // 128) * 128, -(-N // 128) * 128
            sa = torch.randint(120, 130, (rp_a * c["Qp"],), dtype=torch.uint8, device=dev, generator=gen)
            sb = torch.randint(120, 130, (rp_b * c["Qp"],), dtype=torch.uint8, device=dev, generator=gen)
            out = torch.empty((G, M, N), dtype=torch.bfloat16, device=dev)
            a16 = torch.randn(M, T, device=dev, dtype=torch.bfloat16)
            b16 = torch.randn(N, T, device=dev, dtype=torch.bfloat16).t()
            peer = {"torch._grouped_mm bf16": lambda: torch._grouped_mm(a16, b16, offs=offs_d)}
            a8 = a16.to(torch.float8_e4m3fn)
            b8 = torch.randn(T, N, device=dev).to(torch.float8_e4m3fn).t().contiguous().t()
            sa_r = torch.ones(M * G, device=dev)
            sb_r = torch.ones(N * G, device=dev)
            peer["torch._scaled_grouped_mm fp8 rowwise"] = lambda: torch._scaled_grouped_mm(
                a8, b8, sa_r, sb_r, offs=offs_d, out_dtype=torch.bfloat16)
            if tmx is not None and all(int(x) % 128 == 0 for x in np.diff(np.concatenate([[0], offs]))):
                ta = random_codes((M, T), c["a"], gen).view(torch.float8_e4m3fn)
                tb = random_codes((N, T), c["b"], gen).view(torch.float8_e4m3fn)
                tsa = torch.randint(120, 130, (M, T // 32), dtype=torch.uint8, device=dev)
                tsb = torch.randint(120, 130, (N, T // 32), dtype=torch.uint8, device=dev)
                peer["triton tl.dot_scaled mxfp8"] = lambda: tmx.grouped_wgrad(ta, tsa, tb, tsb, offs_d)
        if c.get("mx128"):
            peer = {}  # the MX128 kernel is a column of its MX32 case's row
        status = torch.zeros(1, dtype=torch.int32, device=dev)
        maps = {"lhs": A, "rhs": B}
        keep = L.launch(c, [None, sa, None, sb, offs_d, out, status], maps)
        ptrs = []
        for p, tns in zip(c["kernel"]["params"], [None, sa, None, sb, offs_d, out, status]):
            ptrs.append(keep.pop(0).data_ptr() if p["kind"] == "tensor_map" else tns.data_ptr())
        scalars = [b["value"] for p, b in zip(c["kernel"]["params"], c["bindings"])
                   if p["kind"] == "scalar"]
        k = c["kernel"]
        mx = lambda: L.mod.launch(k["name"], k["grid"], k["block"], ptrs,
                                  shared_bytes=k["dynamic_shared_memory"], scalars=scalars)
        t_mx = timeit(mx)
        rt.check_status(status.data_ptr(), k["name"])
        if c.get("mx128"):
            row = next((r for r in rows if (r["model"], r["tokens"], r["gemm"]) == (model, T, what)), None)
            if row is None:
                row = {"model": model, "tokens": T, "gemm": what}
                rows.append(row)
            row["mxmoe mx128 sm_90a"] = flops / t_mx / 1e12
            print(json.dumps(row), flush=True)
            continue
        res = {"model": model, "tokens": T, "gemm": what,
               "shape": f"G={G} M={M} N={N} K={c['K'] if c['kind'] == '2Dx3D' else T}",
               "mxmoe MXFP8 sm_90a": flops / t_mx / 1e12}
        if dgp is not None:
            try:
                res["DeepGEMM fp8 1x128/128x128"] = dgp(c, T, timeit)
            except Exception as ex:  # noqa: BLE001
                res["DeepGEMM fp8 1x128/128x128"] = f"n/a ({type(ex).__name__}: {str(ex)[:120]})"
            torch.cuda.empty_cache()
        for name, fn in peer.items():
            if bf16_only and "bf16" not in name:
                continue
            try:
                res[name] = flops / timeit(fn) / 1e12
            except Exception as ex:  # noqa: BLE001
                res[name] = f"n/a ({type(ex).__name__})"
        rows.append(res)
        print(json.dumps(res), flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--only", default="")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--bf16-peer-only", action="store_true",
                    help="benchmark against torch bf16 only (skips the fp8 and Triton peers)")
    args = ap.parse_args()
    cases = json.load(open(os.path.join(args.dir, "cases.json")))
    L = Launcher(args.dir)
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    passed = failed = 0
    if not args.no_check:
        only = set(filter(None, args.only.split(",")))
        print(f"{'case':24s} {'kind':6s} {'G':>4s} {'shape':>22s} {'out':>4s} {'rel.err':>9s} {'bound':>7s}  result")
        for i, c in enumerate(x for x in cases if "bench" not in x):
            if only and c["name"] not in only:
                continue
            t0 = time.time()
            try:
                ok, err, bound, st, notes = run_case(L, c, 1234 + i)
            except Exception as ex:  # noqa: BLE001
                ok, err, bound, st, notes = False, float("nan"), 0, -1, [repr(ex)]
            shape = (f"{c['M']}x{c['N']}x{c['K']}" if c["kind"] == "2Dx3D"
                     else f"{c['M']}x{c['N']}xT{c['T']}")
            print(f"{c['name']:24s} {c['kind']:6s} {c['G']:4d} {shape:>22s} {c['out']:>4s} "
                  f"{err:9.2e} {bound:7.0e}  {'PASS' if ok else 'FAIL'} {' '.join(notes)} "
                  f"({time.time() - t0:.1f}s)", flush=True)
            passed += ok
            failed += not ok
    if args.bench:
        only = set(filter(None, args.only.split(",")))
        bench(L, [c for c in cases if "bench" in c and (not only or c["name"] in only)],
              bf16_only=args.bf16_peer_only)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
