#!/usr/bin/env bash
# Builds everything with AddressSanitizer + UndefinedBehaviorSanitizer into
# build-asan/ (or $MXMOE_ASAN_BUILD_DIR) and runs the lit suite and the unit
# tests under it; any UB report aborts the test that hit it.
#
# libMLIR/libLLVM are not instrumented while LLVM's header-only allocators
# in our code are: ASan's manual poisoning (allow_user_poisoning) and
# container-overflow checks then report memory that uninstrumented MLIR code
# legitimately uses, so both are off. Every other ASan check stays on.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MXMOE_ASAN_BUILD_DIR:-$root/build-asan}"

MXMOE_BUILD_DIR="$build" MXMOE_CMAKE_ARGS="-DMXMOE_ENABLE_SANITIZERS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo" \
  "$root/scripts/build.sh" || { echo "sanitized: 0 passed, 1 failed, 0 skipped"; exit 1; }

export ASAN_OPTIONS="detect_container_overflow=0:allow_user_poisoning=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
"$build/test/unittests/MXMoEUnitTests" --gtest_brief=1
unit_rc=$?
/usr/lib/llvm-22/bin/lit -sv "$build/test"
lit_rc=$?
[ "$unit_rc" -eq 0 ] && [ "$lit_rc" -eq 0 ]
