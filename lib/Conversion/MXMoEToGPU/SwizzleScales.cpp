//===- SwizzleScales.cpp - mxmoe.swizzle_scales to a SIMT kernel ---------===//
//
// Row-major <-> blocked 128x4 scale layouts (plain, per expert, M-grouped
// or K-grouped by token offsets): one thread per destination scale byte;
// padding bytes are written 0. Layouts: torchao to_blocked and the
// M-groups / K-groups / per-expert rearrangements of
// torchao/prototype/moe_training/kernels/mxfp8/quant.py.
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"

#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;
using ::mxmoe::kMXBlockSize;

namespace {

/// Thread t of a swizzle kernel: destination scale byte t.
struct SwizzleThread {
  KB &b;
  ValueRange a; ///< source, (offsets), destination, (status)
  Value t;
  GroupTable &tab;
  Type e8m0;
  bool toBlocked;
  int64_t rows, cols; ///< of the row-major matrix
  int64_t rp, cp;     ///< of the blocked matrix (padded)
  unsigned aDst;
  Value zero; ///< e8m0 0

  /// Stores source byte srcIdx() when `real` holds, else 0.
  void copyOrZero(Value real, function_ref<Value()> srcIdx);
  /// Without offsets (one matrix, or one per expert).
  void plain();
  /// M-grouped: token groups of rows, padded to 128-row tiles.
  void mGrouped(Value gLast);
  /// K-grouped: token groups along the columns (k_g = ceil(m_g / 32)
  /// scale columns, padded to 4).
  void kGrouped(Value gLast);
};

void SwizzleThread::copyOrZero(Value real, function_ref<Value()> srcIdx) {
  auto ifOp = scf::IfOp::create(b, TypeRange{e8m0}, real, true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    scf::YieldOp::create(b, ValueRange{b.load(a[0], srcIdx())});
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, ValueRange{zero});
  }
  b.store(ifOp.getResult(0), a[aDst], t);
}

void SwizzleThread::plain() {
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
    b.store(b.load(a[0], b.add(batchBase, b.blockedOffset(r, c, cp))), a[aDst],
            t);
  }
}

void SwizzleThread::mGrouped(Value gLast) {
  int64_t G = tab.numGroups;
  if (toBlocked) {
    auto prc = b.blockedCoord(t, b.idx(cp));
    Value pr = prc.first, c = prc.second;
    Value tile = b.div(pr, 128);
    Value inGroups = b.ult(tile, b.load(tab.starts[0], b.idx(G)));
    Value g = b.minui(largestStartLE(b, tab, 0, tile), gLast);
    Value local = b.sub(pr, b.mulc(b.load(tab.starts[0], g), 128));
    Value begin = tab.groupBegin(b, g);
    Value size = b.sub(b.load(tab.ends, g), begin);
    Value rowOk = b.ult(local, size);
    Value real = b.andi(inGroups, b.andi(rowOk, b.ult(c, b.idx(cols))));
    copyOrZero(real,
               [&] { return b.add(b.mulc(b.add(begin, local), cols), c); });
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
}

void SwizzleThread::kGrouped(Value gLast) {
  int64_t G = tab.numGroups;
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
}

} // namespace

LogicalResult KernelGen::genSwizzle(SwizzleScalesOp op) {
  RankedTensorType src = op.getSource().getType();
  RankedTensorType dst = op.getResult().getType();
  bool toBlocked = isBlockedScales(dst);
  RankedTensorType rowMajor = toBlocked ? src : dst;
  RankedTensorType blockedT = toBlocked ? dst : src;
  ArrayRef<int64_t> s = rowMajor.getShape();
  int64_t rows = s[s.size() - 2], cols = s.back();
  int64_t rp = blockedT.getShape()[blockedT.getRank() - 2];
  int64_t cp = blockedT.getShape().back();
  int64_t work =
      toBlocked ? blockedT.getNumElements() : rowMajor.getNumElements();
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
      spec = GroupSpec{1,
                       3,
                       G,
                       std::numeric_limits<int32_t>::max(),
                       {{kMXBlockSize, 1, cols}, {kMXBlockSize, 4, cp}}};
    else
      spec = GroupSpec{1, 3, G, rows, {{128, 1, rp / 128}}};
  }
  unsigned aDst = offsets ? 2 : 1;

  auto kernel =
      createKernel(module, name("swizzle_scales", op), args, work, blockSize,
                   spec ? &*spec : nullptr,
                   [&](KB &b, ValueRange a, Value t, GroupTable &tab) {
                     Value zero = b.bitcast(e8m0, b.i8(0));
                     SwizzleThread th{b,    a,    t,  tab, e8m0, toBlocked,
                                      rows, cols, rp, cp,  aDst, zero};
                     if (!offsets) {
                       th.plain();
                       return;
                     }
                     Value gLast = b.idx(tab.numGroups - 1);
                     if (!kGroups)
                       th.mGrouped(gLast);
                     else
                       th.kGrouped(gLast);
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
