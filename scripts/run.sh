#!/usr/bin/env bash
# The main job: set up, build, then process the bundled default input, the
# Llama 4 Scout MoE layer in examples/llama4_scout_moe.mlir (or the files
# given as arguments): parse, verify and print it with mxmoe-opt.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MXMOE_BUILD_DIR:-$root/build}"

"$root/scripts/build.sh" >&2

inputs=("$@")
if [ "${#inputs[@]}" -eq 0 ]; then
  inputs=("$root/examples/llama4_scout_moe.mlir")
fi
for f in "${inputs[@]}"; do
  "$build/bin/mxmoe-opt" --verify-each "$f"
  echo "// mxmoe-opt: parsed and verified $f" >&2
done
