#!/usr/bin/env bash
# Installs missing dependencies, configures (CMake + Ninja, shared
# libMLIR/libLLVM) and builds everything into build/ (or $MXMOE_BUILD_DIR).
# Host compiler: clang-22 with lld (default), or Debian's GCC (g++ 12) with
# MXMOE_COMPILER=gcc; both are supported and tested (.ci/run builds both and
# checks that they generate byte-identical output).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MXMOE_BUILD_DIR:-$root/build}"

"$root/scripts/setup.sh"

case "${MXMOE_COMPILER:-clang}" in
  clang) compiler=(-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
                   -DLLVM_USE_LINKER=lld) ;;
  gcc) compiler=(-DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++) ;;
  *) echo "build.sh: MXMOE_COMPILER must be clang or gcc, not '$MXMOE_COMPILER'" >&2
     exit 2 ;;
esac

if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    "${compiler[@]}" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    ${MXMOE_CMAKE_ARGS:-}
elif [ -n "${MXMOE_CMAKE_ARGS:-}" ]; then
  cmake -B "$build" ${MXMOE_CMAKE_ARGS} >/dev/null
fi
cmake --build "$build"
