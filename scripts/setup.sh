#!/usr/bin/env bash
# Installs the build and test dependencies of mxmoe on Debian 12 when they are
# missing: LLVM/MLIR 22.1 (Debian packages), clang/lld 22, CMake, Ninja,
# GCC (the second supported host compiler), clang-format 22 (the format check),
# GoogleTest, nlohmann-json (header-only: the runtime reads manifest.json),
# numpy for the Python reference (and its lit tests), python3-venv (the
# `pip install .` test: a fresh virtual environment, no package index),
# clang's sanitizer runtimes for -DMXMOE_ENABLE_SANITIZERS=ON. Needs root (or sudo) only when
# something is missing. The CUDA toolkit (ptxas) is optional: when
# /usr/local/cuda/bin/ptxas exists the PTX tests also assemble for sm_90a and
# sm_100a.
set -euo pipefail

packages=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 lld-22 clang-format-22
  libclang-rt-22-dev g++ cmake ninja-build libgtest-dev nlohmann-json3-dev python3
  python3-numpy python3-venv git
)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup: all dependencies present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
