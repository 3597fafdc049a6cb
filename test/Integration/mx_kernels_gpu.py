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
from mxmoe.runtime import Module  # noqa: E402

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


def run_case(mod, c, rng):
    L = c["launch"]
    if c["op"] == "quantize":
        x = make_input(c["shape"], c["axis"], rng)
        xt = to_device(x, c["hp"])
        xv = xt.float().cpu().numpy()  # the values actually quantized
        data = torch.empty(c["data_shape"], dtype=torch.uint8, device="cuda")
        scales = torch.full(c["scale_shape"], 0xAB, dtype=torch.uint8, device="cuda")
        mod.launch(c["kernel"], L["grid"], L["block"], [xt.data_ptr(), data.data_ptr(), scales.data_ptr()])
        torch.cuda.synchronize()
        rd, rs = ref.quantize(xv, c["axis"], c["elem"], c["mode"])
        if c["blocked"]:
            rs = ref.to_blocked(rs)
        gd = data.cpu().numpy()
        gs = scales.cpu().numpy()
        # NaN codes: the sign of a NaN is not meaningful (0xFF == 0x7F).
        gd = np.where(gd == 0xFF, 0x7F, gd)
        rd = np.where(rd == 0xFF, 0x7F, rd)
        bad = int((gd != rd).sum() + (gs != rs).sum())
        return bad, gd.size + gs.size
    if c["op"] == "dequantize":
        x = make_input(c["shape"], c["axis"], rng)
        rd, rs = ref.quantize(ref.round_to_bf16(x), c["axis"], c["elem"], "rceil")
        # also random raw bytes, so every code and scale byte appears
        raw = rng.integers(0, 256, size=rd.shape, dtype=np.uint8)
        rd = np.where(rng.random(rd.shape) < 0.5, rd, raw).astype(np.uint8)
        rs = np.where(rng.random(rs.shape) < 0.1, rng.integers(0, 256, size=rs.shape), rs).astype(np.uint8)
        want = ref.dequantize(rd, rs, c["axis"], c["elem"])
        sb = ref.to_blocked(rs) if c["blocked"] else rs
        data = torch.from_numpy(rd).cuda()
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
    if quick:
        cases = cases[::9]
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
        shape = "x".join(map(str, c.get("shape", c.get("row_major", []))))
        layout = "blocked" if c.get("blocked", c.get("to_blocked", False)) else "rowmajor"
        if c["op"] == "swizzle":
            layout = "->blocked" if c["to_blocked"] else "->rowmaj"
        print(f"{c['kernel']:34} {c['op']:10} {shape:16} {c.get('axis', ''):>4} {c.get('elem', ''):9} "
              f"{c.get('hp', ''):4} {c.get('mode', ''):6} {layout:8} {bad:>9} / {total}  {'PASS' if ok else 'FAIL'}")
    print(f"{passed} passed, {failed} failed")
    sys.exit(0 if failed == 0 else 1)


if __name__ == "__main__":
    main()
