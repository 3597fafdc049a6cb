"""Prints the PTX text of the gpu.binary objects in an MLIR file (the
`assembly = "..."` of each #gpu.object, MLIR's string escapes \\XX and \\\\
decoded): what mxmoe-compile writes to <chip>/kernels.ptx, for the
equivalence test of mxmoe-opt --mxmoe-default-pipeline."""
import re
import sys

text = open(sys.argv[1]).read()
for m in re.finditer(r'assembly = "((?:[^"\\]|\\.)*)"', text):
    sys.stdout.write(re.sub(r"\\([0-9A-Fa-f]{2}|\\)",
                            lambda e: "\\" if e.group(1) == "\\" else chr(int(e.group(1), 16)),
                            m.group(1)))
