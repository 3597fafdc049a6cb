#!/usr/bin/env bash
# Installs missing dependencies, configures (CMake + Ninja, clang-22, lld,
# shared libMLIR/libLLVM) and builds everything into build/ (or $MXMOE_BUILD_DIR).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MXMOE_BUILD_DIR:-$root/build}"

"$root/scripts/setup.sh"

if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    ${MXMOE_CMAKE_ARGS:-}
elif [ -n "${MXMOE_CMAKE_ARGS:-}" ]; then
  cmake -B "$build" ${MXMOE_CMAKE_ARGS} >/dev/null
fi
cmake --build "$build"
