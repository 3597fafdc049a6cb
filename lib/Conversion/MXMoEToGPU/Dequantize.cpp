//===- Dequantize.cpp - mxmoe.dequantize to a SIMT kernel -----------------===//
//
// One thread per 32-element block (per output element with group offsets:
// tokens past the last offset dequantize to 0). Scales: row-major, blocked
// or compact (one byte per scale tile, mxmoe.quantize's scale_tile). Math:
// OCP MX v1.0 section 5 (torchao mx_tensor.py); layouts: torchao to_blocked.
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"

#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;
using ::mxmoe::kMXBlockSize;
using ::mxmoe::MXElementKind;

LogicalResult KernelGen::genDequantize(DequantizeOp op) {
  RankedTensorType out = op.getResult().getType();
  RankedTensorType data = op.getData().getType();
  RankedTensorType scales = op.getScales().getType();
  auto shape = getMXKernelShape(op, out, data, op.getAxis());
  if (failed(shape))
    return failure();
  MXElementKind kind = shape->first;
  MXGeometry geo = shape->second;
  bool blocked = isBlockedScales(scales);
  // Compact scales: one byte per tile [tr, tc] (tc / 32 blocks).
  ScaleLayoutAttr layout = getScaleLayout(scales);
  bool compact = layout && layout.isCompact();
  int64_t tr = compact ? layout.getTile()[0] : 1;
  int64_t tb = compact ? layout.getTile()[1] / kMXBlockSize : 1;
  Type outElem = out.getElementType();
  Type f32 = Float32Type::get(op.getContext());
  int64_t cs = geo.scaleCols();
  int64_t sRows = scales.getShape()[scales.getRank() - 2];
  int64_t sCols = scales.getShape().back();
  Value offsets = op.getOffsets();
  bool jagged = offsets && op.getAxis() == 0;
  auto narrow = [&](KB &b, Value x) -> Value {
    return outElem == f32 ? x : arith::TruncFOp::create(b, outElem, x);
  };
  auto scaleAt = [&](KB &b, Value smem, Value idx) {
    Value s8 = b.bitcast(b.getI8Type(), b.load(smem, idx));
    return decodeScale(b, arith::ExtUIOp::create(b, b.getI32Type(), s8));
  };

  if (!offsets) {
    int64_t work = geo.batch * geo.rows * cs;
    auto kernel = createKernel(
        module, name("dequantize", op),
        {flatMemRef(data), flatMemRef(scales), flatMemRef(out)}, work,
        blockSize, nullptr, [&](KB &b, ValueRange a, Value t, GroupTable &) {
          Value bi, r, c;
          decompose(b, t, geo, geo.rows, cs, bi, r, c);
          Value sIdx;
          if (blocked) {
            Value scaleBase = b.mulc(bi, sRows * sCols);
            sIdx = b.add(scaleBase, b.blockedOffset(r, c, sCols));
          } else if (compact) {
            // [batch, ceil(rows / tr), ceil(cs / tb)]
            Value tileRow = b.div(r, tr);
            Value cRow = b.add(b.mulc(bi, sRows), tileRow);
            Value cRowStart = b.mulc(cRow, sCols);
            sIdx = b.add(cRowStart, b.div(c, tb));
          } else {
            sIdx = b.add(b.mulc(b.add(b.mulc(bi, geo.rows), r), cs), c);
          }
          Value scale = scaleAt(b, a[1], sIdx);
          Value rowStart = b.mulc(b.add(b.mulc(bi, geo.rows), r), geo.len);
          Value dIdx = b.add(rowStart, b.mulc(c, kMXBlockSize));
          SmallVector<Value> ys;
          for (Value v : loadElements(b, kind, a[0], dIdx))
            ys.push_back(narrow(b, arith::MulFOp::create(b, v, scale)));
          Value batchBase = b.mulc(bi, geo.hpBatch);
          Value rowBase = b.add(batchBase, b.mulc(r, geo.hpRow));
          Value base = b.add(rowBase, b.mulc(c, kMXBlockSize * geo.hpAlong));
          if (geo.rowwise()) {
            Value v = vector::FromElementsOp::create(
                b, VectorType::get({32}, outElem), ys);
            vector::StoreOp::create(b, v, a[2], ValueRange{base}, false,
                                    llvm::MaybeAlign(16));
            return;
          }
          for (int64_t i = 0; i < kMXBlockSize; ++i)
            b.store(ys[i], a[2], b.add(base, b.idx(i * geo.hpAlong)));
        });
    finish(op, kernel,
           {{HostArg::In, op.getData()},
            {HostArg::In, op.getScales()},
            {HostArg::Out, op.getResult()}});
    return success();
  }

  // With offsets: one thread per output element (t, k) of the [T, K]
  // result, k fastest. Tokens past the last offset dequantize to 0.
  int64_t T = out.getDimSize(0), K = out.getDimSize(1);
  int64_t G = cast<RankedTensorType>(offsets.getType()).getDimSize(0);
  GroupSpec spec{2, 4, G, T, {}};
  if (jagged) {
    spec.units.push_back({kMXBlockSize, 1, cs});
    if (blocked)
      spec.units.push_back({kMXBlockSize, 4, sCols});
    if (compact) // windows of tb blocks, restarting per group
      spec.units.push_back({tb * kMXBlockSize, 1, sCols});
  } else {
    spec.units.push_back({128, 1, sRows / 128});
  }
  auto kernel = createKernel(
      module, name("dequantize", op),
      {flatMemRef(data), flatMemRef(scales),
       MemRefType::get({G}, IntegerType::get(op.getContext(), 32)),
       flatMemRef(out), statusMemRef()},
      T * K, blockSize, &spec,
      [&](KB &b, ValueRange a, Value t, GroupTable &tab) {
        Value k = b.rem(t, K), tok = b.div(t, K);
        Value g = b.countLE(tab.ends, G, tok);
        ifThenElse(
            b, b.ult(g, b.idx(G)),
            [&] {
              Value local = b.sub(tok, tab.groupBegin(b, g));
              Value q, scaleIdx;
              if (jagged) {
                Value p = b.add(b.mulc(b.load(tab.starts[0], g), kMXBlockSize),
                                local);
                q = loadElement(b, kind, a[0], b.add(b.mulc(k, geo.len), p));
                if (compact) {
                  Value w0 = b.load(tab.starts[1], g);
                  Value w = b.add(w0, b.div(local, tb * kMXBlockSize));
                  scaleIdx = b.add(b.mulc(k, sCols), w);
                } else if (!blocked) {
                  Value rowBase = b.mulc(k, cs);
                  scaleIdx = b.add(rowBase, b.div(p, kMXBlockSize));
                } else {
                  Value q0 = b.load(tab.starts[1], g);
                  Value kgp =
                      b.sub(b.load(tab.starts[1], b.add(g, b.idx(1))), q0);
                  Value groupBase = b.mulc(q0, sRows);
                  scaleIdx = b.add(
                      groupBase,
                      b.blockedOffset(k, b.div(local, kMXBlockSize), kgp));
                }
              } else {
                q = loadElement(b, kind, a[0], t);
                Value pr = b.add(b.mulc(b.load(tab.starts[0], g), 128), local);
                scaleIdx = b.blockedOffset(pr, b.div(k, kMXBlockSize), sCols);
              }
              Value v = arith::MulFOp::create(b, q, scaleAt(b, a[1], scaleIdx));
              b.store(narrow(b, v), a[3], t);
            },
            [&] { b.store(narrow(b, b.f32(0.0f)), a[3], t); });
      });
  finish(op, kernel,
         {{HostArg::In, op.getData()},
          {HostArg::In, op.getScales()},
          {HostArg::In, offsets},
          {HostArg::Out, op.getResult()},
          {HostArg::Status, Value()}});
  return success();
}
