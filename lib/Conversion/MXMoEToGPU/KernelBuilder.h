//===- KernelBuilder.h - building blocks of the SIMT MX kernels -*- C++ -*-===//
//
// Index arithmetic, the per-CTA group table (padded prefix sums of token
// group sizes, validated at run time), and the bit-exact MX math (scale
// byte, reciprocal, element conversion) shared by the quantize, dequantize
// and swizzle kernel generators of convert-mxmoe-to-gpu.
//
// Math: OCP MX v1.0 specification section 5 as torchao implements it
// (torchao/prototype/mx_formats/mx_tensor.py); layouts: torchao to_blocked
// (torchao/prototype/mx_formats/utils.py) and its grouped variants.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_LIB_CONVERSION_MXMOETOGPU_KERNELBUILDER_H
#define MXMOE_LIB_CONVERSION_MXMOETOGPU_KERNELBUILDER_H

#include "mxmoe/Dialect/MXMoE/IR/MXMoEAttrs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::mxmoe::kernels {

/// The one builder of the kernel generators: an ImplicitLocOpBuilder with
/// the integer/index, cast, memory and LLVM-pointer helpers the SIMT
/// kernels (quantize, dequantize, swizzle) and the grouped-GEMM kernels
/// use. Index values are 64-bit after lowering (sizes above 2^31 are safe).
/// Naming: a `c` suffix takes a compile-time constant operand (mulc,
/// ceilDivc, roundUpc; div and rem too), a `v` suffix a Value (divv);
/// division, remainder and the ult/ule/min compares are unsigned.
struct KB : ImplicitLocOpBuilder {
  using ImplicitLocOpBuilder::ImplicitLocOpBuilder;

  // Constants.
  Value idx(int64_t v);
  Value i32(int64_t v);
  Value i8(int64_t v);
  /// i1 constant.
  Value i1(bool v);
  Value f32(float v);

  // Integer arithmetic (index or iN operands of one type).
  Value add(Value a, Value b);
  Value sub(Value a, Value b);
  Value mul(Value a, Value b);
  /// a * c; a itself for c == 1.
  Value mulc(Value a, int64_t c);
  /// a / c (unsigned); a itself for c == 1.
  Value div(Value a, int64_t c);
  /// a / b (unsigned).
  Value divv(Value a, Value b);
  /// Unsigned quotient and remainder (a - q * d) of index values.
  std::pair<Value, Value> divRem(Value a, Value d);
  /// Quotient and remainder of index values (non-negative, < 2^31) by a
  /// run-time divisor, in 32-bit arithmetic: a 64-bit division is a long
  /// instruction sequence (the grouped-GEMM loader's 40 registers cannot
  /// hold it).
  std::pair<Value, Value> divRem32(Value a, Value d);
  /// a % c (unsigned).
  Value rem(Value a, int64_t c);
  /// ceil(a / c) and roundUp(a, c) of a non-negative index value.
  Value ceilDivc(Value a, int64_t c);
  Value roundUpc(Value a, int64_t c);
  Value maxsi(Value a, Value b);
  Value minsi(Value a, Value b);
  Value minui(Value a, Value b);

  // Compares (i1 results) and selection.
  Value ult(Value a, Value b);
  Value ule(Value a, Value b);
  Value slt(Value a, Value b);
  Value sge(Value a, Value b);
  Value eq(Value a, Value b);
  Value ne(Value a, Value b);
  Value select(Value c, Value a, Value b);

  // Bitwise operations; on i1 values andi / ori / xori are the logical and
  // / or / xor.
  Value andi(Value a, Value b);
  Value ori(Value a, Value b);
  Value xori(Value a, Value b);
  /// Logical not of an i1.
  Value lnot(Value a);
  Value shrui(Value a, int64_t s);
  Value shli(Value a, int64_t s);

  // Casts.
  Value bitcast(Type t, Value v);
  /// index -> i64, index -> i32 and i32 -> index (signed casts).
  Value toI64(Value idx);
  Value toI32(Value idx);
  Value fromI32(Value v);

  // memref element access.
  Value load(Value mem, Value index);
  void store(Value v, Value mem, Value index);

  // LLVM pointers (the grouped-GEMM kernels address memory through them).
  /// !llvm.ptr in address space `as` (0 generic, 1 global, 3 shared, 6
  /// tensor memory).
  Type ptr(unsigned as);
  /// Shared-window address (index) -> !llvm.ptr<3>.
  Value sptr(Value addr);
  /// Generic pointer of a global (`!llvm.ptr<1>`) kernel argument.
  Value genericPtr(Value global);
  /// Address of element `i` (index) of type `t` at global pointer `base`.
  Value elemPtr(Type t, Value base, Value i);
  /// Address of byte `offset` (index) at global pointer `base`.
  Value gep8(Value base, Value offset);
  /// Load / store of element `i` of type `t` at global pointer `base`.
  Value ldg(Type t, Value base, Value i);
  void stg(Value v, Value base, Value i);
  /// Load / store at shared-window address `addr` (index).
  Value lds(Type t, Value addr);
  void sts(Value v, Value addr);

  // Blocked scale layout.
  /// Byte offset of scale (r, c) in the blocked 128x4 layout with `cp`
  /// padded columns: ((r/128)*(cp/4) + c/4)*512 + (r%32)*16 +
  /// ((r%128)/32)*4 + c%4 (torchao to_blocked). `cp` may be a value.
  Value blockedOffset(Value r, Value c, Value cp);
  Value blockedOffset(Value r, Value c, int64_t cp);
  /// Byte offset of row `r` (in [0, 128)) inside one 512-byte 128x4 atom
  /// of the blocked layout: (r % 32) * 16 + (r / 32) * 4; the row's four
  /// scale bytes follow it (the in-atom part of blockedOffset).
  Value atomRowOffset(Value r);
  /// Inverse: the (row, col) stored at byte `o` of a blocked buffer.
  std::pair<Value, Value> blockedCoord(Value o, Value cp);

  /// Number of leading entries of the non-decreasing index array `arr`
  /// (elements [0, n)) that are <= key: a fixed-trip binary search.
  Value countLE(Value arr, int64_t n, Value key);
};

/// Padded prefix sums of group sizes, one array per unit: entry g is
/// sum_{h<g} roundUp(ceilDiv(size_h, divisor), roundTo); entry G is the
/// total, which must not exceed `capacity` (checked at run time).
struct PrefixUnit {
  int64_t divisor;
  int64_t roundTo;
  int64_t capacity;
  /// Run-time kernels: when >= 0, the capacity is scalar parameter
  /// `capacityScalar` divided by `capacity`.
  int capacityScalar = -1;
};

/// atomicMax(status[0], code) on a kernel's i32 status word (signed: -1 <
/// 0 < 1 < 2 < 3 < 4; mxmoe/KernelStatus.h): how threads that find bad input
/// report it when more than one may.
void atomicMaxStatus(KB &b, Value status, Value code);

/// Runs `then` when `cond` (i1) holds (an scf.if without results).
void ifThen(KB &b, Value cond, function_ref<void()> then);
/// Runs `then` or `otherwise`.
void ifThenElse(KB &b, Value cond, function_ref<void()> then,
                function_ref<void()> otherwise);

/// A 16-byte aligned workgroup (shared-memory) buffer of `elems` elements
/// of `elem`, added to the gpu.func `b` builds in (a workgroup attribution:
/// static shared memory).
Value addSharedBuffer(KB &b, int64_t elems, Type elem);

/// The group table of a CTA: group end offsets and the prefix arrays, in
/// shared memory, built by all threads of the CTA (the offsets copied in,
/// validated per group, the prefix arrays scanned in parallel) and
/// published with a barrier.
struct GroupTable {
  int64_t numGroups = 0;
  Value ends;                ///< memref<G x index>, workgroup memory
  SmallVector<Value> starts; ///< memref<(G+1) x index> per PrefixUnit
  /// Start (first row/token) of group g: 0 or ends[g-1].
  Value groupBegin(KB &b, Value g);
};

/// Creates `gpu.func @name(args) kernel` in `module` with one thread per
/// work item (1-D grid of ceil(work / blockSize) CTAs of blockSize
/// threads). When `groups` is set, the kernel first builds a GroupTable
/// from the i32 `offsets` argument at index `groups->offsetsArg`, writes
/// status[0] (argument `groups->statusArg`) = 0 if the offsets are valid
/// (non-negative, non-decreasing, <= total, padded totals within capacity)
/// and 1 otherwise, and in the latter case returns without writing any
/// output. `body(b, args, tid, table)` fills the per-thread region.
struct GroupSpec {
  unsigned offsetsArg;
  unsigned statusArg;
  int64_t numGroups;
  int64_t total;
  SmallVector<PrefixUnit> units;
  /// Run-time kernels: when >= 0, the total is scalar parameter
  /// `totalScalar` (`total` is ignored).
  int totalScalar = -1;
};
gpu::GPUFuncOp
createKernel(gpu::GPUModuleOp module, StringRef name, TypeRange args,
             int64_t work, int64_t blockSize, const GroupSpec *groups,
             function_ref<void(KB &, ValueRange, Value, GroupTable &)> body);

/// A kernel whose sizes are run-time parameters, so that one kernel serves
/// every shape of its kind: generic device pointers (`views`: the element
/// type of each; the body sees memref<?xT> views of them, in that order)
/// followed by i64 scalars (`scalars`: their names, set as `mxmoe.scalar`
/// argument attributes; the body sees index values). The grid is chosen
/// per launch, ceil(work / blockSize) CTAs of blockSize threads, with
/// `work` computed from the scalars by `workOf` (in the kernel; the host
/// computes the same from the op's shapes), so the kernel carries no
/// `mxmoe.grid`. GroupSpec indices refer to `views` (and to `scalars` for
/// totalScalar / capacityScalar).
struct RuntimeShapeSpec {
  SmallVector<Type> views;
  SmallVector<std::string> scalars;
};
gpu::GPUFuncOp createKernel(
    gpu::GPUModuleOp module, StringRef name, const RuntimeShapeSpec &spec,
    function_ref<Value(KB &, ValueRange)> workOf, int64_t blockSize,
    const GroupSpec *groups,
    function_ref<void(KB &, ValueRange, ValueRange, Value, GroupTable &)> body);

/// E8M0 scale byte (i32 in [0, 255]) of a block from its fp32 amax
/// (torchao mx_tensor.py, to_mx): FLOOR / CEIL / EVEN from the bits of amax,
/// RCEIL from d = amax * fp32(1/max_pos) rounded up to a power of two
/// (cvt.rp.ue8m0x2.f32 semantics with integer ops, so sm_90a runs it
/// too). NaN/Inf amax gives 255.
Value computeScaleByte(KB &b, Value amax, RoundingMode mode,
                       ::mxmoe::MXElementKind kind);
/// fp32 2^(127 - byte); byte 254 -> 2^-127, 255 -> NaN.
Value reciprocalScale(KB &b, Value byte);
/// fp32 2^(byte - 127) of an i32 E8M0 byte (OCP MX v1.0, section 5; the
/// scalar reference is e8m0ToFloat): byte 0 -> 2^-127 (the subnormal
/// 0x00400000, never 0), 255 -> NaN. The one E8M0 decoder of the SIMT and
/// grouped-GEMM kernels. `shiftFirst` only orders the emitted ops (the
/// grouped-GEMM kernels emit the shift before the byte-0 test, and keep
/// their generated code), never the values.
Value decodeScale(KB &b, Value byte, bool shiftFirst = false);
/// |x| by clearing the sign bit (NaN stays NaN).
Value absf(KB &b, Value x);
/// amax of 32 fp32 values with NaN propagation (maximumf tree).
Value blockAmax(KB &b, ArrayRef<Value> xs);

/// Converts n (even) fp32 values, already multiplied by the reciprocal
/// scale, to MX element codes, RNE with saturation, and stores them at
/// element index `elemIndex` of the flat data buffer (n/2 bytes for E2M1,
/// two codes per byte with element 2i in the low nibble; n bytes for FP8),
/// as one aligned vector store.
/// E4M3/E5M2 use PTX cvt.rn.satfinite.{e4m3,e5m2}x2.f32; E2M1 uses exact
/// integer/compare code (identical on sm_90a and sm_100a).
void storeElements(KB &b, ArrayRef<Value> scaled, ::mxmoe::MXElementKind kind,
                   Value data, Value elemIndex);
/// Stores 32 zero codes (group padding) at `elemIndex`.
void storeZeroElements(KB &b, ::mxmoe::MXElementKind kind, Value data,
                       Value elemIndex);
/// Loads the 32 codes at element index `elemIndex` and decodes them to f32
/// (exact): FP8 by cvt.rn.f16x2.{e4m3,e5m2}x2, E2M1 by table arithmetic.
SmallVector<Value> loadElements(KB &b, ::mxmoe::MXElementKind kind, Value data,
                                Value elemIndex);
/// Loads and decodes one element code at element index `elemIndex`.
Value loadElement(KB &b, ::mxmoe::MXElementKind kind, Value data,
                  Value elemIndex);

/// Expands the math ops of `kernel` (math.exp, log, tanh, erf, ...: MLIR's
/// polynomial approximations and f32 expansions; mxmoe links no CUDA math
/// library) and lowers what is left to NVPTX instructions: fma ->
/// fma.rn.f32, floor -> cvt.rmi.f32.f32, absf -> abs.f32, sqrt ->
/// sqrt.rn.f32. Any other math op is an error of `op`, whose math ops are
/// described by `where` ("in the producer").
LogicalResult expandMath(gpu::GPUFuncOp kernel, Operation *op, StringRef where);

/// Flat 1-D kernel-argument type of a tensor: memref<N x elem>; MXFP4 data
/// is packed, memref<N/2 x i8>.
MemRefType flatMemRef(RankedTensorType t);

} // namespace mlir::mxmoe::kernels

#endif // MXMOE_LIB_CONVERSION_MXMOETOGPU_KERNELBUILDER_H
