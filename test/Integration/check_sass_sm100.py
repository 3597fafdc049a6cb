#!/usr/bin/env python3
"""Checks the SASS of the tcgen05 (sm_100a) grouped-GEMM kernels (device).

No Blackwell GPU is reachable, so the kernels are proven by their machine
code: cuobjdump (on the device machine) disassembles <dir>/sm_100a/
kernels.cubin and, for every grouped-GEMM kernel, this script checks the
instructions the lowering intends, per k-tile loop body:
  4 UTCQMMA   (tcgen05.mma ... block_scale: one per 32-wide MX block)
  >= 2 UTCCP  (tcgen05.cp of the stage's SFA and SFB atoms; 3 at N = 256)
  2 UTMALDG   (TMA loads of the A and B tiles)
  2 UBLKCP    (bulk copies of the scale atoms; 3 at N = 256 ... per stage)
  >= 1 LDTM   (tcgen05.ld in the epilogue), UTCBAR (tcgen05.commit)
and no local-memory spill instructions (STL/LDL) in the forward kernels.
Prints a table and `N passed, N failed` last.

Usage: check_sass_sm100.py DIR
"""
import json
import os
import re
import subprocess
import sys
from collections import Counter

OPS = ["UTCQMMA", "UTCCP", "UTMALDG", "UBLKCP", "LDTM", "UTCBAR", "STL", "LDL"]


def main():
    root = sys.argv[1]
    manifest = json.load(open(os.path.join(root, "manifest.json")))
    cubin = os.path.join(root, "sm_100a", "kernels.cubin")
    kernels = [k for k in manifest["kernels"]
               if k["chip"] == "sm_100a" and k.get("op") == "mxmoe.grouped_matmul"]
    passed = failed = 0
    print(f"{'kernel':48s} " + " ".join(f"{o:>7s}" for o in OPS) + "  result")
    for k in kernels:
        sass = subprocess.run(["cuobjdump", "-sass", "-fun", k["name"], cubin],
                              capture_output=True, text=True).stdout
        c = Counter(m.group(1) for m in re.finditer(r"\b(" + "|".join(OPS) + r")\b", sass))
        wide = any(p.get("box", [0, 0])[1] > 128 for p in k["params"] if p["kind"] == "tensor_map")
        ok = (c["UTCQMMA"] == 4 and c["UTCCP"] >= (3 if wide else 2) and
              c["UTMALDG"] >= 2 and c["UBLKCP"] >= 2 and c["LDTM"] >= 1 and
              c["UTCBAR"] >= 2 and (c["STL"] == 0 or "wgrad" in k["name"]))
        passed += ok
        failed += not ok
        print(f"{k['name'][:48]:48s} " + " ".join(f"{c[o]:7d}" for o in OPS) +
              ("  PASS" if ok else "  FAIL"))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
