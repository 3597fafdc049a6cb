//===- Compile.cpp - the mxmoe compilation driver as a library ------------===//

#include "mxmoe/Pipelines/Compile.h"
#include "mxmoe/Conversion/Chips.h"
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
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/xxhash.h"

#include <thread>

using namespace mlir;
using namespace mlir::mxmoe;

namespace {

std::string typeString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

/// Manifest rows for the kernels of the (just converted) module.
llvm::json::Array describeKernels(ModuleOp module, StringRef chip) {
  // Which ops (and which function / fqn / pass) each kernel implements:
  // after mxmoe-dedupe-kernels one kernel can serve several ops.
  llvm::StringMap<llvm::json::Array> origin;
  module.walk([&](Operation *op) {
    auto ref = op->getAttrOfType<SymbolRefAttr>("mxmoe.kernel");
    if (!ref)
      return;
    llvm::json::Object o{{"op", op->getName().getStringRef()}};
    if (auto fn = op->getParentOfType<FunctionOpInterface>()) {
      o["function"] = fn.getName();
      if (auto fqn = fn->getAttrOfType<StringAttr>("mxmoe.fqn"))
        o["fqn"] = fqn.getValue();
      if (auto pass = fn->getAttrOfType<StringAttr>("mxmoe.pass"))
        o["pass"] = pass.getValue();
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
    if (auto mma = fn->getAttrOfType<StringAttr>("mxmoe.mma"))
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
        // A pointer whose extent is set by the launch's sizes.
        params.push_back(
            llvm::json::Object{{"index", static_cast<int64_t>(i)},
                               {"kind", "device pointer (noalias)"},
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
    auto grid = fn->getAttrOfType<DenseI64ArrayAttr>("mxmoe.grid");
    auto block = fn->getAttrOfType<DenseI64ArrayAttr>("mxmoe.block");
    if (block)
      row["block"] = llvm::json::Array{block[0], block[1], block[2]};
    // Kernels with run-time sizes have no fixed grid: each program step
    // gives its own.
    if (grid)
      row["grid"] = llvm::json::Array{grid[0], grid[1], grid[2]};
    else
      row["grid"] = "per program step";
    auto smem = fn->getAttrOfType<IntegerAttr>("mxmoe.dynamic_smem");
    row["dynamic_shared_memory"] = smem ? smem.getInt() : 0;
    row["alignment"] = "16-byte aligned buffers; parameters must not alias";
    rows.push_back(std::move(row));
  });
  return rows;
}

/// Launch programs: every function whose body is a straight line of
/// kernel-annotated mxmoe ops (the expanded <fqn>.forward / .input_grad /
/// .weight_grad functions) becomes a list of steps a runtime can replay:
/// each step names its kernel and binds every kernel parameter to a
/// function argument, an intermediate buffer, a status buffer, or a tensor
/// map over one of those (from the ops' `mxmoe.kernel_args`).
llvm::json::Array describePrograms(ModuleOp module,
                                   llvm::json::Array &withoutProgram) {
  llvm::json::Array programs;
  auto tensorInfo = [](Type t) {
    auto tt = cast<RankedTensorType>(t);
    llvm::json::Array shape;
    for (int64_t d : tt.getShape())
      shape.push_back(d);
    int64_t bits = tt.getElementType().getIntOrFloatBitWidth();
    llvm::json::Object o{{"shape", std::move(shape)},
                         {"dtype", typeString(tt.getElementType())},
                         {"bytes", (tt.getNumElements() * bits + 7) / 8}};
    if (Attribute enc = tt.getEncoding()) {
      std::string e;
      llvm::raw_string_ostream os(e);
      enc.print(os);
      o["layout"] = e;
    }
    return o;
  };
  module.walk([&](func::FuncOp fn) {
    if (fn.isExternal())
      return;
    // Replayable: kernel ops, the values of ops with nothing to compute
    // (convert-mxmoe-to-gpu: empty results are zero-byte buffers, the
    // zeros of a GEMM with contraction extent 0 a zero-filled buffer; no
    // step), reshapes (the same bytes under another shape), i32 constants
    // (the offsets of a plain linear) and the return.
    auto computeFree = [](Operation &op) {
      return op.hasAttr("mxmoe.empty_result") ||
             op.hasAttr("mxmoe.zero_result");
    };
    auto kernelOrFree = [&](Operation &op) {
      return op.hasAttr("mxmoe.kernel_args") || computeFree(op);
    };
    auto replayable = [&](Operation &op) {
      if (isa<func::ReturnOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
              op) ||
          kernelOrFree(op))
        return true;
      if (auto c = dyn_cast<arith::ConstantOp>(op))
        if (auto d = dyn_cast<DenseIntElementsAttr>(c.getValue()))
          return d.getElementType().isInteger(32);
      return false;
    };
    Operation *blocker = nullptr;
    for (Operation &op : fn.getBody().front())
      if (!blocker && !replayable(op))
        blocker = &op;
    bool hasKernel = llvm::any_of(fn.getBody().front(), kernelOrFree);
    if (blocker && hasKernel) {
      // An expanded function that also computes on the host (e.g. a
      // linear's bias): its kernels exist, a runtime cannot replay it.
      withoutProgram.push_back(llvm::json::Object{
          {"function", fn.getName()},
          {"reason", ("host work: '" + blocker->getName().getStringRef() +
                      "' is not a kernel launch (e.g. a linear's bias add)")
                         .str()}});
      return;
    }
    auto pass = fn->getAttrOfType<StringAttr>("mxmoe.pass");
    if (blocker && pass && pass.getValue() != "backward") {
      // An expanded function without MX kernels (a linear's bias_grad: an
      // f32 reduction over the tokens).
      withoutProgram.push_back(llvm::json::Object{
          {"function", fn.getName()},
          {"reason", ("host work only, no MX kernels ('" +
                      blocker->getName().getStringRef() + "')")
                         .str()}});
      return;
    }
    if (blocker || !hasKernel)
      return;
    llvm::DenseMap<Value, llvm::json::Object> where;
    llvm::json::Array args, buffers, steps, returns, constants;
    for (BlockArgument a : fn.getArguments()) {
      llvm::json::Object info = tensorInfo(a.getType());
      args.push_back(llvm::json::Object(info));
      where[a] =
          llvm::json::Object{{"arg", static_cast<int64_t>(a.getArgNumber())}};
    }
    for (Operation &op : fn.getBody().front()) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        for (Value v : ret.getOperands()) {
          llvm::json::Object r(where[v]);
          llvm::json::Object info = tensorInfo(v.getType());
          r["shape"] = std::move(info["shape"]);
          r["dtype"] = std::move(info["dtype"]);
          returns.push_back(std::move(r));
        }
        continue;
      }
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op)) {
        where[op.getResult(0)] = llvm::json::Object(where[op.getOperand(0)]);
        continue;
      }
      if (auto c = dyn_cast<arith::ConstantOp>(op); c && !computeFree(op)) {
        auto d = cast<DenseIntElementsAttr>(c.getValue());
        llvm::json::Array values;
        for (const APInt &v : d.getValues<APInt>())
          values.push_back(v.getSExtValue());
        llvm::json::Object info = tensorInfo(c.getType());
        info["values"] = std::move(values);
        where[c.getResult()] = llvm::json::Object{
            {"constant", static_cast<int64_t>(constants.size())}};
        constants.push_back(std::move(info));
        continue;
      }
      for (Value r : op.getResults()) {
        llvm::json::Object info = tensorInfo(r.getType());
        info["id"] = static_cast<int64_t>(buffers.size());
        if (op.hasAttr("mxmoe.zero_result"))
          info["zero"] = true; // the runtime zero-fills it
        where[r] = llvm::json::Object{
            {"buffer", static_cast<int64_t>(buffers.size())}};
        buffers.push_back(std::move(info));
      }
      if (computeFree(op))
        continue; // no step
      llvm::json::Array bind;
      for (Attribute a : op.getAttrOfType<ArrayAttr>("mxmoe.kernel_args")) {
        StringRef s = cast<StringAttr>(a).getValue();
        bool tmap = s.consume_front("tensor_map:");
        llvm::json::Object b;
        if (s == "status") {
          b["status"] = true;
        } else if (s.consume_front("value:")) {
          int64_t v = 0;
          s.getAsInteger(10, v);
          b["value"] = v;
        } else {
          auto [kind, idx] = s.split(':');
          unsigned i = 0;
          idx.getAsInteger(10, i);
          Value v = kind == "operand" ? op.getOperand(i) : op.getResult(i);
          b = llvm::json::Object(where[v]);
          if (tmap) {
            // The bound tensor viewed as [rows, K] (K its last extent, in
            // elements; fp4 rows hold two elements per byte).
            auto tt = cast<RankedTensorType>(v.getType());
            int64_t k = tt.getShape().back();
            int64_t bits = tt.getElementType().getIntOrFloatBitWidth();
            b["tensor_map"] = llvm::json::Object{
                {"dims", llvm::json::Array{k, tt.getNumElements() / k}},
                {"row_stride_bytes", k * bits / 8}};
          }
        }
        bind.push_back(std::move(b));
      }
      llvm::json::Object step{
          {"op", op.getName().getStringRef()},
          {"kernel", cast<SymbolRefAttr>(op.getAttr("mxmoe.kernel"))
                         .getLeafReference()
                         .getValue()},
          {"bindings", std::move(bind)}};
      // The launch grid of a kernel with run-time sizes.
      if (auto grid = op.getAttrOfType<DenseI64ArrayAttr>("mxmoe.grid"))
        step["grid"] = llvm::json::Array{grid[0], grid[1], grid[2]};
      steps.push_back(std::move(step));
    }
    llvm::json::Object prog{
        {"function", fn.getName()},      {"args", std::move(args)},
        {"buffers", std::move(buffers)}, {"constants", std::move(constants)},
        {"steps", std::move(steps)},     {"returns", std::move(returns)}};
    if (auto fqn = fn->getAttrOfType<StringAttr>("mxmoe.fqn"))
      prog["fqn"] = fqn.getValue();
    if (auto pass = fn->getAttrOfType<StringAttr>("mxmoe.pass"))
      prog["pass"] = pass.getValue();
    programs.push_back(std::move(prog));
  });
  return programs;
}

std::string cString(StringRef text) {
  std::string s = "\"";
  for (char c : text) {
    switch (c) {
    case '\n':
      s += "\\n\"\n\"";
      break;
    case '"':
      s += "\\\"";
      break;
    case '\\':
      s += "\\\\";
      break;
    default:
      s += c;
    }
  }
  return s + "\"";
}

/// Reads a whole file ("" when it cannot be read).
std::string slurp(StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  return buf ? (*buf)->getBuffer().str() : std::string();
}

/// Runs `toolkit`/bin/ptxas on `ptx` for `chip`; fills cubin or cubinNote.
LogicalResult assemble(ModuleOp module, const std::string &toolkit,
                       ChipArtifacts &art) {
  std::string ptxas = toolkit + "/bin/ptxas";
  if (toolkit.empty() || !llvm::sys::fs::can_execute(ptxas)) {
    art.cubinNote = toolkit.empty() ? "not built: no CUDA toolkit given"
                                    : "not built: ptxas not found at " + ptxas;
    return success();
  }
  SmallString<128> in, out;
  if (llvm::sys::fs::createTemporaryFile("mxmoe", "ptx", in) ||
      llvm::sys::fs::createTemporaryFile("mxmoe", "cubin", out))
    return emitError(module.getLoc(),
                     "mxmoe: cannot create temporary files for ptxas");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec)
      return emitError(module.getLoc(), "mxmoe: cannot write ")
             << in << ": " << ec.message();
    os << art.ptx;
  }
  std::string arch = "-arch=" + art.chip;
  // -split-compile 0: ptxas optimizes the kernels on as many threads as the
  // machine has CPUs (same machine code; the GEMM kernels dominate).
  StringRef args[] = {ptxas, arch, "-split-compile", "0", in, "-o", out};
  std::string err;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, {}, 0, 0, &err);
  art.cubin = rc == 0 ? slurp(out) : std::string();
  if (rc == 0 && art.cubin.empty()) {
    llvm::sys::fs::remove(in);
    llvm::sys::fs::remove(out);
    return emitError(module.getLoc(), "mxmoe: ")
           << ptxas << " exited 0 but wrote no cubin for " << art.chip;
  }
  llvm::sys::fs::remove(in);
  llvm::sys::fs::remove(out);
  if (rc != 0)
    return emitError(module.getLoc(), "mxmoe: ptxas failed for ")
           << art.chip << ": " << err;
  return success();
}

/// Checks the options before any pass runs, each error naming the option
/// and its value (diagnostics carry the module's location only: a failing
/// pass would otherwise print the whole module after it).
LogicalResult checkOptions(Location loc, const CompileOptions &options) {
  for (const std::string &chip : options.chips)
    if (!isSupportedChip(chip))
      return emitError(loc, "mxmoe: unsupported chip '")
             << chip << "'; supported: " << kSupportedChips;
  if (options.chips.empty())
    return emitError(loc, "mxmoe: no target chip given (")
           << kSupportedChips << ")";
  bool anySm90 = llvm::any_of(
      options.chips, [](const std::string &c) { return !isTcgen05Chip(c); });
  if (options.gemmTileN != 64 && options.gemmTileN != 128 &&
      !(options.gemmTileN == 256 && !anySm90))
    return emitError(loc, "mxmoe: gemm-tile-n must be 64 or 128 (and 256 "
                          "only when every chip is sm_100a or sm_103a), got ")
           << options.gemmTileN;
  if (options.gemmStages != 0 &&
      (options.gemmStages < 2 || options.gemmStages > 8))
    return emitError(loc, "mxmoe: gemm-stages must be 0 (auto) or in [2, 8], "
                          "got ")
           << options.gemmStages;
  if (options.gemmCTAs < 1 || options.gemmCTAs > 2147483647)
    return emitError(loc, "mxmoe: gemm-ctas must be in [1, 2147483647] (the "
                          "GPU's SM count, e.g. 132), got ")
           << options.gemmCTAs;
  if (options.tokensPerShard < 1)
    return emitError(loc, "mxmoe: tokens-per-shard must be >= 1, got ")
           << options.tokensPerShard;
  if (options.llvmOptLevel < 0 || options.llvmOptLevel > 3)
    return emitError(loc, "mxmoe: llvm-opt-level must be 0, 1, 2 or 3, got ")
           << options.llvmOptLevel;
  return success();
}

/// The shard partition of every tiled MLP's forward loops, so a runtime
/// runs the shards the kernels were compiled for: per static loop, its
/// shards [first, first + count) of `shard_tokens` tokens and the suffix
/// of its MX linears' functions ("": <linear fqn>.forward ..., ".tail":
/// <linear fqn>.tail.forward ...).
llvm::json::Array describeTiledMLPs(ModuleOp module) {
  llvm::json::Array tiledMLPs;
  // One entry per tiled MLP (mxmoe.tiled_mlp_id; fqns may repeat across
  // nested modules, and an op may have none).
  llvm::MapVector<int64_t, llvm::json::Object> byId;
  module.walk([&](scf::ForOp loop) {
    Attribute tag = loop->getAttr("mxmoe.tiled_mlp");
    auto id = loop->getAttrOfType<IntegerAttr>("mxmoe.tiled_mlp_id");
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
      if (auto n = loop->getAttrOfType<IntegerAttr>("mxmoe.num_shards"))
        e["num_shards"] = n.getInt();
    }
    auto size = loop->getAttrOfType<IntegerAttr>("mxmoe.shard_tokens");
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

/// MX ops the expansion left in place (inside tiled-MLP shard loops: their
/// token count is dynamic) get no kernels: say so, in the diagnostics (one
/// warning per tiled MLP, at its location) and in the manifest, instead of
/// letting the policy report's "mxfp8" stand.
llvm::json::Array describeUncompiled(ModuleOp module) {
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
      for (StringRef key : {"mxmoe.tiled_mlp", "mxmoe.tiled_mlp_backward"})
        if (auto name = loop->getAttrOfType<StringAttr>(key)) {
          tiled = name.getValue();
          staticLoop = loop->hasAttr("mxmoe.shard_tokens");
          if (auto why =
                  loop->getAttrOfType<StringAttr>("mxmoe.dynamic_shards"))
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

/// Applies the caller's configuration to a pass manager of compileModule
/// and times its passes under `timing` (when that scope is enabled: the
/// caller gave CompileOptions::timing).
void configure(PassManager &pm, const CompileOptions &options,
               TimingScope &timing) {
  if (options.configure)
    options.configure(pm);
  if (timing)
    pm.enableTiming(timing);
}

/// What one chip's compilation produces.
struct ChipJob {
  std::string chip;
  LogicalResult status = success();
  llvm::json::Array rows;
  ChipArtifacts art;
  std::string modelIR;              ///< first chip only
  llvm::json::Array programs;       ///< first chip only
  llvm::json::Array withoutProgram; ///< first chip only
};

/// Kernel generation, NVVM lowering, PTX and ptxas per chip, on a clone of
/// the MX-level module. Chips are independent: with several chips and a
/// multithreaded context they run on their own threads (MLIR contexts
/// are thread-safe for passes on distinct IR; diagnostics are emitted
/// under the context's lock), then are assembled in the given order. Each
/// chip's stages are timed in a scope of `timing` named after the chip.
LogicalResult compileChips(ModuleOp module, const CompileOptions &options,
                           const DefaultPipelineOptions &opts,
                           TimingScope &timing, std::vector<ChipJob> &jobs) {
  MLIRContext *context = module.getContext();
  jobs.resize(options.chips.size());
  auto runChip = [&](ChipJob &job, bool first) -> LogicalResult {
    const std::string &chip = job.chip;
    TimingScope chipTime = timing.nest(StringRef(chip));
    TimingScope stage = chipTime.nest("clone");
    OwningOpRef<ModuleOp> clone = module.clone();
    stage = chipTime.nest("kernel passes");
    PassManager convert(context);
    configure(convert, options, stage);
    // checkOptions admitted only supported chip names.
    buildKernelPipeline(convert, *symbolizeChip(chip), opts);
    if (failed(convert.run(*clone)))
      return failure();
    if (first) {
      stage = chipTime.nest("model IR text and programs");
      llvm::raw_string_ostream os(job.modelIR);
      clone->print(os);
      job.programs = describePrograms(*clone, job.withoutProgram);
    }
    stage = chipTime.nest("manifest rows");
    job.rows = describeKernels(*clone, chip);
    job.art.chip = chip;
    if (job.rows.empty() || options.programsOnly)
      return success();
    stage = chipTime.nest("PTX passes");
    PassManager lower(context);
    configure(lower, options, stage);
    buildPTXPipeline(lower, chip, opts.llvmOptLevel);
    if (failed(lower.run(*clone)))
      return failure();
    stage = chipTime.nest("ptxas");
    clone->walk([&](gpu::BinaryOp op) {
      for (Attribute a : op.getObjects())
        if (auto obj = dyn_cast<gpu::ObjectAttr>(a))
          job.art.ptx = obj.getObject().getValue().str();
    });
    if (!retargetPtx(job.art.ptx, chip))
      return emitError(module.getLoc(),
                       "mxmoe: no .target directive to retarget to ")
             << chip << " in the generated PTX";
    return assemble(module, options.toolkit, job.art);
  };
  for (size_t i = 0; i < jobs.size(); ++i)
    jobs[i].chip = options.chips[i];
  bool parallel = options.parallelChips && jobs.size() > 1 &&
                  context->isMultithreadingEnabled();
  if (parallel) {
    // A pass manager loads the dialects its passes depend on when it
    // starts; loading is not thread-safe, so load them all here first
    // (callers whose context loaded every dialect already pay nothing).
    DialectRegistry deps;
    for (const std::string &chip : options.chips) {
      PassManager pm(context);
      buildKernelPipeline(pm, *symbolizeChip(chip), opts);
      buildPTXPipeline(pm, chip, opts.llvmOptLevel);
      pm.getDependentDialects(deps);
    }
    context->appendDialectRegistry(deps);
    for (StringRef name : deps.getDialectNames())
      context->getOrLoadDialect(name);
    std::vector<std::thread> threads;
    for (size_t i = 1; i < jobs.size(); ++i)
      threads.emplace_back(
          [&, i] { jobs[i].status = runChip(jobs[i], false); });
    jobs[0].status = runChip(jobs[0], true);
    for (std::thread &t : threads)
      t.join();
  } else {
    for (size_t i = 0; i < jobs.size(); ++i)
      jobs[i].status = runChip(jobs[i], i == 0);
  }
  for (ChipJob &job : jobs)
    if (failed(job.status))
      return failure();
  return success();
}

} // namespace

bool mlir::mxmoe::parseCompileOption(StringRef option, StringRef value,
                                     CompileOptions &opts, std::string &error) {
  auto bad = [&](StringRef valid) {
    error = ("mxmoe: " + option + " must be " + valid + ", got '" + value + "'")
                .str();
    return false;
  };
  // field = the parsed value, or the error listing `valid`.
  auto set = [&](auto &field, auto parsed, StringRef valid) {
    if (!parsed)
      return bad(valid);
    field = *parsed;
    return true;
  };
  if (option == "rounding")
    return set(opts.rounding, symbolizeRoundingMode(value),
               "floor, rceil, ceil or even");
  if (option == "recipe")
    return set(opts.recipe, symbolizeRecipeChoice(value),
               "mx32, mx128 or auto");
  if (option == "tile-rule")
    return set(opts.tileRule, symbolizeShardRule(value), "tokens or square");
  if (option == "gemm-sm90-mma")
    return set(opts.gemmSm90Mma, symbolizeSm90Mma(value), "fp8, bf16 or auto");
  error = ("mxmoe: unknown option '" + option + "'").str();
  return false;
}

LogicalResult mlir::mxmoe::compileModule(ModuleOp module,
                                         const CompileOptions &requested,
                                         CompileResult &result) {
  MLIRContext *context = module.getContext();
  // A chip given twice is compiled once.
  CompileOptions options = requested;
  options.chips.clear();
  for (const std::string &chip : requested.chips)
    if (!llvm::is_contained(options.chips, chip))
      options.chips.push_back(chip);
  // Options are checked before any pass runs.
  Location loc = module.getLoc();
  if (failed(checkOptions(loc, options)))
    return failure();
  TimingScope untimed;
  TimingScope &timing = options.timing ? *options.timing : untimed;

  // Model level -> MX level. The policy report goes through a temporary
  // file when the caller did not ask for one.
  DefaultPipelineOptions opts = options;
  SmallString<128> reportPath(opts.policyReport);
  bool tempReport = reportPath.empty();
  if (tempReport &&
      llvm::sys::fs::createTemporaryFile("mxmoe-policy", "json", reportPath))
    return emitError(module.getLoc(),
                     "mxmoe: cannot create a temporary policy report");
  opts.policyReport = reportPath.str().str();
  TimingScope stage = timing.nest("model passes");
  PassManager model(context);
  configure(model, options, stage);
  buildModelPipeline(model, opts);
  LogicalResult modelOk = [&] {
    // Remarks of the policy go to the report, not to the caller.
    ScopedDiagnosticHandler quiet(context, [](Diagnostic &d) {
      return success(d.getSeverity() == DiagnosticSeverity::Remark);
    });
    return model.run(module);
  }();
  result.policyReport = slurp(reportPath);
  if (tempReport)
    llvm::sys::fs::remove(reportPath);
  if (failed(modelOk))
    return failure();

  stage = timing.nest("tiled MLPs and uncompiled ops");
  llvm::json::Array tiledMLPs = describeTiledMLPs(module);

  llvm::json::Array uncompiled = describeUncompiled(module);
  stage.stop();

  std::vector<ChipJob> jobs;
  if (failed(compileChips(module, options, opts, timing, jobs)))
    return failure();

  stage = timing.nest("manifest and header");
  llvm::json::Array manifest;
  llvm::json::Array programs = std::move(jobs.front().programs);
  llvm::json::Array withoutProgram = std::move(jobs.front().withoutProgram);
  // Each warning is at its function (created at the op it was expanded
  // from; the last of that name in walk order), looked up in one walk.
  llvm::StringMap<Location> functionLocs;
  if (!withoutProgram.empty())
    module.walk([&](func::FuncOp f) {
      functionLocs.insert_or_assign(f.getName(), f.getLoc());
    });
  for (const llvm::json::Value &v : withoutProgram) {
    const llvm::json::Object *o = v.getAsObject();
    auto fn = functionLocs.find(*o->getString("function"));
    emitWarning(fn == functionLocs.end() ? module.getLoc() : fn->second)
        << "mxmoe: " << *o->getString("function") << " has no launch program ("
        << *o->getString("reason")
        << "); it is listed under \"functions_without_program\" in the "
           "manifest";
  }
  result.modelIR = std::move(jobs.front().modelIR);
  result.header = "/* Generated by mxmoe: PTX of the kernels listed in "
                  "manifest.json. */\n#pragma once\n";
  for (ChipJob &job : jobs) {
    const std::string &chip = job.chip;
    ChipArtifacts &art = job.art;
    std::string cubin =
        art.cubin.empty() ? art.cubinNote : chip + "/kernels.cubin";
    for (llvm::json::Value &row : job.rows) {
      auto *o = row.getAsObject();
      if (!options.programsOnly) {
        (*o)["ptx"] = chip + "/kernels.ptx";
        (*o)["cubin"] = cubin;
      }
      manifest.push_back(std::move(row));
    }
    if (!art.ptx.empty())
      result.header += "static const char mxmoe_ptx_" + chip + "[] =\n" +
                       cString(art.ptx) + ";\n";
    result.chips.push_back(std::move(art));
  }
  llvm::json::Array chipList;
  for (const std::string &chip : options.chips)
    chipList.push_back(chip);
  llvm::json::Value doc = llvm::json::Object{
      {"input", options.inputName},
      {"chips", std::move(chipList)},
      {"programs_only", options.programsOnly},
      {"kernels", std::move(manifest)},
      {"programs", std::move(programs)},
      {"functions_without_program", std::move(withoutProgram)},
      {"tiled_mlps", std::move(tiledMLPs)},
      {"uncompiled", std::move(uncompiled)}};
  llvm::raw_string_ostream js(result.manifestJson);
  js << llvm::formatv("{0:2}", doc) << "\n";
  return success();
}
