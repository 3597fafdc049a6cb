#!/usr/bin/env python3
"""Builds the sm_90a MX grouped-GEMM kernels the GPU test and benchmark run.

Runs on the build machine: writes one MLIR module with one function per
case (an `mxmoe.grouped_matmul` on MXFP8 operands with blocked scales, the
IR mxmoe-pack-scales leaves), compiles it with `mxmoe-compile --chip
sm_90a` (PTX, cubin via ptxas when present, manifest.json) and writes
<out>/cases.json: per case the kind (2Dx3D / 2Dx2D), shapes, dtypes, the
routing to draw on the device, and the kernel's manifest entry.

Usage: gen_gemm_kernels.py [--build build] [--out .device/gemm] [--bench]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

BLK = ", #mxmoe.scale_layout<blocked_128x4>"
KGRP = ", #mxmoe.scale_layout<blocked_128x4, per_k_group>"


def t(shape, elem, enc=""):
    return "tensor<" + "x".join(map(str, shape)) + "x" + elem + enc + ">"


def ru(x, m):
    return -(-x // m) * m


def blk(tile=None, kgrp=False):
    """The blocked_128x4 encoding, recording an MX128 tile when given."""
    mods = ([f"tile = [{tile[0]}, {tile[1]}]"] if tile else []) + (["per_k_group"] if kgrp else [])
    return ", #mxmoe.scale_layout<" + ", ".join(["blocked_128x4"] + mods) + ">"


def fwd_case(name, G, M, N, K, out="bf16", a="f8E4M3FN", b="f8E4M3FN",
             routing="balanced", mx128=False, **extra):
    """2D x 3D case; mx128: 1x128 lhs / 128x128 rhs scale tiles (the
    kernel promotes once per 128 K)."""
    Mp = (M + 127 * G) // 128 * 128
    Cp = ru(K // 32, 4)
    Np = ru(N, 128)
    ea, eb = (blk((1, 128)), blk((128, 128))) if mx128 else (BLK, BLK)
    types = [t([M, K], a), t([Mp, Cp], "f8E8M0FNU", ea), t([G, N, K], b),
             t([G, Np, Cp], "f8E8M0FNU", eb), t([G], "i32")]
    if mx128:
        extra["mx128"] = True
    return dict(name=name, kind="2Dx3D", G=G, M=M, N=N, K=K, out=out, a=a, b=b,
                routing=routing, Mp=Mp, Cp=Cp, Np=Np, types=types,
                result=t([M, N], out), **extra)


def wgrad_case(name, G, T, M, N, out="f32", a="f8E4M3FN", b="f8E4M3FN",
               routing="balanced", mx128=False, **extra):
    """2D x 2D case; mx128: 1x128 token windows restarting at every
    group's padded start on both operands."""
    Tp = (T + 31 * G) // 32 * 32
    Qp = ru(Tp // 32 + 3 * G, 4)
    enc = blk((1, 128), kgrp=True) if mx128 else KGRP
    types = [t([M, Tp], a), t([ru(M, 128), Qp], "f8E8M0FNU", enc),
             t([N, Tp], b), t([ru(N, 128), Qp], "f8E8M0FNU", enc),
             t([G], "i32")]
    if mx128:
        extra["mx128"] = True
    if extra.get("accumulate"):  # `accumulate %a5`: out = acc + product
        types.append(t([G, M, N], out))
    return dict(name=name, kind="2Dx2D", G=G, T=T, M=M, N=N, K=Tp, Tp=Tp,
                Qp=Qp, out=out, a=a, b=b, routing=routing, types=types,
                result=t([G, M, N], out), **extra)


def correctness_cases():
    return [
        fwd_case("fwd_g1", 1, 200, 256, 256),
        fwd_case("fwd_gptoss_k2880", 4, 1000, 320, 2880),
        fwd_case("fwd_empty_f32", 8, 777, 256, 512, out="f32", routing="empty"),
        fwd_case("fwd_zipf_e256", 256, 4096, 128, 256, routing="zipf"),
        fwd_case("fwd_e5m2_f32", 3, 300, 192, 128, out="f32", a="f8E5M2"),
        fwd_case("fwd_tail_rows", 5, 650, 136, 384, routing="short"),
        wgrad_case("wgrad_f32", 4, 1000, 256, 384, routing="empty"),
        wgrad_case("wgrad_acc_bf16", 4, 1000, 256, 384, out="bf16", routing="empty",
                   accumulate=True),
        wgrad_case("wgrad_zipf_bf16", 16, 3000, 320, 2880, out="bf16",
                   routing="zipf"),
        wgrad_case("wgrad_g1_ragged", 1, 77, 130, 200),
        wgrad_case("wgrad_e5m2", 6, 500, 128, 256, b="f8E5M2", routing="empty"),
        # Block-scale products 2^(ea+eb-254) from 2^-134 to 2^-122 (below
        # and above fp32's smallest normal, 2^-126) and from 2^86 to 2^100:
        # the fp8 strategy's scale product must stay exact at both ends.
        fwd_case("fwd_tiny_scales", 4, 700, 256, 512, routing="zipf", scales=(60, 67)),
        fwd_case("fwd_huge_scales", 3, 400, 128, 384, scales=(170, 178)),
        # lhs scale bytes 0-2 (2^-127, an fp32 subnormal, to 2^-125) with rhs
        # bytes 150-159: normal products 2^-104..2^-93.
        fwd_case("fwd_scale_byte0", 2, 300, 128, 256, scales_a=(0, 3), scales_b=(150, 160)),
        wgrad_case("wgrad_tiny_scales", 5, 900, 192, 256, out="bf16", scales=(60, 67)),
        # Odd N: output rows are not 4-byte aligned, so the epilogue stores
        # single elements instead of column pairs.
        fwd_case("fwd_odd_n", 3, 333, 135, 256, routing="zipf"),
        wgrad_case("wgrad_odd_n", 3, 500, 130, 135, out="bf16"),
    ] + mx128_cases()


def mx128_cases():
    """MX128 (one promotion per 128 K): 1 to 256 experts, balanced, Zipf,
    empty and short routings, K tails (2880 = 22.5 x 128, 1408 = 11 x 128,
    96), M and N not multiples of 128, group sizes 1, 127, 129 (the
    "sizes" routing), bf16 and f32 outputs, e5m2, extreme scales."""
    f, w = fwd_case, wgrad_case
    return [
        f("mx128_fwd_g1", 1, 200, 256, 256, mx128=True),
        f("mx128_fwd_k2880", 4, 1000, 320, 2880, mx128=True),
        f("mx128_fwd_k1408_f32", 8, 777, 256, 1408, out="f32", routing="empty", mx128=True),
        f("mx128_fwd_zipf_e256", 256, 4096, 128, 256, routing="zipf", mx128=True),
        f("mx128_fwd_sizes", 6, 1 + 127 + 129 + 255 + 0 + 300, 192, 384, routing="sizes",
          sizes=[1, 127, 129, 255, 0, 300], mx128=True),
        f("mx128_fwd_k96_f32", 3, 300, 136, 96, out="f32", a="f8E5M2", mx128=True),
        f("mx128_fwd_short", 5, 650, 135, 512, routing="short", mx128=True),
        f("mx128_fwd_tiny_scales", 4, 700, 256, 512, routing="zipf", scales=(60, 67), mx128=True),
        f("mx128_fwd_huge_scales", 3, 400, 128, 384, scales=(170, 178), mx128=True),
        f("mx128_fwd_bench_like", 16, 8192, 1024, 2048, mx128=True),
        w("mx128_wgrad_f32", 4, 1000, 256, 384, routing="empty", mx128=True),
        w("mx128_wgrad_zipf_bf16", 16, 3000, 320, 2880, out="bf16", routing="zipf", mx128=True),
        w("mx128_wgrad_sizes", 6, 1 + 127 + 129 + 255 + 0 + 300, 192, 256, routing="sizes",
          sizes=[1, 127, 129, 255, 0, 300], mx128=True),
        w("mx128_wgrad_g1_ragged", 1, 77, 130, 200, mx128=True),
        w("mx128_wgrad_e5m2_odd_n", 6, 500, 128, 135, b="f8E5M2", out="bf16",
          routing="empty", mx128=True),
        w("mx128_wgrad_e128", 128, 8192, 256, 128, routing="zipf", mx128=True),
        # `accumulate` (the tiled MLP's gradient sums): staged rows (N % 8
        # == 0) and the direct stores (N = 135), bf16 and f32, empty groups.
        w("mx128_wgrad_acc_bf16", 6, 1 + 127 + 129 + 255 + 0 + 300, 192, 256, out="bf16",
          routing="sizes", sizes=[1, 127, 129, 255, 0, 300], mx128=True, accumulate=True),
        w("mx128_wgrad_acc_f32_odd_n", 6, 500, 128, 135, routing="empty", mx128=True,
          accumulate=True),
        w("mx128_wgrad_acc_zipf", 16, 3000, 320, 256, out="bf16", routing="zipf", mx128=True,
          accumulate=True),
        w("mx128_wgrad_acc_bf16_odd_n", 6, 500, 128, 135, out="bf16", routing="empty",
          mx128=True, accumulate=True),
    ]


# (model, experts per GPU, hidden, expert dim)
MODELS = [("llama4_scout", 16, 5120, 8192), ("deepseek_v3_e8", 8, 7168, 2048),
          ("deepseek_v3_e32", 32, 7168, 2048), ("qwen3_30b_a3b", 128, 2048, 768),
          ("gpt_oss_20b", 32, 2880, 2880)]


def bench_cases():
    cases = []
    for model, E, H, I in MODELS:
        for T in (16384, 65536):
            tag = f"{model}_t{T // 1024}k"
            cases.append(fwd_case(f"bench_{tag}_fwd", E, T, I, H, bench=(model, T, "fwd")))
            cases.append(fwd_case(f"bench_{tag}_dgrad", E, T, H, I, bench=(model, T, "dgrad")))
            cases.append(wgrad_case(f"bench_{tag}_wgrad", E, T, I, H, out="bf16",
                                    bench=(model, T, "wgrad")))
            # The MX128 kernels of the same GEMMs (a column of the same row).
            cases.append(fwd_case(f"bench_{tag}_fwd_mx128", E, T, I, H,
                                  bench=(model, T, "fwd"), mx128=True))
            cases.append(fwd_case(f"bench_{tag}_dgrad_mx128", E, T, H, I,
                                  bench=(model, T, "dgrad"), mx128=True))
            cases.append(wgrad_case(f"bench_{tag}_wgrad_mx128", E, T, I, H, out="bf16",
                                    bench=(model, T, "wgrad"), mx128=True))
            # `accumulate` (a tiled block's gradient sum in the epilogue).
            cases.append(wgrad_case(f"bench_{tag}_wgrad_mx128_acc", E, T, I, H, out="bf16",
                                    bench=(model, T, "wgrad"), mx128=True, accumulate=True))
    return cases


def module_text(cases):
    out = []
    # An accumulating case's function has no launch program (it would
    # update its argument in place); its kernel's bindings are those of a
    # twin without `accumulate` (the same parameters).
    twins = [dict(c, name=c["name"] + "__plain", accumulate=False, types=c["types"][:5])
             for c in cases if c.get("accumulate")]
    for c in cases + twins:
        args = ", ".join(f"%a{i}: {ty}" for i, ty in enumerate(c["types"]))
        out.append(
            f"func.func @{c['name']}({args}) -> {c['result']} {{\n"
            f"  %o = mxmoe.grouped_matmul %a0 scales %a1, %a2 scales %a3 offsets %a4"
            f"{' accumulate %a5' if c.get('accumulate') else ''}"
            f" : ({', '.join(c['types'])}) -> {c['result']}\n"
            f"  return %o : {c['result']}\n}}\n")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=".device/gemm")
    ap.add_argument("--bench", action="store_true", help="also the benchmark shapes")
    ap.add_argument("--chips", default="sm_90a,sm_100a,sm_103a",
                    help="comma-separated chips to compile for (sm_90a is the one run)")
    ap.add_argument("--extra", action="append", default=[],
                    help="an extra mxmoe-compile option, repeatable "
                         "(e.g. --extra=--gemm-stages=5)")
    ap.add_argument("--mx128-only", action="store_true",
                    help="only the bf16-output MX128 cases (the fp8 MX128 kernels, e.g. "
                         "for stage counts only they fit)")
    ap.add_argument("--2dx3d-only", dest="fwd_only", action="store_true",
                    help="only the 2D x 3D cases (forward / input gradient), e.g. "
                         "with --mx128-only for --extra=--gemm-tile-n=192")
    ap.add_argument("--only", default="",
                    help="comma-separated case names to keep (e.g. two bench cases)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cases = correctness_cases() + (bench_cases() if args.bench else [])
    if args.only:
        cases = [c for c in cases if c["name"] in args.only.split(",")]
    if args.mx128_only:
        cases = [c for c in cases if c.get("mx128") and c["out"] == "bf16"]
    if args.fwd_only:
        cases = [c for c in cases if c["kind"] == "2Dx3D"]
    src = os.path.join(args.out, "gemm_cases.mlir")
    with open(src, "w") as f:
        f.write(module_text(cases))
    # sm_90a runs on the H200; sm_100a and sm_103a (tcgen05) are assembled
    # by ptxas and their SASS inspected with cuobjdump on the device (no
    # Blackwell here).
    cmd = [os.path.join(args.build, "bin", "mxmoe-compile"), src, "--chip", args.chips,
           "-o", args.out] + args.extra
    subprocess.run(cmd, check=True)
    manifest = json.load(open(os.path.join(args.out, "manifest.json")))
    # A kernel serves every op listed under "uses" (mxmoe-dedupe-kernels
    # merges the kernels of cases with equal shapes and options).
    by_fn = {u["function"]: k for k in manifest["kernels"] if k["chip"] == "sm_90a"
             for u in k["uses"]}
    # Sizes are run-time parameters: the case's program step binds them
    # (and the tensor maps' extents).
    steps = {p["function"]: p["steps"][-1] for p in manifest["programs"]}
    for c in cases:
        c["kernel"] = by_fn[c["name"]]
        c["bindings"] = steps[c["name"] + ("__plain" if c.get("accumulate") else "")]["bindings"]
        del c["types"]
    with open(os.path.join(args.out, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)
    print(f"{len(cases)} cases -> {args.out}")


if __name__ == "__main__":
    sys.exit(main())
