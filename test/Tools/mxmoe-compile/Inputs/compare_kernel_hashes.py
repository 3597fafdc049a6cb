"""programs-only.mlir: kernel hashes of a full compile, a programs-only
compile of the same IR and one at another token count; and whether the
forward program's values differ between the token counts."""
import json
import sys

full, prog, other = (json.load(open(d + "/manifest.json")) for d in sys.argv[1:4])


def hashes(m):
    return {(k["chip"], k["name"]): k["kernel_hash"] for k in m["kernels"]}


def values(m):
    p = next(p for p in m["programs"] if p["function"] == "experts.forward")
    return [b.get("value") for s in p["steps"] for b in s["bindings"]]


print(f"{len(hashes(full))} kernels; full == programs-only: {hashes(full) == hashes(prog)}; "
      f"512 tokens == 700 tokens: {hashes(prog) == hashes(other)}; "
      f"values differ: {values(prog) != values(other)}")
