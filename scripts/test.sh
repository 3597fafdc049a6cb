#!/usr/bin/env bash
# Sets up, builds and runs every test: the lit suite (FileCheck tests of the
# dialect, passes and lowerings) and the gtest unit tests through ctest.
# Ends with one line "tests: N passed, N failed, N skipped" ("$MXMOE_TEST_LABEL:
# ..." when that is set; scripts/test-sanitized.sh uses "sanitized").
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MXMOE_BUILD_DIR:-$root/build}"
label="${MXMOE_TEST_LABEL:-tests}"

"$root/scripts/build.sh" || { echo "$label: 0 passed, 1 failed, 0 skipped"; exit 1; }

ctest_log="$(mktemp)"
(cd "$build" && ctest --output-on-failure -E '^lit-suite$') 2>&1 | tee "$ctest_log"
ctest_rc=${PIPESTATUS[0]}

lit="/usr/lib/llvm-22/bin/lit"
lit_log="$(mktemp)"
"$lit" -v "$build/test" 2>&1 | tee "$lit_log"
lit_rc=${PIPESTATUS[0]}

count() { # count LABEL FILE -> number after "  LABEL:" in lit's summary
  # (lit pads the labels to one width when there are several: "Passed     :")
  grep -E "^\s+$1\s*: " "$2" | head -n1 | sed -E 's/.*: *([0-9]+).*/\1/'
}
lit_pass=$(( $(count Passed "$lit_log" || true) + 0 ))
lit_xfail=$(( $(count "Expectedly Failed" "$lit_log" || true) + 0 ))
lit_fail=$(( $(count Failed "$lit_log" || true) + $(count "Unexpectedly Passed" "$lit_log" || true) + 0 ))
lit_skip=$(( $(count Unsupported "$lit_log" || true) + 0 ))
ct_total=$(sed -nE 's/.*tests passed, ([0-9]+) tests failed out of ([0-9]+).*/\2/p' "$ctest_log")
ct_fail=$(sed -nE 's/.*tests passed, ([0-9]+) tests failed out of ([0-9]+).*/\1/p' "$ctest_log")
ct_total=${ct_total:-0}; ct_fail=${ct_fail:-0}
ct_pass=$(( ct_total - ct_fail ))

passed=$(( lit_pass + lit_xfail + ct_pass ))
failed=$(( lit_fail + ct_fail ))
if [ "$lit_rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
if [ "$ctest_rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "lit: $lit_pass passed, $lit_fail failed, $lit_skip unsupported; unit tests (ctest): $ct_pass passed, $ct_fail failed"
echo "$label: $passed passed, $failed failed, $lit_skip skipped"
[ "$failed" -eq 0 ]
