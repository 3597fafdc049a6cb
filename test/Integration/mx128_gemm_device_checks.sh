#!/usr/bin/env bash
# Device checks of the MX128 sm_90a grouped GEMM (issue 21), one call on
# the GPU machine. Build machine first:
#   python3 test/Integration/gen_gemm_kernels.py --chips sm_90a --bench --out .device/gemm
#   python3 test/Integration/gen_gemm_kernels.py --chips sm_90a --out .device/gemm-fp8 \
#       --extra=--gemm-sm90-mma=fp8
#   python3 test/Integration/gen_gemm_kernels.py --chips sm_90a --bench --mx128-only \
#       --2dx3d-only --out .device/gemm192 --extra=--gemm-tile-n=192   # (tile192)
#   for the cluster part also (2-CTA clusters, TMA multicast of B):
#   python3 test/Integration/gen_gemm_kernels.py --chips sm_90a --bench --mx128-only \
#       --2dx3d-only --out .device/gemmc2 --extra=--gemm-cluster=2
#   python3 test/Integration/gen_gemm_kernels.py --chips sm_90a --bench --mx128-only \
#       --2dx3d-only --out .device/gemm192c2 --extra=--gemm-cluster=2 --extra=--gemm-tile-n=192
# then run this with .device/gemm, .device/gemm-fp8 (.device/gemm192) and
# build/lib/libmxmoe_runtime.so carried (and .peers/deepgemm for the
# DeepGEMM column, when present):
#   test/Integration/mx128_gemm_device_checks.sh [check|sanitize|sass|bench|tile192|cluster|all]
# check: every correctness case (MX32 and MX128) of the default build, and
# the f32-output MX128 cases of the fp8-strategy build; sanitize:
# compute-sanitizer memcheck, racecheck, initcheck and synccheck on small
# MX128 cases;
# sass: QGMMA per K block of the MX128 kernels; bench: the benchmark table;
# tile192 (not in all): the 128x192 MX128 2D x 3D kernels (gemm-tile-n=192):
# their correctness cases, memcheck, spills in SASS, and TFLOP/s against
# the 128 tile of .device/gemm at five model shapes; cluster (not in all):
# the same for the 2-CTA cluster kernels at tile N 128 and 192 (each step
# under a timeout: a deadlocked cluster handshake must not eat the call),
# A/B against .device/gemm and .device/gemm192 in the same call.
# Logs go to $OUT (default .).
set -uo pipefail
out="${OUT:-.}"
export MXMOE_RUNTIME_LIB="${MXMOE_RUNTIME_LIB:-$PWD/build/lib/libmxmoe_runtime.so}"
part="${1:-all}"
T=test/Integration
small=mx128_fwd_g1,mx128_fwd_sizes,mx128_fwd_short,mx128_wgrad_zipf_bf16,mx128_wgrad_e5m2_odd_n,mx128_wgrad_g1_ragged
f32=mx128_fwd_k1408_f32,mx128_fwd_k96_f32,mx128_wgrad_f32,mx128_wgrad_sizes,mx128_wgrad_g1_ragged,mx128_wgrad_e128
if [ "$part" = check ] || [ "$part" = all ]; then
  python3 $T/gemm_gpu.py .device/gemm > "$out/gemm_check.txt" 2>&1
  grep -E "FAIL|Error" "$out/gemm_check.txt" | head; tail -n 1 "$out/gemm_check.txt"
  python3 $T/gemm_gpu.py .device/gemm-fp8 --only $f32 > "$out/gemm_check_fp8.txt" 2>&1
  grep -E "^mx128|FAIL|Error" "$out/gemm_check_fp8.txt" | head -8; tail -n 1 "$out/gemm_check_fp8.txt"
fi
if [ "$part" = sanitize ] || [ "$part" = all ]; then
  for tool in memcheck racecheck initcheck synccheck; do
    compute-sanitizer --tool $tool python3 $T/gemm_gpu.py .device/gemm --only $small \
      > "$out/gemm_$tool.txt" 2>&1
    echo "$tool: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/gemm_$tool.txt" | tail -n 1) $(tail -n 1 "$out/gemm_$tool.txt")"
  done
fi
if [ "$part" = sass ] || [ "$part" = all ]; then
  cuobjdump -sass .device/gemm/sm_90a/kernels.cubin > "$out/gemm_sass.txt"
  python3 - "$out/gemm_sass.txt" .device/gemm/manifest.json <<'PY'
import json, re, sys
sass, man = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
mma = {k["name"]: k.get("mma") for k in man["kernels"]}
for fn, body in re.findall(r"Function : (\S+)\n(.*?)(?=\n\s+Function : |\Z)", sass, re.S):
    q = len(re.findall(r"\bQGMMA\.", body)); h = len(re.findall(r"\bHGMMA\.", body))
    print(f"{fn[:60]:60s} {mma.get(fn, '?'):24s} QGMMA {q:3d} HGMMA(tf32/bf16) {h:3d}")
PY
fi
if [ "$part" = bench ] || [ "$part" = all ]; then
  python3 $T/gemm_gpu.py .device/gemm --bench --no-check 2>&1 | tee "$out/gemm_bench.txt" | tail -n 40
fi
if [ "$part" = tile192 ]; then
  g=.device/gemm192
  only=$(python3 -c "import json;print(','.join(c['name'] for c in json.load(open('$g/cases.json')) if 'bench' not in c))")
  python3 $T/gemm_gpu.py $g --only "$only" > "$out/gemm192_check.txt" 2>&1
  grep -E "FAIL|Error" "$out/gemm192_check.txt" | head; tail -n 1 "$out/gemm192_check.txt"
  compute-sanitizer --tool memcheck python3 $T/gemm_gpu.py $g --only mx128_fwd_g1,mx128_fwd_sizes,mx128_fwd_short \
    > "$out/gemm192_memcheck.txt" 2>&1
  echo "memcheck: $(grep -E "ERROR SUMMARY" "$out/gemm192_memcheck.txt" | tail -n 1)"
  cuobjdump -sass $g/sm_90a/kernels.cubin | grep -cE "\b(STL|LDL)\b" | sed 's/^/STL+LDL in SASS: /'
  ab=""
  for m in llama4_scout_t16k llama4_scout_t64k qwen3_30b_a3b_t64k gpt_oss_20b_t16k deepseek_v3_e32_t16k; do
    for gm in fwd dgrad; do ab="$ab,bench_${m}_${gm}_mx128"; done
  done
  for v in .device/gemm $g; do
    echo "== $v"
    python3 $T/gemm_gpu.py $v --bench --no-check --bf16-peer-only --only "${ab#,}" 2>&1 | grep '"model"'
  done | tee "$out/gemm192_ab.txt"
fi
if [ "$part" = cluster ]; then
  ab=""
  for m in llama4_scout_t16k llama4_scout_t64k qwen3_30b_a3b_t64k gpt_oss_20b_t16k deepseek_v3_e32_t16k; do
    for gm in fwd dgrad; do ab="$ab,bench_${m}_${gm}_mx128"; done
  done
  for g in gemmc2 gemm192c2; do
    d=.device/$g
    only=$(python3 -c "import json;print(','.join(c['name'] for c in json.load(open('$d/cases.json')) if 'bench' not in c))")
    timeout 90 python3 $T/gemm_gpu.py $d --only "$only" > "$out/${g}_check.txt" 2>&1
    echo "$g check rc=$?: $(tail -n 1 "$out/${g}_check.txt")"; grep -E "FAIL|Error" "$out/${g}_check.txt" | head -4
    timeout 120 compute-sanitizer --tool memcheck python3 $T/gemm_gpu.py $d --only mx128_fwd_g1,mx128_fwd_sizes,mx128_fwd_short \
      > "$out/${g}_memcheck.txt" 2>&1
    echo "$g memcheck: $(grep -E "ERROR SUMMARY" "$out/${g}_memcheck.txt" | tail -n 1)"
    cuobjdump -sass $d/sm_90a/kernels.cubin | grep -cE "\b(STL|LDL)\b" | sed "s/^/$g STL+LDL in SASS: /"
  done
  for v in .device/gemm .device/gemm192 .device/gemmc2 .device/gemm192c2; do
    echo "== $v"
    timeout 120 python3 $T/gemm_gpu.py $v --bench --no-check --bf16-peer-only --only "${ab#,}" 2>&1 | grep '"model"'
  done | tee "$out/cluster_ab.txt"
fi
