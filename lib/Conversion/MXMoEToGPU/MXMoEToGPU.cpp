//===- MXMoEToGPU.cpp - MX-level mxmoe ops to SIMT GPU kernels ------------===//
//
// Generates one gpu.func kernel per mxmoe.quantize / dequantize /
// swizzle_scales. Math: shared/reference/mx-formats.md (OCP MX v1.0 as
// torchao implements it); layout: shared/reference/scale-layout.md.
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Conversion/Passes.h"
#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"
#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::mxmoe {
#define GEN_PASS_DEF_CONVERTMXMOETOGPU
#include "mxmoe/Conversion/Passes.h.inc"
} // namespace mlir::mxmoe

using namespace mlir;
using namespace mlir::mxmoe;
using ::mxmoe::kMXBlockSize;
using ::mxmoe::roundUp;

namespace {

constexpr StringLiteral kKernelModuleName = "mxmoe_kernels";

/// How the kernels see an MX tensor pair: the data is [batch, rows, len]
/// with len contiguous (the quantized axis); element (b, r, p) of the data
/// sits at b*hpBatch + r*hpRow + p*hpAlong of the high-precision tensor.
struct MXGeometry {
  int64_t batch = 1, rows = 0, len = 0;
  int64_t hpBatch = 0, hpRow = 0, hpAlong = 1;
  int64_t scaleCols() const { return len / kMXBlockSize; }
  bool rowwise() const { return hpAlong == 1; }
};

FailureOr<MXGeometry> getGeometry(Operation *op, RankedTensorType hp,
                                  int64_t axis) {
  if (!hp.hasStaticShape())
    return op->emitOpError("GPU lowering needs static shapes, got ")
           << hp;
  ArrayRef<int64_t> s = hp.getShape();
  MXGeometry g;
  if (s.size() == 2) {
    if (axis == 1) {
      g.rows = s[0], g.len = s[1], g.hpRow = s[1], g.hpAlong = 1;
    } else {
      g.rows = s[1], g.len = s[0], g.hpRow = 1, g.hpAlong = s[1];
    }
    g.hpBatch = s[0] * s[1];
    return g;
  }
  g.batch = s[0];
  g.hpBatch = s[1] * s[2];
  if (axis == 2) {
    g.rows = s[1], g.len = s[2], g.hpRow = s[2], g.hpAlong = 1;
  } else if (axis == 1) {
    g.rows = s[2], g.len = s[1], g.hpRow = 1, g.hpAlong = s[2];
  } else {
    return op->emitOpError("GPU lowering supports 3-D quantization along "
                           "axis 1 or 2 (per-expert weights), not axis 0");
  }
  return g;
}

/// Builder with the index/integer helpers the kernels use.
struct KB : ImplicitLocOpBuilder {
  using ImplicitLocOpBuilder::ImplicitLocOpBuilder;
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(*this, v); }
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(*this, getI32Type(), v);
  }
  Value f32(float v) {
    return arith::ConstantFloatOp::create(*this, getF32Type(),
                                          APFloat(v));
  }
  Value add(Value a, Value b) { return arith::AddIOp::create(*this, a, b); }
  Value sub(Value a, Value b) { return arith::SubIOp::create(*this, a, b); }
  Value mul(Value a, Value b) { return arith::MulIOp::create(*this, a, b); }
  Value div(Value a, int64_t b) {
    return arith::DivUIOp::create(*this, a, idx(b));
  }
  Value rem(Value a, int64_t b) {
    return arith::RemUIOp::create(*this, a, idx(b));
  }
  Value mulc(Value a, int64_t b) { return b == 1 ? a : mul(a, idx(b)); }
  Value ult(Value a, Value b) {
    return arith::CmpIOp::create(*this, arith::CmpIPredicate::ult, a, b);
  }
  Value eq(Value a, Value b) {
    return arith::CmpIOp::create(*this, arith::CmpIPredicate::eq, a, b);
  }
  Value ne(Value a, Value b) {
    return arith::CmpIOp::create(*this, arith::CmpIPredicate::ne, a, b);
  }
  Value select(Value c, Value a, Value b) {
    return arith::SelectOp::create(*this, c, a, b);
  }
  Value andi(Value a, Value b) { return arith::AndIOp::create(*this, a, b); }
  Value shrui(Value a, int64_t s) {
    return arith::ShRUIOp::create(*this, a, i32(s));
  }
  Value maxsi(Value a, Value b) { return arith::MaxSIOp::create(*this, a, b); }
  Value minsi(Value a, Value b) { return arith::MinSIOp::create(*this, a, b); }
  Value bitcast(Type t, Value v) {
    return arith::BitcastOp::create(*this, t, v);
  }

  /// Byte offset of scale (r, c) in the blocked 128x4 layout with `cp`
  /// padded columns (scale-layout.md section 1).
  Value blockedOffset(Value r, Value c, int64_t cp) {
    Value atom = add(mulc(div(r, 128), cp / 4), div(c, 4));
    Value o = mulc(atom, 512);
    o = add(o, mulc(rem(r, 32), 16));
    o = add(o, mulc(div(rem(r, 128), 32), 4));
    return add(o, rem(c, 4));
  }
};

/// Creates `gpu.func @name(args) kernel` in the kernel module with a
/// bounds-checked global thread index; `body(b, tid)` fills the guarded
/// region. Returns the kernel.
gpu::GPUFuncOp
createKernel(gpu::GPUModuleOp module, StringRef baseName, TypeRange args,
             int64_t work, int64_t blockSize,
             function_ref<void(KB &, ValueRange, Value)> body) {
  OpBuilder ob(module.getBodyRegion());
  ob.setInsertionPointToEnd(&module.getBodyRegion().front());
  Location loc = module.getLoc();
  auto fn = gpu::GPUFuncOp::create(ob, loc, baseName,
                                   ob.getFunctionType(args, {}));
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), ob.getUnitAttr());
  int64_t grid = ::mxmoe::ceilDiv(work, blockSize);
  fn.setKnownBlockSizeAttr(
      ob.getDenseI32ArrayAttr({static_cast<int32_t>(blockSize), 1, 1}));
  fn->setAttr("mxmoe.grid", ob.getDenseI64ArrayAttr({grid, 1, 1}));
  fn->setAttr("mxmoe.block", ob.getDenseI64ArrayAttr({blockSize, 1, 1}));
  SymbolTable(module).insert(fn);

  KB b(loc, ob);
  b.setInsertionPointToStart(&fn.getBody().front());
  Value bid = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value gtid = b.add(b.mulc(bid, blockSize), tid);
  Value inRange = b.ult(gtid, b.idx(work));
  auto ifOp = scf::IfOp::create(b, inRange, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  body(b, fn.getArguments(), gtid);
  b.setInsertionPointToEnd(&fn.getBody().front());
  gpu::ReturnOp::create(b);
  return fn;
}

/// Scale exponent byte (i32 in [0, 255]) of a block from its fp32 amax,
/// mx-formats.md section 2. `emaxElem` / `maxPos` / `mbits` describe the
/// element type.
Value computeScaleByte(KB &b, Value amax, RoundingMode mode, int emaxElem,
                       float maxPos, int mbits) {
  Type i32 = b.getI32Type();
  Value bits = b.bitcast(i32, amax);
  Value expMask = b.i32(0x7F800000);
  Value finite = b.ne(b.andi(bits, expMask), expMask);
  Value zero = b.i32(0), c255 = b.i32(255);
  Value byte;
  auto expOf = [&](Value v) { return b.andi(b.shrui(v, 23), c255); };
  auto mantOf = [&](Value v) { return b.andi(v, b.i32(0x7FFFFF)); };
  switch (mode) {
  case RoundingMode::floor:
    byte = b.maxsi(b.sub(expOf(bits), b.i32(emaxElem)), zero);
    break;
  case RoundingMode::ceil: {
    Value up = arith::ExtUIOp::create(b, i32, b.ne(mantOf(bits), zero));
    byte = b.maxsi(b.sub(b.add(expOf(bits), up), b.i32(emaxElem)), zero);
    break;
  }
  case RoundingMode::even: {
    Value rounded = b.add(bits, b.i32(1 << (23 - mbits - 1)));
    byte = b.maxsi(b.sub(expOf(rounded), b.i32(emaxElem)), zero);
    break;
  }
  case RoundingMode::rceil: {
    // d = amax * fp32(1/max_pos); round d up to a power of two (PTX
    // cvt.rp.ue8m0x2.f32 semantics, computed with integer ops so that the
    // same code runs on sm_90a).
    Value d = arith::MulFOp::create(b, amax, b.f32(1.0f / maxPos));
    Value dbits = b.bitcast(i32, d);
    Value e = expOf(dbits), m = mantOf(dbits);
    Value sub = arith::ExtUIOp::create(
        b, i32,
        arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, m,
                              b.i32(0x400000)));
    Value up = arith::ExtUIOp::create(b, i32, b.ne(m, zero));
    Value normal = b.minsi(b.add(e, up), c255);
    byte = b.select(b.eq(e, zero), sub, normal);
    break;
  }
  }
  byte = b.minsi(byte, c255);
  return b.select(finite, byte, c255);
}

/// fp32 2^(127 - byte) (byte 254 -> 2^-127, 255 -> NaN).
Value reciprocalScale(KB &b, Value byte) {
  Type i32 = b.getI32Type();
  Value normal = arith::ShLIOp::create(b, b.sub(b.i32(254), byte), b.i32(23));
  Value bits = b.select(b.eq(byte, b.i32(254)), b.i32(0x00400000), normal);
  bits = b.select(b.eq(byte, b.i32(255)), b.i32(0x7FC00000), bits);
  (void)i32;
  return b.bitcast(b.getF32Type(), bits);
}

/// fp32 2^(byte - 127) (byte 0 -> 2^-127, 255 -> NaN).
Value decodeScale(KB &b, Value byte) {
  Value normal = arith::ShLIOp::create(b, byte, b.i32(23));
  Value bits = b.select(b.eq(byte, b.i32(0)), b.i32(0x00400000), normal);
  bits = b.select(b.eq(byte, b.i32(255)), b.i32(0x7FC00000), bits);
  return b.bitcast(b.getF32Type(), bits);
}

/// Flat 1-D memref type of a tensor (kernels index bytes/elements flat).
MemRefType flatMemRef(RankedTensorType t) {
  return MemRefType::get({t.getNumElements()}, t.getElementType());
}

/// Index of data block (b, r, c) of `g` from a thread index: rowwise puts c
/// fastest (adjacent threads read adjacent 64-B chunks), columnwise puts r
/// fastest (adjacent threads read adjacent columns).
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

Value scaleIndex(KB &b, const MXGeometry &g, bool blocked, Value bi, Value r,
                 Value c) {
  int64_t cs = g.scaleCols();
  if (!blocked)
    return b.add(b.mulc(b.add(b.mulc(bi, g.rows), r), cs), c);
  int64_t rp = roundUp(g.rows, 128), cp = roundUp(cs, 4);
  return b.add(b.mulc(bi, rp * cp), b.blockedOffset(r, c, cp));
}

/// Loads the 32 high-precision elements of block (bi, r, c) as f32.
SmallVector<Value> loadBlock(KB &b, Value mem, Type elem, const MXGeometry &g,
                             Value base) {
  SmallVector<Value> xs;
  Type f32 = b.getF32Type();
  auto widen = [&](Value v) -> Value {
    return elem == f32 ? v : arith::ExtFOp::create(b, f32, v);
  };
  if (g.rowwise()) {
    int64_t vecLen = 16 / (elem.getIntOrFloatBitWidth() / 8);
    auto vt = VectorType::get({vecLen}, elem);
    for (int64_t i = 0; i < kMXBlockSize; i += vecLen) {
      Value v = vector::LoadOp::create(b, vt, mem,
                                       ValueRange{b.add(base, b.idx(i))},
                                       /*nontemporal=*/false,
                                       llvm::MaybeAlign(16));
      for (int64_t j = 0; j < vecLen; ++j)
        xs.push_back(widen(vector::ExtractOp::create(b, v, j)));
    }
    return xs;
  }
  for (int64_t i = 0; i < kMXBlockSize; ++i)
    xs.push_back(widen(memref::LoadOp::create(
        b, mem, ValueRange{b.add(base, b.idx(i * g.hpAlong))})));
  return xs;
}

LogicalResult checkFP8(Operation *op, Type elem) {
  if (isa<Float8E4M3FNType, Float8E5M2Type>(elem))
    return success();
  return op->emitOpError("GPU lowering of ")
         << elem << " data is not implemented yet (supported: f8E4M3FN, "
                    "f8E5M2)";
}

struct KernelGen {
  gpu::GPUModuleOp module;
  int64_t blockSize;
  /// Kernels generated so far per enclosing function (names are
  /// `<function>__<op>_<n>`, n counting that function's MX ops).
  llvm::StringMap<unsigned> counters;

  std::string name(StringRef kind, Operation *op) {
    auto fn = op->getParentOfType<FunctionOpInterface>();
    StringRef fnName = fn ? fn.getName() : "kernel";
    return (fnName + "__" + kind + "_" + Twine(counters[fnName]++)).str();
  }

  void annotate(Operation *op, gpu::GPUFuncOp kernel) {
    op->setAttr("mxmoe.kernel",
                SymbolRefAttr::get(module.getNameAttr(),
                                   {FlatSymbolRefAttr::get(kernel)}));
  }

  LogicalResult genQuantize(QuantizeOp op) {
    if (op.getOffsets())
      return op.emitOpError("GPU lowering of quantization with group "
                            "offsets is not implemented yet");
    RankedTensorType in = op.getInput().getType();
    RankedTensorType data = op.getData().getType();
    RankedTensorType scales = op.getScales().getType();
    if (failed(checkFP8(op, data.getElementType())))
      return failure();
    FailureOr<MXGeometry> g = getGeometry(op, in, op.getAxis());
    if (failed(g))
      return failure();
    bool blocked = isBlockedScales(scales);
    int64_t cs = g->scaleCols();
    int64_t rs = blocked ? roundUp(g->rows, 128) : g->rows;
    int64_t csp = blocked ? roundUp(cs, 4) : cs;
    int64_t work = g->batch * rs * csp;
    Type elem = in.getElementType();
    Type dataElem = data.getElementType();
    auto kind = *getMXElementKind(dataElem);
    const auto &fmt = ::mxmoe::getMXElementFormat(kind);
    RoundingMode mode = op.getRounding();
    MXGeometry geo = *g;
    auto kernel = createKernel(
        module, name("quantize", op),
        {flatMemRef(in), flatMemRef(data), flatMemRef(scales)}, work,
        blockSize, [&](KB &b, ValueRange args, Value t) {
          Value bi, r, c;
          decompose(b, t, geo, rs, csp, bi, r, c);
          Value sIdx = scaleIndex(b, geo, blocked, bi, r, c);
          Type e8m0 = Float8E8M0FNUType::get(b.getContext());
          Value real =
              b.andi(b.ult(r, b.idx(geo.rows)), b.ult(c, b.idx(cs)));
          auto ifOp = scf::IfOp::create(b, real, /*withElse=*/true);
          // Padding of the blocked layout: scale byte 0.
          b.setInsertionPointToStart(&ifOp.getElseRegion().front());
          Value zeroByte = b.bitcast(
              e8m0, arith::ConstantIntOp::create(b, b.getI8Type(), 0));
          memref::StoreOp::create(b, zeroByte, args[2], sIdx);
          b.setInsertionPointToStart(&ifOp.getThenRegion().front());
          Value base = b.add(b.add(b.mulc(bi, geo.hpBatch),
                                   b.mulc(r, geo.hpRow)),
                             b.mulc(c, kMXBlockSize * geo.hpAlong));
          SmallVector<Value> xs = loadBlock(b, args[0], elem, geo, base);
          // amax with NaN propagation (maximumf), then the scale byte.
          SmallVector<Value> level;
          for (Value x : xs)
            level.push_back(math_abs(b, x));
          while (level.size() > 1) {
            SmallVector<Value> next;
            for (size_t i = 0; i + 1 < level.size(); i += 2)
              next.push_back(
                  arith::MaximumFOp::create(b, level[i], level[i + 1]));
            level = std::move(next);
          }
          Value byte = computeScaleByte(b, level[0], mode, fmt.emaxElem,
                                        static_cast<float>(fmt.maxNormal),
                                        fmt.mantissaBits);
          Value inv = reciprocalScale(b, byte);
          SmallVector<Value> packed;
          for (int64_t i = 0; i < kMXBlockSize; i += 2) {
            Value lo = arith::MulFOp::create(b, xs[i], inv);
            Value hi = arith::MulFOp::create(b, xs[i + 1], inv);
            // cvt.rn.satfinite.{e4m3,e5m2}x2.f32 d, hi, lo: `a` lands in
            // the upper byte, so element i is the low (first) byte.
            packed.push_back(NVVM::ConvertF32x2ToF8x2Op::create(
                b, b.getI16Type(), hi, lo, NVVM::FPRoundingMode::RN,
                NVVM::SaturationMode::SATFINITE, /*relu=*/false, dataElem));
          }
          Value v16 = vector::FromElementsOp::create(
              b, VectorType::get({16}, b.getI16Type()), packed);
          Value v32 = vector::BitCastOp::create(
              b, VectorType::get({32}, dataElem), v16);
          Value dIdx = b.add(
              b.mulc(b.add(b.mulc(bi, geo.rows), r), geo.len),
              b.mulc(c, kMXBlockSize));
          vector::StoreOp::create(b, v32, args[1], ValueRange{dIdx},
                                  /*nontemporal=*/false, llvm::MaybeAlign(32));
          Value byte8 = arith::TruncIOp::create(b, b.getI8Type(), byte);
          memref::StoreOp::create(b, b.bitcast(e8m0, byte8), args[2], sIdx);
        });
    annotate(op, kernel);
    return success();
  }

  static Value math_abs(KB &b, Value x) {
    // |x| by clearing the sign bit (exact, keeps NaN a NaN).
    Value bits = b.bitcast(b.getI32Type(), x);
    return b.bitcast(b.getF32Type(), b.andi(bits, b.i32(0x7FFFFFFF)));
  }

  LogicalResult genDequantize(DequantizeOp op) {
    if (op.getOffsets())
      return op.emitOpError("GPU lowering of dequantization with group "
                            "offsets is not implemented yet");
    RankedTensorType out = op.getResult().getType();
    RankedTensorType data = op.getData().getType();
    RankedTensorType scales = op.getScales().getType();
    if (failed(checkFP8(op, data.getElementType())))
      return failure();
    FailureOr<MXGeometry> g = getGeometry(op, out, op.getAxis());
    if (failed(g))
      return failure();
    MXGeometry geo = *g;
    bool blocked = isBlockedScales(scales);
    int64_t cs = geo.scaleCols();
    int64_t work = geo.batch * geo.rows * cs;
    Type outElem = out.getElementType(), dataElem = data.getElementType();
    auto kernel = createKernel(
        module, name("dequantize", op),
        {flatMemRef(data), flatMemRef(scales), flatMemRef(out)}, work,
        blockSize, [&](KB &b, ValueRange args, Value t) {
          Value bi, r, c;
          decompose(b, t, geo, geo.rows, cs, bi, r, c);
          Value sIdx = scaleIndex(b, geo, blocked, bi, r, c);
          Value s8 = memref::LoadOp::create(b, args[1], sIdx);
          Value byte = arith::ExtUIOp::create(
              b, b.getI32Type(), b.bitcast(b.getI8Type(), s8));
          Value scale = decodeScale(b, byte);
          Value dIdx = b.add(
              b.mulc(b.add(b.mulc(bi, geo.rows), r), geo.len),
              b.mulc(c, kMXBlockSize));
          Value q = vector::LoadOp::create(
              b, VectorType::get({32}, dataElem), args[0], ValueRange{dIdx},
              /*nontemporal=*/false, llvm::MaybeAlign(32));
          Value qi8 = vector::BitCastOp::create(
              b, VectorType::get({32}, b.getI8Type()), q);
          SmallVector<Value> ys;
          Type f32 = b.getF32Type();
          for (int64_t i = 0; i < kMXBlockSize; i += 2) {
            Value pair = vector::ShuffleOp::create(
                b, qi8, qi8, ArrayRef<int64_t>{i, i + 1});
            // cvt.rn.f16x2.{e4m3,e5m2}x2: exact (f16 covers both formats).
            Value h2 = NVVM::ConvertF8x2ToF16x2Op::create(
                b, VectorType::get({2}, b.getF16Type()), pair,
                b.getBoolAttr(false), TypeAttr::get(dataElem));
            for (int64_t j = 0; j < 2; ++j) {
              Value h = vector::ExtractOp::create(b, h2, j);
              Value x = arith::MulFOp::create(
                  b, arith::ExtFOp::create(b, f32, h), scale);
              ys.push_back(outElem == f32
                               ? x
                               : arith::TruncFOp::create(b, outElem, x));
            }
          }
          Value base = b.add(b.add(b.mulc(bi, geo.hpBatch),
                                   b.mulc(r, geo.hpRow)),
                             b.mulc(c, kMXBlockSize * geo.hpAlong));
          if (geo.rowwise()) {
            Value v = vector::FromElementsOp::create(
                b, VectorType::get({32}, outElem), ys);
            vector::StoreOp::create(b, v, args[2], ValueRange{base},
                                    /*nontemporal=*/false,
                                    llvm::MaybeAlign(16));
          } else {
            for (int64_t i = 0; i < kMXBlockSize; ++i)
              memref::StoreOp::create(
                  b, ys[i], args[2],
                  ValueRange{b.add(base, b.idx(i * geo.hpAlong))});
          }
        });
    annotate(op, kernel);
    return success();
  }

  LogicalResult genSwizzle(SwizzleScalesOp op) {
    if (op.getOffsets())
      return op.emitOpError("GPU lowering of grouped (M-group / K-group) "
                            "scale swizzles is not implemented yet");
    RankedTensorType src = op.getSource().getType();
    RankedTensorType dst = op.getResult().getType();
    if (!src.hasStaticShape() || !dst.hasStaticShape())
      return op.emitOpError("GPU lowering needs static shapes");
    bool toBlocked = isBlockedScales(dst);
    RankedTensorType rowMajor = toBlocked ? src : dst;
    ArrayRef<int64_t> s = rowMajor.getShape();
    int64_t batch = s.size() == 3 ? s[0] : 1;
    int64_t rows = s[s.size() - 2], cols = s.back();
    int64_t rp = roundUp(rows, 128), cp = roundUp(cols, 4);
    int64_t work = toBlocked ? batch * rp * cp : batch * rows * cols;
    auto kernel = createKernel(
        module, name("swizzle_scales", op), {flatMemRef(src), flatMemRef(dst)},
        work, blockSize, [&](KB &b, ValueRange args, Value t) {
          Type e8m0 = Float8E8M0FNUType::get(b.getContext());
          if (toBlocked) {
            // One thread per blocked byte: invert the layout.
            Value bi = b.div(t, rp * cp), w = b.rem(t, rp * cp);
            Value atom = b.div(w, 512), o = b.rem(w, 512);
            Value r = b.add(b.mulc(b.div(atom, cp / 4), 128),
                            b.add(b.mulc(b.div(b.rem(o, 16), 4), 32),
                                  b.div(o, 16)));
            Value c = b.add(b.mulc(b.rem(atom, cp / 4), 4), b.rem(o, 4));
            Value real = b.andi(b.ult(r, b.idx(rows)), b.ult(c, b.idx(cols)));
            auto ifOp = scf::IfOp::create(b, TypeRange{e8m0}, real,
                                          /*withElse=*/true);
            b.setInsertionPointToStart(&ifOp.getThenRegion().front());
            Value srcIdx =
                b.add(b.mulc(b.add(b.mulc(bi, rows), r), cols), c);
            scf::YieldOp::create(
                b, ValueRange{memref::LoadOp::create(b, args[0], srcIdx)});
            b.setInsertionPointToStart(&ifOp.getElseRegion().front());
            scf::YieldOp::create(
                b, ValueRange{b.bitcast(e8m0, arith::ConstantIntOp::create(
                                                  b, b.getI8Type(), 0))});
            b.setInsertionPointAfter(ifOp);
            memref::StoreOp::create(b, ifOp.getResult(0), args[1], t);
          } else {
            Value c = b.rem(t, cols), r = b.rem(b.div(t, cols), rows);
            Value bi = b.div(t, rows * cols);
            Value srcIdx =
                b.add(b.mulc(bi, rp * cp), b.blockedOffset(r, c, cp));
            memref::StoreOp::create(
                b, memref::LoadOp::create(b, args[0], srcIdx), args[1], t);
          }
        });
    annotate(op, kernel);
    return success();
  }
};

struct ConvertMXMoEToGPUPass
    : ::mlir::mxmoe::impl::ConvertMXMoEToGPUBase<ConvertMXMoEToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (blockSize < 32 || blockSize > 1024 || blockSize % 32 != 0) {
      module.emitError() << "convert-mxmoe-to-gpu: block-size must be a "
                            "multiple of 32 in [32, 1024], got "
                         << blockSize;
      return signalPassFailure();
    }
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<QuantizeOp, DequantizeOp, SwizzleScalesOp>(op) &&
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
      kernels = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName);
    }
    KernelGen gen{kernels, blockSize};
    for (Operation *op : ops) {
      LogicalResult r =
          llvm::TypeSwitch<Operation *, LogicalResult>(op)
              .Case<QuantizeOp>([&](auto q) { return gen.genQuantize(q); })
              .Case<DequantizeOp>(
                  [&](auto d) { return gen.genDequantize(d); })
              .Case<SwizzleScalesOp>(
                  [&](auto s) { return gen.genSwizzle(s); });
      if (failed(r))
        return signalPassFailure();
    }
  }
};

} // namespace
