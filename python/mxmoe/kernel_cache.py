"""An on-disk cache of compiled mxmoe grouped GEMMs, for any token count.

The grouped-GEMM and quantize kernels take their sizes (tokens M, groups,
offsets) at run time: the kernels of one (experts E, N, K, dtypes, recipe,
chip) are the same for every M, only a launch program's values and grids
differ. So the cache compiles the kernels once per such key (the full
pipeline with ptxas, at the first M asked for) and binds every M to them
with a programs-only compile (`compile(programs_only=True)`: kernel
generation without PTX or ptxas, ~0.1 s), whose kernel rows must carry the
same `kernel_hash` as the compiled ones (equal hashes: equal kernels); if
they do not, that M gets a full compile of its own. Nothing is ever
compiled twice for one key and M, in this process or any other.

Layout under the cache root (`$MXMOE_CACHE_DIR`, else
`$XDG_CACHE_HOME/mxmoe`, else `~/.cache/mxmoe`):

    <key>/key.json          what the key is made of (for people)
    <key>/kernels/          the full compile: manifest.json, <chip>/kernels.{ptx,cubin}
    <key>/m<M>/manifest.json
                            the launch programs for M tokens; kernel rows name
                            ../kernels/<chip>/kernels.{ptx,cubin}
    policy/<key>.json       a precision-policy report (KernelCache.policy_report)

Every directory is written under a temporary name and renamed into place,
so a reader sees a complete directory or none; processes compiling one key
take turns (an advisory lock, `<key>.lock`), so a second one finds the
first one's entry instead of compiling it again. The
key hashes the compiler library's bytes, the ptxas release and every
option that changes code, so a rebuilt compiler or another toolkit release
gets new entries, and machines with the same compiler and toolkit can share
one cache (one filled where the compiler is installed serves GPU machines
that have only the runtime: test/Integration/dropin_gpu.py).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
from typing import Callable, Dict, Optional

from .runtime import library_path

FUNCTION = "gmm"  # the function and fqn of the cached IR: gmm.forward, ...

_LIB_DIGEST: Optional[str] = None


def cache_root() -> str:
    """$MXMOE_CACHE_DIR, else $XDG_CACHE_HOME/mxmoe, else ~/.cache/mxmoe."""
    if os.environ.get("MXMOE_CACHE_DIR"):
        return os.environ["MXMOE_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mxmoe")


def compiler_digest() -> str:
    """sha256 of libmxmoe_compiler.so's bytes (once per process): the
    compiler's identity in every key."""
    global _LIB_DIGEST
    if _LIB_DIGEST is None:
        h = hashlib.sha256()
        with open(library_path("MXMOE_COMPILER_LIB", "libmxmoe_compiler.so"), "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        _LIB_DIGEST = h.hexdigest()
    return _LIB_DIGEST


_PTXAS: Dict[str, str] = {}


def ptxas_identity(toolkit: Optional[str]) -> str:
    """The release and build lines of `toolkit`/bin/ptxas --version (once per toolkit
    and process; "none" without one): the assembler's part of a key, equal
    on machines with the same toolkit release."""
    if not toolkit:
        return "none"
    if toolkit not in _PTXAS:
        path = os.path.join(toolkit, "bin", "ptxas")
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True,
                                 timeout=60).stdout.strip().splitlines()
            _PTXAS[toolkit] = " ".join(out[-2:]) if out else f"{path}: no version"
        except (OSError, subprocess.SubprocessError):
            _PTXAS[toolkit] = f"{path}: missing"
    return _PTXAS[toolkit]


def grouped_mm_ir(m: int, k: int, n: int, experts: int, dtype: str = "bf16",
                  out_dtype: str = "bf16") -> str:
    """Model-level IR of one grouped GEMM y[M, N] = x[M, K] @ W[g][N, K]^T
    per group of rows (`mxmoe.scaled_grouped_matmul`, fqn "gmm"): the
    pipeline expands it into gmm.forward, gmm.input_grad, gmm.weight_grad."""
    for name, v in (("M", m), ("K", k), ("N", n), ("experts", experts)):
        if not isinstance(v, int) or v < (0 if name == "M" else 1):
            raise ValueError(f"grouped_mm_ir: {name} must be an int >= "
                             f"{0 if name == 'M' else 1}, got {v!r}")
    x, w = f"tensor<{m}x{k}x{dtype}>", f"tensor<{experts}x{n}x{k}x{dtype}>"
    offs, y = f"tensor<{experts}xi32>", f"tensor<{m}x{n}x{out_dtype}>"
    return (f"func.func @{FUNCTION}(%x: {x}, %w: {w}, %offsets: {offs}) -> {y} {{\n"
            f"  %y = mxmoe.scaled_grouped_matmul %x, %w, %offsets {{fqn = \"{FUNCTION}\"}}\n"
            f"      : ({x}, {w}, {offs}) -> {y}\n"
            f"  return %y : {y}\n}}\n")


def _write_atomically(final: str, fill: Callable[[str], None]) -> str:
    """Creates directory `final` by `fill(tmp)` and a rename; if another
    process created it first, keeps theirs."""
    if os.path.isdir(final):
        return final
    parent = os.path.dirname(final)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".tmp-", dir=parent)
    try:
        fill(tmp)
        try:
            os.rename(tmp, final)
        except OSError:
            if not os.path.isdir(final):  # not a lost race: a real error
                raise
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    return final


class KernelCache:
    """Compiled grouped GEMMs by (key, M) under `root` (default
    cache_root()). `stats` counts, for this object: full compiles
    ("kernels"), programs-only bindings ("programs"), full compiles of an
    M whose kernels differed ("unbound"), precision-policy reports
    computed ("policies"), and entries found on disk ("hits")."""

    def __init__(self, root: Optional[str] = None, compile_fn=None):
        self.root = root or cache_root()
        self._compile = compile_fn
        self._lock = threading.Lock()
        self._dirs: Dict[tuple, str] = {}
        self.stats = {"kernels": 0, "programs": 0, "unbound": 0, "policies": 0, "hits": 0}

    def _compiler(self):
        if self._compile is None:
            from .compiler import compile as compile_ir
            self._compile = compile_ir
        return self._compile

    def key(self, *, k: int, n: int, experts: int, chip: str, options: dict,
            dtype: str = "bf16", out_dtype: str = "bf16") -> str:
        """The entry name of a grouped GEMM: a sha256 over everything that
        changes its kernels (not M)."""
        desc = self._describe(k=k, n=n, experts=experts, chip=chip, options=options,
                              dtype=dtype, out_dtype=out_dtype)
        return hashlib.sha256(json.dumps(desc, sort_keys=True).encode()).hexdigest()[:32]

    def _describe(self, *, k, n, experts, chip, options, dtype, out_dtype) -> dict:
        return {"kind": "grouped_mm", "k": k, "n": n, "experts": experts,
                "dtype": dtype, "out_dtype": out_dtype, "chip": chip,
                "options": {o: options[o] for o in sorted(options) if o != "toolkit"},
                "compiler": compiler_digest(),
                "ptxas": ptxas_identity(options.get("toolkit"))}

    def grouped_mm(self, *, m: int, k: int, n: int, experts: int, chip: str,
                   options: dict, dtype: str = "bf16", out_dtype: str = "bf16") -> str:
        """The compile-output directory (mxmoe-compile's layout: a
        manifest.json the runtime loads) of the grouped GEMM for M tokens:
        from this process's memory, the disk, a programs-only binding to
        the key's kernels, or a compile. `options`: keyword arguments of
        mxmoe.compiler.compile (recipe, rounding, toolkit, ...)."""
        shape = dict(k=k, n=n, experts=experts, chip=chip, dtype=dtype, out_dtype=out_dtype)
        memo = (m, json.dumps(options, sort_keys=True), tuple(sorted(shape.items())))
        hit = self._dirs.get(memo)
        if hit is not None:
            return hit
        with self._lock:
            hit = self._dirs.get(memo)
            if hit is None:
                hit = self._dirs[memo] = self._entry(m, options, shape)
        return hit

    def policy_report(self, ir: str, *, chip: str, options: dict) -> dict:
        """mxmoe-precision-policy's JSON report (`decisions`: per fqn the
        precision, recipe, rule and reason) for the model-level IR `ir`:
        from `<root>/policy/<key>.json`, else from a programs-only compile
        (~0.1 s per layer) whose report is stored there. The key hashes
        `ir`, `chip`, `options` (less "toolkit": the policy runs no ptxas)
        and the compiler library's bytes, so a cache filled where the
        compiler is installed answers where only the runtime is."""
        opts = {o: options[o] for o in sorted(options) if o != "toolkit"}
        desc = {"kind": "policy", "ir": ir, "chip": chip, "options": opts,
                "compiler": compiler_digest()}
        key = hashlib.sha256(json.dumps(desc, sort_keys=True).encode()).hexdigest()[:32]
        path = os.path.join(self.root, "policy", key + ".json")
        if os.path.isfile(path):
            self.stats["hits"] += 1
            with open(path) as f:
                return json.load(f)
        try:
            out = self._compiler()(ir, chips=[chip], programs_only=True, **opts)
        except OSError as err:  # no compiler library here (a GPU-only machine)
            pending = os.path.join(self.root, "policy", key + ".pending.json")
            _write_json(pending, desc)
            raise RuntimeError(
                f"mxmoe: no precision-policy report cached at {path} and no compiler "
                f"library to compute it ({err}); its input is in {pending}: run "
                f"`python3 -m mxmoe.kernel_cache --fill-pending {self.root}` where the "
                f"compiler is installed") from err
        report = json.loads(out.policy_report)
        self.stats["policies"] += 1
        _write_json(path, report)
        return report

    def fill_pending(self) -> int:
        """Computes every precision-policy report that a machine without
        the compiler library left pending under `root`/policy (same
        compiler library bytes: the key must come out equal); returns how
        many."""
        d = os.path.join(self.root, "policy")
        done = 0
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if not name.endswith(".pending.json"):
                continue
            with open(os.path.join(d, name)) as f:
                desc = json.load(f)
            if desc.get("compiler") != compiler_digest():
                raise RuntimeError(f"{name}: left by another compiler library build")
            self.policy_report(desc["ir"], chip=desc["chip"], options=desc["options"])
            os.remove(os.path.join(d, name))
            done += 1
        return done

    def _entry(self, m: int, options: dict, shape: dict) -> str:
        base = os.path.join(self.root, self.key(options=options, **shape))
        final = os.path.join(base, f"m{m}")
        if os.path.isfile(os.path.join(final, "manifest.json")):
            self.stats["hits"] += 1
            return final
        os.makedirs(self.root, exist_ok=True)
        # One process compiles a key at a time (an advisory lock next to
        # it); the others then find its entries.
        with open(base + ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if os.path.isfile(os.path.join(final, "manifest.json")):
                self.stats["hits"] += 1
                return final
            return self._build(base, final, m, options, shape)

    def _build(self, base: str, final: str, m: int, options: dict, shape: dict) -> str:
        _write_atomically(base + "/kernels", lambda d: self._full(d, m, options, shape, base))
        kernels = self._manifest(base + "/kernels")
        ir = grouped_mm_ir(m, shape["k"], shape["n"], shape["experts"], shape["dtype"],
                           shape["out_dtype"])
        out = self._compiler()(ir, chips=[shape["chip"]], programs_only=True,
                               **{o: v for o, v in options.items() if o != "toolkit"})
        bound = _bind(out.manifest, kernels)
        if bound is None:  # kernels differ at this M: compile it on its own
            self.stats["unbound"] += 1
            return _write_atomically(final, lambda d: self._full(d, m, options, shape))
        self.stats["programs"] += 1

        def fill(d):
            with open(os.path.join(d, "manifest.json"), "w") as f:
                json.dump(bound, f, indent=1)
        return _write_atomically(final, fill)

    def _full(self, d: str, m: int, options: dict, shape: dict, base: str = "") -> None:
        ir = grouped_mm_ir(m, shape["k"], shape["n"], shape["experts"], shape["dtype"],
                           shape["out_dtype"])
        self._compiler()(ir, chips=[shape["chip"]], **options).write(d)
        self.stats["kernels"] += 1
        if base:
            with open(os.path.join(base, "key.json"), "w") as f:
                json.dump(self._describe(options=options, **shape), f, indent=1)

    @staticmethod
    def _manifest(d: str) -> dict:
        with open(os.path.join(d, "manifest.json")) as f:
            return json.load(f)


def _write_json(path: str, value) -> None:
    """`value` as JSON at `path`, through a temporary file and a rename (a
    reader sees the whole file or none)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(path))
    with os.fdopen(fd, "w") as f:
        json.dump(value, f, indent=1)
    os.replace(tmp, path)


def _bind(programs: dict, kernels: dict) -> Optional[dict]:
    """The programs-only manifest `programs` with every kernel row pointing
    at the compiled kernels of manifest `kernels` (in ../kernels), or None
    when a kernel is missing there or its kernel_hash differs."""
    compiled = {(r["chip"], r["name"]): r for r in kernels["kernels"]}
    rows = []
    for r in programs["kernels"]:
        c = compiled.get((r["chip"], r["name"]))
        if c is None or not r.get("kernel_hash") or c.get("kernel_hash") != r["kernel_hash"]:
            return None
        row = dict(r)
        for f in ("ptx", "cubin"):
            # A cubin that was not built is a note, not a path: kept as is.
            v = c.get(f, "")
            row[f] = "../kernels/" + v if v.endswith((".ptx", ".cubin")) else v
        rows.append(row)
    out = dict(programs)
    out["kernels"] = rows
    out["programs_only"] = False
    out["kernels_from"] = "../kernels"
    return out


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description="mxmoe kernel cache maintenance")
    ap.add_argument("--fill-pending", metavar="DIR", required=True,
                    help="compute the precision-policy reports left pending under DIR")
    args = ap.parse_args()
    print(f"{KernelCache(args.fill_pending).fill_pending()} pending reports computed")
