"""`mxmoe.compile()`: the mxmoe compiler from Python (ctypes over the C API
of include/mxmoe-c/Compiler.h, libmxmoe_compiler.so).

    import mxmoe
    out = mxmoe.compile(open("model.mlir").read(), chips=("sm_90a", "sm_100a"))
    out.manifest            # dict: kernels, programs (see python/mxmoe/program.py)
    out.ptx["sm_90a"]       # PTX text
    out.cubin["sm_90a"]     # bytes (empty without ptxas: toolkit=None, or no
                            # bin/ptxas under `toolkit`, default /usr/local/cuda,
                            # which also issues a CompileWarning)
    out.write("outdir")     # the same files as `mxmoe-compile -o outdir`

Errors raise CompileError with the compiler's diagnostics ("name:line:col:
error: ..."). Warnings of a successful compile (e.g. MX ops left
uncompiled) are in `out.warnings` (text, one per line) and are also issued
as Python warnings of category CompileWarning. The library is found through $MXMOE_COMPILER_LIB, else the
installed package's mxmoe/_lib (pip install .), else
<repo>/build/lib/libmxmoe_compiler.so (machines with a build).
"""
from __future__ import annotations

import ctypes
import json
import os
import warnings
from dataclasses import dataclass, field
from typing import Dict, Optional, Sequence

# Chips mxmoe-compile writes artifacts for (include/mxmoe/Conversion/Chips.h).
SUPPORTED_CHIPS = ("sm_90a", "sm_100a", "sm_103a")
# Values of compile()'s `recipe` (mxmoe-compile --recipe): "auto" lets the
# precision policy pick MX128 where the chip's fast path needs it.
RECIPES = ("auto", "mx32", "mx128")

from .runtime import library_path

_lib = None


class CompileError(RuntimeError):
    """The compilation failed; the message holds the diagnostics."""


class CompileWarning(UserWarning):
    """A warning of a successful compilation (see CompileOutput.warnings)."""


class _StringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_size_t)]

    def bytes(self) -> bytes:
        return ctypes.string_at(self.data, self.length) if self.length else b""


class _Options(ctypes.Structure):
    _fields_ = [("chips", ctypes.c_char_p), ("excludes", ctypes.c_char_p),
                ("rounding", ctypes.c_char_p), ("toolkit", ctypes.c_char_p),
                ("tokensPerShard", ctypes.c_int64), ("gemmTileN", ctypes.c_int64),
                ("gemmStages", ctypes.c_int64), ("gemmCTAs", ctypes.c_int64),
                ("gemmSm90Mma", ctypes.c_char_p), ("llvmOptLevel", ctypes.c_int64),
                ("tileRule", ctypes.c_char_p), ("recipe", ctypes.c_char_p),
                ("quantizeWeightsOnce", ctypes.c_int64), ("programsOnly", ctypes.c_int64),
                ("gemmCluster", ctypes.c_int64)]


def _load():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(library_path("MXMOE_COMPILER_LIB", "libmxmoe_compiler.so"))
        lib.mxmoeCompileOptionsDefault.restype = _Options
        lib.mxmoeCompilerCreate.restype = ctypes.c_void_p
        lib.mxmoeCompilerDestroy.argtypes = [ctypes.c_void_p]
        lib.mxmoeCompile.argtypes = [ctypes.c_void_p, _StringRef, _StringRef,
                                     ctypes.POINTER(_Options),
                                     ctypes.POINTER(ctypes.c_void_p)]
        lib.mxmoeCompile.restype = ctypes.c_int8
        lib.mxmoeCompilerLastError.argtypes = [ctypes.c_void_p]
        lib.mxmoeCompilerLastError.restype = _StringRef
        for name in ("Manifest", "Model", "PolicyReport", "Header", "Warnings"):
            f = getattr(lib, "mxmoeArtifactsGet" + name)
            f.argtypes = [ctypes.c_void_p]
            f.restype = _StringRef
        lib.mxmoeArtifactsGetNumChips.argtypes = [ctypes.c_void_p]
        lib.mxmoeArtifactsGetNumChips.restype = ctypes.c_size_t
        for name in ("Chip", "PTX", "Cubin"):
            f = getattr(lib, "mxmoeArtifactsGet" + name)
            f.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
            f.restype = _StringRef
        lib.mxmoeArtifactsDestroy.argtypes = [ctypes.c_void_p]
        _lib = lib
    return _lib


@dataclass
class CompileOutput:
    manifest: dict
    model: str
    policy_report: str
    header: str
    warnings: str = ""
    ptx: Dict[str, str] = field(default_factory=dict)
    cubin: Dict[str, bytes] = field(default_factory=dict)

    def write(self, out_dir: str) -> None:
        """Writes the layout of `mxmoe-compile -o out_dir`."""
        os.makedirs(out_dir, exist_ok=True)
        # Artifacts of an earlier compile must not survive next to these
        # (a launcher would load another model's kernels).
        for name in ("manifest.json", "model.mlir", "mxmoe_kernels.h", "policy-report.json"):
            if os.path.isfile(os.path.join(out_dir, name)):
                os.remove(os.path.join(out_dir, name))
        for chip in SUPPORTED_CHIPS:
            for name in ("kernels.ptx", "kernels.cubin"):
                path = os.path.join(out_dir, chip, name)
                if os.path.isfile(path):
                    os.remove(path)
        files = {"manifest.json": json.dumps(self.manifest, indent=2) + "\n",
                 "model.mlir": self.model, "mxmoe_kernels.h": self.header,
                 "policy-report.json": self.policy_report}
        for name, text in files.items():
            with open(os.path.join(out_dir, name), "w") as f:
                f.write(text)
        for chip, ptx in self.ptx.items():
            if not ptx:
                continue
            os.makedirs(os.path.join(out_dir, chip), exist_ok=True)
            with open(os.path.join(out_dir, chip, "kernels.ptx"), "w") as f:
                f.write(ptx)
            if self.cubin.get(chip):
                with open(os.path.join(out_dir, chip, "kernels.cubin"), "wb") as f:
                    f.write(self.cubin[chip])


def _csv(v) -> Optional[bytes]:
    if v is None:
        return None
    if isinstance(v, str):
        return v.encode()
    return ",".join(v).encode()


def compile(ir: str, chips: Sequence[str] = ("sm_90a", "sm_100a"),  # noqa: A001
            excludes: Sequence[str] = (), rounding: str = "rceil",
            toolkit: Optional[str] = "/usr/local/cuda", tokens_per_shard: int = 32768,
            gemm_tile_n: int = 0, gemm_stages: int = 0, gemm_ctas: int = 132,
            gemm_sm90_mma: str = "auto", llvm_opt_level: int = 3,
            tile_rule: str = "tokens", recipe: str = "mx32",
            quantize_weights_once: bool = False, programs_only: bool = False,
            gemm_cluster: int = 0, source_name: str = "<python>") -> CompileOutput:
    """Compiles model-level (or MX-level) mxmoe IR text; see the module doc.
    The options are mxmoe-compile's (`--llvm-opt-level` = llvm_opt_level,
    `--tile-rule` = tile_rule, `--programs-only` = programs_only: the
    manifest only, no PTX or cubin, ...)."""
    lib = _load()
    opts = lib.mxmoeCompileOptionsDefault()
    opts.chips = _csv(chips)
    opts.excludes = _csv(excludes) if excludes else None
    opts.rounding = rounding.encode()
    opts.toolkit = toolkit.encode() if toolkit else None
    opts.tokensPerShard = tokens_per_shard
    opts.gemmTileN, opts.gemmStages, opts.gemmCTAs = gemm_tile_n, gemm_stages, gemm_ctas
    opts.gemmSm90Mma = gemm_sm90_mma.encode()
    opts.llvmOptLevel = llvm_opt_level
    opts.tileRule = tile_rule.encode()
    opts.recipe = recipe.encode()
    opts.quantizeWeightsOnce = int(bool(quantize_weights_once))
    opts.programsOnly = int(bool(programs_only))
    opts.gemmCluster = gemm_cluster
    data = ir.encode()
    name = source_name.encode()
    src = _StringRef(ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p), len(data))
    nm = _StringRef(ctypes.cast(ctypes.c_char_p(name), ctypes.c_void_p), len(name))
    comp = lib.mxmoeCompilerCreate()
    art = ctypes.c_void_p()
    try:
        if not lib.mxmoeCompile(comp, src, nm, ctypes.byref(opts), ctypes.byref(art)):
            raise CompileError(lib.mxmoeCompilerLastError(comp).bytes().decode())
        out = CompileOutput(
            manifest=json.loads(lib.mxmoeArtifactsGetManifest(art).bytes().decode()),
            model=lib.mxmoeArtifactsGetModel(art).bytes().decode(),
            policy_report=lib.mxmoeArtifactsGetPolicyReport(art).bytes().decode(),
            header=lib.mxmoeArtifactsGetHeader(art).bytes().decode(),
            warnings=lib.mxmoeArtifactsGetWarnings(art).bytes().decode())
        for i in range(lib.mxmoeArtifactsGetNumChips(art)):
            chip = lib.mxmoeArtifactsGetChip(art, i).bytes().decode()
            out.ptx[chip] = lib.mxmoeArtifactsGetPTX(art, i).bytes().decode()
            out.cubin[chip] = lib.mxmoeArtifactsGetCubin(art, i).bytes()
        for line in out.warnings.splitlines():
            if ": warning: " in line:
                warnings.warn(line, CompileWarning, stacklevel=2)
        if toolkit and not programs_only:
            # Like mxmoe-compile's note: a toolkit without a usable ptxas
            # gives PTX only (the manifest's "cubin" says why).
            for chip, cubin in out.cubin.items():
                note = next((k["cubin"] for k in out.manifest["kernels"]
                             if k["chip"] == chip), "")
                if not cubin and out.ptx.get(chip) and not note.endswith(".cubin"):
                    warnings.warn(f"{chip}: PTX only, cubin {note}", CompileWarning,
                                  stacklevel=2)
        return out
    finally:
        if art:
            lib.mxmoeArtifactsDestroy(art)
        lib.mxmoeCompilerDestroy(comp)
