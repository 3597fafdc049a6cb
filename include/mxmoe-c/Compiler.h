/*===- mxmoe-c/Compiler.h - C API of the mxmoe compiler ----------*- C -*-===*\
|*                                                                            *|
|* Embeds the mxmoe compiler in other compilers and languages (the Python    *|
|* package's `mxmoe.compile()` is a ctypes binding of this header). It runs  *|
|* the default pipeline of mxmoe-compile (precision policy, forward and      *|
|* backward expansion of MX grouped GEMMs, scale packing, tiled MLP, kernel  *|
|* generation, PTX per chip, cubin via ptxas when a toolkit is given) and    *|
|* hands back the artifacts: the manifest (JSON: kernels with parameters,    *|
|* launch configuration and tensor-map records; launch programs of the       *|
|* expanded functions), PTX and cubin per chip, the MX-level module and the  *|
|* precision-policy report.                                                  *|
|*                                                                            *|
|* Conventions follow mlir-c: opaque handles, strings as MxmoeStringRef      *|
|* (pointer + length, not necessarily NUL-terminated; owned by the handle    *|
|* they come from), results as MxmoeLogicalResult. Two entry points for      *|
|* MLIR hosts that own their context (mxmoeRegisterDialects on an           *|
|* MlirDialectRegistry, mxmoeRegisterPasses) are declared with mlir-c's      *|
|* handle types.                                                             *|
\*===----------------------------------------------------------------------===*/

#ifndef MXMOE_C_COMPILER_H
#define MXMOE_C_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct MxmoeStringRef {
  const char *data;
  size_t length;
} MxmoeStringRef;

typedef struct MxmoeLogicalResult {
  int8_t value; /**< 1 = success, 0 = failure */
} MxmoeLogicalResult;

/** Pipeline knobs; start from mxmoeCompileOptionsDefault(), which gives
 *  the driver's defaults (a zero-filled struct is not a valid set of
 *  options: gemmCTAs 0 is rejected, llvmOptLevel 0 means O0). String
 *  fields are NUL-terminated and may be NULL (default). The struct grows
 *  between versions: code compiled against one
 *  header must run with that version's library, whose SONAME carries the
 *  version (libmxmoe_compiler.so.0.1; llvmOptLevel, tileRule, recipe,
 *  quantizeWeightsOnce, programsOnly and gemmCluster came in 0.1). */
typedef struct MxmoeCompileOptions {
  const char *chips;       /**< comma-separated: "sm_90a,sm_100a" (default) */
  const char *excludes;    /**< comma-separated extra policy exclude patterns */
  const char *rounding;    /**< "floor" | "rceil" (default) | "ceil" | "even" */
  const char *toolkit;     /**< CUDA root for ptxas; NULL or "": PTX only */
  int64_t tokensPerShard;  /**< tiled-MLP `auto` shard size (32768) */
  int64_t gemmTileN;       /**< grouped-GEMM tile N: 0 = auto (default:
                                192 for sm_90a MX128 2D x 3D bf16 output,
                                2-12 % faster than 128; 128 otherwise),
                                64, 128 (every kernel), 192 (those MX128
                                kernels only), 256 (sm_100a / sm_103a) */
  int64_t gemmStages;      /**< grouped-GEMM pipeline stages, 2..8; 0 = auto
                                (4; 2 for sm_90a bf16-upcast kernels) */
  int64_t gemmCTAs;        /**< persistent CTAs, the GPU's SM count (132) */
  const char *gemmSm90Mma; /**< sm_90a MMA strategy: "fp8", "bf16" or
                                "auto" (default: bf16 for f32 outputs) */
  int64_t llvmOptLevel;    /**< LLVM IR optimization level of the kernels
                                before NVPTX codegen, 0..3 (default 3; 0
                                compiles faster, kernels 1-13 % slower) */
  const char *tileRule;    /**< tiled-MLP `auto` rule: "tokens" (default,
                                ceil(T / tokensPerShard)) or "square" */
  const char *recipe;      /**< MX scale granularity: "mx32" (default),
                                "mx128" or "auto" (mx128 when the chips
                                include sm_90a) */
  int64_t quantizeWeightsOnce; /**< nonzero: MX128 grouped GEMMs quantize
                                    each weight once, in the forward, which
                                    returns the transposed copy for
                                    input_grad (default 0) */
  int64_t programsOnly;        /**< nonzero: stop after kernel generation: the
                                    manifest (kernel rows with `kernel_hash`,
                                    programs), no PTX or cubin (default 0) */
  int64_t gemmCluster;         /**< grouped-GEMM CTAs per cluster along M:
                                    0 = auto (default: 1), 1, or 2 (sm_90a
                                    MX128 2D x 3D bf16 output, even
                                    gemmCTAs: weight tiles multicast; correct
                                    on an H100 but 2-2.6x slower than 1) */
} MxmoeCompileOptions;

MxmoeCompileOptions mxmoeCompileOptionsDefault(void);

/** A compiler: an MLIR context with every dialect, extension and
 *  translation the pipeline needs. Not thread-safe; one per thread. */
typedef struct MxmoeCompiler_ *MxmoeCompiler;
/** The outputs of one successful compilation. */
typedef struct MxmoeArtifacts_ *MxmoeArtifacts;

MxmoeCompiler mxmoeCompilerCreate(void);
void mxmoeCompilerDestroy(MxmoeCompiler compiler);

/** Parses `ir` (model-level or MX-level mxmoe IR; `sourceName` is used in
 *  diagnostics and the manifest's "input") and compiles it. On failure
 *  returns 0 with *artifacts = NULL, and mxmoeCompilerLastError() holds the
 *  diagnostics ("name:line:col: error: ..."), e.g. for malformed IR, an
 *  unsupported chip or shapes the kernels cannot take. */
MxmoeLogicalResult mxmoeCompile(MxmoeCompiler compiler, MxmoeStringRef ir,
                                MxmoeStringRef sourceName,
                                const MxmoeCompileOptions *options,
                                MxmoeArtifacts *artifacts);

/** Diagnostics of the compiler's last failed call ("" after a success). */
MxmoeStringRef mxmoeCompilerLastError(MxmoeCompiler compiler);

MxmoeStringRef mxmoeArtifactsGetManifest(MxmoeArtifacts artifacts);
MxmoeStringRef mxmoeArtifactsGetModel(MxmoeArtifacts artifacts);
MxmoeStringRef mxmoeArtifactsGetPolicyReport(MxmoeArtifacts artifacts);
MxmoeStringRef mxmoeArtifactsGetHeader(MxmoeArtifacts artifacts);
/** Warnings of the successful compilation, as mxmoe-compile prints them
 *  ("name:line:col: warning: ..." followed by the source line and a caret
 *  line; "" when none): e.g. MX ops left uncompiled in a tiled MLP with
 *  run-time shard shapes, functions with kernels but no launch program. */
MxmoeStringRef mxmoeArtifactsGetWarnings(MxmoeArtifacts artifacts);
size_t mxmoeArtifactsGetNumChips(MxmoeArtifacts artifacts);
/** Chip `i` (< GetNumChips): its name, PTX and cubin (length 0 when not
 *  built). Out-of-range indices give an empty string. */
MxmoeStringRef mxmoeArtifactsGetChip(MxmoeArtifacts artifacts, size_t i);
MxmoeStringRef mxmoeArtifactsGetPTX(MxmoeArtifacts artifacts, size_t i);
MxmoeStringRef mxmoeArtifactsGetCubin(MxmoeArtifacts artifacts, size_t i);
void mxmoeArtifactsDestroy(MxmoeArtifacts artifacts);

/** For MLIR hosts with their own context: registers the mxmoe dialect into
 *  `registry` (an mlir::DialectRegistry behind mlir-c's handle), with the
 *  interfaces the lowering attaches (mxmoe ops in one-shot-bufferize,
 *  `!nvgpu.tensormap.descriptor` in the to-LLVM conversions:
 *  mlir::mxmoe::registerMXMoEToGPUInterfaces). */
void mxmoeRegisterDialects(MlirDialectRegistry registry);
/** Registers the mxmoe passes (mxmoe-precision-policy, ...,
 *  convert-mxmoe-to-gpu) and the mxmoe-to-nvvm pipeline with MLIR's pass
 *  registry, so textual pipelines can name them. */
void mxmoeRegisterPasses(void);

#ifdef __cplusplus
}
#endif

#endif /* MXMOE_C_COMPILER_H */
