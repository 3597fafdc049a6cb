#!/usr/bin/env python3
"""Writes the seed corpus of mxmoe-fuzz-pipeline.

usage: make_seed_corpus.py SOURCE_ROOT OUT_DIR

Every test/**/*.mlir is split on `// -----` (lit's --split-input-file
marker), examples/*.mlir are taken whole; full-line `//` comments (RUN,
CHECK, expected-error lines) and blank lines are dropped, and each distinct
non-empty piece becomes OUT_DIR/<sha1 of its text>. Prints the number of
seeds and the size of the largest one (for libFuzzer's -max_len).
"""
import glob
import hashlib
import os
import re
import sys


def pieces(path, split):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    parts = re.split(r"^// -----\s*$", text, flags=re.M) if split else [text]
    for part in parts:
        lines = [l for l in part.splitlines()
                 if l.strip() and not l.lstrip().startswith("//")]
        if lines:
            yield "\n".join(lines) + "\n"


def main():
    root, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    files = [(p, True) for p in sorted(glob.glob(
        os.path.join(root, "test", "**", "*.mlir"), recursive=True))]
    files += [(p, False) for p in sorted(glob.glob(
        os.path.join(root, "examples", "*.mlir")))]
    seeds = {}
    for path, split in files:
        for piece in pieces(path, split):
            data = piece.encode("utf-8")
            seeds[hashlib.sha1(data).hexdigest()] = data
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    largest = max((len(d) for d in seeds.values()), default=0)
    print(f"seeds: {len(seeds)} (from {len(files)} files), largest {largest} bytes")


if __name__ == "__main__":
    main()
