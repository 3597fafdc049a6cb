// REQUIRES: fuzzer
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %mxmoe_src_root/tools/mxmoe-fuzz-pipeline/make_seed_corpus.py %mxmoe_src_root %t/seeds | FileCheck %s --check-prefix=SEEDS
// RUN: mxmoe-fuzz-pipeline -runs=0 -timeout=120 -artifact_prefix=%t/ %t/seeds 2>&1 | FileCheck %s

// Replays the seed corpus of scripts/fuzz.sh (every lit test split on
// `// -----`, the regression tests of fuzzer crashes included, and the
// examples) through the pipeline fuzzer once: parse, verify, print, the
// default pipeline down to PTX, under ASan + UBSan + LeakSanitizer. Any
// crash or sanitizer report fails the test.

// SEEDS: seeds: {{[0-9]+}} (from {{[0-9]+}} files)
// CHECK: INFO: {{[0-9]+}} files found in
// CHECK: INITED
// CHECK: DONE
// CHECK-NOT: ERROR
