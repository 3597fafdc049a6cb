#!/usr/bin/env python3
"""Quantization SQNR of MX32 (1x32 scales) against MX128 (1x128 activation,
128x128 weight scales), computed with the numpy reference
(python/mxmoe/reference.py, bit-exact with the kernels) on the CPU.

For each data kind: the tensor SQNR of the quantize-dequantize round trip
(10 log10(sum x^2 / sum (x - deq x)^2), dB) for rowwise 1x32 and 1x128
tiles, and for weights 1x32 against 128x128 tiles; and the SQNR of a GEMM
y = x w^T computed from the dequantized operands against the float64
product of the unquantized ones (x rowwise, w along K), MX32 against MX128.
Also the share of nonzero elements that quantize to zero (they fall more
than e4m3's range below their block's or tile's amax): SQNR weights
elements by their energy, so it hides what a coarser tile loses on the
small elements next to a large one. RCEIL scales, e4m3 data, inputs
rounded to bf16.

Usage: python3 bench/mx128_sqnr.py [--rows 4096] [--cols 4096] [--seed 0]
         [--jsonl bench/results/mx128_sqnr_<date>.jsonl]
Prints a markdown table.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
from mxmoe import reference as ref  # noqa: E402


def kinds(rng: np.random.Generator, m: int, k: int) -> dict[str, np.ndarray]:
    """Named [m, k] float32 tensors of different distributions."""
    out = {}
    out["normal"] = rng.standard_normal((m, k))
    out["student-t (df 3)"] = rng.standard_t(3, (m, k))
    out["laplace"] = rng.laplace(size=(m, k))
    out["lognormal rows (sigma 2)"] = (rng.standard_normal((m, k)) *
                                       np.exp(2.0 * rng.standard_normal((m, 1))))
    x = rng.standard_normal((m, k))
    ch = rng.choice(k, size=max(1, k // 256), replace=False)
    x[:, ch] *= 100.0
    out["outlier channels (1/256 x100)"] = x
    x = rng.standard_normal((m, k))
    x[:, ch] *= 1e4
    out["outlier channels (1/256 x1e4)"] = x
    # One spike per 128 elements, 2^15 above the rest: inside a 1x128 tile
    # the other elements fall to e4m3's subnormal range, inside a 1x32 block
    # only a quarter of them do.
    x = rng.standard_normal((m, k))
    x[:, ::128] *= 2.0 ** 15
    out["one 2^15 spike per 128"] = x
    # SwiGLU of random projections: the input of an expert's down GEMM.
    a = rng.standard_normal((m, k)) * 2.0
    g = rng.standard_normal((m, k))
    out["swiglu activations"] = a / (1.0 + np.exp(-a)) * g
    # A gradient-like tensor: tiny magnitudes, a few large rows.
    gr = rng.standard_normal((m, k)) * 1e-5
    gr[rng.choice(m, size=max(1, m // 64), replace=False)] *= 300.0
    out["gradient-like (1e-5, hot rows)"] = gr
    return {n: ref.round_to_bf16(v.astype(np.float32)) for n, v in out.items()}


def sqnr(x: np.ndarray, y: np.ndarray) -> float:
    x = x.astype(np.float64)
    err = np.sum((x - y.astype(np.float64)) ** 2)
    return float("inf") if err == 0 else 10.0 * np.log10(np.sum(x * x) / err)


def deq_tiled(x: np.ndarray, tile) -> np.ndarray:
    d, s, _ = ref.quantize_tiled(x, 1, tile)
    return ref.dequantize(d, s, 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=4096)
    ap.add_argument("--gemm-n", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jsonl", default="")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    m, k = args.rows, args.cols
    data = kinds(rng, m, k)
    w = ref.round_to_bf16(rng.standard_normal((args.gemm_n, k)).astype(np.float32)
                          / np.sqrt(k))
    wq32, wq128 = deq_tiled(w, (1, 32)), deq_tiled(w, (128, 128))
    rows = []
    print(f"| data ({m} x {k}, bf16) | tensor SQNR 1x32 dB | tensor SQNR 1x128 dB "
          f"| 1x128 - 1x32 dB | GEMM SQNR MX32 dB | GEMM SQNR MX128 dB "
          f"| nonzeros flushed to 0, 1x32 | same, 1x128 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, x in data.items():
        x32, x128 = deq_tiled(x, (1, 32)), deq_tiled(x, (1, 128))
        s32, s128 = sqnr(x, x32), sqnr(x, x128)
        exact = x.astype(np.float64) @ w.astype(np.float64).T
        g32 = sqnr(exact, x32.astype(np.float64) @ wq32.astype(np.float64).T)
        g128 = sqnr(exact, x128.astype(np.float64) @ wq128.astype(np.float64).T)
        nz = x != 0
        z32 = float(np.mean(x32[nz] == 0)) * 100
        z128 = float(np.mean(x128[nz] == 0)) * 100
        print(f"| {name} | {s32:.3f} | {s128:.3f} | {s128 - s32:+.3f} | "
              f"{g32:.3f} | {g128:.3f} | {z32:.4f} % | {z128:.4f} % |")
        rows.append({"data": name, "shape": [m, k], "tensor_sqnr_mx32_db": s32,
                     "tensor_sqnr_mx128_db": s128, "gemm_sqnr_mx32_db": g32,
                     "gemm_sqnr_mx128_db": g128, "flushed_pct_mx32": z32,
                     "flushed_pct_mx128": z128})
    sw32, sw128 = sqnr(w, wq32), sqnr(w, wq128)
    print(f"\nweights ({args.gemm_n} x {k}, normal / sqrt(K)): tensor SQNR 1x32 "
          f"{sw32:.3f} dB, 128x128 {sw128:.3f} dB")
    if args.jsonl:
        date = datetime.date.today().isoformat()
        cmd = "python3 bench/mx128_sqnr.py " + " ".join(sys.argv[1:])
        with open(args.jsonl, "a") as f:
            for r in rows:
                for metric in ("tensor_sqnr_mx32_db", "tensor_sqnr_mx128_db",
                               "gemm_sqnr_mx32_db", "gemm_sqnr_mx128_db",
                               "flushed_pct_mx32", "flushed_pct_mx128"):
                    f.write(json.dumps({
                        "what": "quantization SQNR", "shape": r["shape"],
                        "impl": "numpy reference", "metric": metric,
                        "data": r["data"], "value": round(r[metric], 4),
                        "unit": "%" if "pct" in metric else "dB",
                        "device": "cpu", "date": date,
                        "command": cmd}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
