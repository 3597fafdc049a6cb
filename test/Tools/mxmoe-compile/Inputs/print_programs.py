"""Prints each launch program of a manifest on one line (for FileCheck):
function, kernel sequence, returns (source, shape, dtype) and, for programs
without steps, the intermediate buffers' byte counts ("zero" after a
zero-filled one)."""
import json
import sys

for p in json.load(open(sys.argv[1]))["programs"]:
    steps = ", ".join(s["kernel"] for s in p["steps"])
    rets = ", ".join(f"{'arg' if 'arg' in r else 'buffer'} {r.get('arg', r.get('buffer'))} "
                     f"{r['shape']} {r['dtype']}" for r in p["returns"])
    line = f"{p['function']} steps=[{steps}] returns=[{rets}]"
    if not p["steps"]:
        sizes = [f"{b['bytes']}{' zero' if b.get('zero') else ''}" for b in p["buffers"]]
        line += f" buffers=[{', '.join(sizes)}]"
    print(line)
