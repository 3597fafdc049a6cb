//===- MXMoEOps.cpp - model-level mxmoe ops: verifiers, custom syntax -----===//
//
// The model-level ops (linear, scaled_grouped_matmul, tiled_mlp); the
// MX-level ops' verifiers are in MXMoEMXOps.cpp, the rules both use in
// MXMoEVerifiers.cpp. Every verifier states the rule that failed in words a
// user of the op understands; test/Dialect/MXMoE/*-invalid-*.mlir has one
// case per rule.
//
//===----------------------------------------------------------------------===//

#include "MXMoEVerifiers.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::mxmoe;
using ::mxmoe::kBlockedCols;
using ::mxmoe::kBlockedRows;
using ::mxmoe::kMXBlockSize;
using ::mxmoe::roundUp;
using namespace mlir::mxmoe::verifiers;

#define GET_OP_CLASSES
#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.cpp.inc"

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::verify() {
  RankedTensorType x = getInput().getType(), w = getWeight().getType(),
                   y = getResult().getType();
  if (x.getRank() < 2)
    return emitOpError() << "input must be [..., K] with rank >= 2, got rank "
                         << x.getRank();
  if (w.getRank() != 2)
    return emitOpError() << "weight must be 2-D [N, K], got rank "
                         << w.getRank();
  if (x.getElementType() != w.getElementType())
    return emitOpError() << "input and weight element types differ: "
                         << x.getElementType() << " vs " << w.getElementType();
  int64_t k = x.getShape().back(), n = w.getDimSize(0);
  if (!dimsCompatible(k, w.getDimSize(1)))
    return emitOpError() << "contraction sizes differ: input has K = " << k
                         << " but weight [N, K] has K = " << w.getDimSize(1);
  if (Value bias = getBias()) {
    auto b = cast<RankedTensorType>(bias.getType());
    if (b.getRank() != 1 || !dimsCompatible(b.getDimSize(0), n))
      return emitOpError() << "bias must be 1-D [N] = " << formatShape({n})
                           << ", got " << formatShape(b.getShape());
    if (b.getElementType() != x.getElementType())
      return emitOpError() << "bias element type " << b.getElementType()
                           << " differs from the input's "
                           << x.getElementType();
  }
  SmallVector<int64_t> expected(x.getShape());
  expected.back() = n;
  if (!shapesCompatible(y.getShape(), expected))
    return emitOpError() << "result shape " << formatShape(y.getShape())
                         << " must be the input's leading dims followed by N:"
                         << " expected " << formatShape(expected);
  if (getFqn().empty())
    return emitOpError() << "fqn must name the layer (e.g. "
                            "\"layers.0.attention.wq\"); it is what the "
                            "precision policy matches";
  return verifyPrecision(
      *this, getPrecisionAttr(), getRecipeAttr(),
      {{"K (forward contraction)", k}, {"N (input-gradient contraction)", n}});
}

//===----------------------------------------------------------------------===//
// ScaledGroupedMatmulOp
//===----------------------------------------------------------------------===//

MXRecipeAttr ScaledGroupedMatmulOp::getRecipeOrDefault() {
  if (MXRecipeAttr recipe = getRecipeAttr())
    return recipe;
  MLIRContext *ctx = getContext();
  return MXRecipeAttr::get(ctx, Float8E4M3FNType::get(ctx), kMXBlockSize,
                           RoundingMode::rceil);
}

LogicalResult ScaledGroupedMatmulOp::verify() {
  RankedTensorType x = getInput().getType(), w = getWeight().getType(),
                   y = getResult().getType();
  if (x.getRank() != 2)
    return emitOpError() << "input must be 2-D [M, K] (routed token rows "
                            "sorted by expert), got rank "
                         << x.getRank();
  if (w.getRank() != 3)
    return emitOpError() << "weight must be 3-D [G, N, K] (one [N, K] matrix "
                            "per expert), got rank "
                         << w.getRank();
  if (x.getElementType() != w.getElementType())
    return emitOpError() << "input and weight element types differ: "
                         << x.getElementType() << " vs " << w.getElementType();
  int64_t m = x.getDimSize(0), k = x.getDimSize(1);
  int64_t g = w.getDimSize(0), n = w.getDimSize(1);
  if (!dimsCompatible(k, w.getDimSize(2)))
    return emitOpError() << "contraction sizes differ: input has K = " << k
                         << " but weight [G, N, K] has K = " << w.getDimSize(2);
  if (failed(verifyOffsetsType(*this, getOffsets(), g,
                               "weight dim 0 is the number of experts", m)))
    return failure();
  if (!shapesCompatible(y.getShape(), {m, n}))
    return emitOpError() << "result must be [M, N] = " << formatShape({m, n})
                         << ", got " << formatShape(y.getShape());
  if (!isa<BFloat16Type, Float32Type>(y.getElementType()))
    return emitOpError() << "result element type must be bf16 or f32 (the "
                            "grouped GEMM accumulates in f32), got "
                         << y.getElementType();
  if (getFqn().empty())
    return emitOpError() << "fqn must name the layer (e.g. "
                            "\"layers.0.feed_forward.experts.w1\")";
  return verifyPrecision(
      *this, getPrecisionAttr(), getRecipeAttr(),
      {{"K (forward contraction)", k}, {"N (input-gradient contraction)", n}});
}

//===----------------------------------------------------------------------===//
// SwiGLUExpertsOp
//===----------------------------------------------------------------------===//

MXRecipeAttr SwiGLUExpertsOp::getRecipeOrDefault() {
  if (MXRecipeAttr recipe = getRecipeAttr())
    return recipe;
  MLIRContext *ctx = getContext();
  return MXRecipeAttr::get(ctx, Float8E4M3FNType::get(ctx), kMXBlockSize,
                           RoundingMode::rceil);
}

/// routing(indices, scores): both or neither; indices [M], scores [T,
/// top_k] with T the input's rows and M = T * top_k.
LogicalResult SwiGLUExpertsOp::verifyRouting() {
  if (!getIndices() && !getScores())
    return success();
  if (!getIndices() || !getScores())
    return emitOpError("routing takes both indices and scores");
  auto idx = getIndices().getType();
  auto sc = cast<RankedTensorType>(getScores().getType());
  int64_t t = getInput().getType().getDimSize(0);
  if (idx.getRank() != 1 || sc.getRank() != 2 || sc.isDynamicDim(1))
    return emitOpError("routing indices must be [M] and scores [T, top_k] "
                       "(top_k static)");
  int64_t m = ShapedType::isDynamic(t) ? t : t * sc.getDimSize(1);
  if (!dimsCompatible(sc.getDimSize(0), t) ||
      !dimsCompatible(idx.getDimSize(0), m))
    return emitOpError() << "routing: scores must be [T, top_k] with T = " << t
                         << " (the input's token rows) and indices [T * "
                            "top_k], got scores "
                         << formatShape(sc.getShape()) << " and indices "
                         << formatShape(idx.getShape());
  return success();
}

LogicalResult SwiGLUExpertsOp::verify() {
  RankedTensorType x = getInput().getType(), w13 = getW13().getType(),
                   w2 = getW2().getType(), y = getResult().getType();
  for (auto [name, t] : {std::pair<StringRef, RankedTensorType>{"input", x},
                         {"w13", w13},
                         {"w2", w2},
                         {"result", y}})
    if (!t.getElementType().isBF16())
      return emitOpError() << name
                           << " must be bf16 (the SwiGLU's roundings are "
                              "bf16's), got "
                           << t.getElementType();
  if (x.getRank() != 2 || w13.getRank() != 3 || w2.getRank() != 3)
    return emitOpError("input must be [M, H], w13 [E, 2I, H] and w2 [E, H, "
                       "I]");
  // The token rows may be dynamic in a tiled_mlp body (its static shard
  // loops make them static before the expansion, which needs them).
  if (x.isDynamicDim(1) || !w13.hasStaticShape() || !w2.hasStaticShape())
    return emitOpError("H and the weights' shapes must be static (only the "
                       "token rows may be dynamic)");
  int64_t m = x.getDimSize(0), h = x.getDimSize(1), e = w13.getDimSize(0);
  int64_t i = w2.getDimSize(2);
  if (!shapesCompatible(w13.getShape(), {e, 2 * i, h}) ||
      !shapesCompatible(w2.getShape(), {e, h, i}))
    return emitOpError() << "w13 must be [E, 2I, H] = "
                         << formatShape({e, 2 * i, h})
                         << " and w2 [E, H, I] = " << formatShape({e, h, i})
                         << " (H = " << h << " from the input, I = " << i
                         << " from w2), got w13 " << formatShape(w13.getShape())
                         << " and w2 " << formatShape(w2.getShape());
  if (failed(verifyRouting()))
    return failure();
  if (failed(verifyOffsetsType(*this, getOffsets(), e,
                               "w13 dim 0 is the number of experts",
                               getRoutedRows())))
    return failure();
  if (!shapesCompatible(y.getShape(), {m, h}))
    return emitOpError() << "result must be [" << (isRouted() ? "T" : "M")
                         << ", H] = " << formatShape({m, h}) << ", got "
                         << formatShape(y.getShape());
  if (getFqn().empty())
    return emitOpError() << "fqn must name the experts (e.g. "
                            "\"layers.0.mlp.experts\")";
  return verifyPrecision(
      *this, getPrecisionAttr(), getRecipeAttr(),
      {{"H (w13 forward contraction)", h}, {"I (w2 forward contraction)", i}});
}

//===----------------------------------------------------------------------===//
// TiledMLPOp
//===----------------------------------------------------------------------===//

// mxmoe.tiled_mlp shards = (auto | N) (%input, %params...) attr-dict
//     : (input-type, param-types...) -> (result-types) region
ParseResult TiledMLPOp::parse(OpAsmParser &parser, OperationState &result) {
  MLIRContext *ctx = parser.getContext();
  if (parser.parseKeyword("shards") || parser.parseEqual())
    return failure();
  if (failed(parser.parseOptionalKeyword("auto"))) {
    int64_t shards = 0; // (set by parseInteger; GCC -Wmaybe-uninitialized)
    llvm::SMLoc loc = parser.getCurrentLocation();
    if (parser.parseInteger(shards))
      return parser.emitError(loc, "expected a shard count or 'auto'");
    result.addAttribute(getNumShardsAttrName(result.name),
                        IntegerAttr::get(IntegerType::get(ctx, 64), shards));
  }
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  llvm::SMLoc operandsLoc = parser.getCurrentLocation();
  FunctionType fnType;
  if (parser.parseOperandList(operands, OpAsmParser::Delimiter::Paren))
    return failure();
  llvm::SMLoc attrLoc = parser.getCurrentLocation();
  bool hasShards =
      result.attributes.get(getNumShardsAttrName(result.name)) != nullptr;
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  // The properties conversion would silently drop mistyped inherent
  // attributes: check them here.
  for (NamedAttribute attr : result.attributes) {
    StringRef name = attr.getName().getValue();
    if (name == "num_shards" && !hasShards)
      return parser.emitError(attrLoc)
             << "give the shard count as `shards = N` (or `shards = auto`), "
                "not as num_shards in the attribute dictionary";
    if (name == "grad_accumulator" && !isa<TypeAttr>(attr.getValue()))
      return parser.emitError(attrLoc)
             << "grad_accumulator must be a type (e.g. grad_accumulator = "
                "f32), got "
             << attr.getValue();
    if (name == "fqn" && !isa<StringAttr>(attr.getValue()))
      return parser.emitError(attrLoc)
             << "fqn must be a string, got " << attr.getValue();
    auto n = dyn_cast<IntegerAttr>(attr.getValue());
    if (name == "summed_results" &&
        (!n || n.getType() != IntegerType::get(ctx, 64)))
      return parser.emitError(attrLoc)
             << "summed_results must be an i64 count (e.g. summed_results = "
                "2), got "
             << attr.getValue();
  }
  if (parser.parseColon() || parser.parseType(fnType))
    return failure();
  if (operands.empty())
    return parser.emitError(operandsLoc,
                            "expected at least the token input operand");
  if (parser.resolveOperands(operands, fnType.getInputs(), operandsLoc,
                             result.operands))
    return failure();
  result.addTypes(fnType.getResults());
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, /*arguments=*/{},
                         /*enableNameShadowing=*/false))
    return failure();
  return success();
}

void TiledMLPOp::print(OpAsmPrinter &p) {
  p << " shards = ";
  if (std::optional<int64_t> n = getNumShards())
    p << *n;
  else
    p << "auto";
  p << " (" << getOperands() << ")";
  p.printOptionalAttrDict((*this)->getAttrs(),
                          /*elidedAttrs=*/{getNumShardsAttrName()});
  p << " : ";
  p.printFunctionalType(getOperandTypes(), getResultTypes());
  p << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/true,
                /*printBlockTerminators=*/true);
}

void TiledMLPOp::getAsmBlockArgumentNames(Region &region,
                                          OpAsmSetValueNameFn setNameFn) {
  if (region.empty() || region.front().getNumArguments() == 0)
    return;
  setNameFn(region.front().getArgument(0), "shard");
}

LogicalResult TiledMLPOp::verify() {
  if (std::optional<int64_t> n = getNumShards(); n && *n < 1)
    return emitOpError() << "shard count must be >= 1 or auto, got " << *n;
  if (std::optional<Type> acc = getGradAccumulator();
      acc && !isa<Float32Type, BFloat16Type, Float16Type>(*acc))
    return emitOpError() << "grad_accumulator must be f32, bf16 or f16 (the "
                            "parameter type is the default), got "
                         << *acc;
  // Parameter gradients are widened into the accumulator and narrowed back:
  // it must be f32 or the parameter's own type (bf16 <-> f16 and f32 ->
  // bf16/f16 are not widenings).
  if (std::optional<Type> acc = getGradAccumulator(); acc && !acc->isF32())
    for (auto [i, param] : llvm::enumerate(getParams())) {
      auto t = dyn_cast<RankedTensorType>(param.getType());
      if (t &&
          isa<Float32Type, BFloat16Type, Float16Type>(t.getElementType()) &&
          t.getElementType() != *acc)
        return emitOpError()
               << "grad_accumulator " << *acc
               << " cannot accumulate the gradient of parameter #" << i << " ("
               << t << "): it must be f32 or the parameter's element "
               << "type";
    }
  RankedTensorType x = getInput().getType();
  if (x.getRank() != 2 && x.getRank() != 3)
    return emitOpError() << "input must be [T, H] or [B, S, H], got rank "
                         << x.getRank();
  if (llvm::is_contained(x.getShape().drop_back(), 0))
    return emitOpError() << "has no tokens: input " << x;
  // Parameters are passed whole to every shard: token-dependent data (e.g.
  // the group offsets of a routed GEMM) would be wrong for every shard.
  for (auto [i, param] : llvm::enumerate(getParams()))
    if (auto t = dyn_cast<ShapedType>(param.getType());
        t && t.getElementType().isIntOrIndex())
      return emitOpError()
             << "parameter #" << i << " (" << t
             << ") has an integer element type: parameters are "
                "shard-invariant (weights and their scales); token-dependent "
                "data such as group offsets must be computed in the body from "
                "the shard";
  if (getNumResults() == 0)
    return emitOpError() << "must have at least one result";
  if (std::optional<int64_t> n = getSummedResults();
      n && (*n < 0 || *n >= static_cast<int64_t>(getNumResults())))
    return emitOpError() << "summed_results must be in [0, "
                         << getNumResults() - 1
                         << "] (the first result is token rows), got " << *n;
  ArrayRef<int64_t> tokenDims = x.getShape().drop_back();
  for (auto [i, type] : llvm::enumerate(getResultTypes())) {
    auto r = cast<RankedTensorType>(type);
    if (isSummedResult(i)) {
      if (!r.hasStaticShape())
        return emitOpError() << "summed result #" << i
                             << " must have a static shape, got " << r;
      continue;
    }
    if (r.getRank() < x.getRank())
      return emitOpError() << "result #" << i
                           << " must have rank >= " << x.getRank()
                           << " (the input's token dims "
                           << formatShape(tokenDims)
                           << " followed by feature dims), got "
                           << formatShape(r.getShape());
    if (!shapesCompatible(r.getShape().take_front(tokenDims.size()), tokenDims))
      return emitOpError() << "result #" << i << " must start with the "
                           << "input's token dims " << formatShape(tokenDims)
                           << ", got " << formatShape(r.getShape());
  }
  return success();
}

LogicalResult TiledMLPOp::verifyRegions() {
  Block &body = getBody().front();
  RankedTensorType x = getInput().getType();
  unsigned expectedArgs = 1 + getParams().size();
  if (body.getNumArguments() != expectedArgs)
    return emitOpError() << "body must take " << expectedArgs
                         << " arguments (the token shard, then one per "
                            "parameter), got "
                         << body.getNumArguments();
  auto shardType = RankedTensorType::get(
      {ShapedType::kDynamic, x.getShape().back()}, x.getElementType());
  if (body.getArgument(0).getType() != shardType)
    return emitOpError() << "body argument #0 (the token shard) must be "
                         << shardType << ", got "
                         << body.getArgument(0).getType();
  for (auto [i, param] : llvm::enumerate(getParams()))
    if (body.getArgument(i + 1).getType() != param.getType())
      return emitOpError() << "body argument #" << (i + 1)
                           << " must have the type of parameter #" << i << " ("
                           << param.getType() << "), got "
                           << body.getArgument(i + 1).getType();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError() << "body must end with mxmoe.yield";
  if (getSaveRouting() && !getFqnAttr())
    return emitOpError() << "save_routing needs an fqn (it names the "
                            "forward function that returns the saved routing)";
  if (getSaveRouting() && body.getOps<RouterTopKOp>().empty())
    return emitOpError() << "save_routing needs an mxmoe.router_topk in the "
                            "body (the routing decision it saves)";
  if (yield.getValues().size() != getNumResults())
    return yield.emitOpError()
           << "yields " << yield.getValues().size() << " values but the "
           << "enclosing mxmoe.tiled_mlp has " << getNumResults() << " results";
  size_t numTokenDims = x.getRank() - 1;
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(yield.getValues(), getResultTypes()))) {
    auto [value, resultType] = pair;
    auto r = cast<RankedTensorType>(resultType);
    if (isSummedResult(i)) {
      if (value.getType() != r)
        return yield.emitOpError() << "value #" << i << " must be " << r
                                   << " (the shard's part of summed result #"
                                   << i << "), got " << value.getType();
      continue;
    }
    SmallVector<int64_t> shape{ShapedType::kDynamic};
    llvm::append_range(shape, r.getShape().drop_front(numTokenDims));
    auto expected = RankedTensorType::get(shape, r.getElementType());
    if (value.getType() != expected)
      return yield.emitOpError()
             << "value #" << i << " must be " << expected
             << " (a shard of result #" << i << "), got " << value.getType();
  }
  return success();
}
