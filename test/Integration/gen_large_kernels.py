#!/usr/bin/env python3
"""Builds the kernels of the large-tensor and misaligned-pointer GPU test
(large_and_misaligned_gpu.py).

Runs on the build machine: writes one MLIR module whose tensors have more
than 2^31 elements (quantize rowwise and columnwise, dequantize, and a 2D x
3D grouped GEMM whose output has 2^31 + 50M elements) plus one small
quantize for the misaligned-pointer checks, and compiles it with
`mxmoe-compile --chip sm_90a` into <out>/ (manifest.json, sm_90a/kernels.*).

Usage: gen_large_kernels.py [--build build] [--out .device/large]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

BIG_M, BIG_K = 65600, 32768        # 2,149,580,800 elements > 2^31
GEMM_M, GEMM_N, GEMM_K, GEMM_G = 266240, 8192, 256, 4  # out: 2,181,038,080
GEMM_MP = -(-(GEMM_M + GEMM_G * 128) // 128) * 128       # M-grouped scale rows
BLK = ", #mxmoe.scale_layout<blocked_128x4>"


def t(shape, elem, enc=""):
    return "tensor<" + "x".join(map(str, shape)) + "x" + elem + enc + ">"


def module_text():
    q_in, q_d, q_s = t([BIG_M, BIG_K], "bf16"), t([BIG_M, BIG_K], "f8E4M3FN"), \
        t([BIG_M, BIG_K // 32], "f8E8M0FNU")
    c_in = t([BIG_K, BIG_M], "bf16")  # columnwise: data [BIG_M, BIG_K]
    a, sa = t([GEMM_M, GEMM_K], "f8E4M3FN"), t([GEMM_MP, GEMM_K // 32], "f8E8M0FNU", BLK)
    b, sb = t([GEMM_G, GEMM_N, GEMM_K], "f8E4M3FN"), t([GEMM_G, GEMM_N, GEMM_K // 32], "f8E8M0FNU", BLK)
    offs, out = t([GEMM_G], "i32"), t([GEMM_M, GEMM_N], "bf16")
    return f"""
func.func @big_quantize_rowwise(%x: {q_in}) -> ({q_d}, {q_s}) {{
  %q, %s = mxmoe.quantize %x {{axis = 1 : i64, rounding = #mxmoe.rounding<rceil>}} : {q_in} -> {q_d}, {q_s}
  return %q, %s : {q_d}, {q_s}
}}
func.func @big_quantize_columnwise(%x: {c_in}) -> ({q_d}, {q_s}) {{
  %q, %s = mxmoe.quantize %x {{axis = 0 : i64, rounding = #mxmoe.rounding<rceil>}} : {c_in} -> {q_d}, {q_s}
  return %q, %s : {q_d}, {q_s}
}}
func.func @big_dequantize(%q: {q_d}, %s: {q_s}) -> {q_in} {{
  %x = mxmoe.dequantize %q, %s {{axis = 1 : i64}} : {q_d}, {q_s} -> {q_in}
  return %x : {q_in}
}}
func.func @big_grouped_matmul(%a: {a}, %sa: {sa}, %b: {b}, %sb: {sb}, %o: {offs}) -> {out} {{
  %r = mxmoe.grouped_matmul %a scales %sa, %b scales %sb offsets %o : ({a}, {sa}, {b}, {sb}, {offs}) -> {out}
  return %r : {out}
}}
func.func @small_quantize(%x: tensor<256x64xbf16>) -> (tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>) {{
  %q, %s = mxmoe.quantize %x {{axis = 1 : i64, rounding = #mxmoe.rounding<rceil>}} : tensor<256x64xbf16> -> tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>
  return %q, %s : tensor<256x64xf8E4M3FN>, tensor<256x2xf8E8M0FNU>
}}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=".device/large")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    src = os.path.join(args.out, "large.mlir")
    with open(src, "w") as f:
        f.write(module_text())
    subprocess.run([os.path.join(args.build, "bin", "mxmoe-compile"), src,
                    "--chip", "sm_90a", "-o", args.out], check=True)


if __name__ == "__main__":
    sys.exit(main())
