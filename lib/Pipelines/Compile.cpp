//===- Compile.cpp - the mxmoe compilation driver as a library ------------===//

#include "mxmoe/Pipelines/Compile.h"
#include "mxmoe/Conversion/Chips.h"
#include "mxmoe/Target/Manifest.h"
#include "mxmoe/Target/PTX.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <thread>

using namespace mlir;
using namespace mlir::mxmoe;

namespace {

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
  bool allSm90 = llvm::none_of(options.chips, isTcgen05Chip);
  int64_t tileN = options.gemmTileN;
  if (tileN != 0 && tileN != 64 && tileN != 128 &&
      !(tileN == 256 && !anySm90) && !(tileN == 192 && allSm90))
    return emitError(loc, "mxmoe: gemm-tile-n must be 0 (auto), 64 or 128 "
                          "(192 only when every chip is sm_90a, 256 only "
                          "when every chip is sm_100a or sm_103a), got ")
           << tileN;
  if (options.gemmStages != 0 &&
      (options.gemmStages < 2 || options.gemmStages > 8))
    return emitError(loc, "mxmoe: gemm-stages must be 0 (auto) or in [2, 8], "
                          "got ")
           << options.gemmStages;
  if (options.gemmCTAs < 1 || options.gemmCTAs > 2147483647)
    return emitError(loc, "mxmoe: gemm-ctas must be in [1, 2147483647] (the "
                          "GPU's SM count, e.g. 132), got ")
           << options.gemmCTAs;
  if (options.gemmCluster != 0 && options.gemmCluster != 1 &&
      !(options.gemmCluster == 2 && allSm90))
    return emitError(loc, "mxmoe: gemm-cluster must be 0 (auto), 1 or 2 (2 "
                          "only when every chip is sm_90a), got ")
           << options.gemmCluster;
  if (options.gemmCluster == 2 && options.gemmCTAs % 2 != 0)
    return emitError(loc, "mxmoe: gemm-cluster=2 needs an even gemm-ctas "
                          "(whole clusters), got ")
           << options.gemmCTAs;
  if (options.tokensPerShard < 1)
    return emitError(loc, "mxmoe: tokens-per-shard must be >= 1, got ")
           << options.tokensPerShard;
  if (options.llvmOptLevel < 0 || options.llvmOptLevel > 3)
    return emitError(loc, "mxmoe: llvm-opt-level must be 0, 1, 2 or 3, got ")
           << options.llvmOptLevel;
  return success();
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
      job.programs = target::describePrograms(*clone, job.withoutProgram);
    }
    stage = chipTime.nest("manifest rows");
    job.rows = target::describeKernels(*clone, chip);
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
    return target::assemble(module.getLoc(), options.toolkit, job.art);
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
  result.policyReport = target::readFile(reportPath);
  if (tempReport)
    llvm::sys::fs::remove(reportPath);
  if (failed(modelOk))
    return failure();

  stage = timing.nest("tiled MLPs and uncompiled ops");
  llvm::json::Array tiledMLPs = target::describeTiledMLPs(module);

  llvm::json::Array uncompiled = target::describeUncompiled(module);
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
                       target::cStringLiteral(art.ptx) + ";\n";
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
