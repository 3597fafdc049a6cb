//===- LinearBf16.cpp - bf16 linears and transposes of shard loops --------===//
//
// The bf16 `mxmoe.linear` ops that mxmoe-tile-mlp leaves in a static shard
// loop (a tiled MoE block's router, y = x W^T, and its input and weight
// gradients, g W and g^T x, whose operands are `linalg.transpose`s) become
// kernels, so that a launch program can replay the whole loop (the
// manifest's loop steps, docs/mxmoe-compile.md). Outside shard loops such
// ops stay on the host, where the Python ops run them with PyTorch.
//
// The linear kernel: y [M, N] = x [M, K] W [N, K]^T, bf16 operands, f32
// accumulation, one rounding to y's type (bf16 or f32) at the end (what
// torch.nn.functional.linear does in bf16 through cuBLAS). One CTA of 8
// warps per 128 x 128 tile of y; K in steps of 32 through two
// shared-memory stages (rows padded to 80 bytes: the eight row addresses
// of an ldmatrix phase fall in distinct 16-byte bank groups), each
// thread's 16-byte global loads of step s + 1 in flight while step s is
// multiplied; each warp owns a 64 x 32 sub-tile: per 16-wide K slice 4
// ldmatrix.x4 of A, 2 of B and 16 mma.sync.m16n8k16.row.col.f32.bf16
// (PTX ISA 9.7.14.5.8, fragments of mma.m16n8k16 with floating-point
// types; ldmatrix 9.7.14.5.15). mma.sync runs on every chip mxmoe
// targets (sm_90a, sm_100a, sm_103a), so one kernel serves all three:
// not Hopper's fastest instruction (wgmma), but a router's GEMMs are
// under 1 % of a MoE layer's FLOPs (E x H per token against the experts'
// 3 x k x H x I). K % 8 == 0 gives 16-byte loads, any other K eight
// predicated 2-byte loads per chunk; N must be even (pair stores); needs
// 256-thread CTAs.
//
// A bias ([N] bf16, gpt-oss's router) is added to the f32 sum before the
// rounding; its gradient, a `linalg.reduce` summing the output gradient
// over the shard's tokens into zeros, is the row-sum kernel: one CTA per
// 32 columns, 8 row groups summing in f32, their partials added in a fixed
// order (deterministic) and rounded once.
//
// The transpose kernel: a 2-D `linalg.transpose` (permutation [1, 0]) of
// a float tensor of at most 32 bits, through 32 x 32 shared-memory tiles
// (one CTA of 256 threads each, a padded row so the column reads hit 32
// banks), coalesced on both sides.
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"

#include "mxmoe/Dialect/MXMoE/Utils/ReduceSum.h"
#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;

namespace {

constexpr int64_t kTile = 128;    ///< rows and columns of y per CTA
constexpr int64_t kStepK = 32;    ///< K per shared-memory stage
constexpr int64_t kRowBytes = 80; ///< a stage row: 64 bytes + 16 pad
constexpr int64_t kThreads = 256; ///< 8 warps: 2 along M x 4 along N
constexpr int64_t kOperandBytes = kTile * kRowBytes; ///< one operand stage

/// The linear kernel's state in one thread.
struct LinearThread {
  KB &b;
  Value x, w, y;          ///< generic pointers
  Value bias;             ///< generic pointer to bias [N] (bf16), or null
  Value m, n, k;          ///< sizes (index)
  Value smem;             ///< shared-memory base address (index)
  Value tid, lane;        ///< thread in the CTA, lane in the warp
  Value row0, col0;       ///< the CTA's tile of y
  Value warpRow, warpCol; ///< the warp's 64 x 32 sub-tile in the tile
  Type outElem;
  bool vectorK; ///< K % 8 == 0: 16-byte loads

  Value stage(int64_t operand, Value s) const {
    return b.add(smem, b.mulc(b.add(b.idx(2 * operand), s), kOperandBytes));
  }
  /// This thread's two 16-byte chunks of `operand` (0: x, rows < m; 1: W,
  /// rows < n) for K step `step` (zeros outside the matrix).
  SmallVector<Value> load(int64_t operand, Value step) const;
  Value vectorChunk(Value base, Value r, Value kk, Value rowOk) const;
  Value scalarChunk(Value base, Value r, Value kk, Value rowOk) const;
  void store(int64_t operand, Value s, ArrayRef<Value> chunks) const;
  /// The MMAs of stage `s` on the 64 accumulators.
  SmallVector<Value> multiply(Value s, SmallVector<Value> acc) const;
  void epilogue(ArrayRef<Value> acc) const;
};

/// Chunk c = tid + 256 i of a stage: row c / 4, 8 elements at K (c % 4) * 8.
SmallVector<Value> LinearThread::load(int64_t operand, Value step) const {
  Value base = operand == 0 ? x : w, rows = operand == 0 ? m : n;
  Value first = operand == 0 ? row0 : col0;
  SmallVector<Value> chunks;
  for (int64_t i = 0; i < 2; ++i) {
    Value c = b.add(tid, b.idx(kThreads * i));
    Value r = b.add(first, b.div(c, 4));
    Value k0 = b.mulc(step, kStepK), q = b.mulc(b.rem(c, 4), 8);
    Value kk = b.add(k0, q);
    Value rowOk = b.ult(r, rows);
    chunks.push_back(vectorK ? vectorChunk(base, r, kk, rowOk)
                             : scalarChunk(base, r, kk, rowOk));
  }
  return chunks;
}

/// One 16-byte load (K % 8 == 0: a chunk is all inside K or all outside;
/// one outside the matrix reads chunk 0, then is replaced by zeros).
Value LinearThread::vectorChunk(Value base, Value r, Value kk,
                                Value rowOk) const {
  Type v4i32 = VectorType::get({4}, b.getI32Type());
  Value ok = b.andi(rowOk, b.ult(kk, k));
  Value chunk = b.div(b.add(b.mul(r, k), kk), 8), none = b.idx(0);
  Value at = b.select(ok, chunk, none);
  Value v = b.ldg(v4i32, base, at);
  Value zero = arith::ConstantOp::create(
      b, v4i32, DenseElementsAttr::get(cast<ShapedType>(v4i32), int32_t(0)));
  return b.select(ok, v, zero);
}

/// Eight 2-byte loads (any K: rows are only 2-byte aligned; the weight
/// gradient contracts over a shard's tokens), each predicated.
Value LinearThread::scalarChunk(Value base, Value r, Value kk,
                                Value rowOk) const {
  Type i16 = b.getI16Type();
  SmallVector<Value> elems;
  for (int64_t e = 0; e < 8; ++e) {
    Value ke = b.add(kk, b.idx(e));
    Value ok = b.andi(rowOk, b.ult(ke, k));
    Value elem = b.add(b.mul(r, k), ke), none = b.idx(0);
    Value at = b.select(ok, elem, none);
    Value v = b.ldg(i16, base, at);
    Value zero = arith::ConstantIntOp::create(b, i16, 0);
    elems.push_back(b.select(ok, v, zero));
  }
  Value v8 =
      vector::FromElementsOp::create(b, VectorType::get({8}, i16), elems);
  return vector::BitCastOp::create(b, VectorType::get({4}, b.getI32Type()), v8);
}

void LinearThread::store(int64_t operand, Value s,
                         ArrayRef<Value> chunks) const {
  Value st = stage(operand, s);
  for (int64_t i = 0; i < 2; ++i) {
    Value c = b.add(tid, b.idx(kThreads * i));
    Value rowOff = b.mulc(b.div(c, 4), kRowBytes);
    Value off = b.add(rowOff, b.mulc(b.rem(c, 4), 16));
    b.sts(chunks[i], b.add(st, off));
  }
}

/// ldmatrix.sync.aligned.m8n8.x4.shared.b16 at `addr`: four i32.
SmallVector<Value> ldmatrix4(KB &b, Value addr) {
  Type i32 = b.getI32Type();
  auto ty =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {i32, i32, i32, i32});
  Value r = NVVM::LdMatrixOp::create(
      b, ty, b.sptr(addr), 4, NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
      NVVM::LdStMatrixEltType::B16);
  SmallVector<Value> regs;
  for (int64_t i = 0; i < 4; ++i)
    regs.push_back(LLVM::ExtractValueOp::create(b, r, ArrayRef<int64_t>{i}));
  return regs;
}

SmallVector<Value> LinearThread::multiply(Value s,
                                          SmallVector<Value> acc) const {
  Type f32 = b.getF32Type();
  auto accTy =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  Value a0 = stage(0, s), b0 = stage(1, s);
  for (int64_t k16 = 0; k16 < kStepK / 16; ++k16) {
    // A (m16 x k16, row): lanes 0-15 give rows 0-15 at K 0, lanes 16-31
    // rows 0-15 at K 8 (registers a0..a3 of the fragment).
    SmallVector<SmallVector<Value>> afrag, bfrag;
    Value aRow = b.add(warpRow, b.rem(lane, 16));
    Value sliceK = b.idx(16 * k16);
    Value aK = b.add(sliceK, b.mulc(b.div(lane, 16), 8));
    for (int64_t mi = 0; mi < 4; ++mi) {
      Value r = b.add(aRow, b.idx(16 * mi));
      Value rowOff = b.mulc(r, kRowBytes);
      Value off = b.add(rowOff, b.mulc(aK, 2));
      afrag.push_back(ldmatrix4(b, b.add(a0, off)));
    }
    // B (k16 x n8, col: W's rows are y's columns): lanes 0-7 give columns
    // 0-7 at K 0, 8-15 columns 0-7 at K 8, 16-31 columns 8-15: registers
    // b0, b1 of two n8 tiles.
    Value laneCol = b.rem(lane, 8);
    Value bCol = b.add(warpCol, b.add(laneCol, b.mulc(b.div(lane, 16), 8)));
    Value bK = b.add(sliceK, b.mulc(b.rem(b.div(lane, 8), 2), 8));
    for (int64_t pj = 0; pj < 2; ++pj) {
      Value c = b.add(bCol, b.idx(16 * pj));
      Value rowOff = b.mulc(c, kRowBytes);
      Value off = b.add(rowOff, b.mulc(bK, 2));
      SmallVector<Value> r = ldmatrix4(b, b.add(b0, off));
      bfrag.push_back({r[0], r[1]});
      bfrag.push_back({r[2], r[3]});
    }
    for (int64_t mi = 0; mi < 4; ++mi)
      for (int64_t nj = 0; nj < 4; ++nj) {
        ArrayRef<Value> c(acc.data() + 4 * (4 * mi + nj), 4);
        Value d = NVVM::MmaOp::create(
            b, accTy, afrag[mi], bfrag[nj], c, {16, 8, 16}, std::nullopt,
            std::nullopt,
            std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                          NVVM::MMATypes::bf16},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                           NVVM::MMALayout::col});
        for (int64_t i = 0; i < 4; ++i)
          acc[4 * (4 * mi + nj) + i] =
              LLVM::ExtractValueOp::create(b, d, ArrayRef<int64_t>{i});
      }
  }
  return acc;
}

/// Accumulator (mi, nj) holds rows lane / 4 (+ 8) and columns (lane % 4) *
/// 2 + {0, 1} of its m16 x n8 tile: pairs stored with row and column
/// predication (n is even, so a pair is all in or all out).
void LinearThread::epilogue(ArrayRef<Value> acc) const {
  auto pairTy = VectorType::get({2}, outElem);
  Value rowBase = b.add(row0, warpRow);
  Value r0 = b.add(rowBase, b.div(lane, 4));
  Value colBase = b.add(col0, warpCol);
  Value c0 = b.add(colBase, b.mulc(b.rem(lane, 4), 2));
  for (int64_t mi = 0; mi < 4; ++mi)
    for (int64_t nj = 0; nj < 4; ++nj)
      for (int64_t h = 0; h < 2; ++h) {
        Value r = b.add(r0, b.idx(16 * mi + 8 * h));
        Value c = b.add(c0, b.idx(8 * nj));
        Value rowOk = b.ult(r, m);
        ifThen(b, b.andi(rowOk, b.ult(c, n)), [&] {
          SmallVector<Value> pair;
          Value bv;
          if (bias) // (c is even: one 4-byte load of bias[c], bias[c + 1])
            bv =
                b.ldg(VectorType::get({2}, b.getBF16Type()), bias, b.div(c, 2));
          for (int64_t i = 0; i < 2; ++i) {
            Value v = acc[4 * (4 * mi + nj) + 2 * h + i];
            if (bias) {
              Value bi = vector::ExtractOp::create(b, bv, i);
              v = arith::AddFOp::create(
                  b, v, arith::ExtFOp::create(b, b.getF32Type(), bi));
            }
            pair.push_back(
                outElem.isF32() ? v : arith::TruncFOp::create(b, outElem, v));
          }
          Value vec = vector::FromElementsOp::create(b, pairTy, pair);
          b.stg(vec, y, b.div(b.add(b.mul(r, n), c), 2));
        });
      }
}

/// The kernel body of global thread `t`.
void linearBody(KB &b, ValueRange args, Value bias, ValueRange sz, Value t,
                Type outElem, bool vectorK) {
  Value smem = memref::ExtractAlignedPointerAsIndexOp::create(
      b, addSharedBuffer(b, 4 * kOperandBytes, b.getI8Type()));
  Value tid = b.rem(t, kThreads), warp = b.div(tid, 32);
  Value tile = b.div(t, kThreads), tilesN = b.ceilDivc(sz[1], kTile);
  Value tileM = b.divv(tile, tilesN);
  Value tileN = b.sub(tile, b.mul(tileM, tilesN));
  LinearThread th{b,
                  args[0],
                  args[1],
                  args[2],
                  bias,
                  sz[0],
                  sz[1],
                  sz[2],
                  smem,
                  tid,
                  b.rem(tid, 32),
                  b.mulc(tileM, kTile),
                  b.mulc(tileN, kTile),
                  b.mulc(b.rem(warp, 2), 64),
                  b.mulc(b.div(warp, 2), 32),
                  outElem,
                  vectorK};
  Value steps = b.ceilDivc(th.k, kStepK);
  Value zero = b.idx(0);
  th.store(0, zero, th.load(0, zero));
  th.store(1, zero, th.load(1, zero));
  gpu::BarrierOp::create(b);
  SmallVector<Value> acc0(64, b.f32(0.0f));
  auto loop = scf::ForOp::create(b, zero, steps, b.idx(1), acc0);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value step = loop.getInductionVar();
    Value s = b.rem(step, 2), next = b.add(step, b.idx(1));
    // (Past the last step every chunk is outside K: zeros, unused.)
    SmallVector<Value> ax = th.load(0, next), wx = th.load(1, next);
    SmallVector<Value> acc =
        th.multiply(s, SmallVector<Value>(loop.getRegionIterArgs()));
    Value other = b.sub(b.idx(1), s);
    th.store(0, other, ax);
    th.store(1, other, wx);
    gpu::BarrierOp::create(b);
    scf::YieldOp::create(b, acc);
  }
  th.epilogue(SmallVector<Value>(loop.getResults()));
}

} // namespace

bool KernelGen::isShardLoopBf16Linear(Operation *op) {
  auto lin = dyn_cast<LinearOp>(op);
  if (!lin || lin.getPrecision() != Precision::bf16)
    return false;
  if (Value bias = lin.getBias()) // [N] bf16, added before the rounding
    if (!cast<RankedTensorType>(bias.getType()).getElementType().isBF16())
      return false;
  auto x = cast<RankedTensorType>(lin.getInput().getType());
  auto w = cast<RankedTensorType>(lin.getWeight().getType());
  auto y = cast<RankedTensorType>(lin.getResult().getType());
  if (x.getRank() != 2 || !x.hasStaticShape() || !w.hasStaticShape() ||
      !y.hasStaticShape() || x.getEncoding() || w.getEncoding() ||
      y.getEncoding() || !x.getElementType().isBF16() ||
      !w.getElementType().isBF16() ||
      !(y.getElementType().isBF16() || y.getElementType().isF32()))
    return false;
  // Whole pairs of y (4- or 8-byte aligned stores).
  if (w.getDimSize(0) % 2 != 0)
    return false;
  return isInRowShardLoop(op);
}

LogicalResult KernelGen::genBf16Linear(Operation *op) {
  auto lin = cast<LinearOp>(op);
  if (blockSize != kThreads)
    return op->emitOpError("the bf16 linear kernel needs block-size=")
           << kThreads << ", got " << blockSize;
  auto x = cast<RankedTensorType>(lin.getInput().getType());
  auto w = cast<RankedTensorType>(lin.getWeight().getType());
  auto y = cast<RankedTensorType>(lin.getResult().getType());
  int64_t m = x.getDimSize(0), k = x.getDimSize(1), n = w.getDimSize(0);
  Value bias = lin.getBias();
  RuntimeShapeSpec spec{
      {x.getElementType(), w.getElementType(), y.getElementType()},
      {"m", "n", "k"}};
  if (bias) // (after y: the three pointers keep their places)
    spec.views.push_back(
        cast<RankedTensorType>(bias.getType()).getElementType());
  Type outElem = y.getElementType();
  auto workOf = [](KB &b, ValueRange sz) {
    Value tilesM = b.ceilDivc(sz[0], kTile);
    Value tiles = b.mul(tilesM, b.ceilDivc(sz[1], kTile));
    return b.mulc(tiles, kThreads);
  };
  auto kernel = createKernel(
      module, name("linear_bf16", op), spec, workOf, blockSize, nullptr,
      [&](KB &b, ValueRange, ValueRange sz, Value t, GroupTable &) {
        auto fn = b.getInsertionBlock()
                      ->getParent()
                      ->getParentOfType<gpu::GPUFuncOp>();
        Value biasPtr = bias ? fn.getArgument(3) : Value();
        linearBody(b, fn.getArguments().take_front(3), biasPtr, sz, t, outElem,
                   k % 8 == 0);
      });
  SmallVector<HostArg> args{{HostArg::In, lin.getInput()},
                            {HostArg::In, lin.getWeight()},
                            {HostArg::Out, lin.getResult()}};
  if (bias)
    args.push_back({HostArg::In, bias});
  int64_t tiles = ::mxmoe::ceilDiv(m, kTile) * ::mxmoe::ceilDiv(n, kTile);
  finish(op, kernel, args, {m, n, k}, tiles * kThreads);
  return success();
}

bool KernelGen::isShardLoopTranspose(Operation *op) {
  auto tr = dyn_cast<linalg::TransposeOp>(op);
  if (!tr || tr.getPermutation() != ArrayRef<int64_t>{1, 0} ||
      tr->getNumResults() != 1)
    return false;
  auto in = cast<ShapedType>(tr.getInput().getType());
  auto rt = dyn_cast<RankedTensorType>(tr->getResult(0).getType());
  if (!rt || !in.hasStaticShape() || rt.getEncoding() ||
      !isa<FloatType>(in.getElementType()) ||
      in.getElementType().getIntOrFloatBitWidth() > 32)
    return false;
  // In a shard loop, or read only there (a weight's transpose before it).
  if (isInRowShardLoop(op))
    return true;
  return !op->use_empty() && llvm::all_of(op->getUsers(), [](Operation *u) {
    return isInRowShardLoop(u);
  });
}

LogicalResult KernelGen::genTranspose(Operation *op) {
  auto tr = cast<linalg::TransposeOp>(op);
  auto in = cast<RankedTensorType>(tr.getInput().getType());
  Type elem = in.getElementType();
  int64_t rows = in.getDimSize(0), cols = in.getDimSize(1);
  constexpr int64_t kT = 32, kPad = kT + 1;
  if (blockSize != kThreads)
    return op->emitOpError("the transpose kernel needs block-size=")
           << kThreads << ", got " << blockSize;
  RuntimeShapeSpec spec{{elem, elem}, {"rows", "cols"}};
  auto tilesOf = [](KB &b, ValueRange sz) {
    Value tilesR = b.ceilDivc(sz[0], kT);
    return b.mul(tilesR, b.ceilDivc(sz[1], kT));
  };
  auto kernel = createKernel(
      module, name("transpose", op), spec,
      [&](KB &b, ValueRange sz) { return b.mulc(tilesOf(b, sz), kThreads); },
      blockSize, nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value t, GroupTable &) {
        Value tile = addSharedBuffer(b, kT * kPad, elem);
        Value tid = b.rem(t, kThreads), tileId = b.div(t, kThreads);
        Value tilesC = b.ceilDivc(sz[1], kT);
        Value tr0 = b.mulc(b.divv(tileId, tilesC), kT);
        Value tc0 =
            b.mulc(b.sub(tileId, b.mul(b.divv(tileId, tilesC), tilesC)), kT);
        Value tx = b.rem(tid, kT), ty = b.div(tid, kT);
        for (int64_t j = 0; j < kT; j += kThreads / kT) {
          Value r = b.add(tr0, b.add(ty, b.idx(j))), c = b.add(tc0, tx);
          Value rowOk = b.ult(r, sz[0]);
          ifThen(b, b.andi(rowOk, b.ult(c, sz[1])), [&] {
            Value v = b.load(a[0], b.add(b.mul(r, sz[1]), c));
            b.store(v, tile, b.add(b.mulc(b.add(ty, b.idx(j)), kPad), tx));
          });
        }
        gpu::BarrierOp::create(b);
        // Output row c (an input column), column r (an input row).
        for (int64_t j = 0; j < kT; j += kThreads / kT) {
          Value c = b.add(tc0, b.add(ty, b.idx(j))), r = b.add(tr0, tx);
          Value rowOk = b.ult(r, sz[0]);
          ifThen(b, b.andi(rowOk, b.ult(c, sz[1])), [&] {
            Value txRow = b.mulc(tx, kPad);
            Value v = b.load(tile, b.add(txRow, b.add(ty, b.idx(j))));
            b.store(v, a[1], b.add(b.mul(c, sz[0]), r));
          });
        }
      });
  SmallVector<HostArg> args{{HostArg::In, tr.getInput()},
                            {HostArg::Out, tr->getResult(0)}};
  int64_t tiles = ::mxmoe::ceilDiv(rows, kT) * ::mxmoe::ceilDiv(cols, kT);
  finish(op, kernel, args, {rows, cols}, tiles * kThreads);
  return success();
}

bool KernelGen::isShardLoopRowSum(Operation *op) {
  auto red = dyn_cast<linalg::ReduceOp>(op);
  if (!red || !isSumOverDim0(red) || red.getNumDpsInits() != 1 ||
      red->getNumResults() != 1)
    return false;
  auto in = dyn_cast<RankedTensorType>(red.getInputs()[0].getType());
  if (!in || in.getRank() != 2 || !in.hasStaticShape() || in.getEncoding() ||
      !isa<FloatType>(in.getElementType()) ||
      in.getElementType().getIntOrFloatBitWidth() > 32)
    return false;
  // The init is zeros.
  auto fill = red.getInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.value(), m_AnyZeroFloat()))
    return false;
  return isInRowShardLoop(op);
}

LogicalResult KernelGen::genRowSum(Operation *op) {
  auto red = cast<linalg::ReduceOp>(op);
  auto in = cast<RankedTensorType>(red.getInputs()[0].getType());
  Type elem = in.getElementType(), f32 = Float32Type::get(op->getContext());
  constexpr int64_t kCols = 32, kGroups = kThreads / kCols;
  if (blockSize != kThreads)
    return op->emitOpError("the row-sum kernel needs block-size=")
           << kThreads << ", got " << blockSize;
  RuntimeShapeSpec spec{{elem, elem}, {"rows", "cols"}};
  auto kernel = createKernel(
      module, name("sum_rows", op), spec,
      [&](KB &b, ValueRange sz) {
        return b.mulc(b.ceilDivc(sz[1], kCols), kThreads);
      },
      blockSize, nullptr,
      [&](KB &b, ValueRange a, ValueRange sz, Value t, GroupTable &) {
        // Thread (g, j) of CTA q sums rows g, g + 8, ... of column 32 q + j
        // in f32; the 8 partials are added in order (deterministic) and
        // rounded once.
        Value part = addSharedBuffer(b, kThreads, f32);
        Value tid = b.rem(t, kThreads), g = b.div(tid, kCols);
        Value j = b.rem(tid, kCols);
        Value col = b.add(b.mulc(b.div(t, kThreads), kCols), j);
        Value colOk = b.ult(col, sz[1]);
        Value stride = b.idx(kGroups), zero0 = b.f32(0.0f);
        auto loop = scf::ForOp::create(b, g, sz[0], stride, ValueRange{zero0});
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(loop.getBody());
          Value r = loop.getInductionVar();
          Value elemAt = b.add(b.mul(r, sz[1]), col), none = b.idx(0);
          Value at = b.select(colOk, elemAt, none);
          Value v = b.load(a[0], at);
          Value x = elem == f32 ? v : arith::ExtFOp::create(b, f32, v);
          Value zero = b.f32(0.0f);
          Value sum = arith::AddFOp::create(b, loop.getRegionIterArgs()[0],
                                            b.select(colOk, x, zero));
          scf::YieldOp::create(b, sum);
        }
        b.store(loop.getResult(0), part, tid);
        gpu::BarrierOp::create(b);
        ifThen(b, b.andi(b.eq(g, b.idx(0)), colOk), [&] {
          Value s = b.load(part, j);
          for (int64_t i = 1; i < kGroups; ++i)
            s = arith::AddFOp::create(b, s,
                                      b.load(part, b.add(j, b.idx(kCols * i))));
          b.store(elem == f32 ? s : arith::TruncFOp::create(b, elem, s), a[1],
                  col);
        });
      });
  SmallVector<HostArg> args{{HostArg::In, red.getInputs()[0]},
                            {HostArg::Out, red->getResult(0)}};
  int64_t rows = in.getDimSize(0), cols = in.getDimSize(1);
  finish(op, kernel, args, {rows, cols},
         ::mxmoe::ceilDiv(cols, kCols) * kThreads);
  return success();
}
