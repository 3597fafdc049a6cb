#!/usr/bin/env bash
# The main job: set up, build, then compile the bundled default input, the
# Llama 4 Scout MoE layer in examples/llama4_scout_moe.mlir (or the
# arguments, passed to mxmoe-compile as they are), into kernels for sm_90a
# and sm_100a: mxmoe-out/ (or $MXMOE_OUT) receives <chip>/kernels.ptx,
# <chip>/kernels.cubin (when the CUDA toolkit's ptxas is present),
# manifest.json, mxmoe_kernels.h, policy-report.json and model.mlir.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MXMOE_BUILD_DIR:-$root/build}"
out="${MXMOE_OUT:-$root/mxmoe-out}"

"$root/scripts/build.sh" >&2

if [ "$#" -eq 0 ]; then
  "$build/bin/mxmoe-opt" --verify-each "$root/examples/llama4_scout_moe.mlir" > /dev/null
  echo "// mxmoe-opt: parsed and verified examples/llama4_scout_moe.mlir" >&2
  set -- "$root/examples/llama4_scout_moe.mlir"
fi
# A user's own -o (or -o=DIR) wins over $MXMOE_OUT / mxmoe-out.
prev=""
for a in "$@"; do
  case "$a" in
    -o=*|--o=*) out="${a#*=}" ;;
    *) if [ "$prev" = "-o" ] || [ "$prev" = "--o" ]; then out="$a"; fi ;;
  esac
  prev="$a"
done
"$build/bin/mxmoe-compile" "$@" -o "$out"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
m = json.load(open(f"{out}/manifest.json"))
r = json.load(open(f"{out}/policy-report.json"))
print("precision policy:")
for d in r["decisions"]:
    print(f"  {d['fqn']:40} {d['precision']:6} ({d['rule']}: {d['reason']})")
print("kernels:")
for chip in m["chips"]:
    ks = [k for k in m["kernels"] if k["chip"] == chip]
    cubin = ks[0]["cubin"] if ks else "-"
    print(f"  {chip}: {len(ks)} kernels, PTX {chip}/kernels.ptx, cubin: {cubin}")
for k in m["kernels"]:
    if k["chip"] == m["chips"][0]:
        # Kernels with run-time sizes take their grid from each program step.
        grid = k["grid"][0] if isinstance(k["grid"], list) else "per step"
        print(f"    {k['name']:58} {k.get('pass', ''):12} grid {grid:>8} x {k['block'][0]}"
              f"  ({len(k.get('uses', []))} ops)")
unc = sorted({u["fqn"] for u in m.get("uncompiled", [])})
if unc:
    print(f"not compiled to kernels (inside tiled-MLP shard loops): {', '.join(unc)}")
print(f"manifest: {out}/manifest.json")
PY
