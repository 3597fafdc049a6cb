"""Prints each launch program of a manifest on one line (for FileCheck):
function, kernel sequence, returns (source, shape, dtype) and, for programs
without steps, the intermediate buffers' byte counts."""
import json
import sys

for p in json.load(open(sys.argv[1]))["programs"]:
    steps = ", ".join(s["kernel"] for s in p["steps"])
    rets = ", ".join(f"{'arg' if 'arg' in r else 'buffer'} {r.get('arg', r.get('buffer'))} "
                     f"{r['shape']} {r['dtype']}" for r in p["returns"])
    line = f"{p['function']} steps=[{steps}] returns=[{rets}]"
    if not p["steps"]:
        line += f" buffers={[b['bytes'] for b in p['buffers']]}"
    print(line)
