"""Writes a copy of a compile output's manifest.json with one defect, for
bad-manifest.mlir: mutate_manifest.py SRC_DIR DST_DIR DEFECT."""
import json
import shutil
import sys

src, dst, defect = sys.argv[1:4]
shutil.rmtree(dst, ignore_errors=True)
shutil.copytree(src, dst)
with open(f"{dst}/manifest.json") as f:
    m = json.load(f)
prog = next(p for p in m["programs"] if p["function"] == "experts.w13.forward")
quant, gemm = prog["steps"][0], prog["steps"][2]
kernels = {k["name"]: k for k in m["kernels"] if k["chip"] == "sm_90a"}

if defect == "missing-binding":
    gemm["bindings"].pop()
elif defect == "pointer-for-scalar":
    quant["bindings"][5] = {"arg": 0}
elif defect == "scalar-for-pointer":
    quant["bindings"][0] = {"value": 0}
elif defect == "map-too-big":
    gemm["bindings"][2]["tensor_map"]["dims"][1] += 1
elif defect == "map-stride":
    gemm["bindings"][0]["tensor_map"]["row_stride_bytes"] = 128
elif defect == "zero-grid":
    quant["grid"] = [0, 1, 1]
elif defect == "i32-scalar":
    kernels[quant["kernel"]]["params"][5]["type"] = "i32"
elif defect == "pointer-after-scalar":
    params = kernels[quant["kernel"]]["params"]
    params[4], params[5] = params[5], params[4]
    quant["bindings"][4], quant["bindings"][5] = (quant["bindings"][5],
                                                  quant["bindings"][4])
elif defect == "unknown-kind":
    kernels[quant["kernel"]]["params"][0]["kind"] = "texture"
elif defect == "arg-out-of-range":
    quant["bindings"][0] = {"arg": 7}
else:
    sys.exit(f"unknown defect {defect}")
with open(f"{dst}/manifest.json", "w") as f:
    json.dump(m, f)
