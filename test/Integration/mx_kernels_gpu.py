#!/usr/bin/env python3
"""GPU test (device): runs every generated quantize / dequantize / swizzle
kernel on fresh random data with outliers and special blocks, and compares
bit-exactly with the numpy reference (python/mxmoe/reference.py).

Inputs come from test/Integration/gen_mx_kernels.py (PTX + cases.json).
Usage: mx_kernels_gpu.py DIR [--quick] [--seed N]
Prints one row per case and a closing "N passed, N failed" line.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from mxmoe import reference as ref  # noqa: E402
from mxmoe.runtime import KernelRejectedInput, Module, check_status  # noqa: E402

TORCH_DT = {"bf16": torch.bfloat16, "f32": torch.float32}


def make_input(shape, axis, rng):
    """Random normal values scaled per block by 10^U(-4, 4), plus special
    blocks (zero, NaN, +Inf, -Inf, subnormal, fp32/bf16 max, 448, 480)."""
    x = rng.standard_normal(shape).astype(np.float32)
    xt = np.moveaxis(x, axis, -1)  # view
    nb = xt.shape[-1] // 32
    scale = (10.0 ** rng.uniform(-4, 4, size=xt.shape[:-1] + (nb,))).astype(np.float32)
    blocks = xt.reshape(xt.shape[:-1] + (nb, 32)) * scale[..., None]
    flat = blocks.reshape(-1, nb, 32)
    specials = [
        lambda b: b.fill(0.0),
        lambda b: b.__setitem__(3, np.nan),
        lambda b: b.__setitem__(7, np.inf),
        lambda b: b.__setitem__(0, -np.inf),
        lambda b: b.fill(np.float32(2.0 ** -133)),
        lambda b: b.fill(np.float32(3.3895314e38)),
        lambda b: b.__setitem__(slice(None), 448.0),
        lambda b: b.__setitem__(slice(None), -480.0),
        lambda b: b.__setitem__(5, np.float32(2.0 ** -149)),
        lambda b: b.__setitem__(slice(None), np.float32(3.5000002)),
    ]
    for i, fn in enumerate(specials):
        r = (i * 7) % flat.shape[0]
        c = (i * 3) % nb
        fn(flat[r, c])
    out = np.moveaxis(flat.reshape(xt.shape), -1, axis)
    return np.ascontiguousarray(out)


def to_device(x32: np.ndarray, hp: str):
    t = torch.from_numpy(x32).cuda()
    return t.to(TORCH_DT[hp])


def make_offsets(total, groups, rng, exact_end=None):
    """Skewed (Zipf-like) int32 end offsets: ~20% empty groups, and the last
    offset below `total` about half of the time."""
    w = 1.0 / np.arange(1, groups + 1) ** 1.2
    rng.shuffle(w)
    w[rng.random(groups) < 0.2] = 0.0
    if w.sum() == 0:
        w[0] = 1.0
    used = total if (exact_end or rng.random() < 0.5) else int(total - rng.integers(0, max(1, total // 10) + 1))
    sizes = np.floor(w / w.sum() * used).astype(np.int64)
    sizes[np.argmax(w)] += used - sizes.sum()
    return np.cumsum(sizes).astype(np.int32)


def codes_of(data: np.ndarray, elem: str) -> np.ndarray:
    return ref.unpack_fp4(data) if elem == "f4E2M1FN" else data


def launch(mod, c, key, ptrs):
    """Kernels with run-time sizes also take their i64 scalars (after the
    pointers) and the grid of their op."""
    L = c["launch"][key]
    mod.launch(c[key], L["grid"], L["block"], ptrs, scalars=L.get("scalars", []))


def run_grouped(mod, c, rng):
    """Token-group cases: quantize (+ dequantize, swizzles) with offsets,
    then the same kernels on invalid offsets (status 1, outputs untouched)."""
    bad = total = 0
    status = torch.zeros(1, dtype=torch.int32, device="cuda")
    if c["op"] == "quantize_jagged":
        T, K, G, Tp, elem = c["T"], c["K"], c["G"], c["Tp"], c["elem"]
        x = make_input((T, K), 0, rng) if T % 32 == 0 else \
            rng.standard_normal((T, K)).astype(np.float32) * 10.0 ** rng.uniform(-3, 3, size=(1, K)).astype(np.float32)
        xt = to_device(x, "bf16")
        xv = xt.float().cpu().numpy()
        offs = make_offsets(T, G, rng)
        ot = torch.from_numpy(offs).cuda()
        nbytes = K * Tp // (2 if elem == "f4E2M1FN" else 1)
        data = torch.full((nbytes,), 0xAB, dtype=torch.uint8, device="cuda")
        scales = torch.full(c["scale_shape"], 0xAB, dtype=torch.uint8, device="cuda")
        launch(mod, c, "kernel", [xt.data_ptr(), ot.data_ptr(), data.data_ptr(), scales.data_ptr(), status.data_ptr()])
        torch.cuda.synchronize()
        rd, rs = ref.quantize_jagged(xv, offs, Tp, elem, "rceil")
        if elem == "f4E2M1FN":
            rd = ref.pack_fp4(rd)
        if c["blocked"]:
            rs = ref.to_blocked_k_groups(rs, offs, c["scale_shape"][1])
        gd = data.cpu().numpy().reshape(rd.shape)
        gd = np.where(gd == 0xFF, 0x7F, gd) if elem != "f4E2M1FN" else gd
        rd = np.where(rd == 0xFF, 0x7F, rd) if elem != "f4E2M1FN" else rd
        bad += int((gd != rd).sum() + (scales.cpu().numpy() != rs).sum()) + int(status.item() != 0)
        total += rd.size + rs.size
        # dequantize back (tokens past the last offset give 0)
        out = torch.full((T, K), 7.0, dtype=torch.float32, device="cuda")
        launch(mod, c, "dq_kernel", [data.data_ptr(), scales.data_ptr(), ot.data_ptr(), out.data_ptr(), status.data_ptr()])
        torch.cuda.synchronize()
        rds, rss = ref.quantize_jagged(xv, offs, Tp, elem, "rceil")
        full = ref.dequantize(rds, rss, 0, elem)  # [Tp, K] padded layout
        want = np.zeros((T, K), dtype=np.float32)
        st = ref.padded_starts(offs, 32) * 32
        b0 = 0
        for g, e in enumerate(offs):
            want[b0:e] = full[st[g]:st[g] + e - b0]
            b0 = e
        got = out.cpu().numpy()
        same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
        bad += int((~same).sum()) + int(status.item() != 0)
        total += got.size
        # invalid offsets: decreasing -> status 1, nothing written
        badoffs = offs.copy()
        if G > 1:
            badoffs[0], badoffs[-1] = badoffs[-1], 0
        else:
            badoffs[0] = T + 1
        bt = torch.from_numpy(badoffs).cuda()
        d2 = torch.full((nbytes,), 0xCD, dtype=torch.uint8, device="cuda")
        launch(mod, c, "kernel", [xt.data_ptr(), bt.data_ptr(), d2.data_ptr(), scales.data_ptr(), status.data_ptr()])
        torch.cuda.synchronize()
        bad += int(status.item() != 1) + int((d2 != 0xCD).sum().item())
        try:
            check_status(status.data_ptr(), c["kernel"])
            bad += 1  # must raise
        except KernelRejectedInput as e:
            bad += int("rejected its group offsets" not in str(e))
        total += 1
        return bad, total
    if c["op"] == "swizzle_k_groups":
        T, G = c["T"], c["G"]
        offs = make_offsets(T, G, rng)
        ot = torch.from_numpy(offs).cuda()
        rm = c["row_major"]
        s = rng.integers(0, 256, size=rm, dtype=np.uint8)
        # only columns inside groups are meaningful; the rest must be 0
        cstart = ref.padded_starts(offs, 32)
        s[:, cstart[-1]:] = 0
        src = torch.from_numpy(s).cuda()
        dst = torch.full(c["blocked_shape"], 0xAB, dtype=torch.uint8, device="cuda")
        launch(mod, c, "kernel", [src.data_ptr(), ot.data_ptr(), dst.data_ptr(), status.data_ptr()])
        torch.cuda.synchronize()
        want = ref.to_blocked_k_groups(s, offs, c["blocked_shape"][1])
        bad += int((dst.cpu().numpy() != want).sum()) + int(status.item() != 0)
        back = torch.full(rm, 0xAB, dtype=torch.uint8, device="cuda")
        launch(mod, c, "back_kernel", [dst.data_ptr(), ot.data_ptr(), back.data_ptr(), status.data_ptr()])
        torch.cuda.synchronize()
        bad += int((back.cpu().numpy() != s).sum()) + int(status.item() != 0)
        return bad, want.size + s.size
    # quantize_m_groups
    M, K, G, Mp, Cp = c["M"], c["K"], c["G"], c["Mp"], c["Cp"]
    x = make_input((M, K), 1, rng)
    xt = to_device(x, "bf16")
    xv = xt.float().cpu().numpy()
    offs = make_offsets(M, G, rng)
    ot = torch.from_numpy(offs).cuda()
    data = torch.full((M, K), 0xAB, dtype=torch.uint8, device="cuda")
    scales = torch.full((Mp, Cp), 0xAB, dtype=torch.uint8, device="cuda")
    launch(mod, c, "kernel", [xt.data_ptr(), ot.data_ptr(), data.data_ptr(), scales.data_ptr(), status.data_ptr()])
    torch.cuda.synchronize()
    rd, rs = ref.quantize(xv, 1, "f8E4M3FN", "rceil")
    want_s = ref.to_blocked_m_groups(rs, offs, Mp)
    gd = data.cpu().numpy()
    bad += int((np.where(gd == 0xFF, 0x7F, gd) != np.where(rd == 0xFF, 0x7F, rd)).sum())
    bad += int((scales.cpu().numpy() != want_s).sum()) + int(status.item() != 0)
    total += rd.size + want_s.size
    out = torch.full((M, K), 7.0, dtype=torch.bfloat16, device="cuda")
    launch(mod, c, "dq_kernel", [data.data_ptr(), scales.data_ptr(), ot.data_ptr(), out.data_ptr(), status.data_ptr()])
    torch.cuda.synchronize()
    want = ref.round_to_bf16(ref.dequantize(rd, rs, 1, "f8E4M3FN"))
    want[offs[-1]:] = 0.0
    got = out.float().cpu().numpy()
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    bad += int((~same).sum())
    total += got.size
    # standalone M-group swizzle of row-major scales, and back
    src = torch.from_numpy(rs).cuda()
    dst = torch.full((Mp, Cp), 0xAB, dtype=torch.uint8, device="cuda")
    launch(mod, c, "sw_kernel", [src.data_ptr(), ot.data_ptr(), dst.data_ptr(), status.data_ptr()])
    torch.cuda.synchronize()
    bad += int((dst.cpu().numpy() != want_s).sum())
    back = torch.full(rs.shape, 0xAB, dtype=torch.uint8, device="cuda")
    launch(mod, c, "back_kernel", [dst.data_ptr(), ot.data_ptr(), back.data_ptr(), status.data_ptr()])
    torch.cuda.synchronize()
    want_b = ref.from_blocked_m_groups(want_s, offs, M, rs.shape[1])
    bad += int((back.cpu().numpy() != want_b).sum())
    total += want_s.size + want_b.size
    # invalid: an offset past M
    badoffs = offs.copy()
    badoffs[-1] = M + 5
    bt = torch.from_numpy(badoffs).cuda()
    s2 = torch.full((Mp, Cp), 0xCD, dtype=torch.uint8, device="cuda")
    launch(mod, c, "kernel", [xt.data_ptr(), bt.data_ptr(), data.data_ptr(), s2.data_ptr(), status.data_ptr()])
    torch.cuda.synchronize()
    bad += int(status.item() != 1) + int((s2 != 0xCD).sum().item())
    return bad, total + 1


def nan_canon(d):
    """NaN codes: the sign of a NaN is not meaningful (0xFF == 0x7F)."""
    return np.where(d == 0xFF, 0x7F, d)


def same_f32(got, want):
    return (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))


def run_tiled(mod, c, rng):
    """Scale tiles (MX128) without groups: quantize against
    reference.quantize_tiled in the case's layout; compact scales are also
    dequantized back (reference.dequantize_compact)."""
    x = make_input(c["shape"], c["axis"], rng)
    xt = to_device(x, c["hp"])
    xv = xt.float().cpu().numpy()
    data = torch.full(c["data_shape"], 0xAB, dtype=torch.uint8, device="cuda")
    scales = torch.full(c["scale_shape"], 0xAB, dtype=torch.uint8, device="cuda")
    launch(mod, c, "kernel", [xt.data_ptr(), data.data_ptr(), scales.data_ptr()])
    torch.cuda.synchronize()
    rd, rs, rc = ref.quantize_tiled(xv, c["axis"], tuple(c["tile"]), c["elem"], c["mode"])
    want_s = {"rowmajor": rs, "blocked": ref.to_blocked(rs) if c["layout"] == "blocked" else None,
              "compact": rc}[c["layout"]]
    gd = data.cpu().numpy()
    bad = int((nan_canon(gd) != nan_canon(rd)).sum() + (scales.cpu().numpy() != want_s).sum())
    total = gd.size + want_s.size
    if "dq_kernel" in c:
        out = torch.full(c["shape"], 7.0, dtype=torch.float32, device="cuda")
        launch(mod, c, "dq_kernel", [data.data_ptr(), scales.data_ptr(), out.data_ptr()])
        torch.cuda.synchronize()
        want = ref.dequantize_compact(rd, rc, c["axis"], tuple(c["tile"]), c["elem"])
        bad += int((~same_f32(out.cpu().numpy(), want)).sum())
        total += want.size
    return bad, total


def run_tiled_grouped(mod, c, rng):
    """Scale tiles with token groups: M-grouped rowwise (blocked scales) and
    jagged windows (row-major, per-K-group blocked or compact scales, the
    compact ones dequantized back); then invalid offsets (status 1,
    nothing written)."""
    status = torch.zeros(1, dtype=torch.int32, device="cuda")
    bad = total = 0
    if c["op"] == "quantize_tiled_m_groups":
        M, K, G = c["M"], c["K"], c["G"]
        x = make_input((M, K), 1, rng)
        n_tok, dshape, sshape = M, (M, K), (c["Mp"], c["Cp"])
    else:
        T, K, G = c["T"], c["K"], c["G"]
        x = rng.standard_normal((T, K)).astype(np.float32) * \
            10.0 ** rng.uniform(-3, 3, size=(T, 1)).astype(np.float32)
        x[rng.integers(0, T), rng.integers(0, K)] = np.nan
        n_tok, dshape, sshape = T, (K, c["Tp"]), c["scale_shape"]
    xt = to_device(x, "bf16")
    xv = xt.float().cpu().numpy()
    offs = make_offsets(n_tok, G, rng)
    ot = torch.from_numpy(offs).cuda()
    data = torch.full(dshape, 0xAB, dtype=torch.uint8, device="cuda")
    scales = torch.full(sshape, 0xAB, dtype=torch.uint8, device="cuda")
    launch(mod, c, "kernel", [xt.data_ptr(), ot.data_ptr(), data.data_ptr(), scales.data_ptr(), status.data_ptr()])
    torch.cuda.synchronize()
    if c["op"] == "quantize_tiled_m_groups":
        rd, rs, _ = ref.quantize_tiled(xv, 1, tuple(c["tile"]))
        want_s = ref.to_blocked_m_groups(rs, offs, c["Mp"])
    else:
        rd, rs, rc = ref.quantize_jagged_windows(xv, offs, c["Tp"], c["window"], padded_windows=c["Wp"])
        want_s = {"rowmajor": rs, "compact": rc,
                  "blocked": ref.to_blocked_k_groups(rs, offs, c["Qp"]) if c["layout"] == "blocked" else None
                  }[c["layout"]]
    gd = data.cpu().numpy()
    bad += int((nan_canon(gd) != nan_canon(rd)).sum() + (scales.cpu().numpy() != want_s).sum())
    bad += int(status.item() != 0)
    total += gd.size + want_s.size
    if "dq_kernel" in c:
        out = torch.full((n_tok, K), 7.0, dtype=torch.float32, device="cuda")
        launch(mod, c, "dq_kernel", [data.data_ptr(), scales.data_ptr(), ot.data_ptr(), out.data_ptr(),
                                     status.data_ptr()])
        torch.cuda.synchronize()
        full = ref.dequantize(rd, rs, 0)  # [Tp, K], each slot holds its window's scale
        want = np.zeros((n_tok, K), dtype=np.float32)
        st = ref.padded_starts(offs, 32) * 32
        b0 = 0
        for g, e in enumerate(offs):
            want[b0:e] = full[st[g]:st[g] + e - b0]
            b0 = e
        bad += int((~same_f32(out.cpu().numpy(), want)).sum()) + int(status.item() != 0)
        total += want.size
    badoffs = offs.copy()
    badoffs[-1] = n_tok + 3
    bt = torch.from_numpy(badoffs).cuda()
    d2 = torch.full(dshape, 0xCD, dtype=torch.uint8, device="cuda")
    s2 = torch.full(sshape, 0xCD, dtype=torch.uint8, device="cuda")
    launch(mod, c, "kernel", [xt.data_ptr(), bt.data_ptr(), d2.data_ptr(), s2.data_ptr(), status.data_ptr()])
    torch.cuda.synchronize()
    bad += int(status.item() != 1) + int((d2 != 0xCD).sum().item()) + int((s2 != 0xCD).sum().item())
    return bad, total + 1


def run_quantize_weight(mod, c, rng):
    """quantize_weight: one launch writes the forward (along K) and the
    transposed (along N) data and scales; each against
    reference.quantize_tiled along its own axis with 128x128 tiles."""
    x = make_input(c["shape"], len(c["shape"]) - 1, rng)
    xt = to_device(x, c["hp"])
    xv = xt.float().cpu().numpy()
    outs = [torch.full(c[k], 0xAB, dtype=torch.uint8, device="cuda")
            for k in ("t_data_shape", "t_scale_shape", "data_shape", "scale_shape")]
    launch(mod, c, "kernel", [xt.data_ptr()] + [o.data_ptr() for o in outs])
    torch.cuda.synchronize()
    bad = total = 0
    rank = len(c["shape"])
    for (data, scales), axis, layout in (((outs[2], outs[3]), rank - 1, c["fwd_layout"]),
                                         ((outs[0], outs[1]), rank - 2, c["t_layout"])):
        rd, rs, rc = ref.quantize_tiled(xv, axis, (128, 128), c["elem"], c["mode"])
        want_s = {"rowmajor": rs, "compact": rc,
                  "blocked": ref.to_blocked(rs) if layout == "blocked" else None}[layout]
        gd = data.cpu().numpy()
        bad += int((nan_canon(gd) != nan_canon(rd)).sum() + (scales.cpu().numpy() != want_s).sum())
        total += gd.size + want_s.size
    return bad, total


def run_requantize(mod, c, rng):
    """requantize: MX32 data of values spread over 2^-13..2^13 per block
    (so tiles shift most of their blocks), with a NaN block (scale 0xFF)
    and an all-zero block, against reference.mx_to_tiled."""
    shape, elem = c["shape"], c["elem"]
    x = rng.standard_normal(shape).astype(np.float32)
    nb = shape[-1] // 32
    spread = 2.0 ** rng.integers(-13, 14, size=tuple(shape[:-1]) + (nb, 1))
    x = (x.reshape(tuple(shape[:-1]) + (nb, 32)) * spread).reshape(shape).astype(np.float32)
    flat = x.reshape(-1, shape[-1])
    flat[1, 0] = np.nan           # block (row 1, 0): scale 0xFF
    flat[-1, 32:64] = 0.0         # an all-zero block
    x = flat.reshape(shape)
    rd, rs = ref.quantize(x, len(shape) - 1, elem, "rceil")
    dt = torch.from_numpy(rd).cuda()
    st = torch.from_numpy(rs).cuda()
    out = torch.full(shape, 0xAB, dtype=torch.uint8, device="cuda")
    osc = torch.full(c["tiled_scale_shape"], 0xAB, dtype=torch.uint8, device="cuda")
    launch(mod, c, "kernel", [dt.data_ptr(), st.data_ptr(), out.data_ptr(), osc.data_ptr()])
    torch.cuda.synchronize()
    wd, ws, wc = ref.mx_to_tiled(rd, rs, tuple(c["tile"]), elem)
    want_s = wc if c["layout"] == "compact" else ws
    gd = out.cpu().numpy()
    bad = int((nan_canon(gd) != nan_canon(wd)).sum() + (osc.cpu().numpy() != want_s).sum())
    return bad, gd.size + want_s.size


GROUPED_OPS = ("quantize_jagged", "swizzle_k_groups", "quantize_m_groups",
               "quantize_tiled_m_groups", "quantize_windows")


def run_case(mod, c, rng):
    if c["op"] in ("quantize_tiled_m_groups", "quantize_windows"):
        return run_tiled_grouped(mod, c, rng)
    if c["op"] == "quantize_tiled":
        return run_tiled(mod, c, rng)
    if c["op"] == "quantize_weight":
        return run_quantize_weight(mod, c, rng)
    if c["op"] == "requantize":
        return run_requantize(mod, c, rng)
    if c["op"] in ("quantize_jagged", "swizzle_k_groups", "quantize_m_groups"):
        return run_grouped(mod, c, rng)
    L = c["launch"]["kernel"]
    if c["op"] == "quantize":
        x = make_input(c["shape"], c["axis"], rng)
        xt = to_device(x, c["hp"])
        xv = xt.float().cpu().numpy()  # the values actually quantized
        fp4 = c["elem"] == "f4E2M1FN"
        dshape = c["data_shape"][:-1] + [c["data_shape"][-1] // (2 if fp4 else 1)]
        data = torch.full(dshape, 0xAB, dtype=torch.uint8, device="cuda")
        scales = torch.full(c["scale_shape"], 0xAB, dtype=torch.uint8, device="cuda")
        mod.launch(c["kernel"], L["grid"], L["block"], [xt.data_ptr(), data.data_ptr(), scales.data_ptr()],
                   scalars=L.get("scalars", []))
        torch.cuda.synchronize()
        rd, rs = ref.quantize(xv, c["axis"], c["elem"], c["mode"])
        if fp4:
            rd = ref.pack_fp4(rd)
        if c["blocked"]:
            rs = ref.to_blocked(rs)
        gd = data.cpu().numpy()
        gs = scales.cpu().numpy()
        # NaN codes: the sign of a NaN is not meaningful (0xFF == 0x7F).
        if not fp4:
            gd = np.where(gd == 0xFF, 0x7F, gd)
            rd = np.where(rd == 0xFF, 0x7F, rd)
        bad = int((gd != rd).sum() + (gs != rs).sum())
        return bad, gd.size + gs.size
    if c["op"] == "dequantize":
        x = make_input(c["shape"], c["axis"], rng)
        rd, rs = ref.quantize(ref.round_to_bf16(x), c["axis"], c["elem"], "rceil")
        # also random raw bytes, so every code and scale byte appears
        raw = rng.integers(0, 16 if c["elem"] == "f4E2M1FN" else 256, size=rd.shape, dtype=np.uint8)
        rd = np.where(rng.random(rd.shape) < 0.5, rd, raw).astype(np.uint8)
        rs = np.where(rng.random(rs.shape) < 0.1, rng.integers(0, 256, size=rs.shape), rs).astype(np.uint8)
        want = ref.dequantize(rd, rs, c["axis"], c["elem"])
        sb = ref.to_blocked(rs) if c["blocked"] else rs
        if c["elem"] == "f4E2M1FN":
            rd = ref.pack_fp4(rd)
        data = torch.from_numpy(np.ascontiguousarray(rd)).cuda()
        scales = torch.from_numpy(np.ascontiguousarray(sb)).cuda()
        out = torch.empty(c["shape"], dtype=TORCH_DT[c["hp"]], device="cuda")
        mod.launch(c["kernel"], L["grid"], L["block"], [data.data_ptr(), scales.data_ptr(), out.data_ptr()])
        torch.cuda.synchronize()
        got = out.float().cpu().numpy()
        if c["hp"] == "bf16":
            want = ref.round_to_bf16(want)
        same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
        return int((~same).sum()), got.size
    # swizzle
    rm, bl = c["row_major"], c["blocked_shape"]
    L = c["launch"]["kernel"]
    s = rng.integers(0, 256, size=rm, dtype=np.uint8)
    want_b = ref.to_blocked(s)
    if c["to_blocked"]:
        src = torch.from_numpy(s).cuda()
        dst = torch.full(bl, 0xAB, dtype=torch.uint8, device="cuda")
        want = want_b
    else:
        src = torch.from_numpy(np.ascontiguousarray(want_b)).cuda()
        dst = torch.full(rm, 0xAB, dtype=torch.uint8, device="cuda")
        want = s
    mod.launch(c["kernel"], L["grid"], L["block"], [src.data_ptr(), dst.data_ptr()])
    torch.cuda.synchronize()
    got = dst.cpu().numpy()
    return int((got != want).sum()), got.size


def main():
    d = sys.argv[1]
    quick = "--quick" in sys.argv
    seed = 1234
    if "--seed" in sys.argv:
        seed = int(sys.argv[sys.argv.index("--seed") + 1])
    rng = np.random.default_rng(seed)
    torch.cuda.init()
    torch.zeros(1, device="cuda")  # create the primary context
    cases = json.load(open(os.path.join(d, "cases.json")))
    if quick:  # every 9th plain case and every grouped case
        cases = [c for i, c in enumerate(cases)
                 if i % 9 == 0 or c["op"] in GROUPED_OPS + ("quantize_weight", "requantize")]
    mod = Module(open(os.path.join(d, "mx_kernels_sm_90a.ptx"), "rb").read())
    passed = failed = 0
    print(f"{'kernel':34} {'op':10} {'shape':16} {'axis':>4} {'elem':9} {'hp':4} {'mode':6} {'layout':8} {'mismatch':>9} / total")
    for c in cases:
        try:
            bad, total = run_case(mod, c, rng)
        except Exception as e:  # report and continue
            bad, total = -1, 0
            print(f"  error in {c['kernel']}: {e}")
        ok = bad == 0
        passed += ok
        failed += not ok
        shape = "x".join(map(str, c.get("shape", c.get("row_major", [c.get("T", c.get("M")), c.get("K", 0)]))))
        if "G" in c:
            shape += f" G{c['G']}"
        layout = "blocked" if c.get("blocked", c.get("to_blocked", c["op"] == "quantize_m_groups")) else "rowmajor"
        layout = c.get("layout", "blocked" if c["op"] == "quantize_tiled_m_groups" else layout)
        if "tile" in c or "window" in c:
            t = c.get("tile", [1, c.get("window")])
            shape += f" t{t[0]}x{t[1]}"
        if c["op"] == "swizzle":
            layout = "->blocked" if c["to_blocked"] else "->rowmaj"
        print(f"{c['kernel']:34} {c['op']:10} {shape:16} {c.get('axis', ''):>4} {c.get('elem', ''):9} "
              f"{c.get('hp', ''):4} {c.get('mode', ''):6} {layout:8} {bad:>9} / {total}  {'PASS' if ok else 'FAIL'}")
    print(f"{passed} passed, {failed} failed")
    sys.exit(0 if failed == 0 else 1)


if __name__ == "__main__":
    main()
