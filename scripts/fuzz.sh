#!/usr/bin/env bash
# Fuzzes the default pipeline for SECONDS (default 60):
#   scripts/fuzz.sh [SECONDS] [extra libFuzzer flags...]
#
# Builds tools/mxmoe-fuzz-pipeline (libFuzzer + ASan + UBSan, everything of
# ours instrumented) into build-fuzz/ (or $MXMOE_FUZZ_BUILD_DIR), makes the
# seed corpus (test/**/*.mlir split on `// -----`, examples/*.mlir) in
# <build>/fuzz/seeds, and runs libFuzzer with its working corpus in
# <build>/fuzz/corpus (kept between runs) and crash/leak/timeout files in
# <build>/fuzz/artifacts. libFuzzer runs in fork mode (-fork=N, default 1
# job: this is a shared 2-core machine; MXMOE_FUZZ_JOBS=N for more), which
# keeps fuzzing after a crash, leak, timeout or out-of-memory and saves
# each as a crash-/leak-/timeout-/oom- file. Prints the executions and the
# new crash files and exits non-zero when there are any (slow-unit- files,
# inputs over 10 s, are listed but are not failures). NICE sets the
# niceness (default 15).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MXMOE_FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${1:-60}"
shift || true
nice="nice -n ${NICE:-15}"
jobs="${MXMOE_FUZZ_JOBS:-1}"

"$root/scripts/setup.sh" >/dev/null
if [ ! -f "$build/build.ninja" ]; then
  $nice cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DMXMOE_BUILD_FUZZERS=ON >/dev/null || exit 1
fi
$nice cmake --build "$build" --target mxmoe-fuzz-pipeline -- -j "${MXMOE_BUILD_JOBS:-1}" || exit 1

work="$build/fuzz"
rm -rf "$work/seeds"
mkdir -p "$work/seeds" "$work/corpus" "$work/artifacts"
seedinfo=$(python3 "$root/tools/mxmoe-fuzz-pipeline/make_seed_corpus.py" "$root" "$work/seeds") || exit 1
echo "fuzz: $seedinfo"
largest=$(echo "$seedinfo" | sed -nE 's/.*largest ([0-9]+) bytes.*/\1/p')
# -max_len: room for the largest seed (the bundled examples) plus growth.
max_len=$(( largest + largest / 4 ))

log="$work/fuzz-$(date +%Y%m%d-%H%M%S).log"
before=$(ls "$work/artifacts" | sort)
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_container_overflow=0:allow_user_poisoning=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
$nice "$build/bin/mxmoe-fuzz-pipeline" "$work/corpus" "$work/seeds" \
  -dict="$root/tools/mxmoe-fuzz-pipeline/mxmoe.dict" \
  -max_len="$max_len" -max_total_time="$seconds" -timeout=60 \
  -rss_limit_mb=4096 -print_final_stats=1 \
  -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
  -artifact_prefix="$work/artifacts/" "$@" >"$log" 2>&1 &
fuzzer=$!
trap 'kill $fuzzer 2>/dev/null' INT TERM
# Progress: libFuzzer's fork-mode status line, once a minute.
while kill -0 $fuzzer 2>/dev/null; do
  sleep 60
  grep -E '^#[0-9]+: cov:' "$log" | tail -n1
done
wait $fuzzer
rc=$?

# Total executions: the last fork-mode status line (or the in-process
# final stats when -fork=0 is passed).
execs=$(sed -nE 's/^#([0-9]+): cov:.*/\1/p' "$log" | tail -n1)
[ -n "$execs" ] || execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log" | tail -n1)
echo "fuzz: ${execs:-?} executions in ${seconds} s (log $log); corpus $(ls "$work/corpus" | wc -l) inputs"
# New artifact files (by name: a rediscovered slow unit only gets a new
# mtime) and libFuzzer's own oom/timeout/crash counts (a crash found again
# rewrites an existing file).
new=$(comm -13 <(echo "$before") <(ls "$work/artifacts" | sort))
slow=$(echo "$new" | grep '^slow-unit-' || true)
crashes=$(echo "$new" | grep -E '^(crash|leak|timeout|oom)-' || true)
counts=$(sed -nE 's|^#[0-9]+: cov:.* oom/timeout/crash: ([0-9]+/[0-9]+/[0-9]+).*|\1|p' "$log" | tail -n1)
echo "fuzz: oom/timeout/crash: ${counts:-0/0/0}"
[ -n "$slow" ] && echo "fuzz: new slow inputs (not failures):" && echo "$slow" | sed "s|^|  $work/artifacts/|"
if [ -n "$crashes" ] || [ "$rc" -ne 0 ] || [ "${counts:-0/0/0}" != "0/0/0" ] \
   || grep -qE '^==[0-9]+== ?ERROR|runtime error:|does not verify' "$log"; then
  echo "fuzz: FAILED (libFuzzer exit $rc); new crash files:"
  echo "$crashes" | sed "s|^|  $work/artifacts/|"
  echo "fuzz: reproduce with $build/bin/mxmoe-fuzz-pipeline FILE"
  exit 1
fi
echo "fuzz: no crashes, leaks, timeouts or sanitizer reports"
