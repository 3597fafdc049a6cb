//===- LinearToLinalg.cpp - mxmoe-linear-to-linalg ------------------------===//
//
// High-precision y = x W^T (+ b) as linalg: the reference path that lets
// model-level IR run anywhere (tests on the CPU, or any backend).
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::mxmoe {
#define GEN_PASS_DEF_MXMOELINEARTOLINALG
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h.inc"
} // namespace mlir::mxmoe

using namespace mlir;
using namespace mlir::mxmoe;

namespace {

struct LinearToLinalgPass
    : ::mlir::mxmoe::impl::MXMoELinearToLinalgBase<LinearToLinalgPass> {
  void runOnOperation() override {
    SmallVector<LinearOp> ops;
    getOperation().walk([&](LinearOp op) {
      auto p = op.getPrecisionAttr();
      if (!p || p.getValue() == Precision::bf16)
        ops.push_back(op);
    });
    for (LinearOp op : ops)
      if (failed(lower(op)))
        return signalPassFailure();
  }

  LogicalResult lower(LinearOp op) {
    if (op.getInput().getType().getRank() != 2)
      return op.emitOpError("mxmoe-linear-to-linalg handles 2-D [tokens, K] "
                            "inputs");
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value x = op.getInput(), w = op.getWeight();
    auto wt = cast<RankedTensorType>(w.getType());
    auto yt = op.getResult().getType();
    auto dims = [&](Value v, ArrayRef<int64_t> shape, ArrayRef<int64_t> from) {
      SmallVector<Value> dyn;
      for (auto [i, d] : llvm::enumerate(shape))
        if (ShapedType::isDynamic(d))
          dyn.push_back(tensor::DimOp::create(b, loc, v, from[i]));
      return dyn;
    };
    // W^T [K, N].
    SmallVector<int64_t> tshape{wt.getDimSize(1), wt.getDimSize(0)};
    Value tinit = tensor::EmptyOp::create(b, loc, tshape, wt.getElementType(),
                                          dims(w, tshape, {1, 0}));
    Value wT =
        linalg::TransposeOp::create(b, loc, w, tinit, ArrayRef<int64_t>{1, 0})
            .getResult()[0];
    // fp32 accumulation (the op's contract) for bf16/f16 results: the
    // matmul writes an f32 tensor, the bias is added in f32, then one
    // rounding to the result type.
    Type elem = yt.getElementType();
    Type accElem = elem.getIntOrFloatBitWidth() < 32 ? b.getF32Type() : elem;
    SmallVector<Value> dynY;
    if (yt.isDynamicDim(0))
      dynY.push_back(tensor::DimOp::create(b, loc, x, 0));
    if (yt.isDynamicDim(1))
      dynY.push_back(tensor::DimOp::create(b, loc, w, 0));
    Value init = tensor::EmptyOp::create(b, loc, yt.getShape(), accElem, dynY);
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(accElem));
    Value acc = linalg::FillOp::create(b, loc, zero, init).getResult(0);
    Value y =
        linalg::MatmulOp::create(b, loc, ValueRange{x, wT}, ValueRange{acc})
            .getResult(0);
    if (Value bias = op.getBias()) {
      auto bt = cast<RankedTensorType>(bias.getType());
      if (accElem != elem)
        bias = arith::ExtFOp::create(b, loc, bt.clone(accElem), bias);
      SmallVector<Value> dynB;
      if (yt.isDynamicDim(0))
        dynB.push_back(tensor::DimOp::create(b, loc, x, 0));
      Value binit =
          tensor::EmptyOp::create(b, loc, yt.getShape(), accElem, dynB);
      Value bcast =
          linalg::BroadcastOp::create(b, loc, bias, binit, ArrayRef<int64_t>{0})
              .getResult()[0];
      y = arith::AddFOp::create(b, loc, y, bcast);
    }
    if (accElem != elem)
      y = arith::TruncFOp::create(b, loc, yt, y);
    op.getResult().replaceAllUsesWith(y);
    op.erase();
    return success();
  }
};

} // namespace
