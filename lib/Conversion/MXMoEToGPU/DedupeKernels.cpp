//===- DedupeKernels.cpp - merge identical generated kernels --------------===//
//
// mxmoe-dedupe-kernels: see Passes.td. Kernels are bucketed by a structural
// hash of their IR without the name, then compared exactly within a bucket;
// the first of each set of identical kernels is kept and every symbol use of
// the others is redirected to it in one walk of the module (linear in the
// module's size: a per-duplicate SymbolTable::replaceAllSymbolUses walks the
// whole module each time, quadratic for a model of many layers).
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Conversion/Passes.h"

#include "mlir/IR/AttrTypeSubElements.h"
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

/// Duplicate kernel name -> the name of the kept kernel it is equal to.
using Redirects = llvm::DenseMap<StringAttr, StringAttr>;

/// Visits the ops of `region` and of their regions, not those inside nested
/// symbol tables (whose references mean other symbols), as
/// SymbolTable::replaceAllSymbolUses does within one scope.
void walkSymbolScope(Region &region, function_ref<void(Operation *)> fn) {
  SmallVector<Region *> worklist{&region};
  while (!worklist.empty())
    for (Operation &op : worklist.pop_back_val()->getOps()) {
      fn(&op);
      if (!op.hasTrait<OpTrait::SymbolTable>())
        for (Region &r : op.getRegions())
          worklist.push_back(&r);
    }
}

/// `ref` with a duplicate kernel replaced by its kept one, as
/// SymbolTable::replaceAllSymbolUses rewrites references in one scope: in
/// the module's scope (`container` = the gpu module's name) a kernel is
/// `@<container>::@dup...`, in the gpu module's own scope (null
/// `container`) it is `@dup...`. Other references are returned unchanged.
SymbolRefAttr redirect(SymbolRefAttr ref, const Redirects &to,
                       StringAttr container) {
  ArrayRef<FlatSymbolRefAttr> rest = ref.getNestedReferences();
  if (!container) {
    auto it = to.find(ref.getRootReference());
    return it == to.end() ? ref : SymbolRefAttr::get(it->second, rest);
  }
  if (ref.getRootReference() != container || rest.empty())
    return ref;
  auto it = to.find(rest.front().getAttr());
  if (it == to.end())
    return ref;
  SmallVector<FlatSymbolRefAttr> path(rest);
  path.front() = FlatSymbolRefAttr::get(it->second);
  return SymbolRefAttr::get(container, path);
}

/// Rewrites, in one walk per scope, every reference to a duplicate kernel
/// of `gpuModule` into one to its kept kernel: from the module's scope
/// (`mxmoe.kernel`, `gpu.launch_func`) and from the gpu module's own.
void redirectUses(ModuleOp module, gpu::GPUModuleOp gpuModule,
                  const Redirects &to) {
  auto run = [&](Region &scope, StringAttr container) {
    AttrTypeReplacer replacer;
    // The parts of a reference are not visited on their own (skip):
    // `@other::@dup` names another symbol than `@dup`.
    replacer.addReplacement(
        [&](SymbolRefAttr ref) -> std::pair<Attribute, WalkResult> {
          return {redirect(ref, to, container), WalkResult::skip()};
        });
    walkSymbolScope(scope,
                    [&](Operation *op) { replacer.replaceElementsIn(op); });
  };
  run(module.getBodyRegion(), gpuModule.getSymNameAttr());
  run(gpuModule.getBodyRegion(), StringAttr());
}

/// Erases every kernel of `gpuModule` equal to an earlier one (module
/// order) and redirects its uses to that one.
void dedupe(ModuleOp module, gpu::GPUModuleOp gpuModule) {
  // A kernel equal to a kept one of its structural hash bucket is a
  // duplicate of it, else it is kept.
  llvm::DenseMap<llvm::hash_code, SmallVector<gpu::GPUFuncOp>> kept;
  SmallVector<gpu::GPUFuncOp> duplicates;
  Redirects to;
  for (auto fn : gpuModule.getOps<gpu::GPUFuncOp>()) {
    if (!fn.isKernel())
      continue;
    SmallVector<gpu::GPUFuncOp> &bucket = kept[structuralHash(fn)];
    auto it = llvm::find_if(
        bucket, [&](gpu::GPUFuncOp k) { return equivalent(k, fn); });
    if (it == bucket.end()) {
      bucket.push_back(fn);
      continue;
    }
    duplicates.push_back(fn);
    to[SymbolTable::getSymbolName(fn)] = SymbolTable::getSymbolName(*it);
  }
  if (duplicates.empty())
    return;
  for (gpu::GPUFuncOp dup : duplicates)
    dup.erase();
  redirectUses(module, gpuModule, to);
}

struct MXMoEDedupeKernelsPass
    : mlir::mxmoe::impl::MXMoEDedupeKernelsBase<MXMoEDedupeKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>())
      dedupe(module, gpuModule);
  }
};

} // namespace
