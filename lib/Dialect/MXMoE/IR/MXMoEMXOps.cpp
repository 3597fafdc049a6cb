//===- MXMoEMXOps.cpp - verifiers of the MX-level mxmoe ops ---------------===//
//
// quantize, fused_quantize, quantize_weight, requantize, dequantize,
// swizzle_scales,
// grouped_matmul (the ops convert-mxmoe-to-gpu lowers). The model-level
// ops are in MXMoEOps.cpp, the shared rules in MXMoEVerifiers.cpp.
//
//===----------------------------------------------------------------------===//

#include "MXMoEVerifiers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::verifiers;
using ::mxmoe::kBlockedCols;
using ::mxmoe::kBlockedRows;
using ::mxmoe::kMXBlockSize;
using ::mxmoe::roundUp;

/// Row-major and blocked scales may record the tile their 1x32 slots
/// share; it must be the quantization's.
static LogicalResult verifyRecordedTile(Operation *op, RankedTensorType scales,
                                        std::array<int64_t, 2> tile) {
  ScaleLayoutAttr layout = getScaleLayout(scales);
  if (!layout || layout.isCompact() || layout.getTile().empty())
    return success();
  if (layout.getTile()[0] != tile[0] || layout.getTile()[1] != tile[1])
    return op->emitOpError()
           << "scales record tile = [" << layout.getTile()
           << "] but the quantization's scale_tile is [" << tile[0] << ", "
           << tile[1] << "]; they must be equal (or drop the scales' tile)";
  return success();
}

LogicalResult QuantizeOp::verify() {
  if (std::optional<ArrayRef<int64_t>> t = getScaleTile(); t && t->size() != 2)
    return emitOpError() << "scale_tile must have two entries [r, c], got "
                         << t->size();
  if (failed(verifyMXQuantization(*this, getInput().getType(), "input",
                                  getData().getType(), getScales().getType(),
                                  getAxis(), getBlockSize(), getOffsets(),
                                  getScaleTileOrDefault())))
    return failure();
  return verifyRecordedTile(*this, getScales().getType(),
                            getScaleTileOrDefault());
}

LogicalResult QuantizeWeightOp::verify() {
  ArrayRef<int64_t> t = getScaleTile();
  if (t.size() != 2 || t[0] != t[1])
    return emitOpError()
           << "scale_tile must be a square [t, t] (a tile is then the same "
              "block of the weight along K and along N, so one quantization "
              "serves both orientations), got ["
           << t << "]";
  std::array<int64_t, 2> tile = {t[0], t[1]};
  RankedTensorType in = getInput().getType();
  int64_t rank = in.getRank();
  // The forward orientation (along K), then the input gradient's (along N).
  if (failed(verifyMXQuantization(*this, in, "input", getData().getType(),
                                  getScales().getType(), rank - 1,
                                  getBlockSize(), Value(), tile)) ||
      failed(verifyRecordedTile(*this, getScales().getType(), tile)))
    return failure();
  if (failed(verifyMXQuantization(
          *this, in, "input", getTransposedData().getType(),
          getTransposedScales().getType(), rank - 2, getBlockSize(), Value(),
          tile, "transposed_data", "transposed_scales")) ||
      failed(verifyRecordedTile(*this, getTransposedScales().getType(), tile)))
    return failure();
  if (getData().getType().getElementType() !=
      getTransposedData().getType().getElementType())
    return emitOpError() << "data and transposed_data must have the same "
                            "element type, got "
                         << getData().getType().getElementType() << " and "
                         << getTransposedData().getType().getElementType();
  return success();
}

LogicalResult RequantizeOp::verify() {
  ArrayRef<int64_t> t = getScaleTile();
  if (t.size() != 2)
    return emitOpError() << "scale_tile must have two entries [r, c], got "
                         << t.size();
  std::array<int64_t, 2> tile = {t[0], t[1]};
  if (failed(verifyScaleTile(*this, tile, Value())))
    return failure();
  RankedTensorType data = getData().getType(), out = getTiledData().getType();
  Type elem = data.getElementType();
  if (!isa<Float8E4M3FNType, Float8E5M2Type>(elem))
    return emitOpError() << "requantize supports FP8 data (f8E4M3FN, "
                            "f8E5M2), got "
                         << elem;
  if (out != data)
    return emitOpError() << "tiled_data must have the data's type " << data
                         << ", got " << out;
  if (data.getRank() != 2 && data.getRank() != 3)
    return emitOpError() << "expects 2-D [M, K] or 3-D [E, N, K] data, got "
                            "rank "
                         << data.getRank();
  if (data.getEncoding())
    return emitOpError() << "data must have no encoding";
  RankedTensorType scales = getScales().getType();
  if (failed(verifyScaleElementType(*this, scales, "scales")))
    return failure();
  if (ScaleLayoutAttr l = getScaleLayout(scales);
      l && (!l.getTile().empty() || l.getKind() != ScaleLayoutKind::row_major))
    return emitOpError() << "scales must be row-major 1x32 MX scales (no "
                            "layout or tile), got "
                         << scales;
  SmallVector<int64_t> logical(data.getShape());
  int64_t last = logical.back();
  if (!ShapedType::isDynamic(last) && last % kMXBlockSize != 0)
    return emitOpError() << "the scaled axis of the data has size " << last
                         << ", which is not a multiple of 32";
  logical.back() = divBlock(last);
  if (!shapesCompatible(scales.getShape(), logical))
    return emitOpError() << "scales must have shape " << formatShape(logical)
                         << " (one per 1x32 block of the data), got "
                         << formatShape(scales.getShape());
  RankedTensorType tiled = getTiledScales().getType();
  if (isBlockedScales(tiled))
    return emitOpError() << "tiled_scales are row-major or compact; convert "
                            "row-major ones with mxmoe.swizzle_scales";
  if (isCompactScales(tiled))
    return verifyCompactScaleShape(*this, data, tiled, tile, false,
                                   ShapedType::kDynamic);
  if (failed(verifyScaleElementType(*this, tiled, "tiled_scales")))
    return failure();
  if (!shapesCompatible(tiled.getShape(), logical))
    return emitOpError() << "tiled_scales must have shape "
                         << formatShape(logical) << ", got "
                         << formatShape(tiled.getShape());
  return verifyRecordedTile(*this, tiled, tile);
}

LogicalResult DequantizeOp::verify() {
  // Compact scales carry their tile; the other layouts hold one scale per
  // 1x32 block whatever tile produced them.
  std::array<int64_t, 2> tile = {1, kMXBlockSize};
  if (ScaleLayoutAttr layout = getScaleLayout(getScales().getType());
      layout && layout.isCompact())
    tile = {layout.getTile()[0], layout.getTile()[1]};
  if (failed(verifyScalesNotRelabeled(*this, getScales(), "scales")))
    return failure();
  return verifyMXQuantization(*this, getResult().getType(), "result",
                              getData().getType(), getScales().getType(),
                              getAxis(), getBlockSize(), getOffsets(), tile);
}

//===----------------------------------------------------------------------===//
// SwizzleScalesOp
//===----------------------------------------------------------------------===//

LogicalResult SwizzleScalesOp::verify() {
  RankedTensorType src = getSource().getType(), dst = getResult().getType();
  if (failed(verifyScalesNotRelabeled(*this, getSource(), "source scales")))
    return failure();
  if (failed(verifyScaleElementType(*this, src, "source")) ||
      failed(verifyScaleElementType(*this, dst, "result")) ||
      failed(verifyNotCompact(*this, src, "source")) ||
      failed(verifyNotCompact(*this, dst, "result")))
    return failure();
  // A tile on the result (its 1x32 slots share one scale per tile) must be
  // one the source records.
  ArrayRef<int64_t> srcTile, dstTile;
  if (ScaleLayoutAttr l = getScaleLayout(src))
    srcTile = l.getTile();
  if (ScaleLayoutAttr l = getScaleLayout(dst))
    dstTile = l.getTile();
  if (!dstTile.empty() && srcTile != dstTile)
    return emitOpError() << "result scales record tile = [" << dstTile
                         << "] but the source scales "
                         << (srcTile.empty() ? "record none" : "record another")
                         << "; a swizzle keeps the source's tile";
  bool srcBlocked = isBlockedScales(src), dstBlocked = isBlockedScales(dst);
  if (srcBlocked == dstBlocked)
    return emitOpError() << "exactly one of source and result must be in the "
                            "blocked_128x4 layout (this op converts between "
                            "row-major and blocked), got "
                         << (srcBlocked ? "both" : "neither");
  RankedTensorType rowMajor = srcBlocked ? dst : src;
  RankedTensorType blocked = srcBlocked ? src : dst;
  if (rowMajor.getRank() != 2 && rowMajor.getRank() != 3)
    return emitOpError() << "scales must be 2-D [R, C] or 3-D [E, R, C], got "
                            "rank "
                         << rowMajor.getRank();
  ScaleGroups groups = ScaleGroups::None;
  if (Value offsets = getOffsets()) {
    if (rowMajor.getRank() != 2)
      return emitOpError() << "offsets are only supported for 2-D scales; "
                              "3-D scales are blocked per expert";
    if (failed(verifyOffsetsType(*this, offsets, std::nullopt, "")))
      return failure();
    groups = isPerKGroupScales(blocked) ? ScaleGroups::K : ScaleGroups::M;
  }
  return verifyBlockedScaleShape(*this,
                                 srcBlocked ? "source scales" : "result scales",
                                 rowMajor.getShape(), blocked, groups);
}

//===----------------------------------------------------------------------===//
// GroupedMatmulOp
//===----------------------------------------------------------------------===//

LogicalResult GroupedMatmulOp::verify() {
  RankedTensorType lhs = getLhs().getType(), rhs = getRhs().getType(),
                   out = getResult().getType();
  if (lhs.getRank() != 2)
    return emitOpError() << "lhs must be 2-D ([M, K] or [M', T]), got rank "
                         << lhs.getRank();
  if (rhs.getRank() != 2 && rhs.getRank() != 3)
    return emitOpError() << "rhs must be 3-D [G, N, K] (2D x 3D -> 2D) or 2-D "
                            "[N', T] (2D x 2D -> 3D), got rank "
                         << rhs.getRank();
  bool kGrouped = rhs.getRank() == 2;
  Type lhsElem = lhs.getElementType(), rhsElem = rhs.getElementType();
  bool lhsMX = isMXElementType(lhsElem), rhsMX = isMXElementType(rhsElem);
  if (lhsMX != rhsMX)
    return emitOpError() << "lhs and rhs must both be MX or both high "
                            "precision, got "
                         << lhsElem << " and " << rhsElem;
  if (!lhsMX && lhsElem != rhsElem)
    return emitOpError() << "high-precision lhs and rhs element types differ: "
                         << lhsElem << " vs " << rhsElem;
  if (lhsMX && (!getLhsScales() || !getRhsScales()))
    return emitOpError() << "MX operands need their f8E8M0FNU scales ("
                         << (getLhsScales() ? "rhs" : "lhs")
                         << " has none; write `%x scales %s`)";
  if (!lhsMX && (getLhsScales() || getRhsScales()))
    return emitOpError() << "scales are only allowed with MX operands, but "
                            "the operands are "
                         << lhsElem;

  int64_t k = lhs.getDimSize(1), rk = rhs.getShape().back();
  if (!dimsCompatible(k, rk))
    return emitOpError() << "contraction sizes differ: lhs has "
                         << (kGrouped ? "T = " : "K = ") << k << " but rhs has "
                         << rk;
  if (lhsMX && !ShapedType::isDynamic(k) && k % kMXBlockSize != 0)
    return emitOpError() << "contraction size " << k
                         << " is not a multiple of the MX block size 32";

  int64_t numGroups;
  SmallVector<int64_t> expectedOut;
  if (kGrouped) {
    if (out.getRank() != 3)
      return emitOpError() << "2D x 2D grouped matmul must produce a 3-D "
                              "[G, M', N'] result, got rank "
                           << out.getRank();
    numGroups = out.getDimSize(0);
    expectedOut = {numGroups, lhs.getDimSize(0), rhs.getDimSize(0)};
  } else {
    numGroups = rhs.getDimSize(0);
    expectedOut = {lhs.getDimSize(0), rhs.getDimSize(1)};
  }
  if (!shapesCompatible(out.getShape(), expectedOut))
    return emitOpError() << "result must be " << formatShape(expectedOut)
                         << (kGrouped ? " ([G, M', N'])" : " ([M, N])")
                         << ", got " << formatShape(out.getShape());
  if (Value acc = getAccumulator()) {
    if (!kGrouped)
      return emitOpError() << "`accumulate` is only supported by 2D x 2D -> "
                              "3D (weight-gradient) grouped matmuls";
    if (acc.getType() != out)
      return emitOpError() << "accumulator type " << acc.getType()
                           << " must equal the result type " << out;
  }
  // Grouped extent: M (2D x 3D), the (padded) token axis (2D x 2D).
  int64_t grouped = lhs.getDimSize(kGrouped ? 1 : 0);
  if (failed(verifyOffsetsType(*this, getOffsets(), numGroups,
                               kGrouped ? "result dim 0 is the number of "
                                          "groups"
                                        : "rhs dim 0 is the number of "
                                          "experts",
                               grouped)))
    return failure();
  if (!lhsMX)
    return success();

  if (failed(verifyScalesNotRelabeled(*this, getLhsScales(), "lhs scales")) ||
      failed(verifyScalesNotRelabeled(*this, getRhsScales(), "rhs scales")))
    return failure();
  auto lhsScales = cast<RankedTensorType>(getLhsScales().getType());
  auto rhsScales = cast<RankedTensorType>(getRhsScales().getType());
  SmallVector<int64_t> lhsLogical{lhs.getDimSize(0), divBlock(k)};
  SmallVector<int64_t> rhsLogical(rhs.getShape());
  rhsLogical.back() = divBlock(rk);
  if (failed(verifyScaleShape(*this, "lhs scales", lhsLogical, lhsScales,
                              kGrouped ? ScaleGroups::K : ScaleGroups::M)))
    return failure();
  return verifyScaleShape(*this, "rhs scales", rhsLogical, rhsScales,
                          kGrouped ? ScaleGroups::K : ScaleGroups::None);
}

//===----------------------------------------------------------------------===//
// fused_quantize
//===----------------------------------------------------------------------===//

GatherRowsOp FusedQuantizeOp::getGather() {
  for (Operation &op : getBody().front())
    if (auto g = dyn_cast<GatherRowsOp>(op))
      return g;
  return {};
}

Value FusedQuantizeOp::getProduced() {
  if (GatherRowsOp g = getGather())
    return g.getResult();
  for (Operation &op : getBody().front())
    if (auto c = dyn_cast<tensor::ConcatOp>(op))
      return c.getResult();
  SmallVector<linalg::GenericOp> parts = getProducers<linalg::GenericOp>();
  return parts.empty() ? Value() : parts.front().getResult(0);
}

std::pair<Value, int64_t> FusedQuantizeOp::getColumnSlice(Value in) {
  auto slice = in.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice)
    return {in, 0};
  RankedTensorType src = slice.getSourceType();
  ArrayRef<int64_t> off = slice.getStaticOffsets(),
                    sizes = slice.getStaticSizes(),
                    strides = slice.getStaticStrides();
  if (src.getRank() != 2 || !src.hasStaticShape() || off[0] != 0 ||
      ShapedType::isDynamic(off[1]) || sizes[0] != src.getDimSize(0) ||
      strides[0] != 1 || strides[1] != 1)
    return {};
  return {slice.getSource(), off[1]};
}

std::pair<BlockArgument, int64_t>
FusedQuantizeOp::getProducerInput(linalg::GenericOp part, unsigned i) {
  auto [src, col] = getColumnSlice(part.getDpsInputs()[i]);
  return {cast<BlockArgument>(src), col};
}

FusedQuantizeOp::ProducerError
FusedQuantizeOp::whyNotProducer(linalg::GenericOp g) {
  auto at = [&](std::string why) { return ProducerError{why, g}; };
  if (g.getNumLoops() != 2 || g.getNumParallelLoops() != 2)
    return at("in mxmoe.fused_quantize must have two parallel loops");
  if (g.getNumDpsInits() != 1 ||
      !g.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
    return at("in mxmoe.fused_quantize must have one init, a tensor.empty");
  if (!llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return at("in mxmoe.fused_quantize must use identity indexing maps");
  for (auto [i, in] : llvm::enumerate(g.getDpsInputs()))
    if (!getColumnSlice(in).first)
      return at(("input #" + Twine(i) +
                 " is a tensor.extract_slice other than [0, c] over all "
                 "rows of a static 2-D tensor with unit strides")
                    .str());
  for (Operation &inner : g.getRegion().front().without_terminator()) {
    StringRef ns = inner.getDialect() ? inner.getDialect()->getNamespace() : "";
    if ((ns != "arith" && ns != "math") || inner.getNumRegions() != 0)
      return {"is not allowed in the producer of mxmoe.fused_quantize (only "
              "arith and math ops on scalars)",
              &inner};
  }
  return {};
}

/// The producer's rules: its inputs read block arguments (directly or by
/// a column slice), then whyNotProducer.
static LogicalResult verifyFusedProducer(FusedQuantizeOp op,
                                         linalg::GenericOp g) {
  Block &body = op.getBody().front();
  for (auto [i, in] : llvm::enumerate(g.getDpsInputs())) {
    auto arg = dyn_cast_or_null<BlockArgument>(
        FusedQuantizeOp::getColumnSlice(in).first);
    if (!arg || arg.getOwner() != &body)
      return g.emitOpError("input #")
             << i
             << " must be a block argument of the enclosing "
                "mxmoe.fused_quantize or a tensor.extract_slice of one at "
                "[0, c] over all its rows with unit strides";
  }
  FusedQuantizeOp::ProducerError e = FusedQuantizeOp::whyNotProducer(g);
  return e.why.empty() ? success() : e.at->emitOpError(e.why);
}

/// A producer of parts: `concat` joins the parts' results, in order,
/// along dim 1, and nothing else reads them.
static LogicalResult verifyFusedConcat(tensor::ConcatOp concat,
                                       ArrayRef<linalg::GenericOp> parts) {
  if (concat.getDim() != 1)
    return concat.emitOpError("in mxmoe.fused_quantize must concatenate "
                              "along dim 1");
  if (concat.getInputs().size() != parts.size() ||
      !llvm::all_of(llvm::zip(concat.getInputs(), parts), [](auto p) {
        auto [in, g] = p;
        return in == g->getResult(0) && in.hasOneUse();
      }))
    return concat.emitOpError("in mxmoe.fused_quantize must concatenate the "
                              "results of the linalg.generic ops before it, "
                              "in order, each used by it alone");
  return success();
}

/// The parts of an elementwise producer from ops[at]: (tensor.empty,
/// linalg.generic) pairs, joined by a tensor.concat when more than one;
/// `at` moves past them. Failure: the ops are not of that shape; a null
/// value: a part or the concat broke a rule (already reported); else the
/// value the quantizations read.
static FailureOr<Value>
verifyFusedParts(FusedQuantizeOp op, ArrayRef<Operation *> ops, size_t &at) {
  SmallVector<linalg::GenericOp> parts;
  while (at + 1 < ops.size() && isa<tensor::EmptyOp>(ops[at]) &&
         isa<linalg::GenericOp>(ops[at + 1])) {
    parts.push_back(cast<linalg::GenericOp>(ops[at + 1]));
    at += 2;
  }
  if (parts.empty() || at >= ops.size())
    return failure();
  for (linalg::GenericOp g : parts)
    if (failed(verifyFusedProducer(op, g)))
      return Value();
  if (auto concat = dyn_cast<tensor::ConcatOp>(ops[at])) {
    if (failed(verifyFusedConcat(concat, parts)))
      return Value();
    ++at;
    return concat.getResult();
  }
  if (parts.size() > 1)
    return failure();
  return parts.front().getResult(0);
}

LogicalResult FusedQuantizeOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "body must take one argument per operand ("
                         << getInputs().size() << "), got "
                         << body.getNumArguments();
  for (auto [i, in] : llvm::enumerate(getInputs()))
    if (body.getArgument(i).getType() != in.getType())
      return emitOpError() << "body argument #" << i << " must have type "
                           << in.getType() << ", got "
                           << body.getArgument(i).getType();
  // Shape of the block: column slices and scalar constants (which the
  // producer's body may use), tensor.empty, linalg.generic, quantize+,
  // yield.
  auto leading = [](Operation &op) {
    if (auto c = dyn_cast<arith::ConstantOp>(op))
      return c.getType().isIntOrIndexOrFloat();
    return isa<tensor::ExtractSliceOp>(op);
  };
  SmallVector<Operation *> ops;
  for (Operation &op : body)
    if (!leading(op) || !ops.empty())
      ops.push_back(&op);
  auto kinds = [&] {
    return emitOpError("body must hold, in order, column slices of its "
                       "arguments (tensor.extract_slice) and scalar "
                       "constants, one or more pairs of tensor.empty and "
                       "linalg.generic (with a tensor.concat of their "
                       "results along dim 1 when more than one) or one "
                       "mxmoe.gather_rows, one or more mxmoe.quantize of the "
                       "result and mxmoe.yield");
  };
  if (ops.empty())
    return kinds();
  size_t at = 0;
  Value produced;
  if (auto gather = dyn_cast<GatherRowsOp>(ops.front())) {
    // First in the block (no slices or constants before it), so it reads
    // block arguments only.
    if (&body.front() != gather.getOperation())
      return kinds();
    produced = gather.getResult();
    at = 1;
  } else {
    FailureOr<Value> parts = verifyFusedParts(*this, ops, at);
    if (failed(parts))
      return kinds();
    if (!*parts)
      return failure();
    produced = *parts;
  }
  if (!isa<YieldOp>(ops.back()))
    return kinds();
  if (at + 1 >= ops.size())
    return kinds();
  SmallVector<Value> quantized;
  for (Operation *op : ArrayRef(ops).slice(at, ops.size() - at - 1)) {
    auto q = dyn_cast<QuantizeOp>(op);
    if (!q)
      return kinds();
    if (q.getInput() != produced)
      return q.emitOpError("in mxmoe.fused_quantize must quantize the "
                           "producer's result");
    if (Value o = q.getOffsets())
      if (auto arg = dyn_cast<BlockArgument>(o);
          !arg || arg.getOwner() != &body)
        return q.emitOpError("offsets in mxmoe.fused_quantize must be a "
                             "block argument");
    quantized.append({q.getData(), q.getScales()});
  }
  auto yield = cast<YieldOp>(ops.back());
  if (ValueRange(yield.getValues()) != ValueRange(quantized))
    return yield.emitOpError("in mxmoe.fused_quantize must yield the "
                             "(data, scales) of every quantization, in order");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("result types must be the yielded types");
  return success();
}

/// whyNotLowered's rules for one part of the producer.
static std::string whyNotLoweredPart(linalg::GenericOp producer) {
  if (!producer.getRegionOutputArgs()[0].use_empty())
    return "the producer reads its init";
  if (producer.getNumDpsInputs() == 0)
    return "the producer has no tensor input";
  if (!cast<RankedTensorType>(producer.getResultTypes()[0]).hasStaticShape())
    return "the producer's result is not static";
  for (Value in : producer.getDpsInputs()) {
    auto [v, col] = FusedQuantizeOp::getColumnSlice(in);
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || t.getRank() != 2 || !t.hasStaticShape())
      return "a producer input is not a static 2-D tensor";
    Type e = t.getElementType();
    if (!e.isBF16() && !e.isF16() && !e.isF32())
      return "a producer input is not bf16, f16 or f32";
    int64_t bytes = e.getIntOrFloatBitWidth() / 8;
    if ((t.getDimSize(1) * bytes) % 16 != 0 || (col * bytes) % 16 != 0)
      return "a producer input's rows or column offset are not a multiple of "
             "16 bytes";
  }
  return "";
}

/// whyNotLowered's rules for the quantization itself.
static std::string whyNotLoweredQuantize(QuantizeOp q) {
  RankedTensorType in = q.getInput().getType();
  if (in.getRank() != 2)
    return "only quantizations of a 2-D tensor are generated with a fused "
           "producer";
  // Along the token axis: the jagged kernel's staging loads take the
  // producer (QuantizeJagged.cpp); a plain columnwise kernel does not.
  if (q.getAxis() == 0 && !q.getOffsets())
    return "a quantization along axis 0 is generated with a fused producer "
           "only in token groups (with offsets: the weight gradient's "
           "operand)";
  std::array<int64_t, 2> tile = q.getScaleTileOrDefault();
  if (tile[0] != 1)
    return "scale tiles of more than one row are not generated with a fused "
           "producer";
  if (q.getAxis() == 0) {
    // The jagged kernel's conditions (KernelGen::canQuantizeJaggedTiled;
    // also a block size of 256 threads, convert-mxmoe-to-gpu's default,
    // checked when the kernel is generated).
    int64_t perLoad = 16 / (in.getElementTypeBitWidth() / 8);
    if (tile[1] != 32 && tile[1] != 64 && tile[1] != 128)
      return "token-axis windows other than 32, 64 or 128 tokens are not "
             "generated with a fused producer";
    if (in.getDimSize(1) % perLoad != 0)
      return "a token-axis quantization's rows are not a multiple of 16 "
             "bytes of the quantize input";
  }
  return "";
}

std::string FusedQuantizeOp::whyNotLowered(QuantizeOp q,
                                           ArrayRef<linalg::GenericOp> parts) {
  if (std::string why = whyNotLoweredQuantize(q); !why.empty())
    return why;
  for (linalg::GenericOp producer : parts) {
    std::string why = whyNotLoweredPart(producer);
    if (!why.empty())
      return why;
    // A part boundary inside a loaded run (32 elements rowwise, 16 bytes
    // in the jagged kernel) would need two parts per run.
    int64_t width =
        cast<RankedTensorType>(producer.getResultTypes()[0]).getDimSize(1);
    if (parts.size() > 1 && width % 32 != 0)
      return "a concatenated part is not a multiple of 32 columns wide";
  }
  return "";
}

std::string FusedQuantizeOp::whyNotLowered(QuantizeOp q, GatherRowsOp gather) {
  if (std::string why = whyNotLoweredQuantize(q); !why.empty())
    return why;
  if (!q.getOffsets())
    return "a gather is fused only into quantizations in token groups (with "
           "offsets: their kernels' status word reports bad routing indices)";
  RankedTensorType src = gather.getSource().getType();
  if (!src.hasStaticShape() || !gather.getType().hasStaticShape())
    return "the gather's shapes are not static";
  int64_t bytes = src.getElementTypeBitWidth() / 8;
  if ((src.getDimSize(1) * bytes) % 16 != 0)
    return "the gather's source rows are not a multiple of 16 bytes";
  return "";
}
