//===- Routing.cpp - the routing ops to SIMT kernels ----------------------===//
//
// mxmoe.gather_rows, invert_permutation, combine_rows and
// combine_scores_grad (MXMoEOps.td), each one kernel with run-time sizes:
//  * gather_rows: one thread per 16-byte run of a routed row (row
//    indices[r] / top_k of the source, times its score when scaled);
//  * invert_permutation: one thread per routed row;
//  * combine_rows: one thread per 16-byte run of a token row, summing its
//    top_k routed rows through the inverse in slot order (f32 FMAs);
//  * combine_scores_grad: one warp per (token, slot), a dot product over
//    the row reduced by a fixed butterfly (deterministic).
// Rows of H elements are read in runs of 16 bytes, or of fewer elements
// when H is not a multiple of 16 bytes (chosen from the op's static H).
//
// Status word (one i32, -1 before the run): block 0's thread 0 raises it
// to 0, a thread that finds a routing index out of range (or, in the
// combines, a slot whose inverse does not map back) raises it to 3 by an
// atomic max; wrong sizes give 2 before anything is written
// (mxmoe/KernelStatus.h).
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"

#include "mxmoe/KernelStatus.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;

namespace {

/// Elements per access of a row of `h` elements of `elem`: 16 bytes, or
/// the largest power of two dividing h below that.
int64_t runLength(Type elem, int64_t h) {
  int64_t n = 16 / (elem.getIntOrFloatBitWidth() / 8);
  while (n > 1 && h % n != 0)
    n /= 2;
  return n;
}

/// Raises the status word to `code` (atomicMaxStatus).
void raiseStatus(KB &b, Value status, int32_t code) {
  Value v = b.i32(code);
  atomicMaxStatus(b, status, v);
}

/// The kernel's first thread marks the run (status 0), or status 2 when
/// the sizes are wrong (`sizesOk` false).
void markRun(KB &b, Value t, Value status, Value sizesOk) {
  ifThen(b, b.eq(t, b.idx(0)), [&] {
    raiseStatus(b, status, ::mxmoe::kKernelStatusDone);
    ifThen(b, b.lnot(sizesOk), [&] {
      raiseStatus(b, status, ::mxmoe::kKernelStatusSizesRejected);
    });
  });
}

/// `n` elements of `mem` at `base` as f32.
SmallVector<Value> loadRun(KB &b, Value mem, Type elem, Value base, int64_t n) {
  auto vt = VectorType::get({n}, elem);
  int64_t bytes = elem.getIntOrFloatBitWidth() / 8;
  Value v = vector::LoadOp::create(b, vt, mem, ValueRange{base}, false,
                                   llvm::MaybeAlign(n * bytes));
  SmallVector<Value> xs;
  Type f32 = b.getF32Type();
  for (int64_t i = 0; i < n; ++i) {
    Value x = vector::ExtractOp::create(b, v, i);
    xs.push_back(elem == f32 ? x : arith::ExtFOp::create(b, f32, x));
  }
  return xs;
}

/// Stores f32 `xs` rounded to `elem` at `base`, or zeros where `ok` is
/// false.
void storeRun(KB &b, ArrayRef<Value> xs, Value ok, Value mem, Type elem,
              Value base) {
  SmallVector<Value> out;
  for (Value x : xs) {
    Value kept = b.select(ok, x, b.f32(0.0f));
    out.push_back(elem == b.getF32Type()
                      ? kept
                      : arith::TruncFOp::create(b, elem, kept).getResult());
  }
  auto vt = VectorType::get({static_cast<int64_t>(xs.size())}, elem);
  int64_t bytes = elem.getIntOrFloatBitWidth() / 8;
  Value v = vector::FromElementsOp::create(b, vt, out);
  vector::StoreOp::create(b, v, mem, ValueRange{base}, false,
                          llvm::MaybeAlign(xs.size() * bytes));
}

/// Whether rows of `width` elements split into runs of `n`.
Value wholeRuns(KB &b, Value width, int64_t n) {
  Value rest = b.rem(width, n);
  return b.eq(rest, b.idx(0));
}

Value loadIndex(KB &b, Value mem, Value i) { return b.fromI32(b.load(mem, i)); }

/// fma(a, x, acc) in f32.
Value fma(KB &b, Value a, Value x, Value acc) {
  return LLVM::FMAOp::create(b, a, x, acc);
}

/// The routed row of (token, slot) flat index `i`: inverse[i] where it
/// maps back (r < M and indices[r] == i); `ok` says whether it does, `row`
/// is 0 where it does not (a safe address).
std::pair<Value, Value> routedRow(KB &b, Value indices, Value inverse, Value i,
                                  Value m) {
  Value r = loadIndex(b, inverse, i);
  Value inRange = b.ult(r, m);
  Value safe = b.select(inRange, r, b.idx(0));
  Value back = b.eq(loadIndex(b, indices, safe), i);
  Value ok = b.andi(inRange, back);
  return {ok, b.select(ok, safe, b.idx(0))};
}

/// scf.for over [0, n) carrying `init`; `body(j, carried)` returns the
/// next values.
SmallVector<Value>
loop(KB &b, Value n, ValueRange init,
     function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  Value zero = b.idx(0);
  Value one = b.idx(1);
  auto forOp = scf::ForOp::create(
      b, b.getLoc(), zero, n, one, init,
      [&](OpBuilder &ob, Location loc, Value j, ValueRange carried) {
        // `ob` is `b`, its insertion point in the loop body: `body` builds
        // through `b`.
        scf::YieldOp::create(ob, loc, body(j, carried));
      });
  return SmallVector<Value>(forOp.getResults());
}

/// The body of a kernel with one thread per run of `n` elements of each
/// of sz[rows] rows of sz[width] elements: the width is checked (status
/// 2), the run marked (status 0), and `body(row, first column)` runs.
using RowRunBody =
    function_ref<void(KB &, ValueRange a, ValueRange sz, Value row, Value col)>;
gpu::GPUFuncOp createRowRunKernel(gpu::GPUModuleOp module, StringRef name,
                                  const RuntimeShapeSpec &spec, unsigned rows,
                                  unsigned width, unsigned status, int64_t n,
                                  int64_t blockSize, RowRunBody body) {
  auto workOf = [&](KB &b, ValueRange sz) {
    return b.mul(sz[rows], b.div(sz[width], n));
  };
  return createKernel(
      module, name, spec, workOf, blockSize, nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value th, GroupTable &) {
        Value sizesOk = wholeRuns(b, sz[width], n);
        markRun(b, th, a[status], sizesOk);
        ifThen(b, sizesOk, [&] {
          Value row, run;
          std::tie(row, run) = b.divRem(th, b.div(sz[width], n));
          body(b, a, sz, row, b.mulc(run, n));
        });
      });
}

} // namespace

LogicalResult KernelGen::genGatherRows(GatherRowsOp op) {
  RankedTensorType src = op.getSource().getType();
  Type elem = src.getElementType(), i32 = IntegerType::get(op.getContext(), 32);
  Value scores = op.getScores();
  Type sElem = scores
                   ? cast<RankedTensorType>(scores.getType()).getElementType()
                   : Type();
  int64_t m = op.getResult().getType().getDimSize(0), t = src.getDimSize(0),
          h = src.getDimSize(1), k = op.getTopK();
  int64_t n = runLength(elem, h);
  enum { sRows, sWidth, sTokens, sTopK };
  RuntimeShapeSpec spec{{elem, i32}, {"rows", "width", "tokens", "top_k"}};
  if (scores)
    spec.views.push_back(sElem);
  spec.views.append({elem, i32});
  unsigned aOut = scores ? 3 : 2, aStatus = aOut + 1;
  auto kernel = createRowRunKernel(
      module, name("gather_rows", op), spec, sRows, sWidth, aStatus, n,
      blockSize, [&](KB &b, ValueRange a, ValueRange sz, Value r, Value c) {
        Value idx = loadIndex(b, a[1], r);
        Value ok = b.ult(idx, b.mul(sz[sTokens], sz[sTopK]));
        Value safe = b.select(ok, idx, b.idx(0));
        Value tok = b.divRem32(safe, sz[sTopK]).first;
        SmallVector<Value> xs =
            loadRun(b, a[0], elem, b.add(b.mul(tok, sz[sWidth]), c), n);
        if (scores) {
          Value s = b.load(a[2], safe);
          if (sElem != b.getF32Type())
            s = arith::ExtFOp::create(b, b.getF32Type(), s);
          for (Value &x : xs)
            x = arith::MulFOp::create(b, s, x);
        }
        storeRun(b, xs, ok, a[aOut], elem, b.add(b.mul(r, sz[sWidth]), c));
        ifThen(b, b.lnot(ok), [&] {
          raiseStatus(b, a[aStatus], ::mxmoe::kKernelStatusIndicesRejected);
        });
      });
  SmallVector<HostArg> args{{HostArg::In, op.getSource()},
                            {HostArg::In, op.getIndices()}};
  if (scores)
    args.push_back({HostArg::In, scores});
  args.append({{HostArg::Out, op.getResult()}, {HostArg::Status, Value()}});
  finish(op, kernel, args, {m, h, t, k}, m * (h / n));
  return success();
}

LogicalResult KernelGen::genInvertPermutation(InvertPermutationOp op) {
  Type i32 = IntegerType::get(op.getContext(), 32);
  int64_t m = op.getIndices().getType().getDimSize(0);
  RuntimeShapeSpec spec{{i32, i32, i32}, {"rows"}};
  auto workOf = [](KB &, ValueRange sz) { return sz[0]; };
  auto kernel = createKernel(
      module, name("invert_permutation", op), spec, workOf, blockSize, nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value th, GroupTable &) {
        markRun(b, th, a[2], b.i1(true));
        Value idx = loadIndex(b, a[0], th);
        ifThenElse(
            b, b.ult(idx, sz[0]), [&] { b.store(b.toI32(th), a[1], idx); },
            [&] {
              raiseStatus(b, a[2], ::mxmoe::kKernelStatusIndicesRejected);
            });
      });
  finish(op, kernel,
         {{HostArg::In, op.getIndices()},
          {HostArg::Out, op.getResult()},
          {HostArg::Status, Value()}},
         {m}, m);
  return success();
}

LogicalResult KernelGen::genCombineRows(CombineRowsOp op) {
  RankedTensorType rows = op.getRows().getType();
  Type elem = rows.getElementType(),
       i32 = IntegerType::get(op.getContext(), 32);
  Value scores = op.getScores();
  Type sElem = scores
                   ? cast<RankedTensorType>(scores.getType()).getElementType()
                   : Type();
  int64_t t = op.getResult().getType().getDimSize(0), h = rows.getDimSize(1),
          k = op.getTopK();
  int64_t n = runLength(elem, h);
  enum { sTokens, sWidth, sTopK };
  RuntimeShapeSpec spec{{elem, i32, i32}, {"tokens", "width", "top_k"}};
  if (scores)
    spec.views.push_back(sElem);
  spec.views.append({elem, i32});
  unsigned aOut = scores ? 4 : 3, aStatus = aOut + 1;
  auto kernel = createRowRunKernel(
      module, name("combine_rows", op), spec, sTokens, sWidth, aStatus, n,
      blockSize, [&](KB &b, ValueRange a, ValueRange sz, Value tok, Value c) {
        Value m = b.mul(sz[sTokens], sz[sTopK]);
        SmallVector<Value> init(n, b.f32(0.0f));
        init.push_back(b.i1(true));
        SmallVector<Value> acc =
            loop(b, sz[sTopK], init, [&](Value j, ValueRange carried) {
              Value i = b.add(b.mul(tok, sz[sTopK]), j);
              auto [ok, r] = routedRow(b, a[1], a[2], i, m);
              SmallVector<Value> xs =
                  loadRun(b, a[0], elem, b.add(b.mul(r, sz[sWidth]), c), n);
              Value s = b.f32(1.0f);
              if (scores) {
                s = b.load(a[3], i);
                if (sElem != b.getF32Type())
                  s = arith::ExtFOp::create(b, b.getF32Type(), s);
              }
              SmallVector<Value> next;
              for (int64_t e = 0; e < n; ++e)
                next.push_back(fma(b, s, xs[e], carried[e]));
              next.push_back(b.andi(carried[n], ok));
              return next;
            });
        Value allOk = acc.pop_back_val();
        storeRun(b, acc, allOk, a[aOut], elem,
                 b.add(b.mul(tok, sz[sWidth]), c));
        ifThen(b, b.lnot(allOk), [&] {
          raiseStatus(b, a[aStatus], ::mxmoe::kKernelStatusIndicesRejected);
        });
      });
  SmallVector<HostArg> args{{HostArg::In, op.getRows()},
                            {HostArg::In, op.getIndices()},
                            {HostArg::In, op.getInverse()}};
  if (scores)
    args.push_back({HostArg::In, scores});
  args.append({{HostArg::Out, op.getResult()}, {HostArg::Status, Value()}});
  finish(op, kernel, args, {t, h, k}, t * (h / n));
  return success();
}

LogicalResult KernelGen::genCombineScoresGrad(CombineScoresGradOp op) {
  RankedTensorType grad = op.getGrad().getType(), rows = op.getRows().getType();
  Type gElem = grad.getElementType(), rElem = rows.getElementType();
  Type out = op.getResult().getType().getElementType();
  Type i32 = IntegerType::get(op.getContext(), 32);
  int64_t t = grad.getDimSize(0), h = grad.getDimSize(1), k = op.getTopK();
  int64_t n = std::min(runLength(gElem, h), runLength(rElem, h));
  enum { sTokens, sWidth, sTopK };
  RuntimeShapeSpec spec{{gElem, rElem, i32, i32, out, i32},
                        {"tokens", "width", "top_k"}};
  // One warp per (token, slot): whole warps, so every lane reaches the
  // shuffles.
  auto workOf = [&](KB &b, ValueRange sz) {
    return b.mulc(b.mul(sz[sTokens], sz[sTopK]), 32);
  };
  auto kernel = createKernel(
      module, name("combine_scores_grad", op), spec, workOf, blockSize, nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value th, GroupTable &) {
        Value sizesOk = wholeRuns(b, sz[sWidth], n);
        markRun(b, th, a[5], sizesOk);
        ifThen(b, sizesOk, [&] {
          Value i = b.div(th, 32), lane = b.rem(th, 32);
          Value m = b.mul(sz[sTokens], sz[sTopK]);
          Value ok, r;
          std::tie(ok, r) = routedRow(b, a[2], a[3], i, m);
          Value tok = b.divRem32(i, sz[sTopK]).first;
          Value runs = b.div(sz[sWidth], n);
          // Runs lane, lane + 32, ... of the row: ceil((runs - lane) / 32)
          // of them (0 past the row).
          Value steps = b.div(b.sub(b.add(runs, b.idx(31)), lane), 32);
          SmallVector<Value> sum =
              loop(b, steps, ValueRange{b.f32(0.0f)},
                   [&](Value s, ValueRange carried) {
                     Value c = b.mulc(b.add(b.mulc(s, 32), lane), n);
                     SmallVector<Value> g = loadRun(
                         b, a[0], gElem, b.add(b.mul(tok, sz[sWidth]), c), n);
                     SmallVector<Value> y = loadRun(
                         b, a[1], rElem, b.add(b.mul(r, sz[sWidth]), c), n);
                     Value acc = carried[0];
                     for (int64_t e = 0; e < n; ++e)
                       acc = fma(b, g[e], y[e], acc);
                     return SmallVector<Value>{acc};
                   });
          Value v = sum[0];
          for (int32_t off = 16; off >= 1; off /= 2)
            v = arith::AddFOp::create(
                b, v,
                gpu::ShuffleOp::create(b, v, off, 32, gpu::ShuffleMode::XOR)
                    .getShuffleResult());
          ifThen(b, b.eq(lane, b.idx(0)), [&] {
            Value kept = b.select(ok, v, b.f32(0.0f));
            if (out != b.getF32Type())
              kept = arith::TruncFOp::create(b, out, kept);
            b.store(kept, a[4], i);
            ifThen(b, b.lnot(ok), [&] {
              raiseStatus(b, a[5], ::mxmoe::kKernelStatusIndicesRejected);
            });
          });
        });
      });
  finish(op, kernel,
         {{HostArg::In, op.getGrad()},
          {HostArg::In, op.getRows()},
          {HostArg::In, op.getIndices()},
          {HostArg::In, op.getInverse()},
          {HostArg::Out, op.getResult()},
          {HostArg::Status, Value()}},
         {t, h, k}, t * k * 32);
  return success();
}
