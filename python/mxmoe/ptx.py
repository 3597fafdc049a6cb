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
    kernels maps kernel name -> {"grid": [...], "block": [...],
    "dynamic_shared_memory": bytes, "scalars": [...]}. Kernels with run-time
    sizes have no grid of their own: the grid and the i64 scalars are those
    of the (first) op annotated with the kernel (host-launch=false keeps the
    ops, annotated with `mxmoe.kernel`, `mxmoe.kernel_args` and `mxmoe.grid`)."""
    lowered = subprocess.run(
        [opt, f"--mxmoe-to-nvvm=chip={chip} host-launch=false", "-"], input=mlir,
        text=True, capture_output=True, check=True).stdout
    # Each kernel's header line (gpu.func before, llvm.func after the NVVM
    # lowering) carries mxmoe.block, (mxmoe.grid) and, for kernels with
    # dynamic shared memory (the grouped GEMMs), mxmoe.dynamic_smem, in any
    # order among the other attributes.
    kernels = {}
    uses = {}
    arr = r"array<i64: (\d+), (\d+), (\d+)>"
    for line in lowered.splitlines():
        use = re.search(r"mxmoe\.kernel = @mxmoe_kernels::@([\w$.]+)", line)
        if use:
            grid = re.search(r"mxmoe\.grid = " + arr, line)
            args = re.search(r"mxmoe\.kernel_args = \[([^\]]*)\]", line)
            values = re.findall(r"#mxmoe\.kernel_arg<value (-?\d+)>", args.group(1)) if args else []
            info = {"grid": [int(grid.group(i)) for i in (1, 2, 3)] if grid else None,
                    "scalars": [int(v) for v in values]}
            # One launch configuration per kernel name: a kernel shared by
            # ops of other sizes would need one entry per use.
            if uses.setdefault(use.group(1), info) != info:
                raise RuntimeError(f"kernel {use.group(1)} serves ops of different sizes; "
                                   "compile_to_ptx keeps one launch configuration per kernel")
            continue
        head = re.search(r'(?:llvm|gpu)\.func @([\w$.]+)\(', line)
        block = re.search(r"mxmoe\.block = " + arr, line)
        if not (head and block):
            continue
        grid = re.search(r"mxmoe\.grid = " + arr, line)
        smem = re.search(r"mxmoe\.dynamic_smem = (\d+)", line)
        kernels[head.group(1)] = {
            "block": [int(block.group(i)) for i in (1, 2, 3)],
            "grid": [int(grid.group(i)) for i in (1, 2, 3)] if grid else None,
            "dynamic_shared_memory": int(smem.group(1)) if smem else 0,
            "scalars": []}
    for name, info in kernels.items():
        use = uses.get(name)
        if use:
            info["scalars"] = use["scalars"]
            info["grid"] = info["grid"] or use["grid"]
    binary = subprocess.run(
        [opt, "--gpu-module-to-binary=format=isa", "-"], input=lowered,
        text=True, capture_output=True, check=True).stdout
    m = re.search(r'assembly = "(.*?)"(?:,|>)', binary, re.S)
    if not m:
        raise RuntimeError("no PTX found in gpu-module-to-binary output")
    return decode_mlir_string(m.group(1)), kernels
