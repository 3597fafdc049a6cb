# -*- Python -*-
# lit configuration of the mxmoe test suite (MLIR conventions).
import os
import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "MXMOE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mxmoe_obj_root, "test")
# Integration/ holds device scripts (run on the GPU machine, not by lit);
# cmake-consumer/ is another project's suite, run by ctest against the
# installed package.
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py", "unittests", "Inputs", "Integration",
                   "cmake-consumer"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%mxmoe_src_root", config.mxmoe_src_root))
config.substitutions.append(("%mxmoe_obj_root", config.mxmoe_obj_root))
config.substitutions.append(("%python", "/usr/bin/python3"))
# CPU execution of lowered host IR (mlir-runner and its runtime libraries
# from the llvm-22 packages).
config.substitutions.append(("%mlir_runner", os.path.join(config.llvm_tools_dir, "mlir-runner")))
_libdir = os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")
config.substitutions.append(("%runner_libs", ",".join(
    os.path.join(_libdir, l) for l in ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# Tools: the project's binaries first, then FileCheck/not/split-file from LLVM.
tool_dirs = [config.mxmoe_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["mxmoe-opt", "mxmoe-compile"], tool_dirs)
# `fuzzer`: built with -DMXMOE_BUILD_FUZZERS=ON (test/Fuzz replays the seed
# corpus through mxmoe-fuzz-pipeline).
if getattr(config, "mxmoe_fuzzers", 0):
    config.available_features.add("fuzzer")
    llvm_config.add_tool_substitutions(["mxmoe-fuzz-pipeline"], tool_dirs)
# `sanitized`: built with ASan + UBSan; shared libraries then need the
# sanitizer runtime, which a plain python3 loading them with ctypes lacks.
if getattr(config, "mxmoe_sanitized", 0):
    config.available_features.add("sanitized")
llvm_config.with_environment("PATH", config.mxmoe_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# `ptxas`: the CUDA toolkit's assembler is available (PTX checks for sm_90a
# and sm_100a). `cuda-device`: a GPU is visible (integration tests).
cuda_root = os.environ.get("CUDA_ROOT") or os.environ.get("CUDA_HOME") or "/usr/local/cuda"
ptxas = shutil.which("ptxas") or (
    os.path.join(cuda_root, "bin", "ptxas")
    if os.path.exists(os.path.join(cuda_root, "bin", "ptxas")) else None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
if os.path.exists("/dev/nvidia0") or os.environ.get("MXMOE_CUDA_DEVICE"):
    config.available_features.add("cuda-device")
