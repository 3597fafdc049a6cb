//===- ExpandScaledMatmul.cpp - mxmoe-expand-scaled-matmul ----------------===//
//
// Model level -> MX level for the routed experts' grouped GEMM: forward,
// input gradient and weight gradient, each GEMM quantized along its own
// contraction axis (TorchAO _compute_{fwd,dgrad,wgrad}_sm100 in
// torchao/prototype/moe_training/mxfp8_grouped_mm.py).
//
//===----------------------------------------------------------------------===//

#include "SwiGLU.h"

#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h"
#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::mxmoe {
#define GEN_PASS_DEF_MXMOEEXPANDSCALEDMATMUL
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h.inc"
} // namespace mlir::mxmoe

using namespace mlir;
using namespace mlir::mxmoe;
using ::mxmoe::getGroupPaddedExtent;
using ::mxmoe::kMXBlockSize;
using ::mxmoe::roundUp;

namespace {

/// Shapes of one routed-expert GEMM: x [M, K], w [G, N, K].
struct Dims {
  int64_t m, n, k, g;
};

struct Expander {
  OpBuilder &b;
  Location loc;
  MXRecipeAttr recipe;
  Dims d;

  MLIRContext *ctx() { return b.getContext(); }
  Type e8m0() { return Float8E8M0FNUType::get(ctx()); }
  /// Blocked scales recording the tile `tile` (empty: none) their 1x32
  /// slots share.
  Attribute blocked(bool perKGroup, ArrayRef<int64_t> tile) {
    return ScaleLayoutAttr::get(ctx(), ScaleLayoutKind::blocked_128x4,
                                perKGroup, tile);
  }
  RankedTensorType t(ArrayRef<int64_t> shape, Type elem, Attribute enc = {}) {
    return RankedTensorType::get(shape, elem, enc);
  }

  /// The scale tile of an operand under the recipe: [1, 32] for mx32; for
  /// mx128 [128, 128] for weights and [1, 128] for activations and
  /// gradients (along the contraction axis, also the token axis of the
  /// weight gradient).
  DenseI64ArrayAttr scaleTile(bool weight) {
    if (!recipe.isMX128())
      return {};
    return b.getDenseI64ArrayAttr({weight ? 128 : 1, 128});
  }

  /// Quantizes `x` along `axis` (offsets only for the token axis of the
  /// weight gradient); returns {data, row-major scales}.
  std::pair<Value, Value> quantize(Value x, int64_t axis, Value offsets,
                                   ArrayRef<int64_t> dataShape, bool weight,
                                   Type element = {}) {
    SmallVector<int64_t> scaleShape(dataShape);
    scaleShape.back() /= kMXBlockSize;
    // MX128 scales are row-major MX scales recording their tile.
    DenseI64ArrayAttr tile = scaleTile(weight);
    Attribute enc;
    if (tile)
      enc = ScaleLayoutAttr::get(ctx(), ScaleLayoutKind::row_major, false,
                                 tile.asArrayRef());
    auto q = QuantizeOp::create(
        b, loc, t(dataShape, element ? element : recipe.getElement()),
        t(scaleShape, e8m0(), enc), x, offsets, b.getI64IntegerAttr(axis),
        b.getI64IntegerAttr(recipe.getBlockSize()),
        RoundingModeAttr::get(ctx(), recipe.getRounding()), tile);
    return {q.getData(), q.getScales()};
  }

  /// Blocked copy of `scales`, keeping the tile they record.
  Value swizzle(Value scales, Value offsets, ArrayRef<int64_t> blockedShape,
                bool perKGroup = false) {
    ArrayRef<int64_t> tile;
    if (ScaleLayoutAttr l =
            getScaleLayout(cast<RankedTensorType>(scales.getType())))
      tile = l.getTile();
    return SwizzleScalesOp::create(
        b, loc, t(blockedShape, e8m0(), blocked(perKGroup, tile)), scales,
        offsets);
  }

  /// The 2D x 3D GEMM of forward and input gradient: lhs [M, C] quantized
  /// rowwise (M-grouped blocked scales), w [G, N, K] quantized along
  /// `wAxis` (2: K for the forward; 1: N, 32x1, for the input gradient) so
  /// that its data is [G, R, C] with C the contraction; result [M, R].
  /// Under mx128 the weight's 128x128 tiles are the same blocks either
  /// way, so the input gradient's weight holds the forward's values,
  /// transposed.
  /// `quantized`, when set, is w already quantized: {data [G, R, C],
  /// blocked scales}.
  Value mGroupedGemm(Value lhs, int64_t contraction, Value w, int64_t wAxis,
                     int64_t rows, Value offs, Type outElem,
                     std::pair<Value, Value> quantized = {}) {
    int64_t c = contraction / kMXBlockSize;
    auto [lq, ls] = quantize(lhs, 1, Value(), {d.m, contraction},
                             /*weight=*/false);
    Value lb =
        swizzle(ls, offs, {getGroupPaddedExtent(d.m, d.g, 128), roundUp(c, 4)});
    auto [wq, wb] = quantized;
    if (!wq) {
      Value ws;
      std::tie(wq, ws) = quantize(w, wAxis, Value(), {d.g, rows, contraction},
                                  /*weight=*/true);
      wb = swizzle(ws, Value(), {d.g, roundUp(rows, 128), roundUp(c, 4)});
    }
    return GroupedMatmulOp::create(b, loc, t({d.m, rows}, outElem), lq, lb, wq,
                                   wb, offs, /*accumulator=*/Value());
  }

  /// y[M, N] = x[M, K] . w[g, N, K]^T per group: x and w along K.
  Value forward(Value x, Value w, Value offs, Type outElem) {
    return mGroupedGemm(x, d.k, w, 2, d.n, offs, outElem);
  }

  /// dx[M, K] = dy[M, N] . w[g, N, K] per group: dy and w along N.
  Value inputGrad(Value dy, Value w, Value offs, Type outElem) {
    return mGroupedGemm(dy, d.n, w, 1, d.k, offs, outElem);
  }

  /// quantize-weights-once: y as `forward`, the weight quantized once in
  /// both orientations (mxmoe.quantize_weight, 128x128 tiles); returns {y,
  /// the transposed data [G, K, N], its blocked scales} (the input
  /// gradient's weight).
  std::array<Value, 3> forwardOnce(Value x, Value w, Value offs, Type outElem) {
    int64_t cn = d.n / kMXBlockSize, ck = d.k / kMXBlockSize;
    DenseI64ArrayAttr tile = scaleTile(/*weight=*/true);
    auto rowMajor = ScaleLayoutAttr::get(ctx(), ScaleLayoutKind::row_major,
                                         false, tile.asArrayRef());
    Type elem = recipe.getElement();
    auto q = QuantizeWeightOp::create(
        b, loc, t({d.g, d.n, d.k}, elem), t({d.g, d.n, ck}, e8m0(), rowMajor),
        t({d.g, d.k, d.n}, elem), t({d.g, d.k, cn}, e8m0(), rowMajor), w, tile,
        b.getI64IntegerAttr(recipe.getBlockSize()),
        RoundingModeAttr::get(ctx(), recipe.getRounding()));
    Value wb = swizzle(q.getScales(), Value(),
                       {d.g, roundUp(d.n, 128), roundUp(ck, 4)});
    Value wtb = swizzle(q.getTransposedScales(), Value(),
                        {d.g, roundUp(d.k, 128), roundUp(cn, 4)});
    Value y = mGroupedGemm(x, d.k, w, 2, d.n, offs, outElem, {q.getData(), wb});
    return {y, q.getTransposedData(), wtb};
  }

  /// quantize-weights-once: dx from the forward's transposed weight.
  Value inputGradOnce(Value dy, Value wt, Value wtScales, Value offs,
                      Type outElem) {
    return mGroupedGemm(dy, d.n, Value(), 1, d.k, offs, outElem,
                        {wt, wtScales});
  }

  /// dw[g, N, K] = dy[g]^T . x[g]: contraction over the group's tokens.
  Value weightGrad(Value dy, Value x, Value offs, Type outElem, bool bf16) {
    if (bf16) {
      auto transpose = [&](Value v, int64_t rows, int64_t cols) -> Value {
        Type elem = cast<RankedTensorType>(v.getType()).getElementType();
        Value init = tensor::EmptyOp::create(
            b, loc, ArrayRef<int64_t>{cols, rows}, elem);
        return linalg::TransposeOp::create(b, loc, v, init,
                                           ArrayRef<int64_t>{1, 0})
            .getResult()[0];
      };
      Value dyT = transpose(dy, d.m, d.n), xT = transpose(x, d.m, d.k);
      return GroupedMatmulOp::create(b, loc, t({d.g, d.n, d.k}, outElem), dyT,
                                     Value(), xT, Value(), offs,
                                     /*accumulator=*/Value());
    }
    int64_t tp = getGroupPaddedExtent(d.m, d.g, kMXBlockSize);
    int64_t qp = roundUp(tp / kMXBlockSize + 3 * d.g, 4);
    // An MXFP4 recipe quantizes the weight gradient's operands to MXFP8
    // (e4m3): FP4 operands are not lowered for the token-axis 2D x 2D GEMM
    // (the per-group token blocks of 32 do not meet FP4's K % 128).
    Type wgElem = isa<Float4E2M1FNType>(recipe.getElement())
                      ? Type(Float8E4M3FNType::get(ctx()))
                      : recipe.getElement();
    auto [gq, gs] = quantize(dy, 0, offs, {d.n, tp}, /*weight=*/false, wgElem);
    Value gb = swizzle(gs, offs, {roundUp(d.n, 128), qp}, /*perKGroup=*/true);
    auto [xq, xs] = quantize(x, 0, offs, {d.k, tp}, /*weight=*/false, wgElem);
    Value xb = swizzle(xs, offs, {roundUp(d.k, 128), qp}, /*perKGroup=*/true);
    return GroupedMatmulOp::create(b, loc, t({d.g, d.n, d.k}, outElem), gq, gb,
                                   xq, xb, offs, /*accumulator=*/Value());
  }
};

/// `@"<name>.<kind>"(ins) -> out`, tagged with the op's fqn and the
/// pass kind (forward / input_grad / weight_grad / bias_grad).
func::FuncOp makeFunc(Operation *op, StringAttr fqn, StringRef name,
                      SymbolTable &symbols, StringRef kind, TypeRange ins,
                      Type out) {
  MLIRContext *ctx = op->getContext();
  auto fn = func::FuncOp::create(op->getLoc(), (name + "." + kind).str(),
                                 FunctionType::get(ctx, ins, out));
  fn->setAttr(MXMoEDialect::FqnAttrHelper::getNameStr(), fqn);
  fn->setAttr(MXMoEDialect::PassAttrHelper::getNameStr(),
              StringAttr::get(ctx, kind));
  symbols.insert(fn);
  fn.addEntryBlock();
  return fn;
}

/// The expanded functions are named after the op's fqn, and a runtime
/// finds them by that name: an fqn used twice, or a function already
/// named like one of them, is an error (no silent `_0` suffix).
LogicalResult checkNamesFree(Operation *op, StringRef name,
                             SymbolTable &symbols) {
  for (StringRef kind :
       {"forward", "input_grad", "weight_grad", "bias_grad", "backward"})
    if (Operation *other = symbols.lookup((name + "." + kind).str())) {
      InFlightDiagnostic d = op->emitOpError("fqn '")
                             << name << "' is not unique: @" << name << "."
                             << kind
                             << " already exists (another op with this fqn, "
                                "or a function of that name); fqns name the "
                                "expanded functions a runtime looks up";
      d.attachNote(other->getLoc()) << "the existing function";
      return failure();
    }
  return success();
}

} // namespace

FailureOr<LinearFunctions>
mlir::mxmoe::createLinearFunctions(LinearOp op, StringRef name,
                                   SymbolTable &symbols, bool backward,
                                   bool weightGradBF16, Type weightGradElem) {
  RankedTensorType x = op.getInput().getType(), w = op.getWeight().getType(),
                   y = op.getResult().getType();
  if (!x.hasStaticShape() || !w.hasStaticShape()) {
    op.emitOpError("mxmoe-expand-scaled-matmul needs static shapes "
                   "(tokens, N and K)");
    return failure();
  }
  if (failed(checkNamesFree(op, name, symbols)))
    return failure();
  LinearFunctions fns;
  int64_t rank = x.getRank();
  int64_t n = w.getDimSize(0), k = w.getDimSize(1);
  int64_t tokens = x.getNumElements() / k;
  Dims d{tokens, n, k, 1};
  MXRecipeAttr recipe = op.getRecipeAttr();
  if (!recipe) {
    MLIRContext *ctx = op.getContext();
    Type elem = op.getPrecision() == Precision::mxfp4
                    ? Type(Float4E2M1FNType::get(ctx))
                    : Type(Float8E4M3FNType::get(ctx));
    recipe = MXRecipeAttr::get(ctx, elem, kMXBlockSize, RoundingMode::rceil);
  }
  Location loc = op.getLoc();
  Type elem = x.getElementType();
  SmallVector<ReassociationIndices> flatTokens;
  {
    ReassociationIndices lead;
    for (int64_t i = 0; i < rank - 1; ++i)
      lead.push_back(i);
    flatTokens = {lead, {rank - 1}};
  }
  // [..., C] <-> [T, C]
  auto flatten = [&](OpBuilder &b, Value v) -> Value {
    if (rank == 2)
      return v;
    return tensor::CollapseShapeOp::create(b, loc, v, flatTokens);
  };
  auto unflatten = [&](OpBuilder &b, Value v, int64_t c) -> Value {
    if (rank == 2)
      return v;
    SmallVector<int64_t> shape(x.getShape().drop_back());
    shape.push_back(c);
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, elem), v, flatTokens);
  };
  auto weight3d = [&](OpBuilder &b, Value v) -> Value {
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({1, n, k}, w.getElementType()), v,
        SmallVector<ReassociationIndices>{{0, 1}, {2}});
  };
  auto offsets = [&](OpBuilder &b) -> Value {
    auto t = RankedTensorType::get({1}, b.getI32Type());
    return arith::ConstantOp::create(
        b, loc, t, DenseElementsAttr::get(t, b.getI32IntegerAttr(tokens)));
  };
  StringAttr fqn = op.getFqnAttr();

  SmallVector<Type> fwdIns{x, w};
  if (op.getBias())
    fwdIns.push_back(op.getBias().getType());
  func::FuncOp fwd = fns.forward =
      makeFunc(op, fqn, name, symbols, "forward", fwdIns, y);
  {
    OpBuilder b = OpBuilder::atBlockBegin(&fwd.front());
    Expander e{b, loc, recipe, d};
    ValueRange a = fwd.getArguments();
    Value in = flatten(b, a[0]);
    Value weight = weight3d(b, a[1]);
    Value out = e.forward(in, weight, offsets(b), y.getElementType());
    if (op.getBias()) {
      auto flatY = cast<RankedTensorType>(out.getType());
      Value init = tensor::EmptyOp::create(b, loc, flatY.getShape(),
                                           flatY.getElementType());
      Value bias = a[2];
      if (cast<RankedTensorType>(bias.getType()).getElementType() !=
          flatY.getElementType()) {
        op.emitOpError("bias element type must match the result's");
        return failure();
      }
      Value bcast =
          linalg::BroadcastOp::create(b, loc, bias, init, ArrayRef<int64_t>{0})
              .getResult()[0];
      out = arith::AddFOp::create(b, loc, out, bcast);
    }
    func::ReturnOp::create(b, loc, unflatten(b, out, n));
  }
  if (backward) {
    SmallVector<int64_t> dyShape(x.getShape().drop_back());
    dyShape.push_back(n);
    auto dyT = RankedTensorType::get(dyShape, elem);
    func::FuncOp dgrad = fns.inputGrad =
        makeFunc(op, fqn, name, symbols, "input_grad", {dyT, w}, x);
    {
      OpBuilder b = OpBuilder::atBlockBegin(&dgrad.front());
      Expander e{b, loc, recipe, d};
      ValueRange a = dgrad.getArguments();
      Value dy = flatten(b, a[0]);
      Value weight = weight3d(b, a[1]);
      Value dx = e.inputGrad(dy, weight, offsets(b), elem);
      func::ReturnOp::create(b, loc, unflatten(b, dx, k));
    }
    Type dwElem = weightGradElem ? weightGradElem : w.getElementType();
    func::FuncOp wgrad = fns.weightGrad =
        makeFunc(op, fqn, name, symbols, "weight_grad", {dyT, x},
                 RankedTensorType::get(w.getShape(), dwElem));
    {
      OpBuilder b = OpBuilder::atBlockBegin(&wgrad.front());
      Expander e{b, loc, recipe, d};
      ValueRange a = wgrad.getArguments();
      Value dy = flatten(b, a[0]);
      Value in = flatten(b, a[1]);
      Value dw = e.weightGrad(dy, in, offsets(b), dwElem, weightGradBF16);
      dw = tensor::CollapseShapeOp::create(
          b, loc, dw, SmallVector<ReassociationIndices>{{0, 1}, {2}});
      func::ReturnOp::create(b, loc, dw);
    }
    // d(bias) = the sum of grad_out over the tokens, accumulated in f32
    // (host IR: a reduction, no MX quantization).
    if (Value biasV = op.getBias()) {
      auto biasT = cast<RankedTensorType>(biasV.getType());
      if (weightGradElem) // e.g. f32 for an f32 gradient accumulator
        biasT = RankedTensorType::get(biasT.getShape(), weightGradElem);
      func::FuncOp bgrad = fns.biasGrad =
          makeFunc(op, fqn, name, symbols, "bias_grad", {dyT}, biasT);
      OpBuilder b = OpBuilder::atBlockBegin(&bgrad.front());
      Value dy = flatten(b, bgrad.getArgument(0));
      Type f32 = b.getF32Type();
      Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
      Value init = linalg::FillOp::create(
                       b, loc, zero,
                       tensor::EmptyOp::create(b, loc, biasT.getShape(), f32)
                           .getResult())
                       .getResult(0);
      auto red = linalg::ReduceOp::create(
          b, loc, ValueRange{dy}, ValueRange{init}, ArrayRef<int64_t>{0},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value v =
                args[0].getType() == f32
                    ? args[0]
                    : arith::ExtFOp::create(nb, nl, f32, args[0]).getResult();
            linalg::YieldOp::create(
                nb, nl, ValueRange{arith::AddFOp::create(nb, nl, v, args[1])});
          });
      Value db = red.getResult(0);
      if (biasT.getElementType() != f32)
        db = arith::TruncFOp::create(b, loc, biasT, db);
      func::ReturnOp::create(b, loc, db);
    }
  }
  return fns;
}

FailureOr<LinearFunctions> mlir::mxmoe::createGroupedMatmulFunctions(
    ScaledGroupedMatmulOp op, StringRef name, SymbolTable &symbols,
    bool backward, bool weightGradBF16, bool quantizeWeightsOnce,
    Type weightGradElem) {
  RankedTensorType x = op.getInput().getType(), w = op.getWeight().getType(),
                   y = op.getResult().getType();
  if (!x.hasStaticShape() || !w.hasStaticShape()) {
    op.emitOpError("mxmoe-expand-scaled-matmul needs static shapes "
                   "(M, N, K and the expert count)");
    return failure();
  }
  if (failed(checkNamesFree(op, name, symbols)))
    return failure();
  Dims d{x.getDimSize(0), w.getDimSize(1), w.getDimSize(2), w.getDimSize(0)};
  MXRecipeAttr recipe = op.getRecipeOrDefault();
  Type offsT = op.getOffsets().getType();
  auto makeFunc = [&](StringRef kind, TypeRange ins, Type out) {
    return ::makeFunc(op, op.getFqnAttr(), name, symbols, kind, ins, out);
  };
  auto body = [&](func::FuncOp fn,
                  function_ref<Value(Expander &, ValueRange)> gen) {
    OpBuilder b = OpBuilder::atBlockBegin(&fn.front());
    Expander e{b, op.getLoc(), recipe, d};
    Value r = gen(e, fn.getArguments());
    func::ReturnOp::create(b, op.getLoc(), r);
  };
  // Weights quantized once: the forward also returns the transposed copy
  // and its scales, and input_grad takes them instead of w.
  bool once = quantizeWeightsOnce && backward;
  auto dyT = RankedTensorType::get({d.m, d.n}, x.getElementType());
  LinearFunctions fns;
  fns.forward = makeFunc("forward", {x, w, offsT}, y);
  SmallVector<Type> dgradIns{dyT, w, offsT};
  if (!once) {
    body(fns.forward, [&](Expander &e, ValueRange a) {
      return e.forward(a[0], a[1], a[2], y.getElementType());
    });
  } else {
    OpBuilder b = OpBuilder::atBlockBegin(&fns.forward.front());
    Expander e{b, op.getLoc(), recipe, d};
    ValueRange a = fns.forward.getArguments();
    std::array<Value, 3> r =
        e.forwardOnce(a[0], a[1], a[2], y.getElementType());
    func::ReturnOp::create(b, op.getLoc(), ValueRange(r));
    fns.forward.setType(FunctionType::get(op.getContext(),
                                          fns.forward.getArgumentTypes(),
                                          ValueRange(r).getTypes()));
    dgradIns = {dyT, r[1].getType(), r[2].getType(), offsT};
  }
  if (!backward)
    return fns;
  fns.inputGrad = makeFunc("input_grad", dgradIns, x);
  body(fns.inputGrad, [&](Expander &e, ValueRange a) {
    if (once)
      return e.inputGradOnce(a[0], a[1], a[2], a[3], x.getElementType());
    return e.inputGrad(a[0], a[1], a[2], x.getElementType());
  });
  Type dwElem = weightGradElem ? weightGradElem : w.getElementType();
  auto dwT = RankedTensorType::get({d.g, d.n, d.k}, dwElem);
  fns.weightGrad = makeFunc("weight_grad", {dyT, x, offsT}, dwT);
  body(fns.weightGrad, [&](Expander &e, ValueRange a) {
    return e.weightGrad(a[0], a[1], a[2], dwElem, weightGradBF16);
  });
  return fns;
}

namespace {

/// The functions of one mxmoe.swiglu_experts:
///   forward(x, w13, w2, offsets) -> (y, h), or routed
///   forward(x, w13, w2, offsets, indices, scores) -> (out, h, y);
///   backward(dy, x, h, w13, w2, offsets) -> (dx, dw13, dw2), or routed
///   backward(dout, x, h, y, w13, w2, offsets, indices, scores)
///     -> (dx, dw13, dw2, dscores).
/// The two grouped GEMMs' forward, input- and weight-gradient steps
/// (Expander) around the SwiGLU and its backward as linalg.generic
/// producers of the quantizations that read them, and, routed, the
/// dispatch (mxmoe.gather_rows, fused into the quantizations by
/// mxmoe-fuse-quantize-producers) and combine (mxmoe.combine_rows).
///
/// With `once` (quantize-weights-once, MX128) the forward quantizes each
/// weight once in both orientations (mxmoe.quantize_weight) and also
/// returns the transposed copies (wt13, wt13 scales, wt2, wt2 scales),
/// which the backward takes last instead of quantizing the weights along
/// N again.
struct ExpertsExpansion {
  SwiGLUExpertsOp op;
  std::string name; ///< of the functions: `<name>.forward`, `.backward`
  MXRecipeAttr recipe;
  bool weightGradBF16, once;
  Location loc;
  Type bf16;
  int64_t topK;
  Dims d13, d2;
  SmallVector<Type> onceTypes; ///< the forward's transposed weights

  ExpertsExpansion(SwiGLUExpertsOp op, StringRef name, MXRecipeAttr recipe,
                   bool wgradBF16, bool once)
      : op(op), name(name.str()), recipe(recipe), weightGradBF16(wgradBF16),
        once(once), loc(op.getLoc()),
        bf16(op.getInput().getType().getElementType()), topK(op.getTopK()) {
    int64_t m = op.getRoutedRows(), h = op.getHidden(), i = op.getExpertDim(),
            g = op.getNumExperts();
    d13 = {m, 2 * i, h, g};
    d2 = {m, h, i, g};
  }

  RankedTensorType routedT(int64_t cols) {
    return RankedTensorType::get({d13.m, cols}, bf16);
  }
  func::FuncOp makeFunc(SymbolTable &symbols, StringRef kind, TypeRange ins,
                        TypeRange outs) {
    func::FuncOp fn =
        ::makeFunc(op, op.getFqnAttr(), name, symbols, kind, ins, outs.front());
    fn.setType(FunctionType::get(op.getContext(), ins, outs));
    return fn;
  }
  /// The routed rows of token rows `x` (times the scores when given).
  Value gather(OpBuilder &b, Value x, Value indices, Value scores) {
    return GatherRowsOp::create(b, loc, routedT(d13.k), x, indices, scores,
                                topK);
  }
  /// Token rows from routed rows `rows` (weighted by `scores` when given).
  Value combine(OpBuilder &b, Value rows, Value indices, Value inverse,
                Value scores) {
    auto t = RankedTensorType::get({d13.m / topK, d13.k}, bf16);
    return CombineRowsOp::create(b, loc, t, rows, indices, inverse, scores,
                                 topK);
  }
  Value invert(OpBuilder &b, Value indices) {
    return InvertPermutationOp::create(b, loc, indices.getType(), indices);
  }

  func::FuncOp forward(SymbolTable &symbols) {
    SmallVector<Type> ins(op->getOperandTypes());
    Type x = op.getInput().getType(), hT = routedT(d13.n);
    SmallVector<Type> outs{x, hT};
    func::FuncOp fn = makeFunc(symbols, "forward", ins, outs);
    OpBuilder b = OpBuilder::atBlockBegin(&fn.front());
    Expander e13{b, loc, recipe, d13}, e2{b, loc, recipe, d2};
    ValueRange a = fn.getArguments();
    Value offs = a[3], in = a[0];
    if (op.isRouted())
      in = gather(b, in, a[4], Value());
    SmallVector<Value> transposed;
    auto gemm = [&](Expander &e, Value lhs, Value w) {
      if (!once)
        return e.forward(lhs, w, offs, bf16);
      std::array<Value, 3> r = e.forwardOnce(lhs, w, offs, bf16);
      transposed.append({r[1], r[2]});
      return r[0];
    };
    Value hv = gemm(e13, in, a[1]);
    Value y = gemm(e2, swiglu::forward(b, loc, hv), a[2]);
    SmallVector<Value> results{y, hv};
    if (op.isRouted())
      results = {combine(b, y, a[4], invert(b, a[4]), a[5]), hv, y};
    results.append(transposed);
    func::ReturnOp::create(b, loc, results);
    onceTypes = llvm::to_vector(ValueRange(transposed).getTypes());
    fn.setType(FunctionType::get(op.getContext(), ins,
                                 ValueRange(results).getTypes()));
    return fn;
  }

  func::FuncOp backward(SymbolTable &symbols) {
    Type x = op.getInput().getType(), hT = routedT(d13.n);
    Type w13 = op.getW13().getType(), w2 = op.getW2().getType();
    Type offsT = op.getOffsets().getType();
    SmallVector<Type> ins{x, x, hT, w13, w2, offsT}, outs{x, w13, w2};
    bool routed = op.isRouted();
    if (routed) {
      ins = {x,
             x,
             hT,
             routedT(d13.k),
             w13,
             w2,
             offsT,
             op.getIndices().getType(),
             op.getScores().getType()};
      outs.push_back(op.getScores().getType());
    }
    unsigned firstOnce = ins.size();
    ins.append(onceTypes);
    func::FuncOp fn = makeFunc(symbols, "backward", ins, outs);
    OpBuilder b = OpBuilder::atBlockBegin(&fn.front());
    Expander e13{b, loc, recipe, d13}, e2{b, loc, recipe, d2};
    ValueRange a = fn.getArguments();
    Value dy = a[0], in = a[1], hv = a[2];
    ValueRange w = routed ? a.slice(4, 2) : a.slice(3, 2);
    Value offs = routed ? a[6] : a[5];
    Value indices, inverse, dscores;
    if (routed) {
      // The inverse first: its kernel validates the indices.
      indices = a[7];
      inverse = invert(b, indices);
      auto sT = cast<RankedTensorType>(a[8].getType());
      dscores = CombineScoresGradOp::create(b, loc, sT, dy, a[3], indices,
                                            inverse, topK);
      dy = gather(b, dy, indices, a[8]);
      in = gather(b, in, indices, Value());
    }
    // The input gradients: the weights along N, or the forward's copies.
    auto inputGrad = [&](Expander &e, Value g, unsigned which) {
      if (!once)
        return e.inputGrad(g, w[which], offs, bf16);
      unsigned at = firstOnce + 2 * which;
      return e.inputGradOnce(g, a[at], a[at + 1], offs, bf16);
    };
    Value da = inputGrad(e2, dy, 1);
    Value act = swiglu::forward(b, loc, hv);
    Value dw2 = e2.weightGrad(dy, act, offs, bf16, weightGradBF16);
    Value dh = swiglu::backward(b, loc, da, hv);
    // dw13 before dx: dh's token-axis copy (and x's) die before w13 is
    // quantized along N, which lowers the program's peak workspace
    // (every intermediate of a launch program lives in one workspace,
    // python/mxmoe/program.py memory_plan).
    Value dw13 = e13.weightGrad(dh, in, offs, bf16, weightGradBF16);
    Value dx = inputGrad(e13, dh, 0);
    SmallVector<Value> results{dx, dw13, dw2};
    if (routed) {
      results[0] = combine(b, dx, indices, inverse, Value());
      results.push_back(dscores);
    }
    func::ReturnOp::create(b, loc, results);
    return fn;
  }
};

} // namespace

FailureOr<LinearFunctions> mlir::mxmoe::createSwiGLUExpertsFunctions(
    SwiGLUExpertsOp op, StringRef name, SymbolTable &symbols, bool backward,
    bool weightGradBF16, bool quantizeWeightsOnce) {
  MXRecipeAttr recipe = op.getRecipeOrDefault();
  if (isa<Float4E2M1FNType>(recipe.getElement())) {
    op.emitOpError("mxmoe-expand-scaled-matmul expands mxmoe.swiglu_experts "
                   "for MXFP8 recipes only (FP4 operands of the fused SwiGLU "
                   "quantizations are not generated)");
    return failure();
  }
  auto isStatic = [](Value v) {
    return !v || cast<RankedTensorType>(v.getType()).hasStaticShape();
  };
  if (!isStatic(op.getInput()) || !isStatic(op.getIndices()) ||
      !isStatic(op.getScores())) {
    op.emitOpError("mxmoe-expand-scaled-matmul needs static token rows (a "
                   "tiled_mlp body's static shard loops give them)");
    return failure();
  }
  if (failed(checkNamesFree(op, name, symbols)))
    return failure();
  ExpertsExpansion ex(op, name, recipe, weightGradBF16,
                      quantizeWeightsOnce && backward);
  LinearFunctions fns;
  fns.forward = ex.forward(symbols);
  if (backward)
    fns.backward = ex.backward(symbols);
  return fns;
}

namespace {

struct ExpandScaledMatmulPass
    : ::mlir::mxmoe::impl::MXMoEExpandScaledMatmulBase<ExpandScaledMatmulPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Inside a tiled MLP the shard's token count is only known once
    // mxmoe-tile-mlp has materialised the shard loops; it expands the MX
    // linears and grouped GEMMs there, per shard size.
    auto deferred = [&](Operation *op, StringRef fqn) {
      if (!op->getParentOfType<TiledMLPOp>())
        return false;
      InFlightDiagnostic d = op->emitRemark()
                             << "mxmoe-expand-scaled-matmul: " << fqn
                             << " is inside mxmoe.tiled_mlp; it is not "
                                "expanded here";
      d << " (mxmoe-tile-mlp expands it per shard size when the split is "
           "static)";
      // A shard loop's forward and its recompute quantize the weights per
      // shard: there is no one forward to keep the transposed copy from.
      if (quantizeWeightsOnce && !isa<LinearOp>(op))
        d << "; quantize-weights-once does not apply to it";
      return true;
    };
    SmallVector<ScaledGroupedMatmulOp> ops;
    module.walk([&](ScaledGroupedMatmulOp op) {
      auto p = op.getPrecisionAttr();
      if ((!p || p.getValue() != Precision::bf16) && !deferred(op, op.getFqn()))
        ops.push_back(op);
    });
    SmallVector<LinearOp> linears;
    module.walk([&](LinearOp op) {
      auto p = op.getPrecisionAttr();
      if (p && p.getValue() != Precision::bf16 && !deferred(op, op.getFqn()))
        linears.push_back(op);
    });
    // The expanded functions go into the op's nearest symbol table (a
    // nested module keeps its calls and callees together).
    SymbolTableCollection tables;
    auto symbolsOf = [&](Operation *op) -> SymbolTable & {
      return tables.getSymbolTable(
          op->getParentWithTrait<OpTrait::SymbolTable>());
    };
    for (ScaledGroupedMatmulOp op : ops)
      if (failed(expand(op, symbolsOf(op))))
        return signalPassFailure();
    SmallVector<SwiGLUExpertsOp> experts;
    module.walk([&](SwiGLUExpertsOp op) {
      auto p = op.getPrecisionAttr();
      if ((!p || p.getValue() != Precision::bf16) && !deferred(op, op.getFqn()))
        experts.push_back(op);
    });
    for (SwiGLUExpertsOp op : experts)
      if (failed(expandExperts(op, symbolsOf(op))))
        return signalPassFailure();
    for (LinearOp op : linears) {
      FailureOr<LinearFunctions> fns = createLinearFunctions(
          op, op.getFqn(), symbolsOf(op), backward, weightGradBF16);
      if (failed(fns))
        return signalPassFailure();
      OpBuilder b(op);
      auto call =
          func::CallOp::create(b, op.getLoc(), fns->forward, op->getOperands());
      op.getResult().replaceAllUsesWith(call.getResult(0));
      op.erase();
    }
  }

  /// mxmoe.swiglu_experts -> `<fqn>.forward` and `<fqn>.backward`
  /// (ExpertsExpansion; their signatures are in Passes.td).
  LogicalResult expandExperts(SwiGLUExpertsOp op, SymbolTable &symbols) {
    bool once =
        quantizeWeightsOnce && op.getRecipeOrDefault().isMX128() && backward;
    FailureOr<LinearFunctions> fns = createSwiGLUExpertsFunctions(
        op, op.getFqn(), symbols, backward, weightGradBF16, once);
    if (failed(fns))
      return failure();
    OpBuilder b(op);
    auto call =
        func::CallOp::create(b, op.getLoc(), fns->forward, op->getOperands());
    op.getResult().replaceAllUsesWith(call.getResult(0));
    op.erase();
    return success();
  }

  LogicalResult expand(ScaledGroupedMatmulOp op, SymbolTable &symbols) {
    MXRecipeAttr recipe = op.getRecipeOrDefault();
    bool once = quantizeWeightsOnce && recipe.isMX128() && backward;
    FailureOr<LinearFunctions> fns = createGroupedMatmulFunctions(
        op, op.getFqn(), symbols, backward, weightGradBF16, once);
    if (failed(fns))
      return failure();
    OpBuilder b(op);
    auto call = func::CallOp::create(
        b, op.getLoc(), fns->forward,
        ValueRange{op.getInput(), op.getWeight(), op.getOffsets()});
    op.getResult().replaceAllUsesWith(call.getResult(0));
    op.erase();
    return success();
  }
};

} // namespace
