#!/usr/bin/env bash
# Device checks of the MX128 recipe (issue 20), one call on the GPU machine.
# Build machine first:
#   python3 test/Integration/gen_mx_kernels.py          # -> .device/mx
#   python3 bench/mx_quantize_bench.py gen              # -> .device/bench
#   build/bin/mxmoe-compile test/Integration/moe_train.mlir --chip sm_90a -o .device/train
#   build/bin/mxmoe-compile test/Integration/moe_train.mlir --chip sm_90a --recipe mx128 -o .device/train128
# then run this with .device and build/lib/libmxmoe_runtime.so carried:
#   test/Integration/mx128_device_checks.sh [kernels|bench|all]
# Writes its logs (and the training plot) to $OUT (default .).
set -uo pipefail
out="${OUT:-.}"
export MXMOE_RUNTIME_LIB="${MXMOE_RUNTIME_LIB:-$PWD/build/lib/libmxmoe_runtime.so}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
part="${1:-all}"   # kernels | bench | all
if [ "$part" != bench ]; then
python3 test/Integration/mx_kernels_gpu.py .device/mx > "$out/mx_kernels_gpu.txt" 2>&1
tail -n 1 "$out/mx_kernels_gpu.txt"
grep -E "FAIL|error" "$out/mx_kernels_gpu.txt" | head -20
for tool in memcheck racecheck; do
  compute-sanitizer --tool "$tool" python3 test/Integration/mx_kernels_gpu.py .device/mx --quick --seed 7 \
    > "$out/mx_kernels_$tool.txt" 2>&1
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed" "$out/mx_kernels_$tool.txt" | tail -n 2
done
fi
[ "$part" = kernels ] && exit 0
OUT="$out" python3 bench/mx_quantize_bench.py run .device/bench 2>&1 | tee "$out/mx_quantize_bench.txt" | tail -n 40
OUT="$out" python3 test/Integration/train_hf_moe.py .device/train --mx128 .device/train128 --steps 500 \
  2>&1 | tee "$out/train.txt" | tail -n 8
