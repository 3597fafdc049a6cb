//===- SortByExpert.cpp - mxmoe.sort_by_expert to one SIMT kernel ---------===//
//
// A stable counting sort in one CTA of W warps (W = 32, fewer when the
// per-warp histograms of E experts do not fit 48 KiB of static shared
// memory), run-time entry count n = T * top_k:
//  1. warp w owns the contiguous segment [w s, (w + 1) s) of the flattened
//     choices (s = ceil(n / W) rounded up to 32) and counts it into its
//     own histogram column (shared-memory atomics: counts do not depend on
//     order); an id outside [0, E) counts in bin E (after every expert)
//     and raises the status to 4;
//  2. the (E + 1) x W counts, expert-major, are scanned exclusively by the
//     whole CTA (each thread a contiguous run, warp shuffles, then the W
//     warp totals): entry (e, w) becomes where warp w's first choice of
//     expert e goes; the end offset of expert e is the start of (e + 1, 0);
//  3. each warp walks its segment again in order, 32 entries a step:
//     `match.any.sync` groups the lanes of equal bins, a lane's place is
//     its bin's start plus the number of lower lanes in its group, and the
//     group's lowest lane advances the start by the group's size.
// Stable (within an expert, ascending (token, slot) index) and the same
// bytes on every run. Entries of bad ids land after the last expert's
// rows, so `indices` stays a permutation and nothing is written out of
// bounds. Each step of a warp loads kUnroll x 32 entries before it
// processes them (a single CTA is latency bound). Semantics: the op's
// description (MXMoEOps.td); PTX ISA 9.7.13.8 (match.sync).
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"

#include "mxmoe/KernelStatus.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;

namespace {

/// Entries each lane loads before it processes them (phases 1 and 3).
constexpr int64_t kUnroll = 8;
/// Static shared memory of the histograms and the scan's warp totals.
constexpr int64_t kSharedInts = 48 * 1024 / 4;

struct SortCta {
  int64_t experts, warps;
  Value hist;   ///< (E + 1) x W i32, expert-major, workgroup memory
  Value totals; ///< W i32 warp totals of the scan
  Value warp, lane;
  Value begin, end; ///< this warp's segment
};

/// Histogram bin of a choice: the expert, or E for an id outside [0, E).
Value binOf(KB &b, const SortCta &c, Value id) {
  Value e = b.fromI32(id);
  Value ok = b.ult(e, b.idx(c.experts));
  return b.select(ok, e, b.idx(c.experts));
}

Value histAt(KB &b, const SortCta &c, Value bin) {
  Value row = b.mulc(bin, c.warps);
  return b.add(row, c.warp);
}

/// scf.for over [lb, ub) step `step` (no carried values).
void forRange(KB &b, Value lb, Value ub, Value step,
              function_ref<void(Value)> body) {
  scf::ForOp::create(b, b.getLoc(), lb, ub, step, ValueRange{},
                     [&](OpBuilder &ob, Location loc, Value i, ValueRange) {
                       body(i);
                       scf::YieldOp::create(ob, loc);
                     });
}

/// Loads the kUnroll entries of step `it` of this warp's segment at
/// begin + 32 (kUnroll it + u) + lane: (in the segment, id).
SmallVector<std::pair<Value, Value>> loadStep(KB &b, const SortCta &c,
                                              Value experts, Value it) {
  SmallVector<std::pair<Value, Value>> out;
  Value first = b.add(c.begin, b.mulc(it, 32 * kUnroll));
  for (int64_t u = 0; u < kUnroll; ++u) {
    Value p = b.add(b.add(first, b.idx(32 * u)), c.lane);
    Value in = b.ult(p, c.end);
    Value safe = b.select(in, p, b.idx(0));
    Value id = b.load(experts, safe);
    out.push_back({in, id});
  }
  return out;
}

/// Phase 1: this warp's counts; bad ids raise the status.
void countSegment(KB &b, const SortCta &c, Value experts, Value status,
                  Value steps) {
  Value zero = b.idx(0);
  Value one = b.idx(1);
  forRange(b, zero, steps, one, [&](Value it) {
    auto step = loadStep(b, c, experts, it);
    for (auto [in, id] : step) {
      Value bin = binOf(b, c, id);
      ifThen(b, in, [&] {
        Value at = histAt(b, c, bin);
        Value one = b.i32(1);
        memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addi, one, c.hist,
                                    ValueRange{at});
        ifThen(b, b.eq(bin, b.idx(c.experts)), [&] {
          Value code = b.i32(::mxmoe::kKernelStatusExpertsRejected);
          atomicMaxStatus(b, status, code);
        });
      });
    }
  });
}

/// Phase 2: exclusive scan of the histograms in place (thread `t` of
/// `threads` scans a contiguous run of `chunk` entries).
void scanHistograms(KB &b, const SortCta &c, Value t, int64_t threads) {
  int64_t len = (c.experts + 1) * c.warps;
  int64_t chunk = (len + threads - 1) / threads;
  Value first = b.mulc(t, chunk);
  Value local = b.i32(0);
  for (int64_t i = 0; i < chunk; ++i) {
    Value j = b.add(first, b.idx(i));
    Value in = b.ult(j, b.idx(len));
    Value safe = b.select(in, j, b.idx(0));
    Value v = b.load(c.hist, safe);
    Value kept = b.select(in, v, b.i32(0));
    local = b.add(local, kept);
  }
  // Inclusive scan of `local` over the warp (shuffle up), then the warps'
  // totals, scanned by warp 0.
  Value incl = local;
  for (int32_t off = 1; off < 32; off *= 2) {
    Value width = b.i32(32);
    auto up = gpu::ShuffleOp::create(b, incl, b.i32(off), width,
                                     gpu::ShuffleMode::UP);
    Value has = b.sge(c.lane, b.idx(off));
    Value add = b.select(has, up.getShuffleResult(), b.i32(0));
    incl = b.add(incl, add);
  }
  ifThen(b, b.eq(c.lane, b.idx(31)), [&] { b.store(incl, c.totals, c.warp); });
  gpu::BarrierOp::create(b);
  ifThen(b, b.eq(t, b.idx(0)), [&] {
    Value run = b.i32(0);
    for (int64_t w = 0; w < c.warps; ++w) {
      Value v = b.load(c.totals, b.idx(w));
      b.store(run, c.totals, b.idx(w));
      run = b.add(run, v);
    }
  });
  gpu::BarrierOp::create(b);
  Value warpBase = b.load(c.totals, c.warp);
  Value run = b.add(warpBase, b.sub(incl, local));
  for (int64_t i = 0; i < chunk; ++i) {
    Value j = b.add(first, b.idx(i));
    Value in = b.ult(j, b.idx(len));
    Value safe = b.select(in, j, b.idx(0));
    Value v = b.load(c.hist, safe);
    ifThen(b, in, [&] { b.store(run, c.hist, safe); });
    Value kept = b.select(in, v, b.i32(0));
    run = b.add(run, kept);
  }
}

/// Phase 3: this warp's entries to their places, in order.
void scatterSegment(KB &b, const SortCta &c, Value experts, Value indices,
                    Value steps) {
  Type i32 = b.getI32Type();
  Value all = b.i32(-1);
  Value zero = b.idx(0);
  Value one = b.idx(1);
  forRange(b, zero, steps, one, [&](Value it) {
    auto step = loadStep(b, c, experts, it);
    Value first = b.add(c.begin, b.mulc(it, 32 * kUnroll));
    for (auto [u, entry] : llvm::enumerate(step)) {
      auto [in, id] = entry;
      Value bin = binOf(b, c, id);
      Value none = b.idx(c.experts + 1); // lanes past the segment
      Value key = b.toI32(b.select(in, bin, none));
      Value group =
          NVVM::MatchSyncOp::create(b, i32, all, key, NVVM::MatchSyncKind::any);
      Value lower = NVVM::LaneMaskLtOp::create(b, i32);
      Value before = b.andi(group, lower);
      Value rank = LLVM::CtPopOp::create(b, before);
      Value at = histAt(b, c, b.select(in, bin, b.idx(0)));
      Value base = b.load(c.hist, at);
      Value p = b.add(b.add(first, b.idx(32 * u)), c.lane);
      ifThen(b, in, [&] {
        Value dst = b.add(base, rank);
        Value entry = b.toI32(p);
        b.store(entry, indices, b.fromI32(dst));
      });
      NVVM::SyncWarpOp::create(b, all);
      Value leader = b.andi(in, b.eq(rank, b.i32(0)));
      ifThen(b, leader, [&] {
        Value size = LLVM::CtPopOp::create(b, group);
        b.store(b.add(base, size), c.hist, at);
      });
      NVVM::SyncWarpOp::create(b, all);
    }
  });
}

} // namespace

LogicalResult KernelGen::genSortByExpert(SortByExpertOp op) {
  int64_t e = op.getNumExperts();
  int64_t n = op.getIndices().getType().getDimSize(0);
  int64_t warps = std::min<int64_t>(32, (kSharedInts - 32) / (e + 1));
  if (warps < 1)
    return op.emitOpError("convert-mxmoe-to-gpu: the sort kernel keeps one "
                          "histogram of num_experts + 1 bins per warp in 48 "
                          "KiB of shared memory, at most ")
           << kSharedInts - 33 << " experts; got " << e;
  Type i32 = IntegerType::get(op.getContext(), 32);
  int64_t threads = 32 * warps;
  RuntimeShapeSpec spec{{i32, i32, i32, i32}, {"entries"}};
  auto workOf = [&](KB &b, ValueRange) { return b.idx(threads); };
  auto kernel = createKernel(
      module, name("sort_by_expert", op), spec, workOf, threads, nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value t, GroupTable &) {
        SortCta c{e, warps, {}, {}, {}, {}, {}, {}};
        c.hist = addSharedBuffer(b, (e + 1) * warps, i32);
        c.totals = addSharedBuffer(b, 32, i32);
        c.warp = b.div(t, 32);
        c.lane = b.rem(t, 32);
        ifThen(b, b.eq(t, b.idx(0)), [&] {
          Value done = b.i32(::mxmoe::kKernelStatusDone);
          atomicMaxStatus(b, a[3], done);
        });
        Value bins = b.idx((e + 1) * warps);
        Value stride = b.idx(threads);
        forRange(b, t, bins, stride,
                 [&](Value j) { b.store(b.i32(0), c.hist, j); });
        gpu::BarrierOp::create(b);
        Value seg = b.roundUpc(b.ceilDivc(sz[0], warps), 32);
        c.begin = b.mul(c.warp, seg);
        c.end = b.minui(b.add(c.begin, seg), sz[0]);
        Value steps = b.ceilDivc(seg, 32 * kUnroll);
        countSegment(b, c, a[0], a[3], steps);
        gpu::BarrierOp::create(b);
        scanHistograms(b, c, t, threads);
        gpu::BarrierOp::create(b);
        Value numExperts = b.idx(e);
        forRange(b, t, numExperts, stride, [&](Value x) {
          Value next = b.mulc(b.add(x, b.idx(1)), warps);
          b.store(b.load(c.hist, next), a[2], x);
        });
        gpu::BarrierOp::create(b);
        scatterSegment(b, c, a[0], a[1], steps);
      });
  finish(op, kernel,
         {{HostArg::In, op.getExperts()},
          {HostArg::Out, op.getIndices()},
          {HostArg::Out, op.getOffsets()},
          {HostArg::Status, Value()}},
         {n}, threads);
  return success();
}
