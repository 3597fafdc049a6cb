#!/usr/bin/env python3
"""Reads gpu-module-to-binary (format=isa) output on stdin, writes the PTX."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from mxmoe.ptx import decode_mlir_string  # noqa: E402

m = re.search(r'assembly = "(.*?)"(?:,|>)', sys.stdin.read(), re.S)
if not m:
    sys.exit("no PTX assembly found")
sys.stdout.write(decode_mlir_string(m.group(1)))
