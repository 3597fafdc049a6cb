//===- HostLaunch.cpp - kernel launches on the host side ------------------===//
//
// The host-side rewrite of convert-mxmoe-to-gpu: an op implemented by a
// generated kernel is replaced by the kernel's launch on buffers
// (host-launch=true) or annotated with the kernel and what each of its
// parameters binds to (KernelGen.h).
//
//===----------------------------------------------------------------------===//

#include "HostLaunch.h"
#include "FusedQuantize.h"
#include "KernelGen.h"

#include "mxmoe/Dialect/MXMoE/Utils/ScaleLayout.h"
#include "mxmoe/KernelStatus.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

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
  SmallVector<Attribute> bindings;
  for (const HostArg &a : args)
    bindings.push_back(bindingOf(op, a));
  for (int64_t v : scalars)
    bindings.push_back(
        KernelArgAttr::get(op->getContext(), KernelArgKind::value, v));
  annotate(op, kernel, bindings);
  if (!hostLaunch)
    return;
  // The launch on buffers, read back from the annotation (HostLaunch.h):
  // operands through bufferization.to_buffer, results handed back through
  // bufferization.to_tensor; one-shot-bufferize folds the pairs.
  OpBuilder ob(op);
  SmallVector<std::pair<Value, Value>> replacements;
  auto operandBuffer = [](OpBuilder &b, Value v) -> Value {
    auto tt = cast<RankedTensorType>(v.getType());
    auto shaped = MemRefType::get(tt.getShape(), tt.getElementType());
    return bufferization::ToBufferOp::create(b, v.getLoc(), shaped, v,
                                             /*read_only=*/true);
  };
  auto resultBuffer = [&](OpBuilder &b, unsigned i, Value buffer) {
    Value r = op->getResult(i);
    Value t = bufferization::ToTensorOp::create(
        b, op->getLoc(), r.getType(), buffer, /*restrict=*/b.getUnitAttr(),
        /*writable=*/b.getUnitAttr());
    replacements.push_back({r, t});
  };
  // (Cannot fail here: the kernel was just generated as a gpu.func, and
  // GEMMs, whose TMA maps could, are annotated only.)
  if (failed(emitKernelLaunch(ob, op, {operandBuffer, resultBuffer})))
    return;
  for (auto [from, to] : replacements)
    from.replaceAllUsesWith(to);
  op->erase();
}

MemRefType KernelGen::statusMemRef() {
  return MemRefType::get({1}, IntegerType::get(module.getContext(), 32));
}

//===----------------------------------------------------------------------===//
// The launch of an annotated op (HostLaunch.h)
//===----------------------------------------------------------------------===//

namespace {

SmallVector<ReassociationIndices> collapseAll(int64_t rank) {
  ReassociationIndices all;
  for (int64_t i = 0; i < rank; ++i)
    all.push_back(i);
  return {all};
}

/// The aligned address of `memref` as pointer parameter type `param` (a
/// kernel with run-time sizes; the grouped GEMMs' are global pointers).
Value alignedPointer(KB &b, Value memref, Type param) {
  Value idx = memref::ExtractAlignedPointerAsIndexOp::create(b, memref);
  Value i64 = arith::IndexCastOp::create(b, b.getI64Type(), idx);
  return LLVM::IntToPtrOp::create(b, param, i64);
}

/// The kernel parameter of type `param` bound to operand buffer `buffer`:
/// the buffer collapsed to 1-D (packed MXFP4 viewed as the bytes the
/// kernel reads), or its address.
Value operandArg(KB &b, Value buffer, Type param) {
  auto mt = cast<MemRefType>(buffer.getType());
  bool pointer = isa<LLVM::LLVMPointerType>(param);
  auto flat = MemRefType::get({mt.getNumElements()}, mt.getElementType());
  auto kt = pointer ? flatMemRef(RankedTensorType::get(mt.getShape(),
                                                       mt.getElementType()))
                    : cast<MemRefType>(param);
  Value m = buffer;
  if (mt.getRank() > 1)
    m = memref::CollapseShapeOp::create(b, flat, m, collapseAll(mt.getRank()));
  if (m.getType() != kt)
    m = UnrealizedConversionCastOp::create(b, kt, m).getResult(0);
  return pointer ? alignedPointer(b, m, param) : m;
}

/// The kernel parameter of type `param` for a result of type `tt`: a
/// gpu.alloc'ed buffer (or its address); `view` gets it as a memref of
/// `tt`'s shape.
Value resultArg(KB &b, RankedTensorType tt, Type param, Value &view) {
  bool pointer = isa<LLVM::LLVMPointerType>(param);
  auto flat = MemRefType::get({tt.getNumElements()}, tt.getElementType());
  auto kt = pointer ? flatMemRef(tt) : cast<MemRefType>(param);
  Value buf =
      gpu::AllocOp::create(b, kt, Type(), {}, {}, {}, UnitAttr()).getMemref();
  Value arg = pointer ? alignedPointer(b, buf, param) : buf;
  view = buf;
  if (kt != flat) // packed MXFP4 bytes viewed as f4E2M1FN elements
    view = UnrealizedConversionCastOp::create(b, flat, view).getResult(0);
  if (tt.getRank() > 1) {
    SmallVector<OpFoldResult> sizes;
    for (int64_t d : tt.getShape())
      sizes.push_back(b.getIndexAttr(d));
    auto shaped = MemRefType::get(tt.getShape(), tt.getElementType());
    view = memref::ExpandShapeOp::create(b, shaped, view,
                                         collapseAll(tt.getRank()), sizes);
  }
  return arg;
}

/// A TMA map over operand buffer `buffer` viewed as [rows, K] bytes (K its
/// last extent; 8-bit data, checkLaunchable), of the parameter's type
/// `type` (box, swizzle, fill).
Value tensorMapArg(KB &b, Value buffer, nvgpu::TensorMapDescriptorType type) {
  auto mt = cast<MemRefType>(buffer.getType());
  int64_t k = mt.getShape().back(), rows = mt.getNumElements() / k;
  Value m = buffer;
  if (mt.getRank() != 2) {
    ReassociationIndices outer;
    for (int64_t i = 0; i + 1 < mt.getRank(); ++i)
      outer.push_back(i);
    auto rowsK = MemRefType::get({rows, k}, mt.getElementType());
    m = memref::CollapseShapeOp::create(
        b, rowsK, m,
        SmallVector<ReassociationIndices>{outer, {mt.getRank() - 1}});
  }
  Type u8 = IntegerType::get(b.getContext(), 8, IntegerType::Unsigned);
  auto bytes = MemRefType::get({rows, k}, u8);
  if (m.getType() != bytes) // fp8 elements as the bytes the map copies
    m = UnrealizedConversionCastOp::create(b, bytes, m).getResult(0);
  Value unranked =
      memref::CastOp::create(b, UnrankedMemRefType::get(u8, Attribute()), m);
  SmallVector<Value> box;
  for (int64_t d : type.getTensor().getShape())
    box.push_back(b.idx(d));
  return nvgpu::TmaCreateDescriptorOp::create(b, type, unranked, box);
}

/// Copies the i32 status word back and asserts it is 0, with the runtime's
/// wording of each status a kernel writes (mxmoe/KernelStatus.h); -1, the
/// value set before the launch, means the kernel did not run.
void checkStatus(KB &b, StringRef kernel, Value status) {
  auto hostType = MemRefType::get({1}, b.getI32Type());
  Value host = memref::AllocaOp::create(b, hostType);
  gpu::MemcpyOp::create(b, Type(), ValueRange{}, host, status);
  Value word = b.load(host, b.idx(0));
  std::string prefix = ("mxmoe: kernel '" + kernel + "' ").str();
  cf::AssertOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::ne, word, b.i32(-1)),
      b.getStringAttr(prefix + "did not run (its status word is still -1)"));
  for (int32_t s : {::mxmoe::kKernelStatusOffsetsRejected,
                    ::mxmoe::kKernelStatusSizesRejected,
                    ::mxmoe::kKernelStatusIndicesRejected,
                    ::mxmoe::kKernelStatusExpertsRejected})
    cf::AssertOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::ne, word, b.i32(s)),
        b.getStringAttr(prefix + ::mxmoe::kernelStatusText(s)));
  cf::AssertOp::create(b, b.eq(word, b.i32(::mxmoe::kKernelStatusDone)),
                       b.getStringAttr(prefix + "wrote an unknown status"));
  gpu::DeallocOp::create(b, Type(), ValueRange{}, status);
}

/// Why `op`'s annotation cannot be launched on buffers, checked before any
/// IR is emitted: parameter count, launch shape, TMA maps that
/// `nvgpu.tma.create.descriptor` encodes (8-bit data as UINT8, the map
/// mxmoeRtEncodeTensorMap2D builds for fp8 operands; it has no 4-bit
/// unpacking type).
LogicalResult checkLaunchable(Operation *op, gpu::GPUFuncOp kernel,
                              ArrayAttr bindings) {
  TypeRange params = kernel.getArgumentTypes();
  if (bindings.size() != params.size())
    return op->emitOpError("binds ")
           << bindings.size() << " kernel parameters; its kernel has "
           << params.size();
  auto dims = [&](Operation *from, StringRef name) {
    auto a = from->getAttrOfType<DenseI64ArrayAttr>(name);
    return a && a.size() == 3;
  };
  StringRef grid = MXMoEDialect::GridAttrHelper::getNameStr();
  if (!(dims(op, grid) || dims(kernel, grid)) ||
      !dims(kernel, MXMoEDialect::BlockAttrHelper::getNameStr()))
    return op->emitOpError("has no launch shape: neither it nor kernel @")
           << kernel.getName()
           << " has a 3-element mxmoe.grid, or the kernel has no 3-element "
              "mxmoe.block";
  for (auto [i, attr] : llvm::enumerate(bindings)) {
    auto arg = dyn_cast<KernelArgAttr>(attr);
    if (!arg)
      return op->emitOpError("has a mxmoe.kernel_args entry that is not a "
                             "#mxmoe.kernel_arg");
    if (arg.getKind() != KernelArgKind::tensor_map)
      continue;
    auto info = kernel.getArgAttrOfType<DictionaryAttr>(i, "mxmoe.tensor_map");
    auto dataType = info ? info.getAs<StringAttr>("data_type") : StringAttr();
    if (!isa<nvgpu::TensorMapDescriptorType>(params[i]) || !dataType ||
        dataType.getValue() != "uint8")
      return op->emitOpError("has a TMA map of data type ")
             << (dataType ? dataType.getValue() : "unknown")
             << " (MXFP4 operands are unpacked by the copy), which "
                "nvgpu.tma.create.descriptor cannot encode: launch it from "
                "mxmoe-compile's manifest (mxmoe-run, the C runtime)";
  }
  return success();
}

FailureOr<gpu::GPUFuncOp> annotatedKernel(Operation *op) {
  auto name = op->getAttrOfType<SymbolRefAttr>(
      MXMoEDialect::KernelAttrHelper::getNameStr());
  if (!name || !op->hasAttr(MXMoEDialect::KernelArgsAttrHelper::getNameStr()))
    return op->emitOpError(
        "has no kernel: run convert-mxmoe-to-gpu first (host-launch=false "
        "keeps the op, annotated with its kernel, for bufferization)");
  auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(op, name);
  if (!kernel)
    return op->emitOpError("kernel ")
           << name << " is not a gpu.func in this module (launch the ops "
           << "before lowering the kernel module)";
  return kernel;
}

} // namespace

LogicalResult mlir::mxmoe::kernels::checkKernelLaunch(Operation *op) {
  FailureOr<gpu::GPUFuncOp> kernel = annotatedKernel(op);
  if (failed(kernel))
    return failure();
  return checkLaunchable(op, *kernel,
                         op->getAttrOfType<ArrayAttr>(
                             MXMoEDialect::KernelArgsAttrHelper::getNameStr()));
}

LogicalResult
mlir::mxmoe::kernels::emitKernelLaunch(OpBuilder &ob, Operation *op,
                                       const LaunchBuffers &buffers) {
  FailureOr<gpu::GPUFuncOp> kernel = annotatedKernel(op);
  if (failed(kernel))
    return failure();
  auto bindings = op->getAttrOfType<ArrayAttr>(
      MXMoEDialect::KernelArgsAttrHelper::getNameStr());
  if (failed(checkLaunchable(op, *kernel, bindings)))
    return failure();
  KB b(op->getLoc(), ob);
  TypeRange params = kernel->getArgumentTypes();
  SmallVector<Value> args;
  Value status;
  for (auto [i, attr] : llvm::enumerate(bindings)) {
    auto arg = cast<KernelArgAttr>(attr);
    int64_t n = arg.getIndex();
    switch (arg.getKind()) {
    case KernelArgKind::operand:
      args.push_back(
          operandArg(b, buffers.operand(b, op->getOperand(n)), params[i]));
      break;
    case KernelArgKind::result: {
      Value view;
      auto tt = cast<RankedTensorType>(op->getResult(n).getType());
      args.push_back(resultArg(b, tt, params[i], view));
      // An accumulating grouped GEMM's result starts as a copy of its
      // accumulator: the kernel adds to it (out of place here; launch
      // programs update the accumulator's buffer in place).
      if (auto mm = dyn_cast<GroupedMatmulOp>(op); mm && mm.getAccumulator())
        gpu::MemcpyOp::create(b, Type(), ValueRange{}, view,
                              buffers.operand(b, mm.getAccumulator()));
      buffers.result(b, n, view);
      break;
    }
    case KernelArgKind::tensor_map:
      args.push_back(
          tensorMapArg(b, buffers.operand(b, op->getOperand(n)),
                       cast<nvgpu::TensorMapDescriptorType>(params[i])));
      break;
    case KernelArgKind::status: {
      // -1 before the launch, as the runtime sets it: routing kernels only
      // raise the word (atomic max), the others store it.
      auto mt = MemRefType::get({1}, b.getI32Type());
      status = gpu::AllocOp::create(b, mt, Type(), {}, {}, {}, UnitAttr())
                   .getMemref();
      gpu::MemsetOp::create(b, Type(), ValueRange{}, status, b.i32(-1));
      args.push_back(isa<LLVM::LLVMPointerType>(params[i])
                         ? alignedPointer(b, status, params[i])
                         : status);
      break;
    }
    case KernelArgKind::value:
      args.push_back(arith::ConstantIntOp::create(b, b.getI64Type(), n));
      break;
    }
  }
  auto dims = [&](Operation *from) {
    return from->getAttrOfType<DenseI64ArrayAttr>(
        MXMoEDialect::GridAttrHelper::getNameStr());
  };
  DenseI64ArrayAttr grid = dims(op) ? dims(op) : dims(*kernel);
  auto block = (*kernel)->getAttrOfType<DenseI64ArrayAttr>(
      MXMoEDialect::BlockAttrHelper::getNameStr());
  auto smem = (*kernel)->getAttrOfType<IntegerAttr>(
      MXMoEDialect::DynamicSmemAttrHelper::getNameStr());
  gpu::KernelDim3 g{b.idx(grid[0]), b.idx(grid[1]), b.idx(grid[2])};
  gpu::KernelDim3 t{b.idx(block[0]), b.idx(block[1]), b.idx(block[2])};
  Value smemBytes = smem ? b.i32(smem.getInt()) : Value();
  gpu::LaunchFuncOp::create(b, *kernel, g, t, smemBytes, args);
  if (status)
    checkStatus(b, kernel->getName(), status);
  return success();
}
