//===- Manifest.cpp - manifest rows of a compiled module -----------------===//
//
// What mxmoe-compile's manifest.json says about a module after kernel
// generation: the kernels (with what each implements and its parameter
// bindings), the launch programs, the tiled-MLP shard partitions and the
// MX ops left without kernels. The format: docs/mxmoe-compile.md.
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Target/Manifest.h"
#include "ManifestUtils.h"
#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;
using namespace mlir::mxmoe;

using namespace mlir::mxmoe::target::detail;

llvm::json::Array mlir::mxmoe::target::describeKernels(ModuleOp module,
                                                       StringRef chip) {
  // Which ops (and which function / fqn / pass) each kernel implements:
  // after mxmoe-dedupe-kernels one kernel can serve several ops.
  llvm::StringMap<llvm::json::Array> origin;
  module.walk([&](Operation *op) {
    auto ref = op->getAttrOfType<SymbolRefAttr>(
        MXMoEDialect::KernelAttrHelper::getNameStr());
    if (!ref)
      return;
    llvm::json::Object o{{"op", op->getName().getStringRef()}};
    if (auto fn = op->getParentOfType<FunctionOpInterface>()) {
      o["function"] = fn.getName();
      addFunctionTags(fn, o);
    }
    if (auto axis = op->getAttrOfType<IntegerAttr>("axis"))
      o["axis"] = axis.getInt();
    origin[ref.getLeafReference().getValue()].push_back(std::move(o));
  });
  llvm::json::Array rows;
  module.walk([&](gpu::GPUFuncOp fn) {
    if (!fn.isKernel())
      return;
    llvm::json::Object row{{"name", fn.getName()}, {"chip", chip}};
    // The kernel's IR after kernel generation, hashed: equal hashes, equal
    // PTX (the lowering after this point is deterministic).
    std::string text;
    llvm::raw_string_ostream os(text);
    fn->print(os);
    row["kernel_hash"] = llvm::utohexstr(llvm::xxh3_64bits(text), true, 16);
    // Grouped GEMMs: the MMA strategy (wgmma_fp8_promote,
    // wgmma_fp8_promote_k128, wgmma_bf16_upcast or tcgen05_mxf8f6f4).
    if (auto mma = fn->getAttrOfType<StringAttr>(
            MXMoEDialect::MmaAttrHelper::getNameStr()))
      row["mma"] = mma.getValue();
    // The first op it serves at top level, every op under "uses".
    auto it = origin.find(fn.getName());
    if (it != origin.end() && !it->second.empty()) {
      for (auto &kv : *it->second.front().getAsObject())
        row[kv.first] = kv.second;
      row["uses"] = std::move(it->second);
    }
    llvm::json::Array params;
    for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes())) {
      if (auto tmap =
              fn.getArgAttrOfType<DictionaryAttr>(i, "mxmoe.tensor_map")) {
        // A TMA descriptor the launcher builds (mxmoeRtEncodeTensorMap2D)
        // over the operand's data and copies to device memory; its dims
        // and row stride are those of the bound tensor (the step's
        // binding), box, swizzle and fill are the kernel's.
        auto arr = [&](StringRef key) {
          llvm::json::Array a;
          for (int64_t v : cast<DenseI64ArrayAttr>(tmap.get(key)).asArrayRef())
            a.push_back(v);
          return a;
        };
        params.push_back(llvm::json::Object{
            {"index", static_cast<int64_t>(i)},
            {"kind", "tensor_map"},
            {"bytes", 128},
            {"operand", cast<StringAttr>(tmap.get("operand")).getValue()},
            {"data_type", cast<StringAttr>(tmap.get("data_type")).getValue()},
            {"box", arr("box")},
            {"swizzle", cast<StringAttr>(tmap.get("swizzle")).getValue()},
            {"oob_fill", cast<StringAttr>(tmap.get("oob_fill")).getValue()}});
        continue;
      }
      if (auto scalar = fn.getArgAttrOfType<StringAttr>(i, "mxmoe.scalar")) {
        // A run-time size (grouped GEMM and quantize kernels): the step
        // binds its value.
        params.push_back(llvm::json::Object{{"index", static_cast<int64_t>(i)},
                                            {"kind", "scalar"},
                                            {"type", typeString(t)},
                                            {"name", scalar.getValue()}});
        continue;
      }
      if (auto elem = fn.getArgAttrOfType<TypeAttr>(i, "mxmoe.element_type")) {
        // A pointer whose extent is set by the launch's sizes (an
        // elementwise kernel's may alias: it runs in place).
        params.push_back(
            llvm::json::Object{{"index", static_cast<int64_t>(i)},
                               {"kind", fn.getArgAttr(i, "llvm.noalias")
                                            ? "device pointer (noalias)"
                                            : "device pointer"},
                               {"element_type", typeString(elem.getValue())}});
        continue;
      }
      auto m = cast<MemRefType>(t);
      params.push_back(llvm::json::Object{
          {"index", static_cast<int64_t>(i)},
          {"kind", "device pointer (noalias)"},
          {"elements", m.getNumElements()},
          {"element_type", typeString(m.getElementType())},
          {"bytes",
           m.getNumElements() *
               std::max<int64_t>(1, m.getElementType().getIntOrFloatBitWidth() /
                                        8)}});
    }
    row["params"] = std::move(params);
    auto grid = fn->getAttrOfType<DenseI64ArrayAttr>(
        MXMoEDialect::GridAttrHelper::getNameStr());
    auto block = fn->getAttrOfType<DenseI64ArrayAttr>(
        MXMoEDialect::BlockAttrHelper::getNameStr());
    if (block)
      row["block"] = llvm::json::Array{block[0], block[1], block[2]};
    // Kernels with run-time sizes have no fixed grid: each program step
    // gives its own.
    if (grid)
      row["grid"] = llvm::json::Array{grid[0], grid[1], grid[2]};
    else
      row["grid"] = "per program step";
    auto smem = fn->getAttrOfType<IntegerAttr>(
        MXMoEDialect::DynamicSmemAttrHelper::getNameStr());
    row["dynamic_shared_memory"] = smem ? smem.getInt() : 0;
    bool noalias =
        llvm::any_of(llvm::seq(fn.getNumArguments()), [&](unsigned i) {
          return fn.getArgAttr(i, "llvm.noalias");
        });
    row["alignment"] =
        noalias ? "16-byte aligned buffers; parameters must not alias"
                : "16-byte aligned buffers; an output may be an input "
                  "(elementwise, in place)";
    rows.push_back(std::move(row));
  });
  return rows;
}

llvm::json::Array mlir::mxmoe::target::describeTiledMLPs(ModuleOp module) {
  llvm::json::Array tiledMLPs;
  // One entry per tiled MLP (mxmoe.tiled_mlp_id; fqns may repeat across
  // nested modules, and an op may have none).
  llvm::MapVector<int64_t, llvm::json::Object> byId;
  module.walk([&](scf::ForOp loop) {
    Attribute tag =
        loop->getAttr(MXMoEDialect::TiledMlpAttrHelper::getNameStr());
    auto id = loop->getAttrOfType<IntegerAttr>(
        MXMoEDialect::TiledMlpIdAttrHelper::getNameStr());
    if (!tag || !id)
      return;
    auto fqn = dyn_cast<StringAttr>(tag);
    auto fn = loop->getParentOfType<FunctionOpInterface>();
    llvm::json::Object &e = byId[id.getInt()];
    if (e.empty()) {
      e = llvm::json::Object{
          {"fqn", fqn ? llvm::json::Value(fqn.getValue()) : nullptr},
          {"function", fn ? fn.getName() : StringRef()},
          {"shards", int64_t{0}},
          {"tokens", int64_t{0}},
          {"loops", llvm::json::Array()}};
      if (auto n = loop->getAttrOfType<IntegerAttr>(
              MXMoEDialect::NumShardsAttrHelper::getNameStr()))
        e["num_shards"] = n.getInt();
    }
    auto size = loop->getAttrOfType<IntegerAttr>(
        MXMoEDialect::ShardTokensAttrHelper::getNameStr());
    std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
    if (!size || !lb || !ub) {
      e["static"] = false;
      return;
    }
    e["static"] = true;
    auto *loops = e.getArray("loops");
    int64_t count = *ub - *lb;
    loops->push_back(
        llvm::json::Object{{"first", *lb},
                           {"count", count},
                           {"shard_tokens", size.getInt()},
                           {"function_suffix", loops->empty() ? "" : ".tail"}});
    e["shards"] = *e.getInteger("shards") + count;
    e["tokens"] = *e.getInteger("tokens") + count * size.getInt();
  });
  for (auto &kv : byId) {
    if (!*kv.second.getBoolean("static")) {
      kv.second.erase("shards");
      kv.second.erase("tokens");
    }
    tiledMLPs.push_back(std::move(kv.second));
  }
  return tiledMLPs;
}

llvm::json::Array mlir::mxmoe::target::describeUncompiled(ModuleOp module) {
  llvm::json::Array uncompiled;
  struct Uncompiled {
    Location loc;
    std::string reason;
    SmallVector<std::string> items;
  };
  llvm::MapVector<StringRef, Uncompiled> byTiledMLP;
  module.walk([&](Operation *op) {
    std::optional<Precision> precision;
    StringRef fqn;
    if (auto lin = dyn_cast<LinearOp>(op)) {
      precision = lin.getPrecision();
      fqn = lin.getFqn();
    } else if (auto sgm = dyn_cast<ScaledGroupedMatmulOp>(op)) {
      precision = sgm.getPrecision();
      fqn = sgm.getFqn();
    } else {
      return;
    }
    if (!precision || *precision == Precision::bf16)
      return;
    StringRef tiled, dynamicWhy;
    bool staticLoop = false;
    if (auto loop = op->getParentOfType<scf::ForOp>())
      for (StringRef key :
           {MXMoEDialect::TiledMlpAttrHelper::getNameStr(),
            MXMoEDialect::TiledMlpBackwardAttrHelper::getNameStr()})
        if (auto name = loop->getAttrOfType<StringAttr>(key)) {
          tiled = name.getValue();
          staticLoop =
              loop->hasAttr(MXMoEDialect::ShardTokensAttrHelper::getNameStr());
          if (auto why = loop->getAttrOfType<StringAttr>(
                  MXMoEDialect::DynamicShardsAttrHelper::getNameStr()))
            dynamicWhy = why.getValue();
        }
    std::string where =
        "inside the shard loop of tiled MLP '" + tiled.str() + "' (";
    std::string reason =
        tiled.empty() ? "not expanded (dynamic shape)"
        : staticLoop  ? where + "mxmoe-tile-mlp expands MX linears only)"
        : !dynamicWhy.empty()
            ? where + "run-time shard shapes: " + dynamicWhy.str() +
                  "; MX kernels need static shapes)"
            : where + "dynamic token count; MX kernels need static shapes)";
    auto fn = op->getParentOfType<FunctionOpInterface>();
    uncompiled.push_back(
        llvm::json::Object{{"fqn", fqn},
                           {"op", op->getName().getStringRef()},
                           {"function", fn ? fn.getName() : StringRef()},
                           {"precision", stringifyPrecision(*precision)},
                           {"reason", reason}});
    Uncompiled &entry =
        byTiledMLP.try_emplace(tiled, Uncompiled{op->getLoc(), reason, {}})
            .first->second;
    std::string item =
        (fqn + " (" + stringifyPrecision(*precision) + ")").str();
    if (!llvm::is_contained(entry.items, item))
      entry.items.push_back(item);
  });
  for (auto &[tiled, entry] : byTiledMLP)
    emitWarning(entry.loc)
        << "mxmoe: not compiled to kernels, " << entry.reason << ": "
        << llvm::join(entry.items, ", ")
        << "; they stay in the host IR (model.mlir) and are listed under "
           "\"uncompiled\" in the manifest";
  return uncompiled;
}
