#!/usr/bin/env python3
"""Writes everything a build of mxmoe generates, for byte-for-byte comparison.

The corpus is the output of the compiler on every input the repository
ships, so that two builds (GCC and clang, or before and after a refactor)
can be compared with `cmp`:

  lit/<test>.<n>.out   stdout + stderr of each lit RUN line's first command
                       when it is `mxmoe-opt %s ...` (the part before the
                       first `|`), for every test/**/*.mlir;
  compile/<input>/     `mxmoe-compile --chip sm_90a,sm_100a,sm_103a` of each
                       examples/*.mlir, bench/*.mlir, test/Integration/*.mlir
                       (PTX, manifest.json, model.mlir, header, policy
                       report; cubins are left out: they come from ptxas);
  mx/                  test/Integration/gen_mx_kernels.py (350 quantize,
                       dequantize and swizzle kernels, sm_90a and sm_100a);
  gemm/                test/Integration/gen_gemm_kernels.py --bench (grouped
                       GEMM test and benchmark kernels, three chips);
  large/               test/Integration/gen_large_kernels.py.

Usage: emit-corpus.py --build BUILD --out DIR [--only lit,compile,mx,gemm,large]
       emit-corpus.py --compare DIR_A DIR_B
The compare form checks that both trees hold the same files with the same
bytes and ends with one line "compare: N passed, N failed" (one case per
file).
"""
from __future__ import annotations

import argparse
import filecmp
import os
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHIPS = "sm_90a,sm_100a,sm_103a"
PARTS = ("lit", "compile", "mx", "gemm", "large")


def lit_commands(path: str) -> list[str]:
    """The `mxmoe-opt %s ...` head of each RUN line of a lit test."""
    runs, cur = [], ""
    for line in open(path, encoding="utf-8"):
        m = re.match(r"\s*//\s*RUN:\s?(.*)$", line)
        if not m:
            continue
        text = m.group(1).rstrip()
        if text.endswith("\\"):
            cur += text[:-1] + " "
            continue
        runs.append(cur + text)
        cur = ""
    heads = []
    for r in runs:
        head = r.split("|")[0].strip()
        if head.startswith("not "):
            head = head[4:].strip()
        if head.startswith("mxmoe-opt ") and "%s" in head:
            heads.append(head)
    return heads


def run_lit(build: str, out: str) -> None:
    tests = []
    for d, _, files in os.walk(os.path.join(ROOT, "test")):
        for f in sorted(files):
            if f.endswith(".mlir"):
                tests.append(os.path.join(d, f))
    jobs = []
    scratch = os.path.join(out, "lit-scratch")
    for t in sorted(tests):
        rel = os.path.relpath(t, ROOT)
        for i, head in enumerate(lit_commands(t)):
            tmp = os.path.join(scratch, f"{rel}.{i}")
            # lit's substitutions (test/lit.cfg.py): %t is a per-RUN scratch
            # path here, so parallel jobs never share one.
            for key, value in (("%mxmoe_src_root", ROOT),
                               ("%python", sys.executable),
                               ("%S", os.path.dirname(t)), ("%s", t),
                               ("%t", tmp)):
                head = head.replace(key, value)
            argv = shlex.split(head)
            argv[0] = os.path.join(build, "bin", "mxmoe-opt")
            jobs.append((os.path.join(out, "lit", f"{rel}.{i}.out"), argv, tmp))

    def one(job):
        dst, argv, tmp = job
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        os.makedirs(os.path.dirname(tmp), exist_ok=True)
        p = subprocess.run(argv, capture_output=True, cwd=ROOT)
        with open(dst, "wb") as f:
            f.write(p.stdout + b"\n--- stderr ---\n" + p.stderr +
                    f"\n--- exit {p.returncode} ---\n".encode())

    with ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        list(ex.map(one, jobs))
    shutil.rmtree(scratch, ignore_errors=True)


def compile_inputs() -> list[str]:
    inputs = []
    for d in ("examples", "bench", os.path.join("test", "Integration")):
        for f in sorted(os.listdir(os.path.join(ROOT, d))):
            if f.endswith(".mlir"):
                inputs.append(os.path.join(d, f))
    return inputs


def run_compile(build: str, out: str) -> None:
    def one(rel):
        dst = os.path.join(out, "compile", rel.replace(os.sep, "_"))
        p = subprocess.run([os.path.join(build, "bin", "mxmoe-compile"),
                            os.path.join(ROOT, rel), "--chip", CHIPS,
                            "--toolkit", "/nonexistent", "-o", dst],
                           capture_output=True, cwd=ROOT)
        os.makedirs(dst, exist_ok=True)
        with open(os.path.join(dst, "exit.txt"), "wb") as f:
            f.write(p.stderr + f"\nexit {p.returncode}\n".encode())

    with ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        list(ex.map(one, compile_inputs()))


def run_script(argv: list[str]) -> None:
    p = subprocess.run([sys.executable] + argv, cwd=ROOT, capture_output=True,
                       text=True)
    if p.returncode != 0:
        sys.exit(f"emit-corpus: {' '.join(argv)} failed:\n{p.stdout}{p.stderr}")


def emit(build: str, out: str, parts: list[str]) -> None:
    build = os.path.abspath(build)
    out = os.path.abspath(out)
    for part in parts:
        shutil.rmtree(os.path.join(out, part), ignore_errors=True)
        os.makedirs(os.path.join(out, part), exist_ok=True)
        integ = os.path.join("test", "Integration")
        if part == "lit":
            run_lit(build, out)
        elif part == "compile":
            run_compile(build, out)
        elif part == "mx":
            run_script([os.path.join(integ, "gen_mx_kernels.py"), "--opt",
                        os.path.join(build, "bin", "mxmoe-opt"), "--out",
                        os.path.join(out, "mx")])
        elif part == "gemm":
            run_script([os.path.join(integ, "gen_gemm_kernels.py"), "--build",
                        build, "--out", os.path.join(out, "gemm"), "--bench",
                        "--chips", CHIPS])
        elif part == "large":
            run_script([os.path.join(integ, "gen_large_kernels.py"), "--build",
                        build, "--out", os.path.join(out, "large")])
        normalize_paths(os.path.join(out, part),
                        [(out, "<corpus>"), (build, "<build>"), (ROOT, "<root>")])
        print(f"emit-corpus: {part} written to {os.path.join(out, part)}")


def normalize_paths(d: str, names: list[tuple[str, str]]) -> None:
    """Writes a placeholder for each directory a file names (manifests
    record their input's path, diagnostics the tool's and the file's), so
    corpora of two checkouts, builds and output directories compare equal.
    Longer paths are replaced first (the build may lie in the checkout)."""
    names = sorted(names, key=lambda n: -len(n[0]))
    for rel in files_under(d):
        path = os.path.join(d, rel)
        data = original = open(path, "rb").read()
        for where, placeholder in names:
            data = data.replace(where.encode(), placeholder.encode())
        if data != original:
            with open(path, "wb") as f:
                f.write(data)


def files_under(d: str) -> set[str]:
    found = set()
    for base, _, files in os.walk(d):
        for f in files:
            if f.endswith(".cubin"):
                continue
            found.add(os.path.relpath(os.path.join(base, f), d))
    return found


def compare(a: str, b: str) -> int:
    fa, fb = files_under(a), files_under(b)
    passed = failed = 0
    for rel in sorted(fa | fb):
        if rel not in fa or rel not in fb:
            print(f"FAIL: {rel}: only in {a if rel in fa else b}")
            failed += 1
        elif filecmp.cmp(os.path.join(a, rel), os.path.join(b, rel),
                         shallow=False):
            passed += 1
        else:
            print(f"FAIL: {rel}: differs (cmp {os.path.join(a, rel)} "
                  f"{os.path.join(b, rel)})")
            failed += 1
    print(f"compare: {passed} passed, {failed} failed")
    return 1 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build")
    ap.add_argument("--out")
    ap.add_argument("--only", default=",".join(PARTS))
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"))
    args = ap.parse_args()
    if args.compare:
        return compare(*args.compare)
    if not args.build or not args.out:
        ap.error("--build and --out are required (or --compare A B)")
    parts = [p for p in args.only.split(",") if p]
    bad = [p for p in parts if p not in PARTS]
    if bad:
        ap.error(f"unknown part(s) {bad}; choose from {PARTS}")
    emit(args.build, args.out, parts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
