//===- HostLaunch.cpp - kernel launches on the host side ------------------===//
//
// The host-side rewrite of convert-mxmoe-to-gpu: an op implemented by a
// generated kernel is replaced by the kernel's launch on buffers
// (host-launch=true) or annotated with the kernel and what each of its
// parameters binds to (KernelGen.h).
//
//===----------------------------------------------------------------------===//

#include "FusedQuantize.h"
#include "KernelGen.h"

#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"
#include "mxmoe/KernelStatus.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::mxmoe;
using namespace mlir::mxmoe::kernels;

void KernelGen::annotate(Operation *op, gpu::GPUFuncOp kernel,
                         ArrayRef<Attribute> bindings) {
  op->setAttr(MXMoEDialect::KernelAttrHelper::getNameStr(),
              SymbolRefAttr::get(module.getNameAttr(),
                                 {FlatSymbolRefAttr::get(kernel)}));
  op->setAttr(MXMoEDialect::KernelArgsAttrHelper::getNameStr(),
              ArrayAttr::get(op->getContext(), bindings));
}

void KernelGen::annotateGemm(Operation *op, gpu::GPUFuncOp kernel,
                             std::initializer_list<int64_t> sizes) {
  MLIRContext *ctx = op->getContext();
  auto arg = [&](KernelArgKind kind, int64_t i) -> Attribute {
    return KernelArgAttr::get(ctx, kind, i);
  };
  using K = KernelArgKind;
  SmallVector<Attribute> bindings{arg(K::tensor_map, 0), arg(K::operand, 1),
                                  arg(K::tensor_map, 2), arg(K::operand, 3),
                                  arg(K::operand, 4),    arg(K::result, 0),
                                  arg(K::status, 0)};
  for (int64_t v : sizes)
    bindings.push_back(arg(K::value, v));
  annotate(op, kernel, bindings);
}

Attribute KernelGen::bindingOf(Operation *op, const HostArg &arg) {
  MLIRContext *ctx = op->getContext();
  if (arg.kind == HostArg::Status)
    return KernelArgAttr::get(ctx, KernelArgKind::status);
  for (OpOperand &o : op->getOpOperands())
    if (o.get() == arg.value)
      return KernelArgAttr::get(ctx, KernelArgKind::operand,
                                o.getOperandNumber());
  return KernelArgAttr::get(ctx, KernelArgKind::result,
                            cast<OpResult>(arg.value).getResultNumber());
}

void KernelGen::finish(Operation *op, gpu::GPUFuncOp kernel,
                       ArrayRef<HostArg> args, ArrayRef<int64_t> scalars,
                       std::optional<int64_t> work) {
  // The kernel of a fused quantization replaces the fused op, with its
  // arguments (FusedQuantize.h).
  SmallVector<HostArg> fusedArgs;
  if (FusedSource *src = activeFusedSource; src && op == src->quantize) {
    if (!src->anchor)
      return; // not a kernel that takes a producer: genFusedQuantize says so
    src->kernel = kernel;
    fusedArgs = src->hostArgs(args);
    args = fusedArgs;
    op = src->op;
  }
  // (The kernel's own CTA size: most kernels use blockSize, a one-CTA
  // kernel such as sort_by_expert's its own.)
  auto kernelBlock = cast<DenseI64ArrayAttr>(
      kernel->getAttr(MXMoEDialect::BlockAttrHelper::getNameStr()));
  std::optional<int64_t> gridX;
  if (work)
    gridX = std::max<int64_t>(1, ::mxmoe::ceilDiv(*work, kernelBlock[0]));
  if (gridX)
    op->setAttr(MXMoEDialect::GridAttrHelper::getNameStr(),
                DenseI64ArrayAttr::get(op->getContext(), {*gridX, 1, 1}));
  if (!hostLaunch) {
    SmallVector<Attribute> bindings;
    for (const HostArg &a : args)
      bindings.push_back(bindingOf(op, a));
    for (int64_t v : scalars)
      bindings.push_back(
          KernelArgAttr::get(op->getContext(), KernelArgKind::value, v));
    annotate(op, kernel, bindings);
    return;
  }
  OpBuilder ob(op);
  KB b(op->getLoc(), ob);
  SmallVector<Value> operands;
  SmallVector<std::pair<Value, Value>> replacements;
  Value status;
  auto fullReassoc = [](int64_t rank) {
    ReassociationIndices all;
    for (int64_t i = 0; i < rank; ++i)
      all.push_back(i);
    return SmallVector<ReassociationIndices>{all};
  };
  // Pointer parameters of run-time shaped kernels get the buffer's
  // aligned address.
  auto pointerOf = [&](Value memref) -> Value {
    Value idx = memref::ExtractAlignedPointerAsIndexOp::create(b, memref);
    Value i64 = arith::IndexCastOp::create(b, b.getI64Type(), idx);
    return LLVM::IntToPtrOp::create(
        b, LLVM::LLVMPointerType::get(b.getContext()), i64);
  };
  for (auto [i, arg] : llvm::enumerate(args)) {
    Type argTy = kernel.getArgumentTypes()[i];
    bool pointer = isa<LLVM::LLVMPointerType>(argTy);
    if (arg.kind == HostArg::Status) {
      status = gpu::AllocOp::create(b, statusMemRef(), Type(), {}, {}, {},
                                    UnitAttr())
                   .getMemref();
      operands.push_back(pointer ? pointerOf(status) : status);
      continue;
    }
    auto tt = cast<RankedTensorType>(arg.value.getType());
    auto shaped = MemRefType::get(tt.getShape(), tt.getElementType());
    auto flat = MemRefType::get({tt.getNumElements()}, tt.getElementType());
    auto kt = pointer ? flatMemRef(tt) : cast<MemRefType>(argTy);
    if (arg.kind == HostArg::In) {
      Value m = bufferization::ToBufferOp::create(b, shaped, arg.value,
                                                  /*read_only=*/true);
      if (tt.getRank() > 1)
        m = memref::CollapseShapeOp::create(b, flat, m,
                                            fullReassoc(tt.getRank()));
      if (m.getType() != kt) // packed MXFP4: the kernel sees bytes
        m = UnrealizedConversionCastOp::create(b, kt, m).getResult(0);
      operands.push_back(pointer ? pointerOf(m) : m);
      continue;
    }
    Value buf =
        gpu::AllocOp::create(b, kt, Type(), {}, {}, {}, UnitAttr()).getMemref();
    operands.push_back(pointer ? pointerOf(buf) : buf);
    Value view = buf;
    if (kt != flat) // packed MXFP4 bytes viewed as f4E2M1FN elements
      view = UnrealizedConversionCastOp::create(b, flat, view).getResult(0);
    if (tt.getRank() > 1) {
      SmallVector<OpFoldResult> sizes;
      for (int64_t d : tt.getShape())
        sizes.push_back(b.getIndexAttr(d));
      view = memref::ExpandShapeOp::create(b, shaped, view,
                                           fullReassoc(tt.getRank()), sizes);
    }
    Value t = bufferization::ToTensorOp::create(b, tt, view,
                                                /*restrict=*/b.getUnitAttr(),
                                                /*writable=*/b.getUnitAttr());
    replacements.push_back({arg.value, t});
  }
  for (int64_t v : scalars)
    operands.push_back(arith::ConstantIntOp::create(b, b.getI64Type(), v));
  auto grid = gridX ? DenseI64ArrayAttr::get(op->getContext(), {*gridX, 1, 1})
                    : cast<DenseI64ArrayAttr>(kernel->getAttr(
                          MXMoEDialect::GridAttrHelper::getNameStr()));
  gpu::KernelDim3 g{b.idx(grid[0]), b.idx(grid[1]), b.idx(grid[2])};
  gpu::KernelDim3 t{b.idx(kernelBlock[0]), b.idx(kernelBlock[1]),
                    b.idx(kernelBlock[2])};
  gpu::LaunchFuncOp::create(b, kernel, g, t, Value(), operands);
  if (status) {
    auto hostType = MemRefType::get({1}, b.getI32Type());
    Value host = memref::AllocaOp::create(b, hostType);
    gpu::MemcpyOp::create(b, Type(), ValueRange{}, host, status);
    // Host-launched kernels (quantize over group offsets; grouped GEMMs
    // are never host-launched) write 0 or 1: one assertion with the
    // runtime's wording of status 1 (mxmoe/KernelStatus.h), one for any
    // other nonzero word.
    Value word = b.load(host, b.idx(0));
    std::string prefix = ("mxmoe: kernel '" + kernel.getName() + "' ").str();
    int32_t offsets = ::mxmoe::kKernelStatusOffsetsRejected;
    cf::AssertOp::create(
        b,
        arith::CmpIOp::create(b, arith::CmpIPredicate::ne, word,
                              b.i32(offsets)),
        b.getStringAttr(prefix + ::mxmoe::kernelStatusText(offsets)));
    cf::AssertOp::create(b, b.eq(word, b.i32(::mxmoe::kKernelStatusDone)),
                         b.getStringAttr(prefix + "wrote an unknown status"));
    gpu::DeallocOp::create(b, Type(), ValueRange{}, status);
  }
  for (auto [from, to] : replacements)
    from.replaceAllUsesWith(to);
  op->erase();
}

MemRefType KernelGen::statusMemRef() {
  return MemRefType::get({1}, IntegerType::get(module.getContext(), 32));
}
