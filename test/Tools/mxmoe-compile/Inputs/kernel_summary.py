"""Prints one line per kernel of a manifest: chip, name, and how many of
the ops it serves ("uses") belong to each layer (fqn layers.<i>.*), then
the number of kernels per chip."""
import collections
import json
import sys

with open(sys.argv[1]) as f:
    kernels = json.load(f)["kernels"]
per_chip = collections.Counter()
for k in kernels:
    per_chip[k["chip"]] += 1
    layers = collections.Counter(int(u["fqn"].split(".")[1]) for u in k["uses"])
    counts = " ".join(f"{i}:{layers[i]}" for i in sorted(layers))
    print(f"{k['chip']} {k['name']}: uses per layer {counts}")
print("kernels per chip: " + ", ".join(f"{c} {n}" for c, n in per_chip.items()))
