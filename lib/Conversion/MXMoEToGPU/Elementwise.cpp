//===- Elementwise.cpp - host elementwise ops of shard loops to kernels ---===//
//
// The arith / math ops on tensors that mxmoe-tile-mlp leaves in a static
// shard loop (the parameter-gradient sums of `<fqn>.backward`, the sum of
// the input gradient's parts, a body's activation): each becomes one SIMT
// kernel with a run-time element count, one thread per run of up to 16
// bytes of the result. Every float operand is extended to f32, the op
// computed in f32 and the result rounded to its type: for +, -, *, / that
// equals the op in bf16 or f16 (f32 has p' = 24 >= 2p + 2 bits; Figueroa,
// "When is double rounding innocuous?", SIGNUM 1995), and it is how
// PyTorch computes bf16 elementwise ops. math ops go through expandMath
// (no libdevice). Splat constant operands are folded into the kernel.
// Float casts (arith.extf / truncf: a gradient into an f32 accumulator,
// grad_accumulator = f32) are kernels too, in the loop or, for a cast of
// a loop result (the accumulator rounded to the parameter's type), after
// it.
//
// A launch program can then replay the whole shard loop (the manifest's
// loop steps, docs/mxmoe-compile.md); outside shard loops such ops stay on
// the host, where the Python ops run them with PyTorch.
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;

namespace {

/// The splat value of a constant float tensor operand, else null.
Attribute splatOf(Value v) {
  DenseElementsAttr d;
  if (matchPattern(v, m_Constant(&d)) && d.isSplat() &&
      isa<FloatType>(d.getElementType()))
    return d.getSplatValue<Attribute>();
  return {};
}

/// A float cast, or an integer-to-float conversion (counts that a shard
/// loop sums in f32): the operand type may differ from the result's.
bool isConversion(Operation *op) {
  return isa<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::UIToFPOp>(
      op);
}

/// Elements per thread: 16 bytes of the widest tensor of the op, or the
/// largest power of two below that dividing the element count.
int64_t elementsPerThread(Operation *op, int64_t count) {
  unsigned bits = 8;
  for (Type t :
       llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes()))
    bits = std::max(bits, getElementTypeOrSelf(t).getIntOrFloatBitWidth());
  int64_t n = 128 / bits;
  while (n > 1 && count % n != 0)
    n /= 2;
  return n;
}

/// `op` computed on f32 scalars `xs`, its result rounded to `resultElem`.
Value scalarOp(KB &b, Operation *op, ValueRange xs, Type resultElem) {
  Type f32 = b.getF32Type();
  if (isa<arith::ExtFOp, arith::TruncFOp>(op)) // (the operand is f32 now)
    return resultElem == f32 ? xs[0]
                             : arith::TruncFOp::create(b, resultElem, xs[0]);
  bool floatResult = isa<FloatType>(resultElem);
  OperationState state(op->getLoc(), op->getName());
  state.addOperands(xs);
  state.addTypes(floatResult ? f32 : resultElem);
  state.propertiesAttr = op->getPropertiesAsAttribute();
  Value r = b.create(state)->getResult(0);
  if (floatResult && resultElem != f32)
    r = arith::TruncFOp::create(b, resultElem, r);
  return r;
}

/// The n operand elements at `base` as f32 (other element types as they
/// are): a splat constant's value, else a vector load of parameter
/// `a[param++]`.
SmallVector<Value> operandElements(KB &b, Attribute splat, Value operand,
                                   ValueRange a, unsigned &param, Value base,
                                   int64_t n) {
  Type elem = cast<RankedTensorType>(operand.getType()).getElementType();
  Type f32 = b.getF32Type();
  if (auto fa = dyn_cast_if_present<FloatAttr>(splat)) {
    bool lost = false;
    APFloat v = fa.getValue();
    v.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    return SmallVector<Value>(n, b.f32(v.convertToFloat()));
  }
  auto vt = VectorType::get({n}, elem);
  Value v = vector::LoadOp::create(
      b, vt, a[param++], ValueRange{base}, false,
      llvm::MaybeAlign(n * elem.getIntOrFloatBitWidth() / 8));
  SmallVector<Value> xs;
  for (int64_t i = 0; i < n; ++i) {
    Value x = vector::ExtractOp::create(b, v, i);
    bool wide = elem == f32 || !isa<FloatType>(elem);
    xs.push_back(wide ? x : arith::ExtFOp::create(b, f32, x));
  }
  return xs;
}

} // namespace

bool KernelGen::isShardLoopElementwise(Operation *op) {
  if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
      !op->hasTrait<OpTrait::Elementwise>() || op->getNumResults() != 1 ||
      op->getNumRegions() != 0)
    return false;
  auto rt = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!rt || !rt.hasStaticShape() || rt.getEncoding() ||
      !isa<FloatType>(rt.getElementType()) ||
      rt.getElementType().getIntOrFloatBitWidth() > 32) // computed in f32
    return false;
  // A float cast (a gradient into an f32 accumulator, the accumulator
  // back to the parameter's type) or an int-to-float conversion may change
  // the element type.
  bool cast = isConversion(op);
  bool fromInt = isa<arith::SIToFPOp, arith::UIToFPOp>(op);
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || t.getShape() != rt.getShape() || t.getEncoding())
      return false;
    Type e = t.getElementType();
    bool kind = fromInt ? isa<IntegerType>(e) : isa<FloatType>(e);
    if (cast ? !kind || e.getIntOrFloatBitWidth() > 32
             : e != rt.getElementType())
      return false;
  }
  if (isInRowShardLoop(op))
    return true;
  // After the loop: a cast of one of its results (the accumulator of a
  // parameter gradient rounded to the parameter's type).
  auto loop = op->getOperand(0).getDefiningOp<scf::ForOp>();
  return cast && loop && !loop.getBody()->empty() &&
         isInRowShardLoop(&loop.getBody()->front());
}

bool KernelGen::isInRowShardLoop(Operation *op) {
  auto loop = op->getParentOfType<scf::ForOp>();
  if (!loop ||
      !loop->hasAttr(MXMoEDialect::ShardTokensAttrHelper::getNameStr()))
    return false;
  auto wholeRows = [](RankedTensorType whole, ArrayRef<int64_t> offsets,
                      ArrayRef<int64_t> sizes) {
    for (int64_t d = 1; d < whole.getRank(); ++d)
      if (offsets[d] != 0 || sizes[d] != whole.getDimSize(d))
        return false;
    return true;
  };
  WalkResult r = loop.getBody()->walk([&](Operation *inner) {
    bool ok = true;
    if (auto s = dyn_cast<tensor::ExtractSliceOp>(inner))
      ok = wholeRows(s.getSourceType(), s.getStaticOffsets(),
                     s.getStaticSizes());
    else if (auto s = dyn_cast<tensor::InsertSliceOp>(inner))
      ok = wholeRows(s.getDestType(), s.getStaticOffsets(), s.getStaticSizes());
    return ok ? WalkResult::advance() : WalkResult::interrupt();
  });
  return !r.wasInterrupted();
}

LogicalResult KernelGen::genElementwise(Operation *op) {
  auto rt = cast<RankedTensorType>(op->getResult(0).getType());
  Type elem = rt.getElementType();
  int64_t count = rt.getNumElements();
  int64_t n = elementsPerThread(op, count);
  // Operands that are not splat constants are kernel parameters.
  SmallVector<Value> inputs;
  SmallVector<Attribute> splats;
  RuntimeShapeSpec spec{{}, {"elements"}};
  for (Value v : op->getOperands()) {
    splats.push_back(splatOf(v));
    if (!splats.back()) {
      inputs.push_back(v);
      spec.views.push_back(
          cast<RankedTensorType>(v.getType()).getElementType());
    }
  }
  spec.views.push_back(elem);
  auto workOf = [n](KB &b, ValueRange sz) { return b.div(sz[0], n); };
  auto kernel = createKernel(
      module, name(op->getName().stripDialect(), op), spec, workOf, blockSize,
      nullptr, [&](KB &b, ValueRange a, ValueRange sz, Value th, GroupTable &) {
        // (The host binds sz[0] = count, a multiple of n: the grid is
        // count / n threads rounded up to whole CTAs.)
        ifThen(b, b.ult(th, b.div(sz[0], n)), [&] {
          Value base = b.mulc(th, n);
          SmallVector<SmallVector<Value>> cols(n);
          unsigned param = 0;
          for (auto [v, splat] : llvm::zip(op->getOperands(), splats)) {
            SmallVector<Value> xs =
                operandElements(b, splat, v, a, param, base, n);
            for (int64_t i = 0; i < n; ++i)
              cols[i].push_back(xs[i]);
          }
          SmallVector<Value> out;
          for (int64_t i = 0; i < n; ++i)
            out.push_back(scalarOp(b, op, cols[i], elem));
          auto vt = VectorType::get({n}, elem);
          Value vec = vector::FromElementsOp::create(b, vt, out);
          vector::StoreOp::create(
              b, vec, a.back(), ValueRange{base}, false,
              llvm::MaybeAlign(n * elem.getIntOrFloatBitWidth() / 8));
        });
      });
  // In place is allowed (a shard loop's gradient sum writes its
  // accumulator): each element is read and written by one thread, in that
  // order, so the pointers carry no noalias.
  for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i)
    kernel.removeArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName());
  if (failed(expandMath(kernel, op, "of the elementwise op")))
    return failure();
  SmallVector<HostArg> args;
  for (Value v : inputs)
    args.push_back({HostArg::In, v});
  args.push_back({HostArg::Out, op->getResult(0)});
  finish(op, kernel, args, {count}, count / n);
  return success();
}
