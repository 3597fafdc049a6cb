//===- DedupeKernels.cpp - merge identical generated kernels --------------===//
//
// mxmoe-dedupe-kernels: see Passes.td. Kernels are bucketed by a structural
// hash of their IR without the name, then compared exactly within a bucket;
// the first of each set of identical kernels is kept and every symbol use of
// the others is redirected to it.
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Conversion/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"

namespace mlir::mxmoe {
#define GEN_PASS_DEF_MXMOEDEDUPEKERNELS
#include "mxmoe/Conversion/Passes.h.inc"
} // namespace mlir::mxmoe

using namespace mlir;

namespace {

/// The kernel's attributes without its symbol name.
SmallVector<NamedAttribute> attrsWithoutName(gpu::GPUFuncOp fn) {
  SmallVector<NamedAttribute> v;
  for (NamedAttribute x : fn->getAttrs())
    if (x.getName() != SymbolTable::getSymbolAttrName())
      v.push_back(x);
  return v;
}

/// A hash of the kernel's IR without its name: op names, attributes
/// (uniqued, so hashed by identity), types, operand numbering and region
/// structure. Equal kernels have equal hashes; candidates with equal
/// hashes are then compared exactly (`equivalent`).
llvm::hash_code structuralHash(gpu::GPUFuncOp fn) {
  llvm::DenseMap<Value, unsigned> ids;
  llvm::hash_code h =
      llvm::hash_value(fn.getFunctionType().getAsOpaquePointer());
  for (NamedAttribute a : attrsWithoutName(fn))
    h = llvm::hash_combine(h, a.getName().getAsOpaquePointer(),
                           a.getValue().getAsOpaquePointer());
  fn->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == fn.getOperation()) {
      for (Region &r : op->getRegions())
        for (Block &b : r)
          for (BlockArgument arg : b.getArguments())
            ids.try_emplace(arg, ids.size());
      return;
    }
    h = llvm::hash_combine(h, op->getName().getAsOpaquePointer(),
                           op->getRawDictionaryAttrs().getAsOpaquePointer(),
                           op->getNumRegions(), op->getNumSuccessors());
    for (Value v : op->getOperands()) {
      auto it = ids.find(v);
      h = llvm::hash_combine(h, it == ids.end() ? ~0u : it->second);
    }
    for (Value r : op->getResults()) {
      h = llvm::hash_combine(h, r.getType().getAsOpaquePointer());
      ids.try_emplace(r, ids.size());
    }
    for (Region &region : op->getRegions())
      for (Block &b : region) {
        h = llvm::hash_combine(h, b.getNumArguments());
        for (BlockArgument arg : b.getArguments()) {
          h = llvm::hash_combine(h, arg.getType().getAsOpaquePointer());
          ids.try_emplace(arg, ids.size());
        }
      }
  });
  return h;
}

/// Whether two kernels are the same IR apart from their names: function
/// type, attributes (argument attributes included) and body, compared
/// structurally (OperationEquivalence, locations ignored).
bool equivalent(gpu::GPUFuncOp a, gpu::GPUFuncOp b) {
  if (a.getFunctionType() != b.getFunctionType() ||
      attrsWithoutName(a) != attrsWithoutName(b))
    return false;
  return OperationEquivalence::isRegionEquivalentTo(
      &a.getBody(), &b.getBody(), OperationEquivalence::IgnoreLocations);
}

struct MXMoEDedupeKernelsPass
    : mxmoe::impl::MXMoEDedupeKernelsBase<MXMoEDedupeKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
      // In module order: a kernel equal to a kept one of its structural
      // hash bucket is a duplicate of it, else it is kept.
      llvm::DenseMap<llvm::hash_code, SmallVector<gpu::GPUFuncOp>> kept;
      SmallVector<std::pair<gpu::GPUFuncOp, gpu::GPUFuncOp>> duplicates;
      for (auto fn : gpuModule.getOps<gpu::GPUFuncOp>()) {
        if (!fn.isKernel())
          continue;
        SmallVector<gpu::GPUFuncOp> &bucket = kept[structuralHash(fn)];
        auto it = llvm::find_if(
            bucket, [&](gpu::GPUFuncOp k) { return equivalent(k, fn); });
        if (it == bucket.end())
          bucket.push_back(fn);
        else
          duplicates.push_back({fn, *it});
      }
      for (auto [dup, keep] : duplicates) {
        if (failed(SymbolTable::replaceAllSymbolUses(
                dup, SymbolTable::getSymbolName(keep), module))) {
          dup.emitError("mxmoe-dedupe-kernels: cannot redirect the uses of ")
              << dup.getName() << " to " << keep.getName();
          return signalPassFailure();
        }
        dup.erase();
      }
    }
  }
};

} // namespace
