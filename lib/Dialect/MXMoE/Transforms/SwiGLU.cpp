//===- SwiGLU.cpp - the SwiGLU of mxmoe.swiglu_experts as linalg.generic --===//
//
// SwiGLU (Shazeer, arXiv 2002.05202) with PyTorch's roundings for bf16
// tensors: every op in f32, rounded to bf16 where PyTorch's kernels write
// a bf16 tensor (F.silu, the product; autograd's mul backward and silu
// backward, aten/src/ATen/native/cuda/ActivationSiluKernel.cu).
//
//===----------------------------------------------------------------------===//

#include "SwiGLU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace {

/// Scalar f32 arithmetic in a generic's body, bf16 at its edges.
struct Body {
  OpBuilder &b;
  Location loc;

  Type f32() { return b.getF32Type(); }
  Value one() {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f));
  }
  Value ext(Value v) { return arith::ExtFOp::create(b, loc, f32(), v); }
  Value bf16(Value v) {
    return arith::TruncFOp::create(b, loc, b.getBF16Type(), v);
  }
  /// bf16 -> f32 after a bf16 rounding (a bf16 tensor PyTorch writes).
  Value round(Value v) { return ext(bf16(v)); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  /// 1 + exp(-g)
  Value onePlusExpNeg(Value g) {
    Value ng = arith::NegFOp::create(b, loc, g);
    Value c1 = one();
    Value e = math::ExpOp::create(b, loc, ng);
    return add(c1, e);
  }
};

/// Column slice [0, col] of `h` with `cols` columns.
Value columns(OpBuilder &b, Location loc, Value h, int64_t col, int64_t cols) {
  auto t = cast<RankedTensorType>(h.getType());
  int64_t m = t.getDimSize(0);
  SmallVector<OpFoldResult> offsets{b.getIndexAttr(0), b.getIndexAttr(col)};
  SmallVector<OpFoldResult> sizes{b.getIndexAttr(m), b.getIndexAttr(cols)};
  SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, h, offsets, sizes, strides);
}

/// An elementwise generic over the [M, I] inputs, bf16 result; `fn` gets
/// the inputs as f32 and returns the f32 value rounded to the result.
Value elementwise(OpBuilder &b, Location loc, ValueRange ins,
                  function_ref<Value(Body &, ValueRange)> fn) {
  auto t = cast<RankedTensorType>(ins.front().getType());
  Value init = tensor::EmptyOp::create(b, loc, t.getShape(), b.getBF16Type());
  SmallVector<AffineMap> maps(ins.size() + 1,
                              b.getMultiDimIdentityMap(t.getRank()));
  SmallVector<utils::IteratorType> iters(t.getRank(),
                                         utils::IteratorType::parallel);
  auto g = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Body body{nb, nl};
        SmallVector<Value> xs;
        for (Value a : args.drop_back())
          xs.push_back(body.ext(a));
        linalg::YieldOp::create(nb, nl, body.bf16(fn(body, xs)));
      });
  return g.getResult(0);
}

} // namespace

Value mlir::mxmoe::swiglu::forward(OpBuilder &b, Location loc, Value h) {
  int64_t i = cast<RankedTensorType>(h.getType()).getDimSize(1) / 2;
  Value gate = columns(b, loc, h, 0, i), up = columns(b, loc, h, i, i);
  return elementwise(b, loc, {gate, up}, [](Body &x, ValueRange v) {
    Value silu = x.round(x.div(v[0], x.onePlusExpNeg(v[0])));
    return x.mul(silu, v[1]);
  });
}

Value mlir::mxmoe::swiglu::backward(OpBuilder &b, Location loc, Value da,
                                    Value h) {
  int64_t i = cast<RankedTensorType>(h.getType()).getDimSize(1) / 2;
  Value gate = columns(b, loc, h, 0, i), up = columns(b, loc, h, i, i);
  // d g = bf16(ds * s * (1 + g * (1 - s))), ds = bf16(da * u),
  // s = 1 / (1 + exp(-g)) (silu_backward's order of operations).
  Value dg = elementwise(b, loc, {da, up, gate}, [](Body &x, ValueRange v) {
    Value ds = x.round(x.mul(v[0], v[1]));
    Value c1 = x.one();
    Value s = x.div(c1, x.onePlusExpNeg(v[2]));
    Value slope = x.add(c1, x.mul(v[2], x.sub(c1, s)));
    return x.mul(x.mul(ds, s), slope);
  });
  // d u = bf16(da * bf16(silu(g))).
  Value du = elementwise(b, loc, {da, gate}, [](Body &x, ValueRange v) {
    Value silu = x.round(x.div(v[1], x.onePlusExpNeg(v[1])));
    return x.mul(v[0], silu);
  });
  return tensor::ConcatOp::create(b, loc, /*dim=*/1, ValueRange{dg, du});
}
