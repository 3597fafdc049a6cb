#!/usr/bin/env bash
# ctest python-install: `pip install` of the source tree (pyproject.toml, the
# in-tree standard-library build backend) into a fresh virtual environment
# of Debian's python3 (--system-site-packages: numpy), no package index;
# then, from outside the repository, the installed package compiles a
# grouped GEMM through its own copy of the compiler library, binds it in
# the kernel cache and loads its program with its own runtime library.
# Usage: run.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src="$1"; build="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
MXMOE_BUILD_DIR="$build" "$work/venv/bin/pip" install --no-index -q "$src"
cd "$work"
env -u MXMOE_COMPILER_LIB -u MXMOE_RUNTIME_LIB -u PYTHONPATH MXMOE_CACHE_DIR="$work/cache" \
  "$work/venv/bin/python" - "$work" <<'PY'
import os, sys
import mxmoe
from mxmoe import kernel_cache, runtime

work = sys.argv[1]
site = os.path.dirname(os.path.dirname(mxmoe.__file__))
assert site.startswith(work), f"mxmoe imported from {mxmoe.__file__}, not the venv"
for var, lib in (("MXMOE_COMPILER_LIB", "libmxmoe_compiler.so"),
                 ("MXMOE_RUNTIME_LIB", "libmxmoe_runtime.so")):
    path = runtime.library_path(var, lib)
    assert path == os.path.join(site, "mxmoe", "_lib", lib), path
out = mxmoe.compile(kernel_cache.grouped_mm_ir(512, 256, 384, 4), chips=["sm_90a"],
                    toolkit=None, recipe="mx128")
assert any(k["name"].endswith("grouped_matmul_2") for k in out.manifest["kernels"])
cache = kernel_cache.KernelCache()
d = cache.grouped_mm(m=700, k=256, n=384, experts=4, chip="sm_90a",
                     options={"recipe": "mx128", "toolkit": None})
assert d.startswith(os.path.join(work, "cache")), d
p = runtime.Program(d, "gmm.forward", "sm_90a")
print(f"python-install: mxmoe from {site}; compiled {len(out.manifest['kernels'])} kernels; "
      f"cache {cache.stats}; gmm.forward: {p.num_status_words} status words")
PY
