//===- Passes.td - mxmoe lowering passes -------------------*- tablegen -*-===//

#ifndef MXMOE_CONVERSION_PASSES
#define MXMOE_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

// The grouped-GEMM options of mxmoe-select-gemm-config and
// convert-mxmoe-to-gpu (one declaration; both passes check them with
// checkGemmOptions, lib/Conversion/MXMoEToGPU/GemmConfig.h).
defvar MXMoEGemmOptions = [
    Option<"chip", "chip", "::mlir::mxmoe::Chip",
           /*default=*/"::mlir::mxmoe::Chip::sm_90a",
           "target chip of the grouped-GEMM kernels: sm_90a (wgmma kernel), "
           "sm_100a or sm_103a (tcgen05 kernel); another value is rejected "
           "when the option is parsed",
           "MXMOE_CHIP_OPTION_VALUES">,
    Option<"gemmTileN", "gemm-tile-n", "int64_t", /*default=*/"0",
           "N of the grouped-GEMM tile (M is 128, K 128 per stage): 0 = "
           "auto (192 for sm_90a MX128 2D x 3D bf16-output kernels, 2-12 % "
           "faster than 128, bench/RESULTS.md; 128 for every other kernel), "
           "64 or 128 (every kernel), 192 (those MX128 kernels only, another "
           "kernel is an error), 256 (sm_100a/sm_103a)">,
    Option<"gemmStages", "gemm-stages", "int64_t", /*default=*/"0",
           "pipeline stages of the grouped-GEMM kernel (2..8; 0 = auto: 4, "
           "2 for sm_90a bf16-upcast kernels), each 128 x 128 (A) + N x 128 "
           "(B) fp8 bytes + two 512-byte scale atoms of shared memory (sm_90a "
           "fp8: + 8 KB + 16 x N bytes of decoded scale tables); a kernel "
           "whose stages exceed the chip's 227 KB is an error naming its "
           "budget (sm_90a fp8: at most 5 at tile N 128, 6 at tile N 64)">,
    Option<"gemmSm90Mma", "gemm-sm90-mma", "::mlir::mxmoe::Sm90Mma",
           /*default=*/"::mlir::mxmoe::Sm90Mma::automatic",
           "MMA strategy of the sm_90a grouped GEMM: fp8 (fp8 wgmma per MX "
           "block, its scale product from a tf32 wgmma, promoted into the "
           "fp32 accumulator by one FFMA per element), "
           "bf16 (each stage dequantized exactly to bf16 in shared memory, "
           "bf16 wgmma accumulating the whole K in fp32: products exact, "
           "two bf16 buffers of shared memory) or auto (bf16 for f32 "
           "outputs, fp8 otherwise)", "MXMOE_SM90_MMA_OPTION_VALUES">,
    Option<"gemmCTAs", "gemm-ctas", "int64_t", /*default=*/"132",
           "CTAs of the persistent grouped-GEMM grid (the SM count of the "
           "target GPU: 132 on H100/H200 SXM)">,
    Option<"gemmCluster", "gemm-cluster", "int64_t", /*default=*/"0",
           "CTAs per thread-block cluster of the grouped-GEMM kernel, along "
           "M: 0 = auto (1), 1, or 2 (sm_90a MX128 2D x 3D bf16-output "
           "kernels only, another kernel is an error; needs an even "
           "gemm-ctas): the two CTAs compute adjacent 128-row tiles of one "
           "expert and each loads half of the weight tile, multicast to both; "
           "correct on an H100 but 2-2.6x slower than 1, bench/RESULTS.md">
];

def MXMoESelectGemmConfig
    : Pass<"mxmoe-select-gemm-config", "::mlir::ModuleOp"> {
  let summary = "Attach the kernel configuration (#mxmoe.gemm_config) to "
                "every grouped GEMM";
  let description = [{
    The selection step of the grouped-GEMM kernels (as IREE's KernelConfig
    attaches a lowering configuration that the code generators read):
    every `mxmoe.grouped_matmul` that `convert-mxmoe-to-gpu` will build a
    kernel for (MX operands, static shapes, something to compute, not yet
    lowered) gets `mxmoe.gemm_config = #mxmoe.gemm_config<strategy = ...,
    tile_m = 128, tile_n = ..., stages = ..., ctas = ...>`; the attribute
    documents the fields. An op that already carries one keeps it (a user
    or a test pins a configuration), and other ops (bf16 operands, dynamic
    shapes, empty GEMMs) get none: `convert-mxmoe-to-gpu` reports what it
    cannot lower. The default pipeline (mxmoe-compile) runs this pass right
    before `convert-mxmoe-to-gpu`, with the same options; that pass runs the
    same selection itself for an op without a configuration.

    Selection, from the options (those of `convert-mxmoe-to-gpu`, checked
    the same way) and the op:
    * `chip=sm_100a` or `sm_103a`: `tcgen05_mxf8f6f4`;
    * `chip=sm_90a`: `wgmma_bf16_upcast` for `gemm-sm90-mma=bf16`, and for
      `auto` when the output is f32 (the fp8 MMA's internal accumulation
      misses the 1e-4 accuracy of f32 outputs); otherwise
      `wgmma_fp8_promote_k128` when both scale layouts record a tile whose
      c is a multiple of 128 (MX128), else `wgmma_fp8_promote`;
    * `tile_m` 128, `tile_n` = `gemm-tile-n` (0, auto: 192 with
      `wgmma_fp8_promote_k128` on a 2D x 3D op with bf16 output, 128
      otherwise; 192 only for that kind),
      `ctas` = `gemm-ctas`,
      `stages` = `gemm-stages`, or for 0 (auto) 2 with `wgmma_bf16_upcast`
      and 4 otherwise.

    Budgets: on sm_90a a kernel whose shared memory (strategy, tile N,
    stages and output type decide it) exceeds the chip's 227 KB is an op
    error naming the strategy and the option to lower; on sm_100a and
    sm_103a shared memory and TMEM are checked with the options, as in
    `convert-mxmoe-to-gpu`. The op's other errors (FP4 operands on sm_90a,
    a contraction extent the kernel rejects...) are `convert-mxmoe-to-gpu`'s;
    an op with both reports the budget error first in a pipeline that runs
    this pass.
  }];
  let options = MXMoEGemmOptions;
}

def ConvertMXMoEToGPU : Pass<"convert-mxmoe-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower MX-level mxmoe ops (quantize, dequantize, "
                "swizzle_scales, grouped_matmul on sm_90a, sm_100a and sm_103a) to GPU "
                "kernels";
  let description = [{
    Model-level ops (an `mxmoe.linear` or `mxmoe.scaled_grouped_matmul`
    without a bf16 decision, `mxmoe.tiled_mlp`) are not lowered here: a
    module that still has them gets one warning naming the passes to run
    first (or use the `mxmoe-default-pipeline`). Invalid option values are
    an error when a textual pipeline is built, before any pass runs, and at
    the start of the run for a pass built in C++.

    Every `mxmoe.quantize`, `mxmoe.dequantize` and `mxmoe.swizzle_scales` in
    a function becomes a `gpu.func` kernel in the module's
    `gpu.module @mxmoe_kernels` (built from `gpu`, `scf`, `arith`, `memref`,
    `vector` and `nvvm` ops), and the op itself becomes a `gpu.launch_func`
    on buffers: operands go through `bufferization.to_buffer` (collapsed to
    1-D), results are `gpu.alloc`ed and handed back with
    `bufferization.to_tensor`, the status of a grouped kernel is copied to
    the host and checked with `cf.assert` (a runtime error naming the
    kernel). The rest of the function is left for one-shot bufferization.
    Inside a static shard loop of `mxmoe-tile-mlp` (`mxmoe.shard_tokens`)
    whose slices are whole rows, arith / math elementwise ops on tensors of
    up to 32-bit floats (a tiled block's gradient sums) become kernels too
    (Elementwise.cpp: computed in f32, no noalias, so a sum may run in
    place; such annotated arith ops have no bufferization model), and so
    do bf16 `mxmoe.linear` ops (2-D, even N, optional bf16 bias: a tiled
    block's router and its gradients), `linalg.reduce` row sums into zeros
    (a bias gradient) and 2-D `linalg.transpose` ops in or read only by
    such loops (LinearBf16.cpp: an mma.sync m16n8k16 bf16 GEMM with
    f32 accumulation, PTX ISA 9.7.14.5.8; a 32x32 shared-memory
    transpose; both need block-size=256), so that mxmoe-compile can
    describe the whole loop as a launch program.
    With `host-launch=false` the op stays and is annotated with
    `mxmoe.kernel = @mxmoe_kernels::@name`, `mxmoe.kernel_args` (its
    bindings) and, for kernels with run-time sizes, `mxmoe.grid` instead.
    An annotated op implements `BufferizableOpInterface`
    (registerMXMoEToGPUInterfaces, which this pass registers):
    `one-shot-bufferize` turns it into the same launch on its operands'
    buffers (grouped GEMMs included, their TMA maps from
    `nvgpu.tma.create.descriptor`); an op without a kernel is a
    bufferization error naming this pass.

    An op with nothing to compute gets no kernel (as PyTorch's grouped
    GEMMs accept empty batches): when every result has zero elements (a
    grouped GEMM, quantization or swizzle over zero tokens) each result
    becomes a `tensor.empty` marked `mxmoe.empty_result` (a zero-byte
    buffer of the launch program); a grouped GEMM with contraction extent
    0 (K = 0, or one expert's weight gradient over zero tokens) becomes its
    zeros, an `arith.constant` marked `mxmoe.zero_result` (a buffer the
    program zero-fills, `"zero": true` in the manifest). MX ops that fed
    only such ops are dropped with them. A weight gradient over zero tokens
    and several experts still runs: its token-group quantizations write the
    groups' padding and its grouped GEMM the zeros.

    Kernel ABI (buffers must not overlap): inputs, (i32 group offsets),
    outputs, and for grouped kernels a 1-element i32 `status` buffer (0 =
    ok; 1 = the offsets were negative, decreasing, past the token axis or
    needed more padded rows/columns than the output holds, and nothing was
    written). Quantize kernels take these as `noalias` generic pointers
    (`!llvm.ptr`, `mxmoe.element_type` argument attributes; the kernel views
    them as memref<?xT>) followed by their sizes as i64 parameters
    (`mxmoe.scalar` names: rowwise blocked batch, rows, len, scale_rows,
    scale_cols; tiled columnwise batch, tokens, rows, hp_batch, scale_rows,
    scale_cols; otherwise batch, rows, len, hp_batch, hp_row, hp_along,
    scale_rows, scale_cols, tokens), so one kernel serves every shape of
    its kind (element types, layout, rounding, axis, group count); their
    grid is chosen per launch (the op's `mxmoe.grid`, the program step's
    "grid"). The sizes must describe the bound buffers (the op's bindings
    do); unlike the grouped GEMM's, quantize kernels do not validate them.
    With host launches the launch takes the buffers' aligned pointers
    (`memref.extract_aligned_pointer_as_index`): a buffer-deallocation
    pass run later must keep the buffers alive until the launch. Dequantize and swizzle kernels take static-shaped memrefs
    (`use-bare-ptr-memref-call-conv=1`: one pointer each) and carry
    `mxmoe.grid`. One thread per output 32-element block (quantize,
    dequantize) or per output scale byte (swizzle; rowwise blocked
    quantize), `block-size` threads per CTA, a 1-D grid of ceil(work /
    block-size) CTAs. Every output byte is written,
    padding included (padding scales are 0x00), so outputs need no
    zero-fill.

    Semantics are bit-exact with the OCP MX v1.0 spec as TorchAO implements
    it (OCP MX v1.0 section 6.3; torchao `torchao/prototype/mx_formats/mx_tensor.py`): element conversion by PTX
    `cvt.rn.satfinite.{e4m3,e5m2}x2.f32` (`nvvm.convert.f32x2.to.f8x2`),
    scale bytes computed from the fp32 bits of amax with integer ops (FLOOR,
    RCEIL, CEIL, EVEN), NaN/Inf blocks get scale 0xFF, dequantization by
    `cvt.rn.f16x2.{e4m3,e5m2}x2` (exact) times 2^(b-127) built from bits.

    Supported: f8E4M3FN, f8E5M2 and f4E2M1FN (packed two per byte) data;
    bf16/f16/f32 high precision; rowwise (last axis) and columnwise (axis 0
    of 2-D, axis 1 of 3-D) quantization; row-major and blocked_128x4 scales
    (swizzle fused into quantize); token-group offsets (jagged token axis
    with row-major or per_k_group scales, M-grouped blocked scales);
    swizzles in both directions (2-D, 3-D, M-groups, K-groups). FP6 data and
    dynamic shapes fail the pass with a diagnostic naming what is
    unsupported.

    Scale tiles (`mxmoe.quantize` `scale_tile = [r, c]`, the MX128 recipe):
    [1, c] tiles in every layout above and in the compact one (one byte per
    tile), rowwise with one thread per 1x32 block whose tile's c/32 threads
    form a lane group that combines the amax with `shfl.sync.bfly` (c/32 a
    power of two), else one thread per tile; on a jagged token axis c-token
    windows restarting at every group start. [r, c] tiles with r > 1
    (weights, no token groups): one CTA per tile (at most 4 x block-size
    blocks of 32), the amax reduced by warp shuffles and shared memory;
    blocked scales need r = c = 128 (one 512-byte atom per tile), other
    multi-row tiles write row-major or compact scales (a diagnostic
    otherwise). `mxmoe.dequantize` reads compact scales.

    `mxmoe.grouped_matmul` with MXFP8 operands (f8E4M3FN/f8E5M2 data,
    blocked_128x4 scales as mxmoe-pack-scales leaves them) becomes, for
    `chip=sm_90a`, a persistent warp-specialized wgmma kernel (see
    lib/Conversion/MXMoEToGPU/GroupedMatmul.h): TMA loads of A/B tiles
    into 128B-swizzled shared memory, bulk copies of the blocked scale
    atoms, an mbarrier ring of `gemm-stages` stages, and one of two exact
    MMA strategies (`gemm-sm90-mma`): `fp8` runs per MX block one fp8 wgmma
    m64nNk32 into a fresh fp32 partial and one tf32 wgmma m64nNk8 that
    forms the block's scale product sa x sb from decoded scale tables, then
    adds partial x product to the fp32 accumulator (one FFMA per element); `bf16` dequantizes each stage exactly to bf16 in shared
    memory (two buffers) and accumulates the whole K with bf16 wgmma
    m64nNk16 in fp32; `auto` (default) takes `bf16` for f32 outputs (whose
    1e-4 accuracy the fp8 MMA's internal block accumulation misses) and
    `fp8` otherwise. MX128 operands (both scale types record a tile,
    `#mxmoe.scale_layout<blocked_128x4, tile = [r, c]>`, c a multiple of
    128: DeepSeek-V3's 1x128 / 128x128 recipe, arXiv 2412.19437 section
    3.3.2) make the `fp8` strategy chain a stage's four k32 wgmmas into one
    fp32 partial and promote it once per 128 K with the stage's scale
    product (`mxmoe.mma` = `wgmma_fp8_promote_k128`); on a jagged token
    axis the 128-token windows restart at every group's padded start, and
    a group's last window runs only its live 32-blocks. With f32 outputs
    this path's normwise error is about 2e-4 (the fp8 wgmma's internal
    accumulation), so `auto` keeps `bf16` for them. The kernel's sizes are run-time parameters, so one
    kernel serves every grouped GEMM of its kind (2D x 3D or 2D x 2D,
    element types, output type, K % 128 == 0, strategy, tile config): ops
    of that kind reuse it. Kernel ABI: seven pointers (tensor map of lhs,
    lhs scales, tensor map of rhs, rhs scales, i32 offsets, output, i32
    status; `mxmoe.element_type` on each; the maps typed
    `!nvgpu.tensormap.descriptor<tensor = memref<BOX_ROWS x 128 x i8, 3>,
    swizzle_128b, l2promo_256b, oob zero>`, a generic pointer after
    convert-gpu-to-nvvm, the others `!llvm.ptr<1>`) then the i64 sizes M, N, K,
    G, lhs scale rows and columns, rhs scale rows and columns of one expert
    (`mxmoe.scalar` names); the op's `mxmoe.kernel_args` binds them as
    `value:N`. Status 0 = done, 1 = offsets rejected, 2 = sizes rejected
    (G < 1, K not a positive multiple of 32 -- 128 for a kernel built for
    such K --, scale extents other than the blocked layout's). The two
    tensor maps are 128-byte CUtensorMaps in device memory described by the
    `mxmoe.tensor_map` argument attributes (box, swizzle, data type; the
    dims come from the bound tensor; mxmoeRtEncodeTensorMap2D builds
    them), the grid is `gemm-ctas` CTAs of 384 threads with
    `mxmoe.dynamic_smem` bytes of dynamic shared memory (each kernel checks
    its budget: an op error names the strategy and the option to lower);
    `mxmoe.mma` names the strategy. The strategy and tile configuration
    are the op's `mxmoe.gemm_config` (`#mxmoe.gemm_config`, attached by
    `mxmoe-select-gemm-config` or pinned by the user): its strategy must
    be one of `chip`'s, `wgmma_fp8_promote_k128` needs MX128 scales and the
    kernel must fit the chip's shared memory (and TMEM), else an op error;
    an op without one gets the selection of `mxmoe-select-gemm-config`
    from this pass's gemm-* options. Because the tensor maps depend on
    the operands' addresses, grouped_matmul ops are always annotated with
    `mxmoe.kernel`, even with host-launch: a runtime encodes the maps from
    the manifest (mxmoeRtEncodeTensorMap2D), or one-shot-bufferize launches
    the op with maps from `nvgpu.tma.create.descriptor` (not for MXFP4
    operands, whose unpacking 16U4_ALIGN16B map that op cannot encode). For
    `chip=sm_100a` and `chip=sm_103a` the same op becomes the tcgen05
    kernel (same parameters; 192 threads: TMA warp, block-scaled
    tcgen05.mma kind::mxf8f6f4 issuer with tcgen05.cp of the scale atoms
    into TMEM, four tcgen05.ld epilogue warps; `gemm-tile-n` 64, 128 or
    256; shared-memory and TMEM budgets checked;
    docs/tcgen05-grouped-gemm.md), which also takes f4E2M1FN (MXFP4)
    operands in 2D x 3D GEMMs with K % 128 == 0 (unpacking TMA type
    16U4_ALIGN16B). FP6 operands, FP4 on sm_90a, bf16 operands and
    row-major scales fail with a diagnostic.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::vector::VectorDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::cf::ControlFlowDialect"
  ];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "threads per CTA of the generated kernels (32..1024, a multiple "
           "of 32)">
  ] # MXMoEGemmOptions # [
    Option<"hostLaunch", "host-launch", "bool", /*default=*/"true",
           "replace each op by a gpu.launch_func on buffers (false: keep "
           "the op and annotate it with mxmoe.kernel, for drivers that "
           "launch kernels from a manifest)">,
    Option<"reuseKernels", "reuse-kernels", "bool", /*default=*/"false",
           "with host-launch=false: an op equal to an earlier one (op name, "
           "attributes, operand and result types, repeated operands) takes "
           "that op's kernel annotation instead of a kernel of its own; its "
           "kernel would be identical to the earlier op's, which "
           "mxmoe-dedupe-kernels would keep, so after that pass the result "
           "is the same, with one kernel generated per distinct op "
           "(mxmoe-compile's pipeline; a model of equal layers generates "
           "one layer's kernels)">
  ];
}

def MXMoEDedupeKernels : Pass<"mxmoe-dedupe-kernels", "::mlir::ModuleOp"> {
  let summary = "Merge identical GPU kernels generated for different ops";
  let description = [{
    `convert-mxmoe-to-gpu` emits one `gpu.func` kernel per quantize,
    dequantize and swizzle op (grouped GEMMs share one kernel per kind
    already), named after the op's function (`<fqn>_<pass>__<op>_<index>`).
    Ops of the same kind get identical kernels (quantize kernels take their
    sizes at run time; dequantize and swizzle kernels need equal shapes
    too): the layer's 54 ops per chip of a Llama 4 Scout layer need 8
    distinct kernels (6 quantize, 2 grouped GEMM).

    This pass keeps the first of every set of identical kernels of a
    `gpu.module` (identical = the same generic-form IR apart from the
    symbol name: body, signature, argument attributes such as
    `mxmoe.tensor_map`, and kernel attributes such as `mxmoe.grid`),
    redirects every reference to the others (`mxmoe.kernel` attributes,
    `gpu.launch_func`) to it, and erases them. Later stages (NVVM lowering,
    LLVM NVPTX code generation, ptxas) then compile each distinct kernel
    once; `mxmoe-compile` lists every op a kernel serves under `uses` in
    the manifest.

    The result is the same program: a kernel is a pure function of its
    parameters, so launching one copy or another cannot change an output.

    Duplicates are found by a structural hash of each kernel (compared
    exactly within a hash bucket) and every reference is redirected in one
    walk of the module, so the pass is linear in the module's size. With
    `convert-mxmoe-to-gpu{reuse-kernels}` (mxmoe-compile's pipeline) ops
    equal to an earlier op generate no kernel at all; this pass then merges
    the kernels of ops that differ only in what the kernel takes at run
    time (e.g. a quantize's sizes), with the same result as without reuse.
  }];
}

#endif // MXMOE_CONVERSION_PASSES
