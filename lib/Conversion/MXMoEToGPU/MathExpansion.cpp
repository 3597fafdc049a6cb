//===- MathExpansion.cpp - math ops of generated kernels without libdevice ===//
//
// expandMath (KernelBuilder.h): MLIR's polynomial approximations and f32
// expansions of the math dialect (exp, log, tanh, erf, ...), then the ops
// left as NVPTX instructions, so no CUDA math library (libdevice) is
// linked. Used by the fused quantize producers (FusedQuantize.cpp) and
// the router kernels (RouterTopK.cpp).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

/// The NVPTX intrinsic of an f32 math op (convert-gpu-to-nvvm marks the
/// generic LLVM intrinsics of these illegal: it would call libdevice).
static StringRef nvptxIntrinsicOf(Operation *o) {
  if (!o->getResult(0).getType().isF32())
    return "";
  if (isa<math::FloorOp>(o))
    return "llvm.nvvm.floor.f";
  if (isa<math::AbsFOp>(o))
    return "llvm.nvvm.fabs";
  if (isa<math::SqrtOp>(o))
    return "llvm.nvvm.sqrt.rn.f";
  return "";
}

LogicalResult mlir::mxmoe::kernels::expandMath(gpu::GPUFuncOp kernel,
                                               Operation *op, StringRef where) {
  RewritePatternSet patterns(op->getContext());
  populateMathPolynomialApproximationPatterns(patterns);
  populateMathF32ExpansionPatterns(patterns, [](StringRef) { return true; });
  if (failed(applyPatternsGreedily(kernel, std::move(patterns))))
    return op->emitOpError("convert-mxmoe-to-gpu: the math ops ")
           << where << " did not expand";
  SmallVector<Operation *> math;
  kernel.walk([&](Operation *o) {
    if (isa<math::MathDialect>(o->getDialect()))
      math.push_back(o);
  });
  for (Operation *o : math) {
    OpBuilder b(o);
    Value r;
    if (auto f = dyn_cast<math::FmaOp>(o))
      r = LLVM::FMAOp::create(b, o->getLoc(), f.getA(), f.getB(), f.getC());
    else if (auto intrinsic = nvptxIntrinsicOf(o); !intrinsic.empty())
      r = LLVM::CallIntrinsicOp::create(
              b, o->getLoc(), o->getResult(0).getType(),
              b.getStringAttr(intrinsic), o->getOperands())
              .getResult(0);
    else
      return op->emitOpError("convert-mxmoe-to-gpu: '")
             << o->getName() << "' " << where
             << " has no lowering here (mxmoe links no CUDA math library; "
                "the polynomial approximations cover exp, log, tanh, erf, "
                "sin, cos and their f32 expansions)";
    o->getResult(0).replaceAllUsesWith(r);
    o->erase();
  }
  return success();
}
