// The C executor (mxmoeRtProgram*, mxmoe-c/Runtime.h) through mxmoe-run:
// binding a compiled program's manifest needs no GPU, and every bad input
// is an error naming it. Runs (on the H200): test/Integration/c_executor_gpu.py.
// RUN: rm -rf %t && mxmoe-compile %s --chip sm_90a -o %t > /dev/null
// RUN: mxmoe-run %t experts.w13.forward --describe | FileCheck %s --check-prefix=FWD
// RUN: mxmoe-run %t experts.w13.weight_grad --describe | FileCheck %s --check-prefix=WGRAD
// RUN: mxmoe-run %t proj.forward --describe | FileCheck %s --check-prefix=LINEAR
// RUN: not mxmoe-run %t experts.w13.nope --describe 2>&1 | FileCheck %s --check-prefix=NOPROG
// RUN: not mxmoe-run %t experts.w13.forward --chip sm_100a --describe 2>&1 | FileCheck %s --check-prefix=NOCHIP
// RUN: not mxmoe-run %t.missing experts.w13.forward --describe 2>&1 | FileCheck %s --check-prefix=NODIR
// RUN: rm -rf %t.bad && mkdir %t.bad && echo '{"programs": [' > %t.bad/manifest.json
// RUN: not mxmoe-run %t.bad f --describe 2>&1 | FileCheck %s --check-prefix=BADJSON
// RUN: rm -rf %t.in && mkdir %t.in && echo short > %t.in/arg0.bin
// RUN: not mxmoe-run %t experts.w13.forward --inputs %t.in --outputs %t.in 2>&1 | FileCheck %s --check-prefix=SHORT
// RUN: not mxmoe-run %t experts.w13.forward 2>&1 | FileCheck %s --check-prefix=USAGE

// FWD: program experts.w13.forward: 3 args, 5 buffers, 3 steps, 1 returns
// FWD-NEXT: arg 0: bf16 [512, 256] 262144 bytes
// FWD-NEXT: arg 1: bf16 [4, 384, 256] 786432 bytes
// FWD-NEXT: arg 2: i32 [4] 16 bytes
// FWD-NEXT: buffer 0: f8E4M3FN [512, 256] 131072 bytes
// FWD: buffer 4: bf16 [512, 384] 393216 bytes
// FWD-NEXT: return 0: buffer 4

// WGRAD: program experts.w13.weight_grad: 3 args,
// WGRAD: return 0: buffer

// LINEAR: program proj.forward: 2 args,
// LINEAR: return 0: buffer

// NOPROG: mxmoe-run: load: mxmoeRtProgramLoad({{.*}}, experts.w13.nope): no program 'experts.w13.nope' (have: experts.w13.forward, experts.w13.input_grad, experts.w13.weight_grad, proj.forward
// NOCHIP: mxmoe-run: load: mxmoeRtProgramLoad({{.*}}): kernel {{.*}} not built for sm_100a
// NODIR: mxmoe-run: load: mxmoeRtProgramLoad({{.*}}): cannot read {{.*}}.missing/manifest.json
// BADJSON: mxmoe-run: load: mxmoeRtProgramLoad({{.*}}): malformed manifest.json: [json.exception.parse_error
// SHORT: mxmoe-run: {{.*}}arg0.bin must hold exactly 262144 bytes
// USAGE: usage: mxmoe-run OUT_DIR FUNCTION

func.func @experts(%x: tensor<512x256xbf16>, %w13: tensor<4x384x256xbf16>,
                   %offsets: tensor<4xi32>) -> tensor<512x384xbf16> {
  %h = mxmoe.scaled_grouped_matmul %x, %w13, %offsets {fqn = "experts.w13"}
      : (tensor<512x256xbf16>, tensor<4x384x256xbf16>, tensor<4xi32>)
      -> tensor<512x384xbf16>
  return %h : tensor<512x384xbf16>
}

func.func @proj(%x: tensor<512x256xbf16>, %w: tensor<384x256xbf16>)
    -> tensor<512x384xbf16> {
  %y = mxmoe.linear %x, %w {fqn = "proj", precision = #mxmoe.precision<mxfp8>}
      : (tensor<512x256xbf16>, tensor<384x256xbf16>) -> tensor<512x384xbf16>
  return %y : tensor<512x384xbf16>
}
