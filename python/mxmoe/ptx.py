"""Run mxmoe-opt's lowering pipeline and extract PTX + launch metadata."""
from __future__ import annotations

import re
import subprocess


def decode_mlir_string(raw: str) -> str:
    """Decodes an MLIR string literal body (\\XX hex escapes, \\\\, \\")."""
    out, i = [], 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw):
            nxt = raw[i + 1]
            if nxt in "\\\"":
                out.append(nxt)
                i += 2
                continue
            if nxt == "n":
                out.append("\n")
                i += 2
                continue
            out.append(chr(int(raw[i + 1:i + 3], 16)))
            i += 3
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def compile_to_ptx(mlir: str, opt: str, chip: str) -> tuple[str, dict]:
    """Lowers MX-level IR to PTX for `chip`. Returns (ptx, kernels) where
    kernels maps kernel name -> {"grid": [...], "block": [...]}."""
    lowered = subprocess.run(
        [opt, f"--mxmoe-to-nvvm=chip={chip}", "-"], input=mlir, text=True,
        capture_output=True, check=True).stdout
    kernels = {}
    for m in re.finditer(r'sym_name = "([^"]+)".*?mxmoe\.block = array<i64: '
                         r'(\d+), (\d+), (\d+)>, mxmoe\.grid = array<i64: '
                         r'(\d+), (\d+), (\d+)>', lowered):
        kernels[m.group(1)] = {"block": [int(m.group(i)) for i in (2, 3, 4)],
                               "grid": [int(m.group(i)) for i in (5, 6, 7)]}
    if not kernels:
        for m in re.finditer(r'llvm\.func @([\w$.]+)\(.*?\) attributes \{[^}]*?'
                             r'mxmoe\.block = array<i64: (\d+), (\d+), (\d+)>, '
                             r'mxmoe\.grid = array<i64: (\d+), (\d+), (\d+)>',
                             lowered):
            kernels[m.group(1)] = {
                "block": [int(m.group(i)) for i in (2, 3, 4)],
                "grid": [int(m.group(i)) for i in (5, 6, 7)]}
    binary = subprocess.run(
        [opt, "--gpu-module-to-binary=format=isa", "-"], input=lowered,
        text=True, capture_output=True, check=True).stdout
    m = re.search(r'assembly = "(.*?)"(?:,|>)', binary, re.S)
    if not m:
        raise RuntimeError("no PTX found in gpu-module-to-binary output")
    return decode_mlir_string(m.group(1)), kernels
