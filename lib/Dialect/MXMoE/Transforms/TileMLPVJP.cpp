//===- TileMLPVJP.cpp - reverse mode of a recomputed tiled-MLP shard -----===//
//
// The vector-Jacobian products mxmoe-tile-mlp applies to a recomputed shard
// body (its backward loop): elementwise ops, matmuls, mxmoe.linear (bf16,
// or through its MX input_grad / weight_grad functions), slices, and the
// routed block's routing ops: mxmoe.router_topk (through
// mxmoe.router_topk_grad), gather_rows and combine_rows (through each
// other and combine_scores_grad); the expert sort and the inverse carry no
// gradient.
//
//===----------------------------------------------------------------------===//

#include "TileMLP.h"

#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h"
#include "mxmoe/Dialect/MXMoE/Utils/CheckedPassOptions.h"
#include "mxmoe/Dialect/MXMoE/Utils/ReduceSum.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::tile_mlp;

/// `v` in element type `elem` (extf / truncf; the same shape).
Value ShardVJP::convert(Value v, Type elem) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getElementType() == elem)
    return v;
  auto to = RankedTensorType::get(t.getShape(), elem);
  if (t.getElementTypeBitWidth() < to.getElementTypeBitWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  return arith::TruncFOp::create(b, loc, to, v);
}

void ShardVJP::add(Value v, Value g) {
  if (Value a = alias.lookup(v))
    v = a;
  // A gradient takes v's element type, except a parameter's, which may be
  // wider (f32 weight gradients); sums of two widen the narrower one.
  auto vt = dyn_cast<RankedTensorType>(v.getType());
  auto gt = dyn_cast<RankedTensorType>(g.getType());
  if (vt && gt && vt.getElementType() != gt.getElementType() &&
      !params.contains(v))
    g = convert(g, vt.getElementType());
  auto it = grads.find(v);
  if (it == grads.end()) {
    grads[v] = g;
    return;
  }
  Value prev = it->second;
  Type pe = cast<RankedTensorType>(prev.getType()).getElementType();
  Type ge = cast<RankedTensorType>(g.getType()).getElementType();
  if (pe != ge) {
    Type wide =
        pe.getIntOrFloatBitWidth() >= ge.getIntOrFloatBitWidth() ? pe : ge;
    prev = convert(prev, wide);
    g = convert(g, wide);
  }
  it->second = arith::AddFOp::create(b, loc, prev, g);
}

/// gather_rows (routed row r = scores[i] * source[i / k], i = indices[r]):
/// the source's gradient sums each token's routed rows' gradients, weighted
/// (combine_rows through the inverse), and the scores' gradient is the dot
/// product of each routed row's gradient with its token row
/// (combine_scores_grad), as the routed swiglu_experts backward.
LogicalResult ShardVJP::backpropGather(GatherRowsOp op, Value g) {
  // The rule needs every (token, slot) routed once: M = T * top_k (a
  // gather of a subset has no combine_rows inverse). Dynamic shard sizes
  // are checked by the kernels (status 3).
  int64_t m = op.getResult().getType().getDimSize(0);
  int64_t t = op.getSource().getType().getDimSize(0);
  if (!ShapedType::isDynamic(m) && !ShapedType::isDynamic(t) &&
      m != t * static_cast<int64_t>(op.getTopK()))
    return op.emitOpError("mxmoe-tile-mlp backward: the gradient of a "
                          "gather_rows needs every (token, slot) routed once "
                          "(rows = tokens x top_k), got ")
           << m << " rows of " << t << " x " << op.getTopK();
  Value idx = op.getIndices(), scores = op.getScores();
  g = convert(g, op.getResult().getType().getElementType());
  Value inv = InvertPermutationOp::create(b, loc, idx.getType(), idx);
  Value source = op.getSource();
  this->add(source, CombineRowsOp::create(b, loc, source.getType(), g, idx, inv,
                                          scores, op.getTopKAttr()));
  if (scores)
    this->add(scores,
              CombineScoresGradOp::create(b, loc, scores.getType(), source, g,
                                          idx, inv, op.getTopKAttr()));
  return success();
}

/// combine_rows (token row t = sum_j scores[t, j] * rows[inverse[t k +
/// j]]): the rows' gradient gathers each token's gradient (times its
/// score), the scores' one is combine_scores_grad.
void ShardVJP::backpropCombine(CombineRowsOp op, Value g) {
  Value idx = op.getIndices(), scores = op.getScores();
  g = convert(g, op.getResult().getType().getElementType());
  Value rows = op.getRows();
  this->add(rows, GatherRowsOp::create(b, loc, rows.getType(), g, idx, scores,
                                       op.getTopKAttr()));
  if (scores)
    this->add(scores, CombineScoresGradOp::create(b, loc, scores.getType(), g,
                                                  rows, idx, op.getInverse(),
                                                  op.getTopKAttr()));
}

/// router_topk: the gradients of its weights (`gw`) and of its `scores`
/// (`gs`; a broadcast of one [E] row, the gradient of a sum over tokens,
/// is passed as that row) through mxmoe.router_topk_grad at the
/// recomputed choice. The experts are integers; the bias and the group
/// limit only move the choice.
void ShardVJP::backpropRouter(RouterTopKOp router, Value gw, Value gs) {
  if (!gw && !gs)
    return;
  if (!gw)
    gw = zerosLike(b, loc, router.getWeights());
  if (auto bc = gs ? gs.getDefiningOp<linalg::BroadcastOp>() : nullptr;
      bc && bc.getDimensions() == ArrayRef<int64_t>{0})
    gs = bc.getInput();
  Value logits = router.getLogits();
  Value experts = savedExperts.lookup(router);
  if (!experts)
    experts = router.getExperts();
  auto grad = RouterTopKGradOp::create(
      b, loc, logits.getType(), logits, experts, gw, gs, router.getScoreAttr(),
      router.getRenormalizeAttr(), router.getScalingFactorAttr());
  this->add(logits, grad.getResult());
}

/// A linalg.reduce summing over dim 0 (`out = init + sum_t in[t, ...]`):
/// the input's gradient is g broadcast over the reduced rows, the init's
/// is g.
LogicalResult ShardVJP::backpropReduce(linalg::ReduceOp red, Value g) {
  if (!isSumOverDim0(red))
    return red.emitOpError("mxmoe-tile-mlp backward: the gradient of a "
                           "linalg.reduce is defined for one input summed "
                           "over dim 0 (an arith.addf combiner)");
  Value in = red.getInputs()[0];
  Value empty = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, in),
      cast<RankedTensorType>(g.getType()).getElementType());
  auto bc = linalg::BroadcastOp::create(b, loc, g, empty, ArrayRef<int64_t>{0});
  this->add(in, bc->getResult(0));
  this->add(red.getInits()[0], g);
  return success();
}

/// Applies the VJP of `op` given the gradients of its results.
LogicalResult ShardVJP::backpropCall(func::CallOp call, Value g) {
  // An MX linear, grouped GEMM or experts block of a static shard loop:
  // its expanded gradient functions.
  auto it = linears.find(call.getCallee());
  if (it == linears.end() ||
      !(it->second.fns.inputGrad || it->second.fns.backward))
    return call->emitOpError("mxmoe-tile-mlp backward: no gradient rule "
                             "for a call in a tiled_mlp body");
  const LinearFunctions &f = it->second.fns;
  // The gradient functions take dy in the input's element type (a linear
  // may produce f32 from bf16 inputs).
  auto asArg = [&](func::FuncOp fn) {
    return convert(
        g, cast<RankedTensorType>(fn.getArgumentTypes()[0]).getElementType());
  };
  if (it->second.kind == ExpandedLinear::Experts) {
    // backward(dy, x, h, [y,] w13, w2, offsets[, indices, scores]) ->
    // (dx, dw13, dw2[, dscores]): h (and the routed y) are the forward
    // call's other results.
    ValueRange in = call.getOperands(), res = call.getResults();
    SmallVector<Value> args{asArg(f.backward), in[0]};
    args.append(res.begin() + 1, res.end());
    args.append(in.begin() + 1, in.end());
    auto bwd = func::CallOp::create(b, loc, f.backward, args);
    for (auto [i, grad] : llvm::enumerate(bwd.getResults())) {
      // dx, dw13, dw2, then the scores' gradient (operand 5).
      unsigned operand = i < 3 ? i : 5;
      this->add(in[operand], grad);
    }
    return success();
  }
  // A grouped GEMM's gradients also take its group offsets (integers: no
  // gradient).
  Value x = call.getOperand(0), w = call.getOperand(1);
  auto args = [&](func::FuncOp fn, Value other) {
    SmallVector<Value> a{asArg(fn), other};
    if (it->second.kind == ExpandedLinear::Grouped)
      a.push_back(call.getOperand(2));
    return a;
  };
  this->add(x, func::CallOp::create(b, loc, f.inputGrad, args(f.inputGrad, w))
                   .getResult(0));
  this->add(w, func::CallOp::create(b, loc, f.weightGrad, args(f.weightGrad, x))
                   .getResult(0));
  if (f.biasGrad)
    this->add(
        call.getOperand(2),
        func::CallOp::create(b, loc, f.biasGrad, ValueRange{asArg(f.biasGrad)})
            .getResult(0));
  return success();
}

LogicalResult ShardVJP::backprop(Operation *op) {
  SmallVector<Value> gs;
  bool any = false;
  for (Value r : op->getResults()) {
    auto it = grads.find(r);
    gs.push_back(it == grads.end() ? Value() : it->second);
    any |= it != grads.end();
  }
  if (!any)
    return success();
  Value g = gs.empty() ? Value() : gs[0];
  if (auto add = dyn_cast<arith::AddFOp>(op)) {
    this->add(add.getLhs(), g);
    this->add(add.getRhs(), g);
  } else if (auto sub = dyn_cast<arith::SubFOp>(op)) {
    this->add(sub.getLhs(), g);
    this->add(sub.getRhs(), arith::NegFOp::create(b, loc, g));
  } else if (auto mul = dyn_cast<arith::MulFOp>(op)) {
    this->add(mul.getLhs(), arith::MulFOp::create(b, loc, g, mul.getRhs()));
    this->add(mul.getRhs(), arith::MulFOp::create(b, loc, g, mul.getLhs()));
  } else if (auto div = dyn_cast<arith::DivFOp>(op)) {
    Value ga = arith::DivFOp::create(b, loc, g, div.getRhs());
    this->add(div.getLhs(), ga);
    Value q = arith::DivFOp::create(b, loc, ga, div.getRhs());
    this->add(div.getRhs(),
              arith::NegFOp::create(
                  b, loc, arith::MulFOp::create(b, loc, q, div.getLhs())));
  } else if (auto neg = dyn_cast<arith::NegFOp>(op)) {
    this->add(neg.getOperand(), arith::NegFOp::create(b, loc, g));
  } else if (auto tanh = dyn_cast<math::TanhOp>(op)) {
    // d tanh(x) = (1 - tanh(x)^2) dx, as g - (g t) t: bounded, no constant.
    Value t = tanh.getResult();
    Value gt = arith::MulFOp::create(b, loc, g, t);
    this->add(
        tanh.getOperand(),
        arith::SubFOp::create(b, loc, g, arith::MulFOp::create(b, loc, gt, t)));
  } else if (auto exp = dyn_cast<math::ExpOp>(op)) {
    this->add(exp.getOperand(),
              arith::MulFOp::create(b, loc, g, exp.getResult()));
  } else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    Value zeros = zerosLike(b, loc, slice.getSource());
    this->add(slice.getSource(),
              tensor::InsertSliceOp::create(
                  b, loc, g, zeros, slice.getMixedOffsets(),
                  slice.getMixedSizes(), slice.getMixedStrides()));
  } else if (auto ex = dyn_cast<tensor::ExpandShapeOp>(op)) {
    // A reshape (e.g. a dense weight seen as one expert's): the gradient
    // reshaped back.
    this->add(ex.getSrc(),
              tensor::CollapseShapeOp::create(b, loc, ex.getSrcType(), g,
                                              ex.getReassociationIndices()));
  } else if (auto co = dyn_cast<tensor::CollapseShapeOp>(op)) {
    this->add(co.getSrc(),
              tensor::ExpandShapeOp::create(b, loc, co.getSrcType(), g,
                                            co.getReassociationIndices()));
  } else if (auto lin = dyn_cast<LinearOp>(op)) {
    if (lin.getInput().getType().getRank() != 2)
      return op->emitOpError("mxmoe-tile-mlp backward: a linear in the "
                             "shard body must take a 2-D [tokens, K] input");
    // dx = dy W: a linear with the transposed weight; dW = dy^T x: a
    // linear contracting over the shard's tokens. Both keep the op's
    // precision, so the MX expansion quantizes them along their own
    // contraction axes.
    auto grad = [&](StringRef suffix, Value in, Value w) -> Value {
      auto it = cast<RankedTensorType>(in.getType());
      auto wt = cast<RankedTensorType>(w.getType());
      auto rt = RankedTensorType::get({it.getDimSize(0), wt.getDimSize(0)},
                                      it.getElementType());
      auto l = LinearOp::create(b, loc, rt, in, w, Value(),
                                b.getStringAttr(lin.getFqn() + suffix),
                                lin.getPrecisionAttr(), lin.getRecipeAttr());
      return l.getResult();
    };
    this->add(lin.getInput(),
              grad(".input_grad", g, transpose2d(b, loc, lin.getWeight())));
    Value gT = transpose2d(b, loc, g);
    this->add(lin.getWeight(),
              grad(".weight_grad", gT, transpose2d(b, loc, lin.getInput())));
    if (Value bias = lin.getBias()) {
      Value init = zerosLike(b, loc, bias);
      auto red = linalg::ReduceOp::create(
          b, loc, ValueRange{g}, ValueRange{init}, ArrayRef<int64_t>{0},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            linalg::YieldOp::create(
                nb, nl,
                ValueRange{arith::AddFOp::create(nb, nl, args[0], args[1])});
          });
      this->add(bias, red.getResult(0));
    }
  } else if (auto call = dyn_cast<func::CallOp>(op)) {
    return backpropCall(call, g);
  } else if (auto router = dyn_cast<RouterTopKOp>(op)) {
    backpropRouter(router, gs[0], gs.size() > 2 ? gs[2] : Value());
  } else if (auto red = dyn_cast<linalg::ReduceOp>(op)) {
    return backpropReduce(red, g);
  } else if (isa<ScaledGroupedMatmulOp, SwiGLUExpertsOp>(op)) {
    // Expanded per shard size in static shard loops (the call rule above);
    // here the loop kept a run-time token count, or the GEMM is bf16.
    return op->emitOpError(
        "mxmoe-tile-mlp backward: a grouped GEMM in a tiled_mlp body is "
        "differentiated through its expanded input_grad / weight_grad "
        "functions, which need an MX precision and a static shard loop "
        "(static-shards, static token count)");
  } else if (auto gather = dyn_cast<GatherRowsOp>(op)) {
    return backpropGather(gather, g);
  } else if (auto combine = dyn_cast<CombineRowsOp>(op)) {
    backpropCombine(combine, g);
  } else if (isa<tensor::DimOp, tensor::EmptyOp, tensor::SplatOp,
                 arith::ConstantOp, linalg::FillOp, arith::SIToFPOp,
                 arith::UIToFPOp, DequantizeOp, SortByExpertOp,
                 InvertPermutationOp>(op)) {
    // Constants, shapes, fills, integers converted to floats (counts) and
    // dequantized (frozen) weights: no gradient.
  } else {
    return op->emitOpError("mxmoe-tile-mlp backward: no gradient rule for "
                           "this op in a tiled_mlp body (supported: "
                           "arith.addf/subf/mulf/divf/negf, math.exp, "
                           "math.tanh, "
                           "tensor.extract_slice, expand_shape, "
                           "collapse_shape, mxmoe.linear, "
                           "scaled_grouped_matmul, swiglu_experts, "
                           "mxmoe.router_topk, "
                           "gather_rows, combine_rows, linalg.reduce "
                           "sums)");
  }
  return success();
}
