#!/usr/bin/env python3
"""Checks the SASS of the tcgen05 (sm_100a, sm_103a) grouped-GEMM kernels
(device).

No Blackwell GPU is reachable, so the kernels are proven by their machine
code: cuobjdump (on the device machine) disassembles <dir>/<chip>/
kernels.cubin of every tcgen05 chip in the manifest and, for every
grouped-GEMM kernel (fp8 and fp4 operands alike), this script checks the
instructions the lowering intends, per k-tile loop body:
  4 UTCQMMA   (tcgen05.mma ... block_scale: one per 32-wide MX block)
  >= 2 UTCCP  (tcgen05.cp of the stage's SFA and SFB atoms; 3 at N = 256)
  2 UTMALDG   (TMA loads of the A and B tiles)
  2 UBLKCP    (bulk copies of the scale atoms; 3 at N = 256 ... per stage)
  >= 1 LDTM   (tcgen05.ld in the epilogue), UTCBAR (tcgen05.commit)
and no local-memory spill instructions (STL/LDL). Prints a table and
`N passed, N failed` last.

Usage: check_sass_sm100.py DIR [DIR ...]
"""
import json
import os
import re
import subprocess
import sys
from collections import Counter

OPS = ["UTCQMMA", "UTCCP", "UTMALDG", "UBLKCP", "LDTM", "UTCBAR", "STL", "LDL"]


def main():
    passed = failed = 0
    print(f"{'chip':8s}{'kernel':48s} " + " ".join(f"{o:>7s}" for o in OPS) + "  result")
    for root in sys.argv[1:]:
        manifest = json.load(open(os.path.join(root, "manifest.json")))
        kernels = [k for k in manifest["kernels"]
                   if k["chip"] in ("sm_100a", "sm_103a")
                   and k.get("op") == "mxmoe.grouped_matmul"]
        for k in kernels:
            cubin = os.path.join(root, k["chip"], "kernels.cubin")
            sass = subprocess.run(["cuobjdump", "-sass", "-fun", k["name"], cubin],
                                  capture_output=True, text=True).stdout
            c = Counter(m.group(1) for m in re.finditer(r"\b(" + "|".join(OPS) + r")\b", sass))
            wide = any(p.get("box", [0, 0])[1] > 128 for p in k["params"]
                       if p["kind"] == "tensor_map")
            ok = (c["UTCQMMA"] == 4 and c["UTCCP"] >= (3 if wide else 2) and
                  c["UTMALDG"] >= 2 and c["UBLKCP"] >= 2 and c["LDTM"] >= 1 and
                  c["UTCBAR"] >= 2 and c["STL"] == 0 and c["LDL"] == 0)
            passed += ok
            failed += not ok
            print(f"{k['chip']:8s}{k['name'][:48]:48s} " +
                  " ".join(f"{c[o]:7d}" for o in OPS) + ("  PASS" if ok else "  FAIL"))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
