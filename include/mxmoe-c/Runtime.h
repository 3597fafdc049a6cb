/*===- mxmoe-c/Runtime.h - C API of the mxmoe kernel runtime -----*- C -*-===*\
|*                                                                            *|
|* Loads kernels emitted by mxmoe (PTX or cubin) and launches them through   *|
|* the CUDA driver API, which is opened at run time (dlopen libcuda.so.1):   *|
|* building and linking need no CUDA toolkit, and machines without a driver *|
|* get MXMOE_RT_ERROR_NO_DRIVER instead of a crash.                          *|
|*                                                                            *|
|* Every function returns a status; on failure mxmoeRtLastError() gives a    *|
|* message naming the CUDA error (e.g. "CUDA_ERROR_INVALID_PTX") and the     *|
|* kernel or call involved. The message is per thread.                       *|
|*                                                                            *|
|* Kernel ABI (see convert-mxmoe-to-gpu): device pointers, then for grouped *|
|* GEMMs and quantize kernels their int64 sizes (mxmoeRtLaunchWithScalars;  *|
|* the manifest's "scalar" params, the program step's "value" bindings and  *|
|* "grid"). Grouped kernels take                                            *|
|* a 1-element int32 status buffer (the last pointer), which they set to 0  *|
|* (input valid), 1 (offsets rejected) or 2 (GEMM sizes rejected); nothing   *|
|* is written unless 0. mxmoeRtCheckStatus reads it back.                    *|
\*===----------------------------------------------------------------------===*/

#ifndef MXMOE_C_RUNTIME_H
#define MXMOE_C_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum MxmoeRtStatus {
  MXMOE_RT_SUCCESS = 0,
  /** libcuda.so.1 could not be opened, or cuInit failed. */
  MXMOE_RT_ERROR_NO_DRIVER = 1,
  /** A CUDA driver call failed; the message names the CUDA error. */
  MXMOE_RT_ERROR_CUDA = 2,
  /** Bad arguments (null pointers, zero-sized grid, too many parameters). */
  MXMOE_RT_ERROR_INVALID_ARGUMENT = 3,
  /** The kernel is not in the module. */
  MXMOE_RT_ERROR_NOT_FOUND = 4,
  /** A grouped kernel rejected its runtime input (status buffer != 0). */
  MXMOE_RT_ERROR_KERNEL_REJECTED_INPUT = 5,
  /** Host memory exhausted, or an internal error; the message says which. */
  MXMOE_RT_ERROR_INTERNAL = 6,
} MxmoeRtStatus;

/** A loaded PTX or cubin image in the current CUDA context. */
typedef struct MxmoeRtModule_ *MxmoeRtModule;

/** Loads a PTX (NUL-terminated text) or cubin/fatbin image of `size` bytes
 *  into the calling thread's current CUDA context (the primary context of
 *  device 0 is made current if there is none). PTX is JIT-compiled by the
 *  driver. */
MxmoeRtStatus mxmoeRtModuleLoad(const void *image, size_t size,
                                MxmoeRtModule *module);

/** Unloads a module (a null module is ignored). */
void mxmoeRtModuleUnload(MxmoeRtModule module);

/** Launches `kernel` with a grid of grid[0..2] CTAs of block[0..2] threads,
 *  `sharedBytes` of dynamic shared memory (above 48 KiB the function is
 *  opted in with cuFuncSetAttribute first), on `stream` (NULL: the default
 *  stream). `pointers` holds the kernel's `numPointers` device-pointer
 *  parameters in order (at most 64); each must be 16-byte aligned (NULL
 *  only for an empty buffer), else MXMOE_RT_ERROR_INVALID_ARGUMENT naming
 *  the parameter and nothing is launched. Asynchronous: errors of the
 *  kernel itself surface at the next synchronization. */
MxmoeRtStatus mxmoeRtLaunch(MxmoeRtModule module, const char *kernel,
                            const uint32_t grid[3], const uint32_t block[3],
                            uint32_t sharedBytes, void *stream,
                            void *const *pointers, size_t numPointers);

/** As mxmoeRtLaunch, for kernels whose parameters are `numPointers` device
 *  pointers followed by `numScalars` 64-bit integers (the sizes of the
 *  grouped-GEMM and quantize kernels, manifest params of kind "scalar",
 *  bound by the program step's "value"s; such kernels take the step's
 *  "grid"); at most 64 parameters in all. Only the pointers are checked
 *  for alignment. */
MxmoeRtStatus
mxmoeRtLaunchWithScalars(MxmoeRtModule module, const char *kernel,
                         const uint32_t grid[3], const uint32_t block[3],
                         uint32_t sharedBytes, void *stream,
                         void *const *pointers, size_t numPointers,
                         const int64_t *scalars, size_t numScalars);

/** Element types of a TMA descriptor (the manifest's "data_type"). */
typedef enum MxmoeRtTensorMapDataType {
  /** "uint8": one byte per element (fp8 data, e8m0 scales). */
  MXMOE_RT_TENSOR_MAP_UINT8 = 0,
  /** "16U4_ALIGN16B": 4-bit elements packed two per byte in global memory
   *  (fp4 e2m1, element 2i in the low nibble), unpacked by the copy into
   *  16-byte shared-memory chunks of 8 data bytes + 8 padding bytes, the
   *  layout tcgen05.mma kind::mxf8f6f4 reads (PTX ISA §9.7.16.10.4.4;
   *  CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B). Needs innerElements % 128 == 0,
   *  a 32-byte aligned address and row stride. Blackwell only. */
  MXMOE_RT_TENSOR_MAP_16U4_ALIGN16B = 1,
} MxmoeRtTensorMapDataType;

/** Encodes a 2-D TMA descriptor (CUtensorMap, 128 bytes, written to the
 *  host buffer `tensorMap`, which must be 64-byte aligned) of a row-major
 *  tensor of `dataType` elements at device address `globalAddress`: `rows`
 *  rows of `innerElements` elements, `rowStrideBytes` apart (a multiple of
 *  16), read in boxes of `boxRows` x `boxInner` elements (each <= 256),
 *  with a shared-memory swizzle of `swizzleBytes` (0, 32, 64 or 128; the
 *  inner box, in shared-memory bytes, must not exceed it). Out-of-bounds
 *  box elements read as zero. The grouped-GEMM kernels take such maps
 *  (copied to device memory): box, swizzle and data type from the kernel's
 *  "tensor_map" parameter in the manifest, dims and row stride from the
 *  program step's binding (the bound tensor viewed as [rows, K]). Calls
 * cuTensorMapEncodeTiled; a misaligned address or stride or an unknown data
 * type is MXMOE_RT_ERROR_INVALID_ARGUMENT. */
MxmoeRtStatus mxmoeRtEncodeTensorMap2D(void *tensorMap,
                                       MxmoeRtTensorMapDataType dataType,
                                       const void *globalAddress,
                                       uint64_t innerElements, uint64_t rows,
                                       uint64_t rowStrideBytes,
                                       uint32_t boxInner, uint32_t boxRows,
                                       uint32_t swizzleBytes);

/** Waits for `stream` (NULL: the whole context) and reports asynchronous
 *  kernel errors (e.g. CUDA_ERROR_MISALIGNED_ADDRESS). */
MxmoeRtStatus mxmoeRtSynchronize(void *stream);

/** Copies `bytes` bytes from `src` to `dst` on `stream` (NULL: the default
 *  stream), asynchronously: cuMemcpyAsync, which takes device memory or
 *  page-locked host memory on either side (unified addressing). Inside a
 *  CUDA stream capture it becomes a memcpy node of the graph, so a host
 *  buffer it writes or reads must stay allocated as long as the graph is
 *  replayed: mxmoe's Python programs copy the status words of captured
 *  calls to page-locked memory with it, without PyTorch's pinned-memory
 *  bookkeeping (its events cannot be queried during a capture). 0 bytes do
 *  nothing; a null pointer otherwise is MXMOE_RT_ERROR_INVALID_ARGUMENT. */
MxmoeRtStatus mxmoeRtMemcpyAsync(void *dst, const void *src, size_t bytes,
                                 void *stream);

/** Allocates `bytes` (> 0) of device memory of the current context,
 *  ordered on `stream` (cuMemAllocAsync: the device's default memory pool,
 *  not a framework's allocator), and stores its address in `*ptr`. The
 *  Python programs keep their cached tensor maps there, outside PyTorch's
 *  caching allocator (whose CUDA-graph pools reject allocations that
 *  outlive a capture they do not own). A null `ptr` or 0 bytes is
 *  MXMOE_RT_ERROR_INVALID_ARGUMENT. */
MxmoeRtStatus mxmoeRtMemAllocAsync(void **ptr, size_t bytes, void *stream);

/** Frees memory of mxmoeRtMemAllocAsync once the work enqueued on `stream`
 *  before this call is done (cuMemFreeAsync); a null `ptr` is nothing. */
MxmoeRtStatus mxmoeRtMemFreeAsync(void *ptr, void *stream);

/** Reads the int32 status a grouped kernel wrote at device address
 *  `statusBuffer` (synchronizing first) and returns
 *  MXMOE_RT_ERROR_KERNEL_REJECTED_INPUT when it is nonzero. */
MxmoeRtStatus mxmoeRtCheckStatus(const void *statusBuffer, const char *kernel);

/** What a grouped kernel's nonzero status word means, as a phrase that
 *  follows "kernel 'NAME' ": status 1 "rejected its group offsets (...)",
 *  status 2 "rejected its sizes (...)", status 3 "rejected its routing
 *  indices (...)", status 4 "rejected its expert ids (...)"
 *  (mxmoe/KernelStatus.h), any other nonzero value "wrote unknown status
 *  N"; NULL for 0. The string has static storage (unknown
 *  codes: per thread, until the next call). mxmoeRtCheckStatus and the
 *  Python binding (mxmoe.runtime.rejection) both use it. */
const char *mxmoeRtStatusMeaning(int32_t status);

/*===------------------------------------------------------------------===*\
 * Launch programs (the C executor)
 *
 * mxmoe-compile writes, per compiled function, a launch program into its
 * manifest.json ("programs", docs/mxmoe-compile.md): the function's
 * arguments, intermediate buffers, constants, and one step per kernel
 * launch with every parameter's binding. A program object binds one of
 * them to the kernels of one chip and runs it on caller buffers:
 *
 *   MxmoeRtProgram p;
 *   mxmoeRtProgramLoad("mxmoe-out", "layers.0.moe.experts.w13.forward",
 *                      "sm_90a", &p);
 *   // args: device addresses of the arguments, manifest order and shapes
 *   // buffers: device memory of mxmoeRtProgramGetBuffer(p, i).bytes each
 *   mxmoeRtProgramRun(p, args, nargs, buffers, nbuffers, stream,
 *                     MXMOE_RT_CHECK_SYNC);
 *   // results: mxmoeRtProgramGetReturn(p, i, ...) names an arg or buffer
 *
 * The program keeps its kernels' module, its constants, its status words
 * (one int32 per grouped kernel, 16 bytes apart) and its tensor maps
 * (encoded on the host and copied to device memory once per distinct set
 * of bound addresses, at most 64 sets, least recently used out), all in
 * the CUDA context current at its first run: every later run must have
 * that context current (else MXMOE_RT_ERROR_INVALID_ARGUMENT; load one
 * program per device). Calls on one program from several threads are
 * serialized by the program. Runs that use its own status words or its
 * tensor-map cache are ordered: such a run on another stream than the
 * previous one waits for it first (an event, on the device), so they never
 * overlap; mxmoeRtProgramEnqueue with the status words and the tensor maps
 * in caller memory orders nothing (runs on several streams overlap),
 * which is also how a run is captured into a CUDA graph
 * (python/mxmoe/program.py runs every program this way).
\*===------------------------------------------------------------------===*/

/** A launch program bound to its kernels. */
typedef struct MxmoeRtProgram_ *MxmoeRtProgram;

/** What a program result is: one of its arguments or one of its buffers. */
typedef enum MxmoeRtProgramSource {
  MXMOE_RT_SOURCE_ARG = 0,
  MXMOE_RT_SOURCE_BUFFER = 1,
} MxmoeRtProgramSource;

/** An argument or buffer of a program. The strings and the shape live as
 *  long as the program. */
typedef struct MxmoeRtTensorInfo {
  const char *dtype;    /**< manifest dtype: "bf16", "f8E4M3FN", "i32", ... */
  const int64_t *shape; /**< row-major shape, `rank` extents */
  size_t rank;
  uint64_t bytes; /**< size in bytes (FP4 data: two elements per byte) */
  int zeroFilled; /**< buffers: 1 when every run zero-fills it (the output
                       of a GEMM whose contraction extent is 0) */
} MxmoeRtTensorInfo;

/** How mxmoeRtProgramRun reports the grouped kernels' status words. */
typedef enum MxmoeRtCheck {
  /** Wait for the stream and read them: a kernel that rejected its input
   *  (offsets or sizes) is MXMOE_RT_ERROR_KERNEL_REJECTED_INPUT naming it. */
  MXMOE_RT_CHECK_SYNC = 0,
  /** Return at once; mxmoeRtProgramCheck reads them later. */
  MXMOE_RT_CHECK_DEFERRED = 1,
} MxmoeRtCheck;

/** Reads `outDir`/manifest.json and binds program `function` to the
 *  kernels built for `chip` ("sm_90a", "sm_100a", "sm_103a"), reading the
 *  cubin the manifest names (else the PTX, JIT-compiled by the driver at
 *  the first run). Needs no GPU: the module is loaded at the first run.
 *  Every step is checked against its kernel's parameters: one binding per
 *  parameter and of its kind (pointer, i64 scalar, tensor map), pointers
 *  before scalars, at most 64, a grid and block without a zero extent, a
 *  tensor map that fits its operand's bytes, an operand of at least a
 *  fixed-size parameter's bytes. A loop step (a tiled block's shard loop)
 *  is unrolled here: its body once per iteration, each row view advanced
 *  by its iteration_bytes and checked to lie inside its operand, 16-byte
 *  aligned (mxmoeRtProgramGetNumSteps and the status words count the
 *  unrolled launches; at most 2^20).
 *  Errors: a missing or malformed manifest, a step failing those checks, a
 *  binding out of range or an unknown swizzle / data type:
 *  MXMOE_RT_ERROR_INVALID_ARGUMENT; host memory exhausted:
 *  MXMOE_RT_ERROR_INTERNAL; no such
 *  program, or its kernels not built for `chip`: MXMOE_RT_ERROR_NOT_FOUND
 *  (the message lists the programs). */
MxmoeRtStatus mxmoeRtProgramLoad(const char *outDir, const char *function,
                                 const char *chip, MxmoeRtProgram *program);

/** Frees a program and its device memory, in the context of its first
 *  run (made current for the call, from any thread). It waits for the runs
 *  that used the program's own memory; runs with caller memory (and graphs
 *  that captured the program) use its constants and module, so they must be
 *  done first (mxmoeRtSynchronize). A null program is nothing. */
void mxmoeRtProgramDestroy(MxmoeRtProgram program);

size_t mxmoeRtProgramGetNumArgs(MxmoeRtProgram program);
size_t mxmoeRtProgramGetNumBuffers(MxmoeRtProgram program);
size_t mxmoeRtProgramGetNumReturns(MxmoeRtProgram program);
size_t mxmoeRtProgramGetNumSteps(MxmoeRtProgram program);

/** Argument / buffer `index`; an index out of range is
 *  MXMOE_RT_ERROR_INVALID_ARGUMENT. */
MxmoeRtStatus mxmoeRtProgramGetArg(MxmoeRtProgram program, size_t index,
                                   MxmoeRtTensorInfo *info);
MxmoeRtStatus mxmoeRtProgramGetBuffer(MxmoeRtProgram program, size_t index,
                                      MxmoeRtTensorInfo *info);

/** Result `index`: an argument or a buffer (its bytes, viewed with the
 *  function's result type). */
MxmoeRtStatus mxmoeRtProgramGetReturn(MxmoeRtProgram program, size_t index,
                                      MxmoeRtProgramSource *source,
                                      size_t *sourceIndex);

/** Runs the program on `stream` (NULL: the default stream). `args` holds
 *  the device addresses of its `numArgs` arguments (contiguous, in the
 *  manifest's order, shapes and dtypes), `buffers` those of its
 *  `numBuffers` intermediate and result buffers (at least
 *  mxmoeRtProgramGetBuffer's `bytes` each; NULL only for 0 bytes). Every
 *  address must be 16-byte aligned. Enqueues: zero-fills, the status words
 *  set to -1, the tensor maps (when this set of addresses is not cached),
 *  one launch per step. A wrong count, a null or misaligned address or a
 *  capturing stream (see mxmoeRtProgramEnqueue) is
 *  MXMOE_RT_ERROR_INVALID_ARGUMENT and enqueues nothing. With
 * MXMOE_RT_CHECK_SYNC it then waits for the stream and checks the status words
 * (see MxmoeRtCheck). */
MxmoeRtStatus mxmoeRtProgramRun(MxmoeRtProgram program, void *const *args,
                                size_t numArgs, void *const *buffers,
                                size_t numBuffers, void *stream,
                                MxmoeRtCheck check);

/** Caller memory of one mxmoeRtProgramEnqueue. */
typedef struct MxmoeRtRunMemory {
  /** Device memory of 16 * mxmoeRtProgramGetNumStatusWords bytes, 16-byte
   *  aligned: word i (an int32 at byte 16 i) is the status of kernel
   *  mxmoeRtProgramGetStatusKernel(i), set to -1 by the run, then to 0 or a
   *  rejection code (mxmoeRtStatusMeaning) by the kernel. NULL: the
   *  program's own words (not inside a capture). */
  void *statusWords;
  /** Device memory of 128 * mxmoeRtProgramGetNumTensorMaps bytes, 64-byte
   *  aligned, that the run's tensor maps are copied into from
   *  `tensorMapsHost` (page-locked host memory of the same size and
   *  alignment, which must stay allocated while the copy can run: inside a
   *  capture, as long as the graph is replayed). Every Enqueue encodes the
   *  maps into `tensorMapsHost` on the host before it returns, so host
   *  memory of an earlier run is reused only once that run's copy is done.
   *  Both or neither. NULL: the program's cache of device copies by address
   *  (not inside a capture). */
  void *tensorMaps;
  void *tensorMapsHost;
} MxmoeRtRunMemory;

/** Enqueues a run as mxmoeRtProgramRun does, with the status words and
 *  tensor maps in `memory` where given, and checks nothing (the caller
 *  reads the status words it gave). On a stream capturing a CUDA graph it
 *  records the run into the graph (zero-fills and status reset as memset
 *  nodes, the tensor-map copy as a memcpy node, the launches); it then
 *  needs `memory` with the status words and the tensor maps the program
 *  has, and the program must have run once outside a capture (its module
 *  is loaded and its constants are uploaded then): else
 *  MXMOE_RT_ERROR_INVALID_ARGUMENT and nothing is recorded. Misaligned
 *  status words (16 bytes) or tensor-map memory (64 bytes), or only one of
 *  the two tensor-map memories: MXMOE_RT_ERROR_INVALID_ARGUMENT. */
MxmoeRtStatus mxmoeRtProgramEnqueue(MxmoeRtProgram program, void *const *args,
                                    size_t numArgs, void *const *buffers,
                                    size_t numBuffers,
                                    const MxmoeRtRunMemory *memory,
                                    void *stream);

/** Status words and tensor maps of a run; the kernel of status word
 *  `index` (NULL out of range; the string lives as long as the program). */
size_t mxmoeRtProgramGetNumStatusWords(MxmoeRtProgram program);
size_t mxmoeRtProgramGetNumTensorMaps(MxmoeRtProgram program);
const char *mxmoeRtProgramGetStatusKernel(MxmoeRtProgram program, size_t index);

/** Waits for the last run that used the program's own memory (its status
 *  words, by mxmoeRtProgramRun or Enqueue without caller status words, or
 *  its tensor-map cache) and checks the status words of the last that used
 *  them:
 *  MXMOE_RT_ERROR_KERNEL_REJECTED_INPUT naming the first kernel that
 *  rejected its input (nothing written by it). Success when the program
 *  has no grouped kernel or has not run. */
MxmoeRtStatus mxmoeRtProgramCheck(MxmoeRtProgram program);

/** The message of the calling thread's last failure ("" if none). */
const char *mxmoeRtLastError(void);

#ifdef __cplusplus
}
#endif

#endif /* MXMOE_C_RUNTIME_H */
