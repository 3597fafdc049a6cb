//===- BufferizableOpInterfaceImpl.cpp - mxmoe ops in one-shot-bufferize --===//
//
// BufferizableOpInterface of the mxmoe ops, as external models: an op that
// convert-mxmoe-to-gpu annotated with its generated kernel
// (host-launch=false, or a grouped GEMM, which is annotated under either
// setting) bufferizes into that kernel's launch on buffers (HostLaunch.h):
// its tensor operands are read, never written; each result is a fresh
// gpu.alloc that the kernel writes (an accumulating grouped_matmul's
// starts as a copy of its accumulator). An op without a kernel is an error
// that names the pass to run first. Semantics of the interface: MLIR's
// bufferization documentation (https://mlir.llvm.org/docs/Bufferization/).
//
//===----------------------------------------------------------------------===//

#include "HostLaunch.h"
#include "Interfaces.h"

#include "mxmoe/Conversion/Passes.h"
#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::mxmoe;

namespace {

/// `buffer` if it has the identity layout the kernels read, else a copy
/// into a new row-major device buffer (gpu.alloc + gpu.memcpy: e.g. a
/// row slice of a shard loop, or a function argument bufferized with a
/// fully dynamic layout map; MLIR's gpu-to-llvm copies contiguous views
/// and rejects others).
Value contiguous(RewriterBase &rewriter, Location loc, Value buffer) {
  auto mt = cast<MemRefType>(buffer.getType());
  if (mt.getLayout().isIdentity())
    return buffer;
  auto dense =
      MemRefType::get(mt.getShape(), mt.getElementType(),
                      MemRefLayoutAttrInterface(), mt.getMemorySpace());
  Value copy =
      gpu::AllocOp::create(rewriter, loc, dense, Type(), {}, {}, {}, UnitAttr())
          .getMemref();
  gpu::MemcpyOp::create(rewriter, loc, Type(), ValueRange{}, copy, buffer);
  return copy;
}

/// The analysis side of every mxmoe op: it reads its tensor operands,
/// writes none of them, and each result is a new buffer (no aliasing).
template <typename Model, typename OpTy>
struct ReadsOperandsAllocatesResults
    : BufferizableOpInterface::ExternalModel<Model, OpTy> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  bool bufferizesToAllocation(Operation *, Value) const { return true; }
};

/// An op with a generated kernel: bufferizes into the kernel's launch.
template <typename OpTy>
struct KernelOpModel
    : ReadsOperandsAllocatesResults<KernelOpModel<OpTy>, OpTy> {

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    // An op of a fused quantization's producer region is part of that
    // kernel: the fused op's launch replaces the region (one-shot
    // bufferization visits nested ops first).
    if (auto fused = op->getParentOfType<FusedQuantizeOp>();
        fused && fused->hasAttr(MXMoEDialect::KernelAttrHelper::getNameStr()))
      return success();
    // The annotation first, then every operand's buffer: a failure leaves
    // the IR untouched.
    if (failed(kernels::checkKernelLaunch(op)))
      return failure();
    llvm::DenseMap<Value, Value> operands;
    rewriter.setInsertionPoint(op);
    for (Value v : op->getOperands()) {
      if (!isa<TensorType>(v.getType()) || operands.count(v))
        continue;
      FailureOr<Value> buffer = getBuffer(rewriter, v, options, state);
      if (failed(buffer))
        return failure();
      operands[v] = contiguous(rewriter, op->getLoc(), *buffer);
    }
    SmallVector<Value> results(op->getNumResults());
    auto operand = [&](OpBuilder &, Value v) { return operands.lookup(v); };
    auto result = [&](OpBuilder &, unsigned i, Value buffer) {
      results[i] = buffer;
    };
    if (failed(kernels::emitKernelLaunch(rewriter, op, {operand, result})))
      return failure();
    replaceOpWithBufferizedValues(rewriter, op, results);
    return success();
  }
};

/// A model-level op: expanded into MX-level ops before any kernel exists.
template <typename OpTy>
struct ModelLevelOpModel
    : ReadsOperandsAllocatesResults<ModelLevelOpModel<OpTy>, OpTy> {
  LogicalResult bufferize(Operation *op, RewriterBase &,
                          const BufferizationOptions &,
                          BufferizationState &) const {
    return op->emitOpError(
        "is a model-level op: expand it (mxmoe-precision-policy, "
        "mxmoe-expand-scaled-matmul) and lower it (convert-mxmoe-to-gpu) "
        "before bufferization");
  }
};

template <typename... OpTys> void attachKernelModels(MLIRContext *ctx) {
  (OpTys::template attachInterface<KernelOpModel<OpTys>>(*ctx), ...);
}

} // namespace

void mlir::mxmoe::kernels::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, MXMoEDialect *) {
    attachKernelModels<QuantizeOp, FusedQuantizeOp, QuantizeWeightOp,
                       RequantizeOp, DequantizeOp, SwizzleScalesOp,
                       GroupedMatmulOp, RouterTopKOp, RouterTopKGradOp,
                       SortByExpertOp, GatherRowsOp, InvertPermutationOp,
                       CombineRowsOp, CombineScoresGradOp>(ctx);
    LinearOp::attachInterface<ModelLevelOpModel<LinearOp>>(*ctx);
    ScaledGroupedMatmulOp::attachInterface<
        ModelLevelOpModel<ScaledGroupedMatmulOp>>(*ctx);
    SwiGLUExpertsOp::attachInterface<ModelLevelOpModel<SwiGLUExpertsOp>>(*ctx);
    // The dialects a launch is built from (as upstream's tensor models
    // load those their bufferization creates).
    ctx->loadDialect<arith::ArithDialect, cf::ControlFlowDialect,
                     gpu::GPUDialect, LLVM::LLVMDialect, memref::MemRefDialect,
                     nvgpu::NVGPUDialect>();
  });
}

void mlir::mxmoe::registerMXMoEToGPUInterfaces(DialectRegistry &registry) {
  // The kernels' parameter types are nvgpu's: a tool that reads lowered IR
  // must know the dialect.
  registry.insert<nvgpu::NVGPUDialect>();
  kernels::registerTensorMapToLLVMInterface(registry);
  kernels::registerBufferizableOpInterfaceExternalModels(registry);
}
