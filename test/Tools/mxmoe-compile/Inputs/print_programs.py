"""Prints each launch program of a manifest on one line (for FileCheck):
function, kernel sequence (a loop step as `loop xCOUNT[kernels]`, a row
view binding as `@offset+iteration` after its kernel), returns (source,
shape, dtype) and, for programs without steps, the intermediate buffers'
byte counts ("zero" after a zero-filled one)."""
import json
import sys



def show(steps):
    out = []
    for s in steps:
        if "loop" in s:
            out.append(f"loop x{s['loop']['count']}[{show(s['loop']['steps'])}]")
            continue
        views = "".join(f"@{b.get('offset_bytes', 0)}+{b['iteration_bytes']}"
                        for b in s["bindings"] if "iteration_bytes" in b)
        out.append(s["kernel"] + views)
    return ", ".join(out)


for p in json.load(open(sys.argv[1]))["programs"]:
    steps = show(p["steps"])
    rets = ", ".join(f"{'arg' if 'arg' in r else 'buffer'} {r.get('arg', r.get('buffer'))} "
                     f"{r['shape']} {r['dtype']}" for r in p["returns"])
    line = f"{p['function']} steps=[{steps}] returns=[{rets}]"
    if not p["steps"]:
        sizes = [f"{b['bytes']}{' zero' if b.get('zero') else ''}" for b in p["buffers"]]
        line += f" buffers=[{', '.join(sizes)}]"
    print(line)
