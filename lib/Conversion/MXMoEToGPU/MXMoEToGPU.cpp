//===- MXMoEToGPU.cpp - MX-level mxmoe ops to SIMT GPU kernels ------------===//
//
// One gpu.func kernel per mxmoe.quantize / dequantize / swizzle_scales,
// built from KernelBuilder.h pieces. Math: shared/reference/mx-formats.md
// (OCP MX v1.0 as torchao implements it); layouts: scale-layout.md.
//
// Thread organisation (every output byte is written exactly once, padding
// included, so outputs need no zero-fill):
//  * quantize: one thread per 32-element data block (+ one per blocked
//    scale byte for the padding of blocked layouts);
//  * dequantize: one thread per block (per element with group offsets);
//  * swizzle: one thread per destination scale byte.
//
//===----------------------------------------------------------------------===//

#include "GroupedMatmul.h"
#include "KernelBuilder.h"

#include "mxmoe/Conversion/Chips.h"
#include "mxmoe/Conversion/Passes.h"
#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"
#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"
#include "mxmoe/KernelStatus.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::mxmoe {
#define GEN_PASS_DEF_CONVERTMXMOETOGPU
#include "mxmoe/Conversion/Passes.h.inc"
} // namespace mlir::mxmoe

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;
using ::mxmoe::kMXBlockSize;
using ::mxmoe::MXElementKind;
using ::mxmoe::roundUp;

namespace {

/// Dynamic shared memory one CTA may use on sm_90a and sm_100a (227 KiB,
/// CUDA Programming Guide, compute capability 9.0 / 10.0 technical
/// specifications).
constexpr int64_t kMaxDynamicSmem = 227 * 1024;

constexpr StringLiteral kKernelModuleName = "mxmoe_kernels";

/// How the kernels see an MX tensor pair: the data is [batch, rows, len]
/// with len contiguous (the quantized axis); data element (b, r, p) is the
/// high-precision element b*hpBatch + r*hpRow + p*hpAlong.
struct MXGeometry {
  int64_t batch = 1, rows = 0, len = 0;
  int64_t hpBatch = 0, hpRow = 0, hpAlong = 1;
  int64_t scaleCols() const { return len / kMXBlockSize; }
  bool rowwise() const { return hpAlong == 1; }
};

FailureOr<MXGeometry> getGeometry(Operation *op, RankedTensorType hp,
                                  RankedTensorType data, int64_t axis) {
  if (!hp.hasStaticShape() || !data.hasStaticShape())
    return op->emitOpError("GPU lowering needs static shapes, got ") << hp;
  ArrayRef<int64_t> s = hp.getShape();
  MXGeometry g;
  g.len = data.getShape().back(); // the padded token axis when jagged
  if (s.size() == 2) {
    g.hpBatch = s[0] * s[1];
    if (axis == 1)
      g.rows = s[0], g.hpRow = s[1], g.hpAlong = 1;
    else
      g.rows = s[1], g.hpRow = 1, g.hpAlong = s[1];
    return g;
  }
  g.batch = s[0];
  g.hpBatch = s[1] * s[2];
  if (axis == 2)
    g.rows = s[1], g.hpRow = s[2], g.hpAlong = 1;
  else if (axis == 1)
    g.rows = s[2], g.hpRow = 1, g.hpAlong = s[2];
  else
    return op->emitOpError("GPU lowering supports 3-D quantization along "
                           "axis 1 or 2 (per-expert weights), not axis 0");
  return g;
}

FailureOr<MXElementKind> getSupportedKind(Operation *op, Type elem) {
  std::optional<MXElementKind> kind = getMXElementKind(elem);
  if (kind && (*kind == MXElementKind::E4M3 || *kind == MXElementKind::E5M2 ||
               *kind == MXElementKind::E2M1))
    return *kind;
  return op->emitOpError("GPU lowering of ")
         << elem << " data is not implemented yet (supported: f8E4M3FN, "
                    "f8E5M2, f4E2M1FN)";
}

/// The checks shared by the quantize and dequantize generators: a supported
/// element type, a supported geometry, static scales.
FailureOr<std::pair<MXElementKind, MXGeometry>>
getMXKernelShape(Operation *op, RankedTensorType hp, RankedTensorType data,
                 RankedTensorType scales, int64_t axis) {
  FailureOr<MXElementKind> kind = getSupportedKind(op, data.getElementType());
  if (failed(kind))
    return failure();
  FailureOr<MXGeometry> geo = getGeometry(op, hp, data, axis);
  if (failed(geo))
    return failure();
  if (!scales.hasStaticShape())
    return op->emitOpError("GPU lowering needs static shapes");
  return std::make_pair(*kind, *geo);
}

/// Block (b, r, c) of a thread index: rowwise puts c fastest (adjacent
/// threads read adjacent 64-B chunks); columnwise puts r fastest (adjacent
/// threads read adjacent columns).
void decompose(KB &b, Value t, const MXGeometry &g, int64_t rs, int64_t cs,
               Value &bi, Value &r, Value &c) {
  if (g.rowwise()) {
    c = b.rem(t, cs);
    r = b.rem(b.div(t, cs), rs);
  } else {
    r = b.rem(t, rs);
    c = b.rem(b.div(t, rs), cs);
  }
  bi = b.div(t, rs * cs);
}

/// decompose() with run-time extents (index values).
void decomposeV(KB &b, Value t, bool rowwise, Value rs, Value cs, Value &bi,
                Value &r, Value &c) {
  Value q0;
  if (rowwise) {
    std::tie(q0, c) = b.divRem(t, cs);
    std::tie(bi, r) = b.divRem(q0, rs);
  } else {
    std::tie(q0, r) = b.divRem(t, rs);
    std::tie(bi, c) = b.divRem(q0, cs);
  }
}

/// Loads the 32 contiguous elements at `base` as f32, with 16-byte vector
/// loads (rowwise: the quantized axis is contiguous).
SmallVector<Value> loadHPBlock(KB &b, Value mem, Type elem, Value base) {
  SmallVector<Value> xs;
  Type f32 = b.getF32Type();
  int64_t vecLen = 16 / (elem.getIntOrFloatBitWidth() / 8);
  auto vt = VectorType::get({vecLen}, elem);
  for (int64_t i = 0; i < kMXBlockSize; i += vecLen) {
    Value v = vector::LoadOp::create(b, vt, mem,
                                     ValueRange{b.add(base, b.idx(i))}, false,
                                     llvm::MaybeAlign(16));
    for (int64_t j = 0; j < vecLen; ++j) {
      Value x = vector::ExtractOp::create(b, v, j);
      xs.push_back(elem == f32 ? x : arith::ExtFOp::create(b, f32, x));
    }
  }
  return xs;
}

/// Loads the 32 elements base + i*stride (a run-time stride) as f32.
/// `validCount`, when set, replaces element i by 0 unless i < validCount
/// (partial last block of a token group); the loads stay in bounds.
SmallVector<Value> loadHPBlockStrided(KB &b, Value mem, Type elem, Value base,
                                      Value stride, Value validCount = {}) {
  SmallVector<Value> xs;
  Type f32 = b.getF32Type();
  Value zero = b.f32(0.0f);
  // Element i at base + i*stride, stepped by one add per element (clamped
  // to element 0 past `validCount`, so the loads stay in bounds).
  Value at = base;
  for (int64_t i = 0; i < kMXBlockSize; ++i) {
    if (i > 0)
      at = b.add(at, stride);
    Value valid = validCount ? b.ult(b.idx(i), validCount) : Value();
    Value x = b.load(mem, valid ? b.select(valid, at, base) : at);
    if (elem != f32)
      x = arith::ExtFOp::create(b, f32, x);
    xs.push_back(valid ? b.select(valid, x, zero) : x);
  }
  return xs;
}

void storeScale(KB &b, Value byteI32, Value mem, Value index) {
  Value byte8 = arith::TruncIOp::create(b, b.getI8Type(), byteI32);
  b.store(b.bitcast(Float8E8M0FNUType::get(b.getContext()), byte8), mem,
          index);
}

void storeZeroScale(KB &b, Value mem, Value index) {
  storeScale(b, b.i32(0), mem, index);
}

/// Quantizes 32 values: computes the scale byte, stores the element codes
/// at `dataIdx`; returns the scale byte (i32).
Value quantizeBlock(KB &b, ArrayRef<Value> xs, RoundingMode mode,
                    MXElementKind kind, Value data, Value dataIdx) {
  Value byte = computeScaleByte(b, blockAmax(b, xs), mode, kind);
  Value inv = reciprocalScale(b, byte);
  SmallVector<Value> scaled;
  for (Value x : xs)
    scaled.push_back(arith::MulFOp::create(b, x, inv));
  storeElements(b, scaled, kind, data, dataIdx);
  return byte;
}

Value largestStartLE(KB &b, GroupTable &t, unsigned unit, Value key) {
  Value count = b.countLE(t.starts[unit], t.numGroups, key);
  return b.sub(count, b.idx(1));
}

/// One kernel parameter as the host sees it: a tensor operand of the op, a
/// result of the op, or the status buffer of a grouped kernel.
struct HostArg {
  enum Kind { In, Out, Status } kind;
  Value value; ///< the operand (In) or the result (Out)
};

/// Host view of a quantize kernel's parameters: input, (offsets), data,
/// scales, (status).
SmallVector<HostArg> quantizeHostArgs(QuantizeOp op) {
  SmallVector<HostArg> args{{HostArg::In, op.getInput()}};
  if (op.getOffsets())
    args.push_back({HostArg::In, op.getOffsets()});
  args.push_back({HostArg::Out, op.getData()});
  args.push_back({HostArg::Out, op.getScales()});
  if (op.getOffsets())
    args.push_back({HostArg::Status, Value()});
  return args;
}

struct KernelGen {
  gpu::GPUModuleOp module;
  int64_t blockSize;
  bool hostLaunch;
  GemmConfig gemm;   ///< fp8 configuration (sm_100a; sm_90a fp8 strategy)
  GemmConfig upcast; ///< sm_90a bf16-upcast configuration
  StringRef sm90Mma; ///< "fp8", "bf16" or "auto" (bf16 for f32 outputs)
  bool sm100;     ///< grouped GEMMs use tcgen05 (else wgmma)
  StringRef chip; ///< target chip (diagnostics)
  /// Kernels generated so far per enclosing function (names are
  /// `<function>__<op>_<n>`, n counting that function's MX ops).
  llvm::StringMap<unsigned> counters;
  /// Grouped-GEMM kernels by kind and configuration: their sizes are
  /// run-time parameters, so later ops of the same kind reuse the kernel.
  llvm::StringMap<gpu::GPUFuncOp> gemmKernels;

  /// Kernel names are PTX identifiers: characters outside [A-Za-z0-9_] of
  /// the function name (e.g. the dots of `layers.0.moe.experts.w13.forward`)
  /// become '_'.
  std::string name(StringRef kind, Operation *op) {
    auto fn = op->getParentOfType<FunctionOpInterface>();
    std::string fnName = fn ? fn.getName().str() : "kernel";
    for (char &ch : fnName)
      if (!llvm::isAlnum(ch) && ch != '_')
        ch = '_';
    return (fnName + "__" + kind + "_" + Twine(counters[fnName]++)).str();
  }

  /// Marks `op` as implemented by `kernel` and records, per kernel
  /// parameter, what it binds to (`mxmoe.kernel_args`): "operand:i",
  /// "result:i", "status" (an i32 status buffer), "tensor_map:operand:i"
  /// (a TMA descriptor of operand i) or "value:N" (an i64 scalar, e.g. a
  /// grouped GEMM's sizes). Drivers turn this into launch
  /// programs (mxmoe-compile's manifest).
  void annotate(Operation *op, gpu::GPUFuncOp kernel,
                ArrayRef<std::string> bindings) {
    op->setAttr("mxmoe.kernel",
                SymbolRefAttr::get(module.getNameAttr(),
                                   {FlatSymbolRefAttr::get(kernel)}));
    SmallVector<Attribute> b;
    for (const std::string &s : bindings)
      b.push_back(StringAttr::get(op->getContext(), s));
    op->setAttr("mxmoe.kernel_args", ArrayAttr::get(op->getContext(), b));
  }
  /// A grouped GEMM's bindings: the seven pointers, then its sizes in
  /// kGemmScalarParams order.
  void annotateGemm(Operation *op, gpu::GPUFuncOp kernel,
                    std::initializer_list<int64_t> sizes) {
    SmallVector<std::string> bindings{
        "tensor_map:operand:0", "operand:1", "tensor_map:operand:2",
        "operand:3",            "operand:4", "result:0",
        "status"};
    for (int64_t v : sizes)
      bindings.push_back("value:" + std::to_string(v));
    annotate(op, kernel, bindings);
  }
  static std::string bindingOf(Operation *op, const HostArg &arg) {
    if (arg.kind == HostArg::Status)
      return "status";
    for (OpOperand &o : op->getOpOperands())
      if (o.get() == arg.value)
        return "operand:" + std::to_string(o.getOperandNumber());
    return "result:" +
           std::to_string(cast<OpResult>(arg.value).getResultNumber());
  }

  /// Replaces `op` by a launch of `kernel` on buffers: operands go through
  /// bufferization.to_buffer (+ collapse to 1-D), results are gpu.alloc'ed
  /// and handed back with bufferization.to_tensor; a grouped kernel's status
  /// is copied to the host and checked with cf.assert (the runtime's
  /// wording of status 1, mxmoe/KernelStatus.h). Without
  /// `hostLaunch` the op only gets a `mxmoe.kernel` annotation.
  ///
  /// A kernel with run-time sizes (createKernel with a RuntimeShapeSpec)
  /// takes pointers for `args` and then the i64 `scalars` (bound as
  /// `value:N` after the pointers); this use's grid, ceil(`work` /
  /// block-size) CTAs, is recorded on the op as `mxmoe.grid`.
  void finish(Operation *op, gpu::GPUFuncOp kernel, ArrayRef<HostArg> args,
              ArrayRef<int64_t> scalars = {},
              std::optional<int64_t> work = std::nullopt) {
    std::optional<int64_t> gridX;
    if (work)
      gridX = std::max<int64_t>(1, ::mxmoe::ceilDiv(*work, blockSize));
    if (gridX)
      op->setAttr("mxmoe.grid", DenseI64ArrayAttr::get(op->getContext(),
                                                       {*gridX, 1, 1}));
    if (!hostLaunch) {
      SmallVector<std::string> bindings;
      for (const HostArg &a : args)
        bindings.push_back(bindingOf(op, a));
      for (int64_t v : scalars)
        bindings.push_back("value:" + std::to_string(v));
      annotate(op, kernel, bindings);
      return;
    }
    OpBuilder ob(op);
    KB b(op->getLoc(), ob);
    SmallVector<Value> operands;
    SmallVector<std::pair<Value, Value>> replacements;
    Value status;
    auto fullReassoc = [](int64_t rank) {
      ReassociationIndices all;
      for (int64_t i = 0; i < rank; ++i)
        all.push_back(i);
      return SmallVector<ReassociationIndices>{all};
    };
    // Pointer parameters of run-time shaped kernels get the buffer's
    // aligned address.
    auto pointerOf = [&](Value memref) -> Value {
      Value idx = memref::ExtractAlignedPointerAsIndexOp::create(b, memref);
      Value i64 = arith::IndexCastOp::create(b, b.getI64Type(), idx);
      return LLVM::IntToPtrOp::create(
          b, LLVM::LLVMPointerType::get(b.getContext()), i64);
    };
    for (auto [i, arg] : llvm::enumerate(args)) {
      Type argTy = kernel.getArgumentTypes()[i];
      bool pointer = isa<LLVM::LLVMPointerType>(argTy);
      if (arg.kind == HostArg::Status) {
        status = gpu::AllocOp::create(b, statusMemRef(), Type(), {}, {}, {},
                                      UnitAttr())
                     .getMemref();
        operands.push_back(pointer ? pointerOf(status) : status);
        continue;
      }
      auto tt = cast<RankedTensorType>(arg.value.getType());
      auto shaped = MemRefType::get(tt.getShape(), tt.getElementType());
      auto flat = MemRefType::get({tt.getNumElements()}, tt.getElementType());
      auto kt = pointer ? flatMemRef(tt) : cast<MemRefType>(argTy);
      if (arg.kind == HostArg::In) {
        Value m = bufferization::ToBufferOp::create(b, shaped, arg.value,
                                                    /*read_only=*/true);
        if (tt.getRank() > 1)
          m = memref::CollapseShapeOp::create(b, flat, m,
                                              fullReassoc(tt.getRank()));
        if (m.getType() != kt) // packed MXFP4: the kernel sees bytes
          m = UnrealizedConversionCastOp::create(b, kt, m).getResult(0);
        operands.push_back(pointer ? pointerOf(m) : m);
        continue;
      }
      Value buf =
          gpu::AllocOp::create(b, kt, Type(), {}, {}, {}, UnitAttr())
              .getMemref();
      operands.push_back(pointer ? pointerOf(buf) : buf);
      Value view = buf;
      if (kt != flat) // packed MXFP4 bytes viewed as f4E2M1FN elements
        view = UnrealizedConversionCastOp::create(b, flat, view).getResult(0);
      if (tt.getRank() > 1) {
        SmallVector<OpFoldResult> sizes;
        for (int64_t d : tt.getShape())
          sizes.push_back(b.getIndexAttr(d));
        view = memref::ExpandShapeOp::create(b, shaped, view,
                                             fullReassoc(tt.getRank()), sizes);
      }
      Value t = bufferization::ToTensorOp::create(b, tt, view,
                                                  /*restrict=*/b.getUnitAttr(),
                                                  /*writable=*/b.getUnitAttr());
      replacements.push_back({arg.value, t});
    }
    for (int64_t v : scalars)
      operands.push_back(arith::ConstantIntOp::create(b, b.getI64Type(), v));
    auto grid = gridX ? DenseI64ArrayAttr::get(op->getContext(), {*gridX, 1, 1})
                      : cast<DenseI64ArrayAttr>(kernel->getAttr("mxmoe.grid"));
    auto block = cast<DenseI64ArrayAttr>(kernel->getAttr("mxmoe.block"));
    gpu::KernelDim3 g{b.idx(grid[0]), b.idx(grid[1]), b.idx(grid[2])};
    gpu::KernelDim3 t{b.idx(block[0]), b.idx(block[1]), b.idx(block[2])};
    gpu::LaunchFuncOp::create(b, kernel, g, t, Value(), operands);
    if (status) {
      auto hostType = MemRefType::get({1}, b.getI32Type());
      Value host = memref::AllocaOp::create(b, hostType);
      gpu::MemcpyOp::create(b, Type(), ValueRange{}, host, status);
      // Host-launched kernels (quantize over group offsets; grouped GEMMs
      // are never host-launched) write 0 or 1: one assertion with the
      // runtime's wording of status 1 (mxmoe/KernelStatus.h), one for any
      // other nonzero word.
      Value word = b.load(host, b.idx(0));
      std::string prefix = ("mxmoe: kernel '" + kernel.getName() + "' ").str();
      int32_t offsets = ::mxmoe::kKernelStatusOffsetsRejected;
      cf::AssertOp::create(
          b, arith::CmpIOp::create(b, arith::CmpIPredicate::ne, word, b.i32(offsets)),
          b.getStringAttr(prefix + ::mxmoe::kernelStatusText(offsets)));
      cf::AssertOp::create(b, b.eq(word, b.i32(::mxmoe::kKernelStatusDone)),
                           b.getStringAttr(prefix + "wrote an unknown status"));
      gpu::DeallocOp::create(b, Type(), ValueRange{}, status);
    }
    for (auto [from, to] : replacements)
      from.replaceAllUsesWith(to);
    op->erase();
  }

  MemRefType statusMemRef() {
    return MemRefType::get({1}, IntegerType::get(module.getContext(), 32));
  }

  LogicalResult genQuantize(QuantizeOp op);
  void genQuantizeColwiseTiled(QuantizeOp op, const MXGeometry &geo,
                               ::mxmoe::MXElementKind kind);
  void genQuantizeRowwiseBlocked(QuantizeOp op, const MXGeometry &geo,
                                 ::mxmoe::MXElementKind kind);
  LogicalResult genDequantize(DequantizeOp op);
  LogicalResult genSwizzle(SwizzleScalesOp op);
  LogicalResult genGroupedMatmul(GroupedMatmulOp op);
};

//===----------------------------------------------------------------------===//
// grouped_matmul (sm_90a)
//===----------------------------------------------------------------------===//

LogicalResult KernelGen::genGroupedMatmul(GroupedMatmulOp op) {
  RankedTensorType lhs = op.getLhs().getType(), rhs = op.getRhs().getType(),
                   res = op.getResult().getType();
  StringRef chipName = chip;
  if (!op.isMX())
    return op.emitOpError(chipName) << (
        " lowering needs MX operands (bf16 grouped GEMMs are left to "
        "torch._grouped_mm / cuBLAS)");
  auto elemOk = [&](Type t) {
    return isa<Float8E4M3FNType, Float8E5M2Type>(t) ||
           (sm100 && isa<Float4E2M1FNType>(t));
  };
  if (!elemOk(lhs.getElementType()) || !elemOk(rhs.getElementType()))
    return op.emitOpError(chipName)
           << (sm100 ? " lowering supports f8E4M3FN, f8E5M2 and f4E2M1FN "
                       "operands (FP6 is not implemented), got "
                     : " lowering supports f8E4M3FN and f8E5M2 operands "
                       "(wgmma has no FP6/FP4 inputs), got ")
           << lhs.getElementType() << " x " << rhs.getElementType();
  RankedTensorType as = op.getLhsScales().getType(),
                   bs = op.getRhsScales().getType();
  for (RankedTensorType t : {lhs, rhs, res, as, bs,
                             cast<RankedTensorType>(op.getOffsets().getType())})
    if (!t.hasStaticShape())
      return op.emitOpError("GPU lowering needs static shapes, got ") << t;
  if (!isBlockedScales(as) || !isBlockedScales(bs))
    return op.emitOpError(chipName)
           << " lowering reads blocked_128x4 scales (one 512-byte atom per "
              "128 rows x 128 K); run mxmoe-pack-scales or swizzle the "
              "scales first";
  // The kernel is specialized on the kind only; these sizes become the
  // launch's scalar parameters (kGemmScalarParams order).
  struct {
    int64_t m, n, k, groups, aScaleRows, aScaleCols, bScaleRows, bScaleCols;
  } sz;
  GemmKind p;
  p.kGrouped = op.isKGrouped();
  sz.m = lhs.getDimSize(0);
  sz.k = lhs.getDimSize(1);
  sz.n = p.kGrouped ? rhs.getDimSize(0) : rhs.getDimSize(1);
  sz.groups = cast<RankedTensorType>(op.getOffsets().getType()).getDimSize(0);
  sz.aScaleRows = as.getDimSize(0);
  sz.aScaleCols = as.getDimSize(1);
  sz.bScaleRows = bs.getDimSize(bs.getRank() - 2);
  sz.bScaleCols = bs.getDimSize(bs.getRank() - 1);
  p.kMultipleOf128 = !p.kGrouped && sz.k % 128 == 0;
  p.aE5M2 = isa<Float8E5M2Type>(lhs.getElementType());
  p.bE5M2 = isa<Float8E5M2Type>(rhs.getElementType());
  p.aE2M1 = isa<Float4E2M1FNType>(lhs.getElementType());
  p.bE2M1 = isa<Float4E2M1FNType>(rhs.getElementType());
  p.outF32 = res.getElementType().isF32();
  if (sz.groups < 1)
    return op.emitOpError("needs at least one group");
  if (sz.m == 0 || sz.n == 0 || sz.k == 0)
    return op.emitOpError("GPU lowering of an empty GEMM (M, N or K = 0) is "
                          "not supported");
  if (sz.k % 32)
    return op.emitOpError("contraction extent must be a multiple of 32");
  // The unpacking copy of 4-bit data (CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B)
  // needs rows of a multiple of 128 elements (CUDA driver API,
  // cuTensorMapEncodeTiled).
  if ((p.aE2M1 || p.bE2M1) && p.kGrouped)
    return op.emitOpError("f4E2M1FN operands are lowered for 2D x 3D grouped "
                          "matmuls only (a 2D x 2D weight gradient's K groups "
                          "start at multiples of 32 tokens; the unpacking "
                          "16U4_ALIGN16B copy is used at multiples of 128)");
  if ((p.aE2M1 || p.bE2M1) && sz.k % 128)
    return op.emitOpError("f4E2M1FN operands need a contraction extent that "
                          "is a multiple of 128 (TMA 16U4_ALIGN16B rows), got ")
           << sz.k;
  if (p.kGrouped && as.getDimSize(1) != bs.getDimSize(1))
    return op.emitOpError("2D x 2D lowering needs both per_k_group scale "
                          "tensors to have the same number of columns");
  // 32-bit TMA coordinates and in-kernel element offsets are 64-bit.
  int64_t rows = p.kGrouped ? std::max(sz.m, sz.n)
                            : std::max(sz.m, sz.groups * sz.n);
  if (rows >= (int64_t{1} << 31) || sz.k >= (int64_t{1} << 31))
    return op.emitOpError("TMA coordinates exceed 2^31");
  // sm_90a strategy: fp8 wgmma with per-block promotion is the faster one
  // at bf16 output; the exact bf16 upcast keeps f32 outputs within fp32
  // accumulation error (the fp8 MMA's internal accumulation of a 32-term
  // block does not).
  bool useUpcast = !sm100 && (sm90Mma == "bf16" || (sm90Mma == "auto" && p.outF32));
  const GemmConfig &cfg = useUpcast ? upcast : gemm;
  if (!sm100 && getSm90GemmSharedBytes(cfg) > kMaxDynamicSmem)
    return op.emitOpError("the grouped-GEMM configuration needs ")
           << getSm90GemmSharedBytes(cfg)
           << " bytes of shared memory, over the 232448 of sm_90a ("
           << (!useUpcast              ? "fp8 kernel"
               : sm90Mma == "auto" ? "bf16 upcast kernel, chosen by "
                                     "gemm-sm90-mma=auto for the f32 output"
                                   : "bf16 upcast kernel")
           << "); lower gemm-stages"
           << (useUpcast ? " or choose gemm-sm90-mma=fp8" : "");
  std::string kernelName = name("grouped_matmul", op);
  std::string key = llvm::formatv(
      "{0}{1}{2}{3}{4}{5}{6}{7}/{8}/{9}/{10}", p.kGrouped, p.aE5M2, p.bE5M2,
      p.aE2M1, p.bE2M1, p.outF32, p.kMultipleOf128, useUpcast, cfg.tileN,
      cfg.stages, cfg.numCTAs);
  gpu::GPUFuncOp &kernel = gemmKernels[key];
  if (kernel) {
    annotateGemm(op, kernel, {sz.m, sz.n, sz.k, sz.groups, sz.aScaleRows,
                             sz.aScaleCols, sz.bScaleRows, sz.bScaleCols});
    return success();
  }
  kernel = sm100 ? buildGroupedMatmulSm100(module, kernelName, p, cfg)
                 : buildGroupedMatmulSm90(module, kernelName, p, cfg);
  kernel->setAttr("mxmoe.mma", StringAttr::get(op.getContext(),
                                               sm100 ? "tcgen05_mxf8f6f4"
                                               : useUpcast ? "wgmma_bf16_upcast"
                                                           : "wgmma_fp8_promote"));
  annotateGemm(op, kernel, {sz.m, sz.n, sz.k, sz.groups, sz.aScaleRows,
                           sz.aScaleCols, sz.bScaleRows, sz.bScaleCols});
  return success();
}

//===----------------------------------------------------------------------===//
// quantize
//===----------------------------------------------------------------------===//

LogicalResult KernelGen::genQuantize(QuantizeOp op) {
  RankedTensorType in = op.getInput().getType();
  RankedTensorType data = op.getData().getType();
  RankedTensorType scales = op.getScales().getType();
  auto shape = getMXKernelShape(op, in, data, scales, op.getAxis());
  if (failed(shape))
    return failure();
  MXElementKind kind = shape->first;
  MXGeometry geo = shape->second;
  Type elem = in.getElementType();
  RoundingMode mode = op.getRounding();
  bool blocked = isBlockedScales(scales);
  Value offsets = op.getOffsets();
  int64_t cs = geo.scaleCols();
  int64_t sRows = scales.getShape()[scales.getRank() - 2];
  int64_t sCols = scales.getShape().back();
  int64_t dataWork = geo.batch * geo.rows * cs;
  int64_t padWork = blocked ? scales.getNumElements() : 0;
  // Rowwise with blocked scales (plain, per expert or M-grouped): one
  // thread per blocked scale byte.
  if (geo.rowwise() && blocked) {
    genQuantizeRowwiseBlocked(op, geo, kind);
    return success();
  }
  // Columnwise without groups: the tiled kernel (shared-memory transpose).
  int64_t elemsPerLoad = 16 / (elem.getIntOrFloatBitWidth() / 8);
  if (!offsets && !geo.rowwise() && blockSize == 256 &&
      geo.rows % elemsPerLoad == 0) {
    genQuantizeColwiseTiled(op, geo, kind);
    return success();
  }

  // Sizes are run-time parameters (one kernel per element types, layout,
  // rounding, axis kind and group count): the data is [batch, rows, len]
  // with high-precision element (b, r, p) at b*hp_batch + r*hp_row +
  // p*hp_along; one blocked scale matrix is [scale_rows, scale_cols];
  // `tokens` bounds the offsets (the input's dim 0).
  enum {
    kBatch, kRows, kLen, kHpBatch, kHpRow, kHpAlong, kScaleRows,
    kScaleCols, kTokens
  };
  SmallVector<int64_t> sizes{geo.batch,   geo.rows, geo.len, geo.hpBatch,
                             geo.hpRow,   geo.hpAlong, sRows, sCols,
                             in.getDimSize(0)};
  RuntimeShapeSpec rspec{{elem, flatMemRef(data).getElementType(),
                          scales.getElementType()},
                         {"batch", "rows", "len", "hp_batch", "hp_row",
                          "hp_along", "scale_rows", "scale_cols", "tokens"}};
  std::optional<GroupSpec> spec;
  bool jagged = offsets && op.getAxis() == 0;
  bool rowwise = geo.rowwise();
  if (offsets) {
    int64_t G = cast<RankedTensorType>(offsets.getType()).getDimSize(0);
    rspec.views.insert(rspec.views.begin() + 1,
                       IntegerType::get(op.getContext(), 32));
    rspec.views.push_back(IntegerType::get(op.getContext(), 32));
    spec = GroupSpec{1, 4, G, 0, {}, kTokens};
    if (jagged) {
      // data blocks: len / 32; K-group scale columns: scale_cols.
      spec->units.push_back({kMXBlockSize, 1, kMXBlockSize, kLen});
      if (blocked)
        spec->units.push_back({kMXBlockSize, 4, 1, kScaleCols});
    } else {
      spec->units.push_back({128, 1, 128, kScaleRows}); // 128-row tiles
    }
  }
  // Argument positions.
  unsigned aIn = 0, aData = offsets ? 2 : 1, aScales = offsets ? 3 : 2;
  // Threads: one per data block, then (blocked) one per scale byte.
  auto dataWorkOf = [&](KB &b, ValueRange sz) {
    Value batchRows = b.mul(sz[kBatch], sz[kRows]);
    return b.mul(batchRows, b.div(sz[kLen], kMXBlockSize));
  };
  auto padWorkOf = [&](KB &b, ValueRange sz) {
    return b.mul(sz[kBatch], b.mul(sz[kScaleRows], sz[kScaleCols]));
  };

  auto kernel = createKernel(
      module, name("quantize", op), rspec,
      [&](KB &b, ValueRange sz) {
        Value w = dataWorkOf(b, sz);
        return blocked ? b.add(w, padWorkOf(b, sz)) : w;
      },
      blockSize, spec ? &*spec : nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value t, GroupTable &tab) {
        Value x = a[aIn], dmem = a[aData], smem = a[aScales];
        Value rows = sz[kRows], len = sz[kLen];
        Value cs = b.div(len, kMXBlockSize);
        Value sR = sz[kScaleRows], sC = sz[kScaleCols];
        Value hpAlong = sz[kHpAlong];
        Value dataWork = dataWorkOf(b, sz);
        auto lower = [&](Value t) {
              Value bi, r, c;
              if (jagged) {
                // 2-D (a single batch), columnwise: t = c * rows + r.
                std::tie(c, r) = b.divRem(t, rows);
                bi = b.idx(0);
              } else {
                decomposeV(b, t, rowwise, rows, cs, bi, r, c);
              }
              Value row = b.add(b.mul(bi, rows), r);
              Value rowStart = b.mul(row, len);
              Value dIdx = b.add(rowStart, b.mulc(c, kMXBlockSize));
              if (!jagged) {
                Value batchBase = b.mul(bi, sz[kHpBatch]);
                Value rowBase = b.add(batchBase, b.mul(r, sz[kHpRow]));
                Value base =
                    b.add(rowBase, b.mul(b.mulc(c, kMXBlockSize), hpAlong));
                SmallVector<Value> xs =
                    rowwise ? loadHPBlock(b, x, elem, base)
                            : loadHPBlockStrided(b, x, elem, base, hpAlong);
                Value byte = quantizeBlock(b, xs, mode, kind, dmem, dIdx);
                if (!blocked) {
                  storeScale(b, byte, smem,
                             b.add(b.mul(b.add(b.mul(bi, rows), r), cs), c));
                  return;
                }
                if (!offsets) {
                  Value scaleBase = b.mul(bi, b.mul(sR, sC));
                  storeScale(b, byte, smem,
                             b.add(scaleBase, b.blockedOffset(r, c, sC)));
                  return;
                }
                // M-grouped: row r of group g goes to padded row
                // P_g + (r - s_g); rows past the last offset have no scale.
                Value g = b.countLE(tab.ends, tab.numGroups, r);
                ifThen(b, b.ult(g, b.idx(tab.numGroups)), [&] {
                  Value tileRow = b.mulc(b.load(tab.starts[0], g), 128);
                  Value pr = b.add(tileRow, b.sub(r, tab.groupBegin(b, g)));
                  storeScale(b, byte, smem, b.blockedOffset(pr, c, sC));
                });
                return;
              }
              // Jagged token axis: data block c is padded block pb of the
              // token groups (r is the K row of the data).
              Value pb = c;
              Value total = b.load(tab.starts[0], b.idx(tab.numGroups));
              ifThenElse(
                  b, b.ult(pb, total),
                  [&] {
                    Value g = largestStartLE(b, tab, 0, pb);
                    Value j = b.sub(pb, b.load(tab.starts[0], g));
                    Value begin = tab.groupBegin(b, g);
                    Value tok = b.add(begin, b.mulc(j, kMXBlockSize));
                    Value count = b.sub(b.load(tab.ends, g), tok);
                    Value base = b.add(b.mul(tok, hpAlong), r);
                    SmallVector<Value> xs = loadHPBlockStrided(
                        b, x, elem, base, hpAlong, count);
                    Value byte = quantizeBlock(b, xs, mode, kind, dmem, dIdx);
                    if (!blocked) {
                      storeScale(b, byte, smem, b.add(b.mul(r, cs), pb));
                      return;
                    }
                    Value q0 = b.load(tab.starts[1], g);
                    Value kgp = b.sub(
                        b.load(tab.starts[1], b.add(g, b.idx(1))), q0);
                    Value groupBase = b.mul(q0, sR);
                    storeScale(b, byte, smem,
                               b.add(groupBase, b.blockedOffset(r, j, kgp)));
                  },
                  [&] {
                    // Past the last group: zero data (and scale).
                    storeZeroElements(b, kind, dmem, dIdx);
                    if (!blocked)
                      storeZeroScale(b, smem, b.add(b.mul(r, cs), pb));
                  });
        };
        auto upper = [&](Value o) {
              // Padding bytes of blocked scales: write 0 where no real
              // scale lands.
              Value perBatch = b.mul(sR, sC);
              // Offset inside this batch's blocked matrix (jagged: 2-D).
              Value w = jagged ? o
                               : b.divRem(o, perBatch).second;
              Value real;
              if (jagged) {
                Value col = b.divv(w, sR);
                Value totalQ = b.load(tab.starts[1], b.idx(tab.numGroups));
                Value inGroups = b.ult(col, totalQ);
                Value found = largestStartLE(b, tab, 1, col);
                Value g = b.minui(found, b.idx(tab.numGroups - 1));
                Value q0 = b.load(tab.starts[1], g);
                Value kgp =
                    b.sub(b.load(tab.starts[1], b.add(g, b.idx(1))), q0);
                Value nextStart = b.load(tab.starts[0], b.add(g, b.idx(1)));
                Value kg = b.sub(nextStart, b.load(tab.starts[0], g));
                Value local = b.sub(w, b.mul(q0, sR));
                // Guard the division for empty regions (col past groups).
                Value safeKgp = b.select(inGroups, kgp, b.idx(4));
                auto [r, j] = b.blockedCoord(
                    b.select(inGroups, local, b.idx(0)), safeKgp);
                Value rowOk = b.ult(r, rows);
                real = b.andi(inGroups, b.andi(rowOk, b.ult(j, kg)));
              } else {
                auto [pr, c] = b.blockedCoord(w, sC);
                Value colOk = b.ult(c, cs);
                if (!offsets) {
                  real = b.andi(b.ult(pr, rows), colOk);
                } else {
                  Value tile = b.div(pr, 128);
                  Value totalT = b.load(tab.starts[0], b.idx(tab.numGroups));
                  Value inGroups = b.ult(tile, totalT);
                  Value found = largestStartLE(b, tab, 0, tile);
                  Value g = b.minui(found, b.idx(tab.numGroups - 1));
                  Value local =
                      b.sub(pr, b.mulc(b.load(tab.starts[0], g), 128));
                  Value end = b.load(tab.ends, g);
                  Value size = b.sub(end, tab.groupBegin(b, g));
                  real = b.andi(inGroups, b.andi(b.ult(local, size), colOk));
                }
              }
              ifThen(b, b.lnot(real), [&] { storeZeroScale(b, smem, o); });
        };
        if (!blocked) {
          lower(t);
          return;
        }
        ifThenElse(b, b.ult(t, dataWork), [&] { lower(t); },
                   [&] { upper(b.sub(t, dataWork)); });
      });
  finish(op, kernel, quantizeHostArgs(op), sizes, dataWork + padWork);
  return success();
}

//===----------------------------------------------------------------------===//
// quantize, rowwise, blocked scales
//===----------------------------------------------------------------------===//

// One thread per byte of the blocked scale buffer, in buffer order: a warp
// writes one full 32-byte sector of scales (two atom rows), and its data
// accesses are 8 runs of 4 consecutive 32-element blocks (128 B of fp8
// written, 256 B of bf16 read). Padding positions write 0. For M-grouped
// scales a thread also quantizes (data only) the data block with its own
// index if that block's row lies past the last offset, so those rows are
// written too.
void KernelGen::genQuantizeRowwiseBlocked(QuantizeOp op, const MXGeometry &geo,
                                          MXElementKind kind) {
  RankedTensorType in = op.getInput().getType();
  RankedTensorType data = op.getData().getType();
  RankedTensorType scales = op.getScales().getType();
  Type elem = in.getElementType();
  RoundingMode mode = op.getRounding();
  Value offsets = op.getOffsets();
  // Sizes are run-time parameters (one kernel per element types, rounding
  // and group count): batch, rows R and length L of each row (the input is
  // [batch, R, L], L contiguous), rows and columns of one blocked scale
  // matrix.
  int64_t sRows = scales.getShape()[scales.getRank() - 2];
  int64_t sCols = scales.getShape().back();
  SmallVector<int64_t> sizes{geo.batch, geo.rows, geo.len, sRows, sCols};
  int64_t work = geo.batch * sRows * sCols;
  enum { kBatch, kRows, kLen, kScaleRows, kScaleCols };

  RuntimeShapeSpec spec{{elem, flatMemRef(data).getElementType(),
                         scales.getElementType()},
                        {"batch", "rows", "len", "scale_rows", "scale_cols"}};
  std::optional<GroupSpec> groups;
  if (offsets) {
    int64_t G = cast<RankedTensorType>(offsets.getType()).getDimSize(0);
    spec.views.insert(spec.views.begin() + 1,
                      IntegerType::get(op.getContext(), 32));
    spec.views.push_back(IntegerType::get(op.getContext(), 32));
    // capacity: scale rows / 128 tiles of 128 rows.
    groups = GroupSpec{1, 4, G, 0, {{128, 1, 128, kScaleRows}}, kRows};
  }
  unsigned aData = offsets ? 2 : 1, aScales = offsets ? 3 : 2;

  auto kernel = createKernel(
      module, name("quantize", op), spec,
      [&](KB &b, ValueRange sz) {
        return b.mul(sz[kBatch], b.mul(sz[kScaleRows], sz[kScaleCols]));
      },
      blockSize, groups ? &*groups : nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value t, GroupTable &tab) {
        Value x = a[0], dmem = a[aData], smem = a[aScales];
        Value R = sz[kRows], L = sz[kLen], C = b.div(L, kMXBlockSize);
        Value perBatch = b.mul(sz[kScaleRows], sz[kScaleCols]);
        auto quantizeRow = [&](Value bi, Value r, Value c) {
          Value row = b.add(b.mul(bi, R), r);
          Value rowStart = b.mul(row, L);
          Value base = b.add(rowStart, b.mulc(c, kMXBlockSize));
          SmallVector<Value> xs = loadHPBlock(b, x, elem, base);
          return quantizeBlock(b, xs, mode, kind, dmem, base);
        };
        Value bi, o;
        std::tie(bi, o) = b.divRem(t, perBatch);
        auto prc = b.blockedCoord(o, sz[kScaleCols]);
        Value pr = prc.first, c = prc.second;
        Value colOk = b.ult(c, C);
        Value real, r;
        if (!offsets) {
          real = b.andi(b.ult(pr, R), colOk);
          r = pr;
        } else {
          int64_t G = tab.numGroups;
          Value tile = b.div(pr, 128);
          Value inGroups = b.ult(tile, b.load(tab.starts[0], b.idx(G)));
          Value found = largestStartLE(b, tab, 0, tile);
          Value g = b.minui(found, b.idx(G - 1));
          Value local = b.sub(pr, b.mulc(b.load(tab.starts[0], g), 128));
          Value begin = tab.groupBegin(b, g);
          Value size = b.sub(b.load(tab.ends, g), begin);
          real = b.andi(inGroups, b.andi(b.ult(local, size), colOk));
          r = b.add(begin, local);
        }
        ifThenElse(
            b, real,
            [&] { storeScale(b, quantizeRow(bi, r, c), smem, t); },
            [&] { storeZeroScale(b, smem, t); });
        if (!offsets)
          return;
        // Rows past the last offset have no scale but their data is
        // quantized all the same (thread d handles data block d).
        Value lastEnd = b.load(tab.ends, b.idx(tab.numGroups - 1));
        Value rowB, cB;
        std::tie(rowB, cB) = b.divRem(t, C);
        Value isBlock = b.ult(t, b.mul(R, C));
        Value tail = b.andi(isBlock, b.ule(lastEnd, rowB));
        ifThen(b, tail, [&] { quantizeRow(b.idx(0), rowB, cB); });
      });
  finish(op, kernel, quantizeHostArgs(op), sizes, work);
}

//===----------------------------------------------------------------------===//
// quantize, columnwise, tiled through shared memory
//===----------------------------------------------------------------------===//

// A CTA of 256 threads quantizes a tile of 128 tokens x 64 columns of a
// row-major [M, K] input (per batch for 3-D inputs): coalesced 16-byte
// loads along K (128-byte row segments for 16-bit inputs) stored as they
// are (16-byte stores, input element type) into shared memory whose
// 32-row blocks are shifted by 8 elements so that the column reads of a
// warp (8 columns x 4 blocks) hit distinct banks, a barrier, then one
// thread per (column, 32-token block) with the four blocks of a column in
// adjacent lanes, so each output row [K, M] receives 128 contiguous bytes
// per tile. (256 x 32 and 64 x 128 tiles, and an fp32 shared-memory tile,
// measured slower on the H200: bench/RESULTS.md.)
void KernelGen::genQuantizeColwiseTiled(QuantizeOp op, const MXGeometry &geo,
                                        MXElementKind kind) {
  constexpr int64_t TM = 128, TK = 64, kThreads = 256, kStride = TK;
  // A warp covers 8 columns c x 4 blocks b; a row is 64 elements (a
  // multiple of 32 words), so shifting 32-row block b by 8b elements puts
  // lane (c, b)'s element in word (8b + c) * size / 4 mod 32: for 2- and
  // 4-byte elements the 4 blocks occupy disjoint banks (two 16-bit columns
  // share a word, which is not a conflict).
  constexpr int64_t kShift = 8;
  RankedTensorType in = op.getInput().getType();
  RankedTensorType data = op.getData().getType();
  RankedTensorType scales = op.getScales().getType();
  Type elem = in.getElementType();
  RoundingMode mode = op.getRounding();
  bool blocked = isBlockedScales(scales);
  // geo: rows = K (data rows), len = M (tokens), hpAlong = K. The sizes
  // are run-time parameters (one kernel per element types, layout,
  // rounding and padding case; K must be a multiple of the 16-byte load,
  // as when the kernel was chosen).
  int64_t sRows = scales.getShape()[scales.getRank() - 2];
  int64_t sCols = scales.getShape().back();
  int64_t M = geo.len, K = geo.rows, cs = geo.scaleCols();
  // Padding bytes of blocked scales: rows K..sRows-1 of every scale column
  // and columns cs..sCols-1 of rows < K, per batch. One extra thread
  // zeroes each (none when K % 128 == 0 and M/32 % 4 == 0: enumerating
  // every scale byte instead doubled the grid of the large shapes with
  // threads that write nothing). Which of the two regions exist is fixed
  // per kernel.
  bool padRows = blocked && sRows > K, padCols = blocked && sCols > cs;
  auto tileWorkOf = [&](int64_t batch, int64_t m, int64_t k) {
    return batch * ::mxmoe::ceilDiv(m, TM) * ::mxmoe::ceilDiv(k, TK) * kThreads;
  };
  int64_t work = tileWorkOf(geo.batch, M, K) +
                 (blocked ? geo.batch * ((sRows - K) * sCols + K * (sCols - cs))
                          : 0);
  enum { kBatch, kTokens, kRows, kHpBatch, kScaleRows, kScaleCols };
  SmallVector<int64_t> sizes{geo.batch, M, K, geo.hpBatch, sRows, sCols};
  RuntimeShapeSpec spec{{elem, flatMemRef(data).getElementType(),
                         scales.getElementType()},
                        {"batch", "tokens", "rows", "hp_batch", "scale_rows",
                         "scale_cols"}};
  int64_t perLoad = 16 / (elem.getIntOrFloatBitWidth() / 8);
  int64_t chunksPerRow = TK / perLoad, rowsPerPass = kThreads / chunksPerRow;
  int64_t smemElems = TM * kStride + (TM / 32) * kShift;

  // Work items: tiles x 256 threads, then (blocked) one per padding byte.
  struct Work {
    Value tilesM, tilesK, tileWork, padRowBytes, padColBytes, padPerBatch;
  };
  auto workOf = [&](KB &b, ValueRange sz) {
    Work w;
    Value k = sz[kRows], sC = sz[kScaleCols];
    Value cols = b.div(sz[kTokens], kMXBlockSize);
    w.tilesM = b.div(b.add(sz[kTokens], b.idx(TM - 1)), TM);
    w.tilesK = b.div(b.add(k, b.idx(TK - 1)), TK);
    w.tileWork = b.mulc(b.mul(sz[kBatch], b.mul(w.tilesM, w.tilesK)), kThreads);
    w.padRowBytes = padRows ? b.mul(b.sub(sz[kScaleRows], k), sC) : b.idx(0);
    w.padColBytes = padCols ? b.mul(k, b.sub(sC, cols)) : b.idx(0);
    w.padPerBatch = b.add(w.padRowBytes, w.padColBytes);
    return w;
  };

  auto kernel = createKernel(
      module, name("quantize", op), spec,
      [&](KB &b, ValueRange sz) {
        Work w = workOf(b, sz);
        return b.add(w.tileWork, b.mul(sz[kBatch], w.padPerBatch));
      },
      blockSize, nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value t, GroupTable &) {
        auto fn = b.getInsertionBlock()->getParent()
                      ->getParentOfType<gpu::GPUFuncOp>();
        auto wg = gpu::AddressSpaceAttr::get(b.getContext(),
                                             gpu::AddressSpace::Workgroup);
        Value smem = fn.addWorkgroupAttribution(
            MemRefType::get({smemElems}, elem, MemRefLayoutAttrInterface{}, wg),
            fn.getLoc());
        fn.setWorkgroupAttributionAttr(fn.getNumWorkgroupAttributions() - 1,
                                       "llvm.align", b.getI64IntegerAttr(16));
        auto sIndex = [&](Value row, Value col) {
          Value unshifted = b.add(b.mulc(row, kStride), col);
          return b.add(unshifted, b.mulc(b.div(row, 32), kShift));
        };
        Work wk = workOf(b, sz);
        Value Mv = sz[kTokens], Kv = sz[kRows];
        Value csv = b.div(Mv, kMXBlockSize);
        Value sR = sz[kScaleRows], sC = sz[kScaleCols];
        auto tiles = [&](Value t) {
              Value tid = b.rem(t, kThreads), tile = b.div(t, kThreads);
              Value q, tk, bi, tm;
              std::tie(q, tk) = b.divRem(tile, wk.tilesK);
              std::tie(bi, tm) = b.divRem(q, wk.tilesM);
              Value m0 = b.mulc(tm, TM), k0 = b.mulc(tk, TK);
              Value inBase = b.mul(bi, sz[kHpBatch]);
              // Phase 1: coalesced loads into shared memory.
              Value chunk = b.rem(tid, chunksPerRow);
              Value col = b.mulc(chunk, perLoad);
              auto vt = VectorType::get({perLoad}, elem);
              for (int64_t pass = 0; pass < TM / rowsPerPass; ++pass) {
                Value firstRow = b.div(tid, chunksPerRow);
                Value row = b.add(firstRow, b.idx(pass * rowsPerPass));
                Value m = b.add(m0, row), k = b.add(k0, col);
                Value mOk = b.ult(m, Mv);
                Value inBounds = b.andi(mOk, b.ult(k, Kv));
                ifThen(b, inBounds, [&] {
                  Value v = vector::LoadOp::create(
                      b, vt, a[0],
                      ValueRange{b.add(inBase, b.add(b.mul(m, Kv), k))},
                      false, llvm::MaybeAlign(16));
                  vector::StoreOp::create(b, v, smem,
                                          ValueRange{sIndex(row, col)}, false,
                                          llvm::MaybeAlign(16));
                });
              }
              gpu::BarrierOp::create(b);
              // Phase 2: one thread per (column, 32-token block).
              Value blk = b.rem(tid, TM / 32), c = b.div(tid, TM / 32);
              Value k = b.add(k0, c), m = b.add(m0, b.mulc(blk, 32));
              Value kOk = b.ult(k, Kv);
              Value inBounds = b.andi(kOk, b.ult(m, Mv));
              ifThen(b, inBounds, [&] {
                SmallVector<Value> xs;
                for (int64_t i = 0; i < kMXBlockSize; ++i) {
                  Value blockRow = b.mulc(blk, 32);
                  Value e =
                      b.load(smem, sIndex(b.add(blockRow, b.idx(i)), c));
                  if (e.getType() != b.getF32Type())
                    e = arith::ExtFOp::create(b, b.getF32Type(), e);
                  xs.push_back(e);
                }
                Value row = b.add(b.mul(bi, Kv), k);
                Value dIdx = b.add(b.mul(row, Mv), m);
                Value byte = quantizeBlock(b, xs, mode, kind, a[1], dIdx);
                Value mb = b.div(m, kMXBlockSize);
                Value sIdx;
                if (blocked) {
                  Value scaleBase = b.mul(bi, b.mul(sR, sC));
                  sIdx = b.add(scaleBase, b.blockedOffset(k, mb, sC));
                } else {
                  sIdx = b.add(b.mul(row, csv), mb);
                }
                storeScale(b, byte, a[2], sIdx);
              });
        };
        auto padding = [&](Value o) {
              auto [bi, w] = b.divRem(o, wk.padPerBatch);
              // w < padRowBytes: padding row; else a padding column of a
              // real row.
              Value row, col;
              Value padColW = b.sub(sC, csv);
              if (!padCols) {
                auto [q, r] = b.divRem(w, sC);
                row = b.add(Kv, q);
                col = r;
              } else if (!padRows) {
                auto [r2, c2] = b.divRem(w, padColW);
                row = r2;
                col = b.add(csv, c2);
              } else {
                Value inRows = b.ult(w, wk.padRowBytes);
                Value w2 = b.sub(w, wk.padRowBytes);
                // Safe divisors in both branches (selects evaluate both).
                auto [r1, c1] = b.divRem(w, sC);
                auto [r2, c2] = b.divRem(w2, padColW);
                row = b.select(inRows, b.add(Kv, r1), r2);
                col = b.select(inRows, c1, b.add(csv, c2));
              }
              Value scaleBase = b.mul(bi, b.mul(sR, sC));
              storeZeroScale(b, a[2],
                             b.add(scaleBase, b.blockedOffset(row, col, sC)));
        };
        if (!padRows && !padCols) {
          tiles(t);
          return;
        }
        ifThenElse(b, b.ult(t, wk.tileWork), [&] { tiles(t); },
                   [&] { padding(b.sub(t, wk.tileWork)); });
      });
  finish(op, kernel, quantizeHostArgs(op), sizes, work);
}

//===----------------------------------------------------------------------===//
// dequantize
//===----------------------------------------------------------------------===//

LogicalResult KernelGen::genDequantize(DequantizeOp op) {
  RankedTensorType out = op.getResult().getType();
  RankedTensorType data = op.getData().getType();
  RankedTensorType scales = op.getScales().getType();
  auto shape = getMXKernelShape(op, out, data, scales, op.getAxis());
  if (failed(shape))
    return failure();
  MXElementKind kind = shape->first;
  MXGeometry geo = shape->second;
  bool blocked = isBlockedScales(scales);
  Type outElem = out.getElementType();
  Type f32 = Float32Type::get(op.getContext());
  int64_t cs = geo.scaleCols();
  int64_t sRows = scales.getShape()[scales.getRank() - 2];
  int64_t sCols = scales.getShape().back();
  Value offsets = op.getOffsets();
  bool jagged = offsets && op.getAxis() == 0;
  auto narrow = [&](KB &b, Value x) -> Value {
    return outElem == f32 ? x : arith::TruncFOp::create(b, outElem, x);
  };
  auto scaleAt = [&](KB &b, Value smem, Value idx) {
    Value s8 = b.bitcast(b.getI8Type(), b.load(smem, idx));
    return decodeScale(b, arith::ExtUIOp::create(b, b.getI32Type(), s8));
  };

  if (!offsets) {
    int64_t work = geo.batch * geo.rows * cs;
    auto kernel = createKernel(
        module, name("dequantize", op),
        {flatMemRef(data), flatMemRef(scales), flatMemRef(out)}, work,
        blockSize, nullptr, [&](KB &b, ValueRange a, Value t, GroupTable &) {
          Value bi, r, c;
          decompose(b, t, geo, geo.rows, cs, bi, r, c);
          Value sIdx;
          if (blocked) {
            Value scaleBase = b.mulc(bi, sRows * sCols);
            sIdx = b.add(scaleBase, b.blockedOffset(r, c, sCols));
          } else {
            sIdx = b.add(b.mulc(b.add(b.mulc(bi, geo.rows), r), cs), c);
          }
          Value scale = scaleAt(b, a[1], sIdx);
          Value rowStart = b.mulc(b.add(b.mulc(bi, geo.rows), r), geo.len);
          Value dIdx = b.add(rowStart, b.mulc(c, kMXBlockSize));
          SmallVector<Value> ys;
          for (Value v : loadElements(b, kind, a[0], dIdx))
            ys.push_back(narrow(b, arith::MulFOp::create(b, v, scale)));
          Value batchBase = b.mulc(bi, geo.hpBatch);
          Value rowBase = b.add(batchBase, b.mulc(r, geo.hpRow));
          Value base = b.add(rowBase, b.mulc(c, kMXBlockSize * geo.hpAlong));
          if (geo.rowwise()) {
            Value v = vector::FromElementsOp::create(
                b, VectorType::get({32}, outElem), ys);
            vector::StoreOp::create(b, v, a[2], ValueRange{base}, false,
                                    llvm::MaybeAlign(16));
            return;
          }
          for (int64_t i = 0; i < kMXBlockSize; ++i)
            b.store(ys[i], a[2], b.add(base, b.idx(i * geo.hpAlong)));
        });
    finish(op, kernel,
           {{HostArg::In, op.getData()},
            {HostArg::In, op.getScales()},
            {HostArg::Out, op.getResult()}});
    return success();
  }

  // With offsets: one thread per output element (t, k) of the [T, K]
  // result, k fastest. Tokens past the last offset dequantize to 0.
  int64_t T = out.getDimSize(0), K = out.getDimSize(1);
  int64_t G = cast<RankedTensorType>(offsets.getType()).getDimSize(0);
  GroupSpec spec{2, 4, G, T, {}};
  if (jagged) {
    spec.units.push_back({kMXBlockSize, 1, cs});
    if (blocked)
      spec.units.push_back({kMXBlockSize, 4, sCols});
  } else {
    spec.units.push_back({128, 1, sRows / 128});
  }
  auto kernel = createKernel(
      module, name("dequantize", op),
      {flatMemRef(data), flatMemRef(scales),
       MemRefType::get({G}, IntegerType::get(op.getContext(), 32)),
       flatMemRef(out), statusMemRef()},
      T * K, blockSize, &spec,
      [&](KB &b, ValueRange a, Value t, GroupTable &tab) {
        Value k = b.rem(t, K), tok = b.div(t, K);
        Value g = b.countLE(tab.ends, G, tok);
        ifThenElse(
            b, b.ult(g, b.idx(G)),
            [&] {
              Value local = b.sub(tok, tab.groupBegin(b, g));
              Value q, scaleIdx;
              if (jagged) {
                Value p = b.add(b.mulc(b.load(tab.starts[0], g), kMXBlockSize),
                                local);
                q = loadElement(b, kind, a[0], b.add(b.mulc(k, geo.len), p));
                if (!blocked) {
                  Value rowBase = b.mulc(k, cs);
                  scaleIdx = b.add(rowBase, b.div(p, kMXBlockSize));
                } else {
                  Value q0 = b.load(tab.starts[1], g);
                  Value kgp =
                      b.sub(b.load(tab.starts[1], b.add(g, b.idx(1))), q0);
                  Value groupBase = b.mulc(q0, sRows);
                  scaleIdx = b.add(groupBase,
                                   b.blockedOffset(
                                       k, b.div(local, kMXBlockSize), kgp));
                }
              } else {
                q = loadElement(b, kind, a[0], t);
                Value pr = b.add(b.mulc(b.load(tab.starts[0], g), 128), local);
                scaleIdx = b.blockedOffset(pr, b.div(k, kMXBlockSize), sCols);
              }
              Value v =
                  arith::MulFOp::create(b, q, scaleAt(b, a[1], scaleIdx));
              b.store(narrow(b, v), a[3], t);
            },
            [&] { b.store(narrow(b, b.f32(0.0f)), a[3], t); });
      });
  finish(op, kernel,
         {{HostArg::In, op.getData()},
          {HostArg::In, op.getScales()},
          {HostArg::In, offsets},
          {HostArg::Out, op.getResult()},
          {HostArg::Status, Value()}});
  return success();
}

//===----------------------------------------------------------------------===//
// swizzle_scales
//===----------------------------------------------------------------------===//

LogicalResult KernelGen::genSwizzle(SwizzleScalesOp op) {
  RankedTensorType src = op.getSource().getType();
  RankedTensorType dst = op.getResult().getType();
  if (!src.hasStaticShape() || !dst.hasStaticShape())
    return op.emitOpError("GPU lowering needs static shapes");
  bool toBlocked = isBlockedScales(dst);
  RankedTensorType rowMajor = toBlocked ? src : dst;
  RankedTensorType blockedT = toBlocked ? dst : src;
  ArrayRef<int64_t> s = rowMajor.getShape();
  int64_t rows = s[s.size() - 2], cols = s.back();
  int64_t rp = blockedT.getShape()[blockedT.getRank() - 2];
  int64_t cp = blockedT.getShape().back();
  int64_t work = toBlocked ? blockedT.getNumElements() : rowMajor.getNumElements();
  Value offsets = op.getOffsets();
  bool kGroups = offsets && isPerKGroupScales(blockedT);
  Type e8m0 = Float8E8M0FNUType::get(op.getContext());

  SmallVector<Type> args{flatMemRef(src), flatMemRef(dst)};
  std::optional<GroupSpec> spec;
  if (offsets) {
    int64_t G = cast<RankedTensorType>(offsets.getType()).getDimSize(0);
    args = {flatMemRef(src),
            MemRefType::get({G}, IntegerType::get(op.getContext(), 32)),
            flatMemRef(dst), statusMemRef()};
    if (kGroups)
      // Token offsets: k_g = ceil(m_g / 32) scale columns, padded to 4.
      spec = GroupSpec{1, 3, G, std::numeric_limits<int32_t>::max(),
                       {{kMXBlockSize, 1, cols}, {kMXBlockSize, 4, cp}}};
    else
      spec = GroupSpec{1, 3, G, rows, {{128, 1, rp / 128}}};
  }
  unsigned aDst = offsets ? 2 : 1;

  auto kernel = createKernel(
      module, name("swizzle_scales", op), args, work, blockSize,
      spec ? &*spec : nullptr,
      [&](KB &b, ValueRange a, Value t, GroupTable &tab) {
        Value zero = b.bitcast(e8m0, b.i8(0));
        auto copyOrZero = [&](Value real, function_ref<Value()> srcIdx) {
          auto ifOp = scf::IfOp::create(b, TypeRange{e8m0}, real, true);
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(&ifOp.getThenRegion().front());
            scf::YieldOp::create(b, ValueRange{b.load(a[0], srcIdx())});
            b.setInsertionPointToStart(&ifOp.getElseRegion().front());
            scf::YieldOp::create(b, ValueRange{zero});
          }
          b.store(ifOp.getResult(0), a[aDst], t);
        };
        if (!offsets) {
          if (toBlocked) {
            Value bi = b.div(t, rp * cp), w = b.rem(t, rp * cp);
            auto rc = b.blockedCoord(w, b.idx(cp));
            Value r = rc.first, c = rc.second;
            Value rowOk = b.ult(r, b.idx(rows));
            Value real = b.andi(rowOk, b.ult(c, b.idx(cols)));
            copyOrZero(real, [&] {
              return b.add(b.mulc(b.add(b.mulc(bi, rows), r), cols), c);
            });
          } else {
            Value c = b.rem(t, cols), r = b.rem(b.div(t, cols), rows);
            Value bi = b.div(t, rows * cols);
            Value batchBase = b.mulc(bi, rp * cp);
            b.store(b.load(a[0], b.add(batchBase, b.blockedOffset(r, c, cp))),
                    a[aDst], t);
          }
          return;
        }
        int64_t G = tab.numGroups;
        Value gLast = b.idx(G - 1);
        if (!kGroups) {
          if (toBlocked) {
            auto prc = b.blockedCoord(t, b.idx(cp));
            Value pr = prc.first, c = prc.second;
            Value tile = b.div(pr, 128);
            Value inGroups =
                b.ult(tile, b.load(tab.starts[0], b.idx(G)));
            Value g = b.minui(largestStartLE(b, tab, 0, tile), gLast);
            Value local = b.sub(pr, b.mulc(b.load(tab.starts[0], g), 128));
            Value begin = tab.groupBegin(b, g);
            Value size = b.sub(b.load(tab.ends, g), begin);
            Value rowOk = b.ult(local, size);
            Value real =
                b.andi(inGroups, b.andi(rowOk, b.ult(c, b.idx(cols))));
            copyOrZero(real, [&] {
              return b.add(b.mulc(b.add(begin, local), cols), c);
            });
          } else {
            Value c = b.rem(t, cols), i = b.div(t, cols);
            Value g = b.countLE(tab.ends, G, i);
            Value real = b.ult(g, b.idx(G));
            copyOrZero(real, [&] {
              Value gs = b.minui(g, gLast);
              Value tileRow = b.mulc(b.load(tab.starts[0], gs), 128);
              Value pr = b.add(tileRow, b.sub(i, tab.groupBegin(b, gs)));
              return b.blockedOffset(pr, c, cp);
            });
          }
          return;
        }
        // K-groups: starts[0] = scale-column starts, starts[1] = padded
        // (multiple of 4) group column starts Q_g.
        if (toBlocked) {
          Value col = b.div(t, rp);
          Value inGroups = b.ult(col, b.load(tab.starts[1], b.idx(G)));
          Value g = b.minui(largestStartLE(b, tab, 1, col), gLast);
          Value q0 = b.load(tab.starts[1], g);
          Value kgp = b.sub(b.load(tab.starts[1], b.add(g, b.idx(1))), q0);
          Value c0 = b.load(tab.starts[0], g);
          Value kg = b.sub(b.load(tab.starts[0], b.add(g, b.idx(1))), c0);
          Value offset = b.sub(t, b.mulc(q0, rp));
          Value local = b.select(inGroups, offset, b.idx(0));
          auto rj = b.blockedCoord(local, b.select(inGroups, kgp, b.idx(4)));
          Value r = rj.first, j = rj.second;
          Value rowOk = b.ult(r, b.idx(rows));
          Value real = b.andi(inGroups, b.andi(rowOk, b.ult(j, kg)));
          copyOrZero(real, [&] {
            Value rowStart = b.mulc(r, cols);
            return b.add(rowStart, b.add(c0, j));
          });
        } else {
          Value col = b.rem(t, cols), r = b.div(t, cols);
          Value real = b.ult(col, b.load(tab.starts[0], b.idx(G)));
          copyOrZero(real, [&] {
            Value g = b.minui(largestStartLE(b, tab, 0, col), gLast);
            Value j = b.sub(col, b.load(tab.starts[0], g));
            Value q0 = b.load(tab.starts[1], g);
            Value kgp = b.sub(b.load(tab.starts[1], b.add(g, b.idx(1))), q0);
            Value groupBase = b.mulc(q0, rp);
            return b.add(groupBase, b.blockedOffset(r, j, kgp));
          });
        }
      });
  SmallVector<HostArg> hostArgs{{HostArg::In, op.getSource()}};
  if (offsets)
    hostArgs.push_back({HostArg::In, offsets});
  hostArgs.push_back({HostArg::Out, op.getResult()});
  if (offsets)
    hostArgs.push_back({HostArg::Status, Value()});
  finish(op, kernel, hostArgs);
  return success();
}

/// The kernels do not implement scale tiles (MX128) or compact scales
/// yet: refuse them instead of lowering them as MX32.
LogicalResult checkScaleTiles(Operation *op) {
  if (auto q = dyn_cast<QuantizeOp>(op)) {
    std::array<int64_t, 2> tile = q.getScaleTileOrDefault();
    if (tile[0] != 1 || tile[1] != kMXBlockSize || isCompactScales(q.getScales().getType()))
      return q.emitOpError("convert-mxmoe-to-gpu has no kernel for scale "
                           "tiles other than [1, 32] or compact scales yet");
  }
  if (auto d = dyn_cast<DequantizeOp>(op);
      d && isCompactScales(d.getScales().getType()))
    return d.emitOpError("convert-mxmoe-to-gpu has no kernel for compact "
                         "scales yet");
  return success();
}

struct ConvertMXMoEToGPUPass
    : ::mlir::mxmoe::impl::ConvertMXMoEToGPUBase<ConvertMXMoEToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (blockSize < 32 || blockSize > 1024 || blockSize % 32 != 0) {
      module.emitError() << "convert-mxmoe-to-gpu: block-size must be a "
                            "multiple of 32 in [32, 1024], got "
                         << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    if (!isSupportedChip(chip)) {
      module.emitError() << "convert-mxmoe-to-gpu: unsupported chip '" << chip
                         << "' (supported: " << kSupportedChips << ")";
      return signalPassFailure();
    }
    bool sm100 = isTcgen05Chip(chip);
    if (gemmTileN != 64 && gemmTileN != 128 && !(sm100 && gemmTileN == 256)) {
      module.emitError() << "convert-mxmoe-to-gpu: gemm-tile-n must be 64 or "
                            "128 (sm_90a) or 64, 128 or 256 (sm_100a, sm_103a), got "
                         << static_cast<int64_t>(gemmTileN);
      return signalPassFailure();
    }
    if (gemmStages != 0 && (gemmStages < 2 || gemmStages > 8)) {
      module.emitError() << "convert-mxmoe-to-gpu: gemm-stages must be 0 "
                            "(auto) or in [2, 8], got "
                         << static_cast<int64_t>(gemmStages);
      return signalPassFailure();
    }
    // A 1-D grid has at most 2^31 - 1 CTAs (CUDA gridDim.x).
    if (gemmCTAs < 1 || gemmCTAs > 2147483647) {
      module.emitError() << "convert-mxmoe-to-gpu: gemm-ctas must be in [1, "
                            "2147483647] (the GPU's SM count, e.g. 132), got "
                         << static_cast<int64_t>(gemmCTAs);
      return signalPassFailure();
    }
    if (gemmSm90Mma != "fp8" && gemmSm90Mma != "bf16" && gemmSm90Mma != "auto") {
      module.emitError() << "convert-mxmoe-to-gpu: gemm-sm90-mma must be fp8, "
                            "bf16 or auto, got '"
                         << gemmSm90Mma << "'";
      return signalPassFailure();
    }
    // The fp8 configuration (every sm_100a kernel; sm_90a kernels with the
    // fp8 strategy) and the bf16-upcast one (sm_90a); each generated kernel
    // checks its own shared-memory budget.
    GemmConfig gemm{gemmTileN, gemmStages ? gemmStages : 4, gemmCTAs, false};
    GemmConfig upcast{gemmTileN, gemmStages ? gemmStages : 2, gemmCTAs, true};
    if (sm100 && getSm100GemmSharedBytes(gemm) > kMaxDynamicSmem) {
      module.emitError() << "convert-mxmoe-to-gpu: the grouped-GEMM "
                            "configuration needs "
                         << getSm100GemmSharedBytes(gemm)
                         << " bytes of shared memory, over the 232448 of "
                         << chip << "; lower gemm-stages";
      return signalPassFailure();
    }
    if (sm100 && getSm100GemmTmemColumns(gemm) > 512) {
      module.emitError() << "convert-mxmoe-to-gpu: the grouped-GEMM "
                            "configuration needs "
                         << getSm100GemmTmemColumns(gemm)
                         << " TMEM columns (accumulator + per-stage scales), "
                            "over the 512 of "
                         << chip << "; lower gemm-stages or "
                            "gemm-tile-n";
      return signalPassFailure();
    }
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<QuantizeOp, DequantizeOp, SwizzleScalesOp, GroupedMatmulOp>(op) &&
          !op->hasAttr("mxmoe.kernel"))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(&getContext()));
    auto kernels = dyn_cast_or_null<gpu::GPUModuleOp>(
        SymbolTable::lookupSymbolIn(module, kKernelModuleName));
    if (!kernels) {
      OpBuilder b(module.getBodyRegion());
      b.setInsertionPointToEnd(module.getBody());
      kernels =
          gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName);
    }
    KernelGen gen{kernels, blockSize, hostLaunch, gemm, upcast, gemmSm90Mma,
                  sm100, chip, {}, {}};
    for (Operation *op : ops) {
      // The generators size grids, group tables and padding from static
      // shapes, the number of token groups (offsets) included.
      for (Type t : llvm::concat<const Type>(op->getOperandTypes(),
                                             op->getResultTypes()))
        if (auto shaped = dyn_cast<ShapedType>(t);
            shaped && !shaped.hasStaticShape()) {
          op->emitOpError("GPU lowering needs static shapes, got ") << t;
          return signalPassFailure();
        }
      if (failed(checkScaleTiles(op)))
        return signalPassFailure();
      LogicalResult r =
          llvm::TypeSwitch<Operation *, LogicalResult>(op)
              .Case<QuantizeOp>([&](auto q) { return gen.genQuantize(q); })
              .Case<DequantizeOp>(
                  [&](auto d) { return gen.genDequantize(d); })
              .Case<SwizzleScalesOp>(
                  [&](auto s) { return gen.genSwizzle(s); })
              .Case<GroupedMatmulOp>(
                  [&](auto m) { return gen.genGroupedMatmul(m); });
      if (failed(r))
        return signalPassFailure();
    }
  }
};

} // namespace
