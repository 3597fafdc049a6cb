//===- mxmoe-compile.cpp - the mxmoe driver: IR file -> kernels -----------===//
//
// mxmoe-compile [model.mlir] [--chip sm_90a,sm_100a] [-o OUTDIR]
//
// Runs the default pipeline (mxmoe/Pipelines/DefaultPipeline.h: precision
// policy, scaled-matmul expansion, scale packing, tiled-MLP lowering, MX
// kernel generation, NVVM lowering to PTX) and writes, per
// chip, OUTDIR/<chip>/kernels.ptx, kernels.cubin (when ptxas is found) and
// OUTDIR/manifest.json (every kernel: name, chip, the op and fqn it
// implements, forward/input_grad/weight_grad, parameters with shapes and
// element types, grid and block), plus OUTDIR/mxmoe_kernels.h embedding the
// PTX, OUTDIR/policy-report.json and OUTDIR/model.mlir (the host IR after
// the model-level passes). With no input it compiles the bundled Llama 4
// Scout layer.
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"
#include "mxmoe/Pipelines/DefaultPipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<model.mlir>"),
                                      cl::init(MXMOE_DEFAULT_INPUT));
static cl::opt<std::string> outDir("o", cl::desc("output directory"),
                                   cl::init("mxmoe-out"));
static cl::list<std::string> chips("chip", cl::desc("target chips"),
                                   cl::CommaSeparated);
static cl::opt<std::string> toolkit("toolkit",
                                    cl::desc("CUDA toolkit root (ptxas)"),
                                    cl::init("/usr/local/cuda"));
static cl::list<std::string> excludes(
    "exclude", cl::desc("extra precision-policy exclude patterns (checked "
                        "before the defaults)"),
    cl::CommaSeparated);
static cl::opt<std::string> rounding("rounding",
                                     cl::desc("MX scale rounding"),
                                     cl::init("rceil"));
static cl::opt<int64_t> tokensPerShard("tokens-per-shard",
                                       cl::desc("tiled-MLP auto shard size"),
                                       cl::init(32768));
static cl::opt<std::string> dumpIRAfter(
    "dump-ir-after", cl::desc("print the IR after the pass with this name"),
    cl::init(""));
static cl::opt<int64_t> gemmTileN(
    "gemm-tile-n", cl::desc("N of the grouped-GEMM tile (64 or 128)"),
    cl::init(128));
static cl::opt<int64_t> gemmStages(
    "gemm-stages", cl::desc("pipeline stages of the grouped GEMM (2..8)"),
    cl::init(4));
static cl::opt<int64_t> gemmCTAs(
    "gemm-ctas",
    cl::desc("persistent CTAs of the grouped GEMM (the GPU's SM count)"),
    cl::init(132));
static cl::opt<bool> timing("timing", cl::desc("print pass timings"),
                            cl::init(false));

namespace {

/// Writes `text` to `path`; prints an error and returns false on failure.
bool writeFile(StringRef path, StringRef text) {
  std::string err;
  auto out = openOutputFile(path, &err);
  if (!out) {
    llvm::errs() << "mxmoe-compile: " << err << "\n";
    return false;
  }
  out->os() << text;
  out->keep();
  return true;
}

std::string typeString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

void configure(PassManager &pm) {
  if (timing)
    pm.enableTiming();
  if (!dumpIRAfter.empty())
    pm.enableIRPrinting(
        [](Pass *, Operation *) { return false; },
        [](Pass *p, Operation *) { return p->getArgument() == dumpIRAfter; },
        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false);
}

/// Manifest rows for the kernels of the (just converted) module.
llvm::json::Array describeKernels(ModuleOp module, StringRef chip) {
  // Which op (and which function / fqn / pass) each kernel implements.
  llvm::StringMap<llvm::json::Object> origin;
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
    origin[ref.getLeafReference().getValue()] = std::move(o);
  });
  llvm::json::Array rows;
  module.walk([&](gpu::GPUFuncOp fn) {
    if (!fn.isKernel())
      return;
    llvm::json::Object row{{"name", fn.getName()}, {"chip", chip}};
    auto it = origin.find(fn.getName());
    if (it != origin.end())
      for (auto &kv : it->second)
        row[kv.first] = kv.second;
    llvm::json::Array params;
    for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes())) {
      auto m = cast<MemRefType>(t);
      if (auto tmap = fn.getArgAttrOfType<DictionaryAttr>(i, "mxmoe.tensor_map")) {
        // A TMA descriptor the launcher builds (mxmoeRtEncodeTensorMap2D)
        // over the operand's data and copies to device memory.
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
            {"dims", arr("dims")},
            {"box", arr("box")},
            {"row_stride_bytes",
             cast<IntegerAttr>(tmap.get("row_stride_bytes")).getInt()},
            {"swizzle", cast<StringAttr>(tmap.get("swizzle")).getValue()},
            {"oob_fill", cast<StringAttr>(tmap.get("oob_fill")).getValue()}});
        continue;
      }
      params.push_back(llvm::json::Object{
          {"index", static_cast<int64_t>(i)},
          {"kind", "device pointer (noalias)"},
          {"elements", m.getNumElements()},
          {"element_type", typeString(m.getElementType())},
          {"bytes", m.getNumElements() *
                        std::max<int64_t>(
                            1, m.getElementType().getIntOrFloatBitWidth() / 8)}});
    }
    row["params"] = std::move(params);
    auto grid = fn->getAttrOfType<DenseI64ArrayAttr>("mxmoe.grid");
    auto block = fn->getAttrOfType<DenseI64ArrayAttr>("mxmoe.block");
    if (grid && block) {
      row["grid"] = llvm::json::Array{grid[0], grid[1], grid[2]};
      row["block"] = llvm::json::Array{block[0], block[1], block[2]};
    }
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
llvm::json::Array describePrograms(ModuleOp module) {
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
    bool straight = true;
    for (Operation &op : fn.getBody().front())
      if (!isa<func::ReturnOp>(op) && !op.hasAttr("mxmoe.kernel_args"))
        straight = false;
    if (!straight || fn.getBody().front().getOperations().size() < 2)
      return;
    llvm::DenseMap<Value, llvm::json::Object> where;
    llvm::json::Array args, buffers, steps, returns;
    for (BlockArgument a : fn.getArguments()) {
      llvm::json::Object info = tensorInfo(a.getType());
      args.push_back(llvm::json::Object(info));
      where[a] = llvm::json::Object{{"arg", static_cast<int64_t>(a.getArgNumber())}};
    }
    for (Operation &op : fn.getBody().front()) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        for (Value v : ret.getOperands())
          returns.push_back(llvm::json::Object(where[v]));
        continue;
      }
      for (Value r : op.getResults()) {
        llvm::json::Object info = tensorInfo(r.getType());
        info["id"] = static_cast<int64_t>(buffers.size());
        where[r] = llvm::json::Object{{"buffer", static_cast<int64_t>(buffers.size())}};
        buffers.push_back(std::move(info));
      }
      llvm::json::Array bind;
      for (Attribute a : op.getAttrOfType<ArrayAttr>("mxmoe.kernel_args")) {
        StringRef s = cast<StringAttr>(a).getValue();
        bool tmap = s.consume_front("tensor_map:");
        llvm::json::Object b;
        if (s == "status") {
          b["status"] = true;
        } else {
          auto [kind, idx] = s.split(':');
          unsigned i = 0;
          idx.getAsInteger(10, i);
          Value v = kind == "operand" ? op.getOperand(i) : op.getResult(i);
          b = llvm::json::Object(where[v]);
        }
        if (tmap)
          b["tensor_map"] = true;
        bind.push_back(std::move(b));
      }
      steps.push_back(llvm::json::Object{
          {"op", op.getName().getStringRef()},
          {"kernel", cast<SymbolRefAttr>(op.getAttr("mxmoe.kernel"))
                         .getLeafReference()
                         .getValue()},
          {"bindings", std::move(bind)}});
    }
    llvm::json::Object prog{{"function", fn.getName()},
                            {"args", std::move(args)},
                            {"buffers", std::move(buffers)},
                            {"steps", std::move(steps)},
                            {"returns", std::move(returns)}};
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

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "mxmoe driver: IR file -> kernels\n");
  auto start = std::chrono::steady_clock::now();
  if (chips.empty()) {
    chips.push_back("sm_90a");
    chips.push_back("sm_100a");
  }
  for (const std::string &chip : chips)
    if (chip != "sm_90a" && chip != "sm_100a") {
      llvm::errs() << "mxmoe-compile: unsupported chip '" << chip
                   << "'; supported: sm_90a, sm_100a\n";
      return 1;
    }

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<mlir::mxmoe::MXMoEDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diag(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(inputFile.getValue(), sourceMgr, &context);
  if (!module) {
    llvm::errs() << "mxmoe-compile: cannot parse '" << inputFile << "'\n";
    return 1;
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir)) {
    llvm::errs() << "mxmoe-compile: cannot create '" << outDir
                 << "': " << ec.message() << "\n";
    return 1;
  }

  // Model level -> MX level.
  PassManager model(&context);
  configure(model);
  mlir::mxmoe::DefaultPipelineOptions opts;
  opts.policyReport = outDir + "/policy-report.json";
  opts.rounding = rounding;
  opts.excludes.assign(excludes.begin(), excludes.end());
  opts.tokensPerShard = tokensPerShard;
  opts.gemmTileN = gemmTileN;
  opts.gemmStages = gemmStages;
  opts.gemmCTAs = gemmCTAs;
  mlir::mxmoe::buildModelPipeline(model, opts);
  // Remarks of the policy go to the report, not the terminal.
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &d) {
    return success(d.getSeverity() == DiagnosticSeverity::Remark);
  });
  if (failed(model.run(*module)))
    return 1;

  llvm::json::Array manifest;
  llvm::json::Array programs;
  std::string header = "/* Generated by mxmoe-compile: PTX of the kernels "
                       "listed in manifest.json. */\n#pragma once\n";
  for (const std::string &chip : chips) {
    OwningOpRef<ModuleOp> clone = module->clone();
    PassManager convert(&context);
    configure(convert);
    mlir::mxmoe::buildKernelPipeline(convert, chip, opts);
    if (failed(convert.run(*clone)))
      return 1;
    if (chip == chips.front() &&
        !writeFile(outDir + "/model.mlir", [&] {
          std::string s;
          llvm::raw_string_ostream os(s);
          clone->print(os);
          return s;
        }()))
      return 1;
    if (chip == chips.front())
      programs = describePrograms(*clone);
    llvm::json::Array rows = describeKernels(*clone, chip);
    if (rows.empty()) {
      llvm::errs() << "mxmoe-compile: no MX kernels for " << chip << "\n";
      continue;
    }
    PassManager lower(&context);
    configure(lower);
    mlir::mxmoe::buildPTXPipeline(lower, chip);
    if (failed(lower.run(*clone)))
      return 1;
    std::string ptx;
    clone->walk([&](gpu::BinaryOp op) {
      for (Attribute a : op.getObjects())
        if (auto obj = dyn_cast<gpu::ObjectAttr>(a))
          ptx = obj.getObject().getValue().str();
    });
    std::string dir = outDir + "/" + chip;
    llvm::sys::fs::create_directories(dir);
    if (!writeFile(dir + "/kernels.ptx", ptx))
      return 1;
    std::string ptxas = toolkit + "/bin/ptxas";
    std::string cubin = "not built: ptxas not found at " + ptxas;
    if (llvm::sys::fs::can_execute(ptxas)) {
      std::string arch = "-arch=" + chip;
      std::string outFile = dir + "/kernels.cubin";
      std::string inFile = dir + "/kernels.ptx";
      StringRef args[] = {ptxas, arch, inFile, "-o", outFile};
      std::string err;
      int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, {}, 0, 0,
                                         &err);
      if (rc != 0) {
        llvm::errs() << "mxmoe-compile: ptxas failed for " << chip << ": "
                     << err << "\n";
        return 1;
      }
      cubin = chip + "/kernels.cubin";
    }
    for (llvm::json::Value &row : rows) {
      auto *o = row.getAsObject();
      (*o)["ptx"] = chip + "/kernels.ptx";
      (*o)["cubin"] = cubin;
      manifest.push_back(std::move(row));
    }
    header += "static const char mxmoe_ptx_" + chip + "[] =\n" +
              cString(ptx) + ";\n";
  }
  llvm::json::Array chipList;
  for (const std::string &chip : chips)
    chipList.push_back(chip);
  llvm::json::Value doc = llvm::json::Object{
      {"input", inputFile.getValue()},
      {"chips", std::move(chipList)},
      {"kernels", std::move(manifest)},
      {"programs", std::move(programs)}};
  std::string json;
  llvm::raw_string_ostream js(json);
  js << llvm::formatv("{0:2}", doc) << "\n";
  if (!writeFile(outDir + "/manifest.json", json) ||
      !writeFile(outDir + "/mxmoe_kernels.h", header))
    return 1;
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                              start)
                    .count();
  llvm::outs() << "mxmoe-compile: " << inputFile << " -> " << outDir << " ("
               << llvm::join(chips, ", ") << ") in "
               << llvm::format("%.2f", secs) << " s\n";
  return 0;
}
