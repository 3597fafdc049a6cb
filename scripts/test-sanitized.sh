#!/usr/bin/env bash
# Builds everything with AddressSanitizer + UndefinedBehaviorSanitizer into
# build-asan/ (or $MXMOE_ASAN_BUILD_DIR) and runs the lit suite and the unit
# tests under it (scripts/test.sh); any UB report aborts the test that hit
# it. The build also has the libFuzzer target (-DMXMOE_BUILD_FUZZERS=ON), so
# lit's test/Fuzz/seed-corpus-replay.mlir runs the pipeline fuzzer once over
# its seed corpus (every lit test and example). Ends with one line
# "sanitized: N passed, N failed, N skipped".
#
# libMLIR/libLLVM are not instrumented while LLVM's header-only allocators
# in our code are: ASan's manual poisoning (allow_user_poisoning) and
# container-overflow checks then report memory that uninstrumented MLIR code
# legitimately uses, so both are off. Every other ASan check stays on,
# LeakSanitizer included.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

export ASAN_OPTIONS="detect_container_overflow=0:allow_user_poisoning=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
MXMOE_BUILD_DIR="${MXMOE_ASAN_BUILD_DIR:-$root/build-asan}" \
MXMOE_CMAKE_ARGS="-DMXMOE_ENABLE_SANITIZERS=ON -DMXMOE_BUILD_FUZZERS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo" \
MXMOE_TEST_LABEL=sanitized \
  exec "$root/scripts/test.sh"
