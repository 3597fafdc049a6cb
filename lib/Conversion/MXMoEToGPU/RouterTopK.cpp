//===- RouterTopK.cpp - mxmoe.router_topk and its gradient to SIMT kernels ===//
//
// One warp per token row (run-time token count, static E, top_k and
// groups). Lane l holds experts l, l + 32, ... of the row in registers:
//  1. scores: softmax (row maximum and sum by xor butterflies, so every
//     lane holds the same values: deterministic) or the logistic sigmoid,
//     in f32; exp is MLIR's polynomial approximation (no CUDA math
//     library is linked), then the selection keys (score + bias);
//  2. group-limited routing (num_groups G, topk_groups g): each group's
//     key (the sum of its two largest keys) by a butterfly merge of
//     top-2 pairs, then the g best groups, computed by every lane alike;
//  3. top_k rounds of a warp argmax over (key, expert) packed as two
//     u32 words: the key's order-preserving bits, then the complement of
//     the expert index (ties go to the lower index); the winner's score
//     is fetched from its lane by one shuffle;
//  4. lane r keeps round r's expert and score, renormalizes by the
//     butterfly sum of the k scores (+ 1e-20), scales, and stores;
//     with a `scores` result every lane also stores its experts' scores.
// A NaN key ranks below every number (experts stay distinct and in
// range); its score, and with softmax the whole row's, stays NaN and
// reaches the weights.
// mxmoe.router_topk_grad, the same layout: the scores recomputed (step
// 1), lane j % 32 loads choice j's expert and weight gradient, each
// choice's score comes from its expert's lane (k rounds of two index
// shuffles), the renormalization's sums and the softmax Jacobian's dot
// product are butterflies, and every lane adds the broadcast dL/dw_j to
// the slot holding e_j before the Jacobian (an id outside [0, E): status
// 4, no gradient). A `scores_grad` operand starts every slot's ds at its
// value (a [T, E] row, or the one [E] row), and the softmax Jacobian's
// dot product then runs over all E slots. Semantics: the ops' descriptions
// (MXMoEOps.td).
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"

#include "mxmoe/KernelStatus.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;

namespace {

Value shflXor(KB &b, Value v, int32_t off) {
  return gpu::ShuffleOp::create(b, v, off, 32, gpu::ShuffleMode::XOR)
      .getShuffleResult();
}

Value shflIdx(KB &b, Value v, Value lane) {
  Value width = b.i32(32);
  return gpu::ShuffleOp::create(b, v, b.toI32(lane), width,
                                gpu::ShuffleMode::IDX)
      .getShuffleResult();
}

/// Butterfly reduction of an f32 over the warp with `op` (every lane gets
/// the result; the same order in every lane and run).
Value warpReduce(KB &b, Value v, function_ref<Value(Value, Value)> op) {
  for (int32_t off = 16; off >= 1; off /= 2)
    v = op(v, shflXor(b, v, off));
  return v;
}

/// `op` over a row held as `xs` in every lane (the lane's slots in order,
/// then the butterfly).
Value rowReduce(KB &b, ArrayRef<Value> xs,
                function_ref<Value(Value, Value)> op) {
  Value v = xs[0];
  for (Value x : xs.drop_front())
    v = op(v, x);
  return warpReduce(b, v, op);
}

Value negInf(KB &b) { return b.f32(-std::numeric_limits<float>::infinity()); }

/// x, or -inf where x is NaN; -0 becomes +0 (one order for equal keys).
Value orderable(KB &b, Value x) {
  Value isNum = arith::CmpFOp::create(b, arith::CmpFPredicate::ORD, x, x);
  Value zero = b.f32(0.0f);
  Value canon = arith::AddFOp::create(b, x, zero);
  return b.select(isNum, canon, negInf(b));
}

/// The u32 whose unsigned order is the f32 order of a non-NaN x.
Value orderedBits(KB &b, Value x) {
  Value bits = b.bitcast(b.getI32Type(), x);
  Value sign = arith::ShRSIOp::create(b, bits, b.i32(31));
  Value flip = b.ori(sign, b.i32(static_cast<int32_t>(0x80000000u)));
  return b.xori(bits, flip);
}

Value ugt(KB &b, Value x, Value y) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, x, y);
}

/// The router kernel's per-row state: lane `lane`'s experts e = lane + 32 i.
struct RouterRow {
  RouterScore score = RouterScore::softmax;
  int64_t experts = 0, topK = 0, slots = 0;
  int64_t groups = 1, topkGroups = 1; ///< group-limited routing (G, g)
  bool renormalize = false;
  double factor = 1.0; ///< scaling_factor
  Value lane;
  SmallVector<Value> expert, valid, scores, key;
};

/// The row state of thread `th`'s lane (one warp per row).
RouterRow makeRow(KB &b, RouterScore score, int64_t experts, int64_t topK,
                  Value th) {
  RouterRow r;
  r.score = score;
  r.experts = experts;
  r.topK = topK;
  r.slots = (experts + 31) / 32;
  r.lane = b.rem(th, 32);
  return r;
}

/// Step 1: the lane's scores (softmax: invalid slots 0).
void loadScores(KB &b, RouterRow &r, Value logits, Value tok) {
  Type f32 = b.getF32Type();
  Value rowBase = b.mulc(tok, r.experts);
  SmallVector<Value> x;
  for (int64_t i = 0; i < r.slots; ++i) {
    Value e = b.add(r.lane, b.idx(32 * i));
    Value ok = b.ult(e, b.idx(r.experts));
    Value safe = b.select(ok, e, b.idx(0));
    Value v = b.load(logits, b.add(rowBase, safe));
    if (v.getType() != f32)
      v = arith::ExtFOp::create(b, f32, v);
    r.expert.push_back(e);
    r.valid.push_back(ok);
    x.push_back(b.select(ok, v, negInf(b)));
  }
  bool softmax = r.score == RouterScore::softmax;
  auto maxOf = [&](Value p, Value q) -> Value {
    return arith::MaximumFOp::create(b, p, q);
  };
  auto sumOf = [&](Value p, Value q) -> Value {
    return arith::AddFOp::create(b, p, q);
  };
  Value max, sum;
  if (softmax)
    max = rowReduce(b, x, maxOf);
  SmallVector<Value> ex;
  for (int64_t i = 0; i < r.slots; ++i) {
    Value arg = softmax ? arith::SubFOp::create(b, x[i], max).getResult()
                        : arith::NegFOp::create(b, x[i]).getResult();
    Value e = math::ExpOp::create(b, arg);
    ex.push_back(softmax ? b.select(r.valid[i], e, b.f32(0.0f)) : e);
  }
  if (softmax)
    sum = rowReduce(b, ex, sumOf);
  Value one = b.f32(1.0f);
  for (int64_t i = 0; i < r.slots; ++i) {
    Value s = softmax ? arith::DivFOp::create(b, ex[i], sum).getResult()
                      : arith::DivFOp::create(
                            b, one, arith::AddFOp::create(b, one, ex[i]))
                            .getResult();
    r.scores.push_back(s);
  }
}

/// Step 6: the row's scores of every expert (`scores`, [T, E] f32).
void storeScores(KB &b, RouterRow &r, Value scores, Value tok) {
  Value rowBase = b.mulc(tok, r.experts);
  for (int64_t i = 0; i < r.slots; ++i)
    ifThen(b, r.valid[i],
           [&] { b.store(r.scores[i], scores, b.add(rowBase, r.expert[i])); });
}

/// The selection keys: score (+ bias), NaN as -inf, invalid slots -inf.
void addKeys(KB &b, RouterRow &r, Value bias) {
  for (int64_t i = 0; i < r.slots; ++i) {
    Value k = r.scores[i];
    if (bias) {
      Value safe = b.select(r.valid[i], r.expert[i], b.idx(0));
      k = arith::AddFOp::create(b, k, b.load(bias, safe));
    }
    Value key = orderable(b, k);
    Value none = negInf(b);
    r.key.push_back(b.select(r.valid[i], key, none));
  }
}

/// The two largest of (a1 >= a2) and (c1 >= c2).
std::pair<Value, Value> mergeTop2(KB &b, Value a1, Value a2, Value c1,
                                  Value c2) {
  Value hi = arith::MaximumFOp::create(b, a1, c1);
  Value loserOfFirsts = arith::MinimumFOp::create(b, a1, c1);
  Value bestOfSeconds = arith::MaximumFOp::create(b, a2, c2);
  Value lo = arith::MaximumFOp::create(b, loserOfFirsts, bestOfSeconds);
  return {hi, lo};
}

/// Step 2: whether each of the lane's slots lies in one of the topk_groups
/// groups with the largest group keys (all true without groups).
SmallVector<Value> groupMask(KB &b, RouterRow &r) {
  SmallVector<Value> inGroup(r.slots, b.i1(true));
  int64_t G = r.groups, g = r.topkGroups;
  if (G <= 1 || g >= G)
    return inGroup;
  int64_t per = r.experts / G;
  SmallVector<Value> groupOf, groupKey;
  for (int64_t i = 0; i < r.slots; ++i)
    groupOf.push_back(b.div(r.expert[i], per));
  for (int64_t j = 0; j < G; ++j) {
    Value m1 = negInf(b), m2 = negInf(b);
    for (int64_t i = 0; i < r.slots; ++i) {
      Value mine = b.andi(r.valid[i], b.eq(groupOf[i], b.idx(j)));
      Value k = b.select(mine, r.key[i], negInf(b));
      std::tie(m1, m2) = mergeTop2(b, m1, m2, k, negInf(b));
    }
    for (int32_t off = 16; off >= 1; off /= 2) {
      Value o1 = shflXor(b, m1, off);
      Value o2 = shflXor(b, m2, off);
      std::tie(m1, m2) = mergeTop2(b, m1, m2, o1, o2);
    }
    groupKey.push_back(per == 1 ? m1 : arith::AddFOp::create(b, m1, m2));
  }
  // The g best groups, ties to the lower index: g argmax passes over G
  // values every lane holds alike.
  SmallVector<Value> chosen(G, b.i1(false));
  for (int64_t round = 0; round < g; ++round) {
    Value bestKey = negInf(b), bestJ = b.idx(G); // G: none yet
    for (int64_t j = 0; j < G; ++j) {
      Value better = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT,
                                           groupKey[j], bestKey);
      Value first = b.eq(bestJ, b.idx(G));
      Value free = b.lnot(chosen[j]);
      Value takes = b.andi(free, b.ori(first, better));
      bestKey = b.select(takes, groupKey[j], bestKey);
      bestJ = b.select(takes, b.idx(j), bestJ);
    }
    for (int64_t j = 0; j < G; ++j)
      chosen[j] = b.ori(chosen[j], b.eq(bestJ, b.idx(j)));
  }
  for (int64_t i = 0; i < r.slots; ++i) {
    Value in = b.i1(false);
    for (int64_t j = 0; j < G; ++j)
      in = b.ori(in, b.andi(chosen[j], b.eq(groupOf[i], b.idx(j))));
    inGroup[i] = in;
  }
  return inGroup;
}

/// Step 3: one round's winner (expert index, as i32) among the `avail`
/// slots of the warp.
Value warpArgmax(KB &b, RouterRow &r, ArrayRef<Value> avail) {
  Value hi = b.i32(0), lo = b.i32(0);
  for (int64_t i = 0; i < r.slots; ++i) {
    Value bits = orderedBits(b, r.key[i]);
    Value h = b.select(avail[i], bits, b.i32(0));
    Value e = b.toI32(r.expert[i]);
    Value l = b.xori(e, b.i32(-1));
    // Ascending experts in the lane: strictly greater keeps the lower.
    Value takes = ugt(b, h, hi);
    hi = b.select(takes, h, hi);
    lo = b.select(takes, l, lo);
  }
  for (int32_t off = 16; off >= 1; off /= 2) {
    Value oh = shflXor(b, hi, off), ol = shflXor(b, lo, off);
    Value higher = ugt(b, oh, hi);
    Value sameKey = b.eq(oh, hi);
    Value lowerExpert = ugt(b, ol, lo);
    Value takes = b.ori(higher, b.andi(sameKey, lowerExpert));
    hi = b.select(takes, oh, hi);
    lo = b.select(takes, ol, lo);
  }
  return b.xori(lo, b.i32(-1));
}

/// Steps 3-4 for the row `tok`: select, renormalize, scale, store.
void selectAndStore(KB &b, RouterRow &r, Value weights, Value experts,
                    Value tok) {
  SmallVector<Value> avail = groupMask(b, r);
  for (int64_t i = 0; i < r.slots; ++i)
    avail[i] = b.andi(avail[i], r.valid[i]);
  int64_t kSlots = (r.topK + 31) / 32;
  SmallVector<Value> mine(kSlots, b.i32(0)), mineScore(kSlots, b.f32(0.0f));
  for (int64_t round = 0; round < r.topK; ++round) {
    Value win = warpArgmax(b, r, avail);
    Value winIdx = b.fromI32(win);
    Value s = b.f32(0.0f);
    for (int64_t i = 0; i < r.slots; ++i) {
      Value here = b.eq(r.expert[i], winIdx);
      s = b.select(here, r.scores[i], s);
      avail[i] = b.andi(avail[i], b.lnot(here));
    }
    Value winScore = shflIdx(b, s, b.rem(winIdx, 32));
    Value keeper = b.eq(r.lane, b.idx(round % 32));
    mine[round / 32] = b.select(keeper, win, mine[round / 32]);
    mineScore[round / 32] = b.select(keeper, winScore, mineScore[round / 32]);
  }
  Value scale = b.f32(1.0f);
  if (r.renormalize) {
    Value sum = mineScore[0];
    for (int64_t j = 1; j < kSlots; ++j)
      sum = arith::AddFOp::create(b, sum, mineScore[j]);
    sum = warpReduce(b, sum, [&](Value p, Value q) {
      return arith::AddFOp::create(b, p, q);
    });
    scale = arith::AddFOp::create(b, sum, b.f32(1e-20f));
  }
  for (int64_t j = 0; j < kSlots; ++j) {
    Value slot = b.add(r.lane, b.idx(32 * j));
    ifThen(b, b.ult(slot, b.idx(r.topK)), [&] {
      Value w = mineScore[j];
      if (r.renormalize)
        w = arith::DivFOp::create(b, w, scale);
      if (r.factor != 1.0)
        w = arith::MulFOp::create(b, w, b.f32(static_cast<float>(r.factor)));
      Value at = b.add(b.mulc(tok, r.topK), slot);
      b.store(w, weights, at);
      b.store(mine[j], experts, at);
    });
  }
}

/// The backward's per-slot values of the row's top_k choices, kept by
/// lane j % 32 in slot j / 32: expert, g_j (weights_grad), w_j (score).
struct ChoiceSlots {
  SmallVector<Value> expert, grad, w;
};

/// Broadcast of lane j % 32's slot j / 32 value to every lane.
Value fromChoice(KB &b, ArrayRef<Value> slots, int64_t j) {
  Value lane = b.idx(j % 32);
  return shflIdx(b, slots[j / 32], lane);
}

/// The backward's loads of the row's choices and their scores w_j (from
/// the lane holding expert e_j); an id outside [0, E) gets w_j = 0 and
/// raises the status to 4.
ChoiceSlots loadChoices(KB &b, RouterRow &r, Value experts, Value grad,
                        Value status, Value tok) {
  int64_t kSlots = (r.topK + 31) / 32;
  ChoiceSlots c;
  for (int64_t j = 0; j < kSlots; ++j) {
    Value slot = b.add(r.lane, b.idx(32 * j));
    Value live = b.ult(slot, b.idx(r.topK));
    Value row = b.mulc(tok, r.topK);
    Value safe = b.select(live, slot, b.idx(0));
    Value at = b.add(row, safe);
    Value e = b.load(experts, at);
    Value g = b.load(grad, at);
    c.expert.push_back(b.select(live, e, b.i32(-1)));
    c.grad.push_back(b.select(live, g, b.f32(0.0f)));
    c.w.push_back(b.f32(0.0f));
    Value eIdx = b.fromI32(e);
    Value inRange = b.ult(eIdx, b.idx(r.experts));
    Value bad = b.andi(live, b.lnot(inRange));
    ifThen(b, bad, [&] {
      Value code = b.i32(::mxmoe::kKernelStatusExpertsRejected);
      atomicMaxStatus(b, status, code);
    });
  }
  for (int64_t j = 0; j < r.topK; ++j) {
    Value ej = b.fromI32(fromChoice(b, c.expert, j));
    Value s = b.f32(0.0f);
    for (int64_t i = 0; i < r.slots; ++i) {
      Value here = b.eq(r.expert[i], ej);
      s = b.select(here, r.scores[i], s);
    }
    Value owner = b.rem(ej, 32);
    Value wj = shflIdx(b, s, owner);
    Value keeper = b.eq(r.lane, b.idx(j % 32));
    c.w[j / 32] = b.select(keeper, wj, c.w[j / 32]);
  }
  return c;
}

/// Warp sum of f(slot j) over the lane's choice slots.
Value choiceSum(KB &b, int64_t kSlots, function_ref<Value(int64_t)> f) {
  Value v = f(0);
  for (int64_t j = 1; j < kSlots; ++j)
    v = arith::AddFOp::create(b, v, f(j));
  return warpReduce(
      b, v, [&](Value p, Value q) { return arith::AddFOp::create(b, p, q); });
}

/// dL/dw_j in the lane's choice slots (see RouterTopKGradOp).
SmallVector<Value> weightGrads(KB &b, const RouterRow &r,
                               const ChoiceSlots &c) {
  int64_t kSlots = c.grad.size();
  Value factor = b.f32(static_cast<float>(r.factor));
  SmallVector<Value> dw;
  if (!r.renormalize) {
    for (Value g : c.grad)
      dw.push_back(arith::MulFOp::create(b, factor, g));
    return dw;
  }
  Value sum = choiceSum(b, kSlots, [&](int64_t j) { return c.w[j]; });
  Value total = arith::AddFOp::create(b, sum, b.f32(1e-20f));
  Value gw = choiceSum(b, kSlots, [&](int64_t j) -> Value {
    return arith::MulFOp::create(b, c.grad[j], c.w[j]);
  });
  Value mean = arith::DivFOp::create(b, gw, total);
  Value coef = arith::DivFOp::create(b, factor, total);
  for (Value g : c.grad) {
    Value centered = arith::SubFOp::create(b, g, mean);
    dw.push_back(arith::MulFOp::create(b, coef, centered));
  }
  return dw;
}

/// The optional gradient of router_topk's `scores`: [T, E], or [E] (the
/// same row for every token).
struct ScoresGrad {
  Value grad;
  bool perToken = false;
};

/// ds's start in the lane's slots: the scores' gradient (0 without one;
/// invalid slots 0).
SmallVector<Value> loadScoresGrad(KB &b, RouterRow &r, const ScoresGrad &sg,
                                  Value tok) {
  SmallVector<Value> ds(r.slots, b.f32(0.0f));
  if (!sg.grad)
    return ds;
  Value rowBase = sg.perToken ? b.mulc(tok, r.experts) : b.idx(0);
  for (int64_t i = 0; i < r.slots; ++i) {
    Value safe = b.select(r.valid[i], r.expert[i], b.idx(0));
    Value v = b.load(sg.grad, b.add(rowBase, safe));
    ds[i] = b.select(r.valid[i], v, b.f32(0.0f));
  }
  return ds;
}

/// The backward of the row `tok`: ds per expert slot, then the score
/// Jacobian, stored rounded to the result's type.
void storeLogitGrads(KB &b, RouterRow &r, const ChoiceSlots &c,
                     ArrayRef<Value> dw, Value out, Type outElem, Value tok,
                     const ScoresGrad &sg) {
  SmallVector<Value> ds = loadScoresGrad(b, r, sg, tok);
  for (int64_t j = 0; j < r.topK; ++j) {
    Value ej = b.fromI32(fromChoice(b, c.expert, j));
    Value dwj = fromChoice(b, dw, j);
    for (int64_t i = 0; i < r.slots; ++i) {
      Value mine = b.eq(r.expert[i], ej);
      Value more = arith::AddFOp::create(b, ds[i], dwj);
      ds[i] = b.select(mine, more, ds[i]);
    }
  }
  Value dot;
  if (r.score == RouterScore::softmax && sg.grad) {
    // (Every expert's ds may be nonzero: the Jacobian's sum over the row.)
    SmallVector<Value> prods;
    for (int64_t i = 0; i < r.slots; ++i)
      prods.push_back(arith::MulFOp::create(b, r.scores[i], ds[i]));
    dot = rowReduce(b, prods, [&](Value p, Value q) -> Value {
      return arith::AddFOp::create(b, p, q);
    });
  } else if (r.score == RouterScore::softmax) {
    dot = choiceSum(b, dw.size(), [&](int64_t j) -> Value {
      return arith::MulFOp::create(b, dw[j], c.w[j]);
    });
  }
  Value one = b.f32(1.0f);
  Value rowBase = b.mulc(tok, r.experts);
  for (int64_t i = 0; i < r.slots; ++i) {
    Value s = r.scores[i], g;
    if (dot) {
      Value centered = arith::SubFOp::create(b, ds[i], dot);
      g = arith::MulFOp::create(b, s, centered);
    } else {
      Value oneMinus = arith::SubFOp::create(b, one, s);
      Value slope = arith::MulFOp::create(b, s, oneMinus);
      g = arith::MulFOp::create(b, ds[i], slope);
    }
    if (outElem != g.getType())
      g = arith::TruncFOp::create(b, outElem, g);
    ifThen(b, r.valid[i], [&] {
      Value at = b.add(rowBase, r.expert[i]);
      b.store(g, out, at);
    });
  }
}

/// The router kernels hold a row's experts (ceil(E / 32) slots per lane)
/// and choices (ceil(top_k / 32)) in registers, and unroll top_k rounds
/// over the slots: past these bounds ptxas spills (measured: E 1024 with
/// top_k 64, E 256 with top_k 128).
LogicalResult checkRouterSize(Operation *op, int64_t e, int64_t k) {
  int64_t steps = ((e + 31) / 32) * ((k + 31) / 32);
  if (e <= 1024 && k <= 64 && steps <= 32)
    return success();
  return op->emitOpError("convert-mxmoe-to-gpu: the router kernels hold a "
                         "row's experts and choices in one warp's registers: "
                         "at most 1024 experts, top_k <= 64 and ceil(E / 32) "
                         "* ceil(top_k / 32) <= 32; got E = ")
         << e << ", top_k = " << k;
}

} // namespace

LogicalResult KernelGen::genRouterTopK(RouterTopKOp op) {
  RankedTensorType logits = op.getLogits().getType();
  Type elem = logits.getElementType(), f32 = Float32Type::get(op.getContext()),
       i32 = IntegerType::get(op.getContext(), 32);
  int64_t t = logits.getDimSize(0), e = logits.getDimSize(1);
  int64_t k = op.getTopK();
  Value bias = op.getBias();
  if (failed(checkRouterSize(op, e, k)))
    return failure();
  RuntimeShapeSpec spec{{elem}, {"tokens"}};
  if (bias)
    spec.views.push_back(f32);
  spec.views.append({f32, i32});
  Value scores = op.getScores();
  if (scores)
    spec.views.push_back(f32);
  unsigned aWeights = bias ? 2 : 1;
  auto workOf = [](KB &b, ValueRange sz) { return b.mulc(sz[0], 32); };
  auto kernel = createKernel(
      module, name("router_topk", op), spec, workOf, blockSize, nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value th, GroupTable &) {
        RouterRow r = makeRow(b, op.getScore(), e, k, th);
        r.groups = op.getNumGroups().value_or(1);
        r.topkGroups = op.getTopkGroups().value_or(r.groups);
        r.renormalize = op.getRenormalize();
        r.factor = op.getScalingFactor().convertToDouble();
        Value tok = b.div(th, 32);
        loadScores(b, r, a[0], tok);
        if (scores)
          storeScores(b, r, a[aWeights + 2], tok);
        addKeys(b, r, bias ? a[1] : Value());
        selectAndStore(b, r, a[aWeights], a[aWeights + 1], tok);
      });
  if (failed(expandMath(kernel, op, "of the router")))
    return failure();
  SmallVector<HostArg> args{{HostArg::In, op.getLogits()}};
  if (bias)
    args.push_back({HostArg::In, bias});
  args.append(
      {{HostArg::Out, op.getWeights()}, {HostArg::Out, op.getExperts()}});
  if (scores)
    args.push_back({HostArg::Out, scores});
  finish(op, kernel, args, {t}, t * 32);
  return success();
}

LogicalResult KernelGen::genRouterTopKGrad(RouterTopKGradOp op) {
  RankedTensorType logits = op.getLogits().getType();
  Type elem = logits.getElementType(), f32 = Float32Type::get(op.getContext()),
       i32 = IntegerType::get(op.getContext(), 32);
  Type out = op.getResult().getType().getElementType();
  int64_t t = logits.getDimSize(0), e = logits.getDimSize(1);
  int64_t k = op.getExperts().getType().getDimSize(1);
  if (failed(checkRouterSize(op, e, k)))
    return failure();
  Value scoresGrad = op.getScoresGrad();
  RuntimeShapeSpec spec{{elem, i32, f32}, {"tokens"}};
  if (scoresGrad)
    spec.views.push_back(f32);
  spec.views.append({out, i32});
  unsigned aOut = scoresGrad ? 4 : 3;
  auto workOf = [](KB &b, ValueRange sz) { return b.mulc(sz[0], 32); };
  auto kernel = createKernel(
      module, name("router_topk_grad", op), spec, workOf, blockSize, nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value th, GroupTable &) {
        Value status = a[aOut + 1];
        ifThen(b, b.eq(th, b.idx(0)), [&] {
          Value done = b.i32(::mxmoe::kKernelStatusDone);
          atomicMaxStatus(b, status, done);
        });
        RouterRow r = makeRow(b, op.getScore(), e, k, th);
        r.renormalize = op.getRenormalize();
        r.factor = op.getScalingFactor().convertToDouble();
        Value tok = b.div(th, 32);
        loadScores(b, r, a[0], tok);
        ChoiceSlots c = loadChoices(b, r, a[1], a[2], status, tok);
        SmallVector<Value> dw = weightGrads(b, r, c);
        ScoresGrad sg;
        if (scoresGrad) {
          sg.grad = a[3];
          sg.perToken =
              cast<RankedTensorType>(scoresGrad.getType()).getRank() == 2;
        }
        storeLogitGrads(b, r, c, dw, a[aOut], out, tok, sg);
      });
  if (failed(expandMath(kernel, op, "of the router")))
    return failure();
  SmallVector<HostArg> args{{HostArg::In, op.getLogits()},
                            {HostArg::In, op.getExperts()},
                            {HostArg::In, op.getWeightsGrad()}};
  if (scoresGrad)
    args.push_back({HostArg::In, scoresGrad});
  args.append({{HostArg::Out, op.getResult()}, {HostArg::Status, Value()}});
  finish(op, kernel, args, {t}, t * 32);
  return success();
}
