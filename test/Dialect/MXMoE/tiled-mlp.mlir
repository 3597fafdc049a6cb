// RUN: mxmoe-opt %s | FileCheck %s
// RUN: mxmoe-opt %s | mxmoe-opt | FileCheck %s
// RUN: mxmoe-opt %s --mlir-print-op-generic | mxmoe-opt | FileCheck %s

// Round-trip of mxmoe.tiled_mlp and its terminator mxmoe.yield:
//   mxmoe.tiled_mlp shards = (auto | N) (%input, %params...) attr-dict
//       : (types) -> (types) { ^bb0(%shard, %params...): ... mxmoe.yield }
// The first block argument is printed as %shard.

// Explicit shard count, one parameter, output as wide as the input.
// CHECK-LABEL: func.func @tiled_explicit_shards(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<8192x5120xbf16>, %[[W:[a-z0-9_]+]]: tensor<5120x5120xbf16>)
// CHECK:         %[[Y:[a-z0-9_]+]] = mxmoe.tiled_mlp shards = 4 (%[[X]], %[[W]]) {fqn = "layers.0.feed_forward"}
// CHECK-SAME:      : (tensor<8192x5120xbf16>, tensor<5120x5120xbf16>) -> tensor<8192x5120xbf16> {
// CHECK-NEXT:    ^bb0(%[[SHARD:shard]]: tensor<?x5120xbf16>, %[[WS:[a-z0-9_]+]]: tensor<5120x5120xbf16>):
// CHECK-NEXT:      %[[O:[a-z0-9_]+]] = mxmoe.linear %[[SHARD]], %[[WS]] {fqn = "layers.0.feed_forward.w"}
// CHECK-SAME:        : (tensor<?x5120xbf16>, tensor<5120x5120xbf16>) -> tensor<?x5120xbf16>
// CHECK-NEXT:      mxmoe.yield %[[O]] : tensor<?x5120xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[Y]] : tensor<8192x5120xbf16>
func.func @tiled_explicit_shards(%x: tensor<8192x5120xbf16>, %w: tensor<5120x5120xbf16>) -> tensor<8192x5120xbf16> {
  %y = mxmoe.tiled_mlp shards = 4 (%x, %w) {fqn = "layers.0.feed_forward"}
      : (tensor<8192x5120xbf16>, tensor<5120x5120xbf16>) -> tensor<8192x5120xbf16> {
  ^bb0(%xs: tensor<?x5120xbf16>, %ws: tensor<5120x5120xbf16>):
    %o = mxmoe.linear %xs, %ws {fqn = "layers.0.feed_forward.w"}
        : (tensor<?x5120xbf16>, tensor<5120x5120xbf16>) -> tensor<?x5120xbf16>
    mxmoe.yield %o : tensor<?x5120xbf16>
  }
  return %y : tensor<8192x5120xbf16>
}

// shards = auto: no num_shards attribute (the pass chooses).
// CHECK-LABEL: func.func @tiled_auto_shards(
// CHECK:         mxmoe.tiled_mlp shards = auto (%{{[a-z0-9_]+}}) : (tensor<65536x256xbf16>) -> tensor<65536x256xbf16> {
// CHECK-NEXT:    ^bb0(%[[SHARD:shard]]: tensor<?x256xbf16>):
// CHECK-NEXT:      mxmoe.yield %[[SHARD]] : tensor<?x256xbf16>
// CHECK-NEXT:    }
func.func @tiled_auto_shards(%x: tensor<65536x256xbf16>) -> tensor<65536x256xbf16> {
  %y = mxmoe.tiled_mlp shards = auto (%x) : (tensor<65536x256xbf16>) -> tensor<65536x256xbf16> {
  ^bb0(%xs: tensor<?x256xbf16>):
    mxmoe.yield %xs : tensor<?x256xbf16>
  }
  return %y : tensor<65536x256xbf16>
}

// A single shard is a valid explicit count.
// CHECK-LABEL: func.func @tiled_one_shard(
// CHECK:         mxmoe.tiled_mlp shards = 1 (%{{[a-z0-9_]+}}) : (tensor<16x32xf32>) -> tensor<16x32xf32> {
func.func @tiled_one_shard(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %y = mxmoe.tiled_mlp shards = 1 (%x) : (tensor<16x32xf32>) -> tensor<16x32xf32> {
  ^bb0(%xs: tensor<?x32xf32>):
    mxmoe.yield %xs : tensor<?x32xf32>
  }
  return %y : tensor<16x32xf32>
}

// Rank-3 input [B, S, H]: the shard is 2-D [?, H]; the result keeps [B, S]
// and its width (768) differs from the input width (512).
// CHECK-LABEL: func.func @tiled_3d_input(
// CHECK:         mxmoe.tiled_mlp shards = 8 (%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<2x4096x512xbf16>, tensor<768x512xbf16>) -> tensor<2x4096x768xbf16> {
// CHECK-NEXT:    ^bb0(%[[SHARD:shard]]: tensor<?x512xbf16>, %[[WS:[a-z0-9_]+]]: tensor<768x512xbf16>):
// CHECK-NEXT:      %[[O:[a-z0-9_]+]] = mxmoe.linear %[[SHARD]], %[[WS]] {fqn = "mlp.up"}
// CHECK-SAME:        : (tensor<?x512xbf16>, tensor<768x512xbf16>) -> tensor<?x768xbf16>
// CHECK-NEXT:      mxmoe.yield %[[O]] : tensor<?x768xbf16>
func.func @tiled_3d_input(%x: tensor<2x4096x512xbf16>, %w: tensor<768x512xbf16>) -> tensor<2x4096x768xbf16> {
  %y = mxmoe.tiled_mlp shards = 8 (%x, %w) : (tensor<2x4096x512xbf16>, tensor<768x512xbf16>) -> tensor<2x4096x768xbf16> {
  ^bb0(%xs: tensor<?x512xbf16>, %ws: tensor<768x512xbf16>):
    %o = mxmoe.linear %xs, %ws {fqn = "mlp.up"} : (tensor<?x512xbf16>, tensor<768x512xbf16>) -> tensor<?x768xbf16>
    mxmoe.yield %o : tensor<?x768xbf16>
  }
  return %y : tensor<2x4096x768xbf16>
}

// A SwiGLU-shaped body with three parameters and grad_accumulator = f32.
// CHECK-LABEL: func.func @tiled_three_params_f32_accumulator(
// CHECK:         mxmoe.tiled_mlp shards = 2 (%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {fqn = "layers.1.feed_forward", grad_accumulator = f32}
// CHECK-SAME:      : (tensor<4096x256xbf16>, tensor<1024x256xbf16>, tensor<1024x256xbf16>, tensor<256x1024xbf16>) -> tensor<4096x256xbf16> {
// CHECK-NEXT:    ^bb0(%[[SHARD:shard]]: tensor<?x256xbf16>, %[[W1:[a-z0-9_]+]]: tensor<1024x256xbf16>, %[[W3:[a-z0-9_]+]]: tensor<1024x256xbf16>, %[[W2:[a-z0-9_]+]]: tensor<256x1024xbf16>):
// CHECK-NEXT:      %[[G:[a-z0-9_]+]] = mxmoe.linear %[[SHARD]], %[[W1]] {fqn = "layers.1.feed_forward.w1"}
// CHECK-NEXT:      %[[U:[a-z0-9_]+]] = mxmoe.linear %[[SHARD]], %[[W3]] {fqn = "layers.1.feed_forward.w3"}
// CHECK-NEXT:      %[[P:[a-z0-9_]+]] = arith.mulf %[[G]], %[[U]] : tensor<?x1024xbf16>
// CHECK-NEXT:      %[[D:[a-z0-9_]+]] = mxmoe.linear %[[P]], %[[W2]] {fqn = "layers.1.feed_forward.w2"}
// CHECK-NEXT:      mxmoe.yield %[[D]] : tensor<?x256xbf16>
func.func @tiled_three_params_f32_accumulator(%x: tensor<4096x256xbf16>, %w1: tensor<1024x256xbf16>,
                                              %w3: tensor<1024x256xbf16>, %w2: tensor<256x1024xbf16>) -> tensor<4096x256xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%x, %w1, %w3, %w2) {fqn = "layers.1.feed_forward", grad_accumulator = f32}
      : (tensor<4096x256xbf16>, tensor<1024x256xbf16>, tensor<1024x256xbf16>, tensor<256x1024xbf16>) -> tensor<4096x256xbf16> {
  ^bb0(%xs: tensor<?x256xbf16>, %a: tensor<1024x256xbf16>, %b: tensor<1024x256xbf16>, %c: tensor<256x1024xbf16>):
    %g = mxmoe.linear %xs, %a {fqn = "layers.1.feed_forward.w1"} : (tensor<?x256xbf16>, tensor<1024x256xbf16>) -> tensor<?x1024xbf16>
    %u = mxmoe.linear %xs, %b {fqn = "layers.1.feed_forward.w3"} : (tensor<?x256xbf16>, tensor<1024x256xbf16>) -> tensor<?x1024xbf16>
    %p = arith.mulf %g, %u : tensor<?x1024xbf16>
    %d = mxmoe.linear %p, %c {fqn = "layers.1.feed_forward.w2"} : (tensor<?x1024xbf16>, tensor<256x1024xbf16>) -> tensor<?x256xbf16>
    mxmoe.yield %d : tensor<?x256xbf16>
  }
  return %y : tensor<4096x256xbf16>
}

// Two results (MoE output and f32 router logits) of different widths and
// element types; `%0:2` and a parenthesized result type list.
// CHECK-LABEL: func.func @tiled_two_results(
// CHECK:         %[[R:[a-z0-9_]+]]:2 = mxmoe.tiled_mlp shards = auto (%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {fqn = "layers.2.moe"}
// CHECK-SAME:      : (tensor<1024x64xbf16>, tensor<8x64xf32>) -> (tensor<1024x64xbf16>, tensor<1024x8xf32>) {
// CHECK-NEXT:    ^bb0(%[[SHARD:shard]]: tensor<?x64xbf16>, %[[GW:[a-z0-9_]+]]: tensor<8x64xf32>):
// CHECK:           mxmoe.yield %[[SHARD]], %{{[a-z0-9_]+}} : tensor<?x64xbf16>, tensor<?x8xf32>
// CHECK:         return %[[R]]#0, %[[R]]#1 : tensor<1024x64xbf16>, tensor<1024x8xf32>
func.func @tiled_two_results(%x: tensor<1024x64xbf16>, %gate: tensor<8x64xf32>) -> (tensor<1024x64xbf16>, tensor<1024x8xf32>) {
  %y:2 = mxmoe.tiled_mlp shards = auto (%x, %gate) {fqn = "layers.2.moe"}
      : (tensor<1024x64xbf16>, tensor<8x64xf32>) -> (tensor<1024x64xbf16>, tensor<1024x8xf32>) {
  ^bb0(%xs: tensor<?x64xbf16>, %g: tensor<8x64xf32>):
    %xf = arith.extf %xs : tensor<?x64xbf16> to tensor<?x64xf32>
    %logits = mxmoe.linear %xf, %g {fqn = "layers.2.moe.router.gate"} : (tensor<?x64xf32>, tensor<8x64xf32>) -> tensor<?x8xf32>
    mxmoe.yield %xs, %logits : tensor<?x64xbf16>, tensor<?x8xf32>
  }
  return %y#0, %y#1 : tensor<1024x64xbf16>, tensor<1024x8xf32>
}

// A result with more trailing dims than the input ([T, 4, 8]), and a
// non-tensor parameter (an index) passed through to the body.
// CHECK-LABEL: func.func @tiled_higher_rank_result(
// CHECK:         mxmoe.tiled_mlp shards = 3 (%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<96x16xf32>, index) -> tensor<96x4x8xf32> {
// CHECK-NEXT:    ^bb0(%[[SHARD:shard]]: tensor<?x16xf32>, %[[I:[a-z0-9_]+]]: index):
// CHECK-NEXT:      %[[N:[a-z0-9_]+]] = tensor.dim %[[SHARD]], %[[I]] : tensor<?x16xf32>
// CHECK-NEXT:      %[[E:[a-z0-9_]+]] = tensor.empty(%[[N]]) : tensor<?x4x8xf32>
// CHECK-NEXT:      mxmoe.yield %[[E]] : tensor<?x4x8xf32>
func.func @tiled_higher_rank_result(%x: tensor<96x16xf32>, %i: index) -> tensor<96x4x8xf32> {
  %y = mxmoe.tiled_mlp shards = 3 (%x, %i) : (tensor<96x16xf32>, index) -> tensor<96x4x8xf32> {
  ^bb0(%xs: tensor<?x16xf32>, %c0: index):
    %n = tensor.dim %xs, %c0 : tensor<?x16xf32>
    %e = tensor.empty(%n) : tensor<?x4x8xf32>
    mxmoe.yield %e : tensor<?x4x8xf32>
  }
  return %y : tensor<96x4x8xf32>
}

// grad_accumulator is f32, bf16 or f16 (here bf16, the parameter type).
// CHECK-LABEL: func.func @tiled_bf16_accumulator(
// CHECK:         mxmoe.tiled_mlp shards = 2 (%{{[a-z0-9_]+}}) {grad_accumulator = bf16} : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
func.func @tiled_bf16_accumulator(%x: tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  %y = mxmoe.tiled_mlp shards = 2 (%x) {grad_accumulator = bf16} : (tensor<64x32xbf16>) -> tensor<64x32xbf16> {
  ^bb0(%xs: tensor<?x32xbf16>):
    mxmoe.yield %xs : tensor<?x32xbf16>
  }
  return %y : tensor<64x32xbf16>
}

// ... and f16 (narrower than the f32 parameter).
// CHECK-LABEL: func.func @tiled_f16_accumulator(
// CHECK:         mxmoe.tiled_mlp shards = auto (%{{[a-z0-9_]+}}) {grad_accumulator = f16} : (tensor<64x32xf32>) -> tensor<64x32xf32> {
func.func @tiled_f16_accumulator(%x: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %y = mxmoe.tiled_mlp shards = auto (%x) {grad_accumulator = f16} : (tensor<64x32xf32>) -> tensor<64x32xf32> {
  ^bb0(%xs: tensor<?x32xf32>):
    mxmoe.yield %xs : tensor<?x32xf32>
  }
  return %y : tensor<64x32xf32>
}

// More shards than tokens is allowed (empty shards).
// CHECK-LABEL: func.func @tiled_more_shards_than_tokens(
// CHECK:         mxmoe.tiled_mlp shards = 16 (%{{[a-z0-9_]+}}) : (tensor<4x32xf16>) -> tensor<4x32xf16> {
func.func @tiled_more_shards_than_tokens(%x: tensor<4x32xf16>) -> tensor<4x32xf16> {
  %y = mxmoe.tiled_mlp shards = 16 (%x) : (tensor<4x32xf16>) -> tensor<4x32xf16> {
  ^bb0(%xs: tensor<?x32xf16>):
    mxmoe.yield %xs : tensor<?x32xf16>
  }
  return %y : tensor<4x32xf16>
}

// Summed results: the last `summed_results` results are sums over shards
// (static shapes, no token dims), e.g. a router's per-expert statistics.
// CHECK-LABEL: func.func @tiled_summed_results(
// CHECK:         mxmoe.tiled_mlp shards = 4 (%{{[a-z0-9_]+}}) {summed_results = 1 : i64} : (tensor<64x32xf32>) -> (tensor<64x32xf32>, tensor<32xf32>) {
// CHECK:           mxmoe.yield %{{.*}}, %{{.*}} : tensor<?x32xf32>, tensor<32xf32>
func.func @tiled_summed_results(%x: tensor<64x32xf32>) -> (tensor<64x32xf32>, tensor<32xf32>) {
  %y, %s = mxmoe.tiled_mlp shards = 4 (%x) {summed_results = 1} : (tensor<64x32xf32>) -> (tensor<64x32xf32>, tensor<32xf32>) {
  ^bb0(%xs: tensor<?x32xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<32xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
    %sum = linalg.reduce ins(%xs : tensor<?x32xf32>) outs(%init : tensor<32xf32>) dimensions = [0]
      (%a: f32, %b: f32) {
        %t = arith.addf %a, %b : f32
        linalg.yield %t : f32
      }
    mxmoe.yield %xs, %sum : tensor<?x32xf32>, tensor<32xf32>
  }
  return %y, %s : tensor<64x32xf32>, tensor<32xf32>
}
