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

#include "mxmoe/Conversion/Chips.h"
#include "mxmoe/Conversion/Passes.h"
#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h"
#include "mxmoe/Pipelines/Compile.h"
#include "mxmoe/Version.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
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

/// mxmoe-compile's own options: `--help` lists only these (LLVM's and
/// MLIR's remain accepted, e.g. `--time-passes`, and are listed by
/// `--help-hidden`).
static cl::OptionCategory category("mxmoe-compile options");

static cl::opt<std::string> inputFile(
    cl::Positional,
    cl::desc("<model.mlir> (default: the bundled Llama 4 Scout layer)"),
    cl::cat(category));
static cl::opt<std::string>
    outDir("o", cl::desc("output directory (default: mxmoe-out)"),
           cl::init("mxmoe-out"), cl::cat(category));
static cl::list<std::string> chips(
    "chip",
    cl::desc("target chips, comma-separated or repeated: sm_90a, sm_100a, "
             "sm_103a (default: sm_90a,sm_100a)"),
    cl::CommaSeparated, cl::cat(category));
static cl::opt<std::string>
    toolkit("toolkit",
            cl::desc("CUDA toolkit root whose bin/ptxas "
                     "builds the cubins (default "
                     "/usr/local/cuda; without ptxas "
                     "only PTX is written, noted on "
                     "stderr)"),
            cl::init("/usr/local/cuda"), cl::cat(category));
static cl::list<std::string>
    excludes("exclude",
             cl::desc("extra precision-policy exclude patterns (checked "
                      "before the defaults)"),
             cl::CommaSeparated, cl::cat(category));
static cl::opt<std::string> rounding(
    "rounding",
    cl::desc("MX scale rounding of the recipes the policy assigns: rceil "
             "(default), floor, ceil or even (an op that carries its own "
             "recipe keeps that recipe's rounding)"),
    cl::init("rceil"), cl::cat(category));
static cl::opt<std::string> recipe(
    "recipe",
    cl::desc("scale granularity of the MX recipes the policy assigns: mx32 "
             "(default; one scale per 1x32 block, OCP MX), mx128 (1x128 "
             "activation and gradient, 128x128 weight scale tiles: valid "
             "MXFP8, promoted once per 128 K on sm_90a) or auto (mx128 when "
             "the chips include sm_90a, mx32 for sm_100a / sm_103a alone; "
             "an op that carries its own recipe keeps it)"),
    cl::init("mx32"), cl::cat(category));
static cl::opt<bool> quantizeWeightsOnce(
    "quantize-weights-once",
    cl::desc("MX128 grouped GEMMs: quantize each weight once per step, in "
             "the forward, in both orientations (one read of the weight "
             "instead of two); the forward returns the transposed fp8 copy "
             "(1 byte per weight element) that input_grad takes"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> programsOnly(
    "programs-only",
    cl::desc("stop after kernel generation: write the manifest (kernel rows "
             "with their kernel_hash, launch programs) and model.mlir, no "
             "PTX, cubin or header; binds new sizes to kernels compiled "
             "before (equal hashes: equal kernels)"),
    cl::init(false), cl::cat(category));
static cl::opt<int64_t>
    tokensPerShard("tokens-per-shard",
                   cl::desc("tokens per shard of tiled MLPs with shards = auto "
                            "(default 32768)"),
                   cl::init(32768), cl::cat(category));
static cl::opt<std::string> tileRule(
    "tile-rule",
    cl::desc("shard count of tiled MLPs with shards = auto: tokens "
             "(ceil(T / tokens-per-shard), default) or square (ceil(T / "
             "hidden), DeepSpeed/ALST)"),
    cl::init("tokens"), cl::cat(category));
static cl::opt<std::string>
    dumpIRAfter("dump-ir-after",
                cl::desc("print the IR after the pass with this name"),
                cl::init(""), cl::cat(category));
static cl::opt<int64_t>
    gemmTileN("gemm-tile-n",
              cl::desc("N of the grouped-GEMM tile: 0 = auto (192 for sm_90a "
                       "MX128 2D x 3D bf16 output, 2-12 % faster than 128; "
                       "128 otherwise), 64 or 128 (every kernel), 192 (those "
                       "MX128 kernels only), 256 (sm_100a and sm_103a)"),
              cl::init(0), cl::cat(category));
static cl::opt<int64_t> gemmStages(
    "gemm-stages",
    cl::desc("pipeline stages of the grouped GEMM (2..8, within the chip's "
             "shared memory; 0 = auto: 4, 2 for sm_90a bf16 upcast)"),
    cl::init(0), cl::cat(category));
static cl::opt<int64_t> gemmCTAs(
    "gemm-ctas",
    cl::desc("persistent CTAs of the grouped GEMM (the GPU's SM count)"),
    cl::init(132), cl::cat(category));
static cl::opt<int64_t> gemmCluster(
    "gemm-cluster",
    cl::desc("CTAs per thread-block cluster of the grouped GEMM along M: 0 = "
             "auto (1), 1, or 2 (sm_90a MX128 2D x 3D bf16 output only: the "
             "weight tile multicast to both CTAs; correct on an H100 "
             "but 2-2.6x slower than 1: bench/RESULTS.md)"),
    cl::init(0), cl::cat(category));
static cl::opt<std::string> gemmSm90Mma(
    "gemm-sm90-mma",
    cl::desc("sm_90a grouped-GEMM MMA strategy: fp8 (per-block promotion), "
             "bf16 (exact upcast to bf16 wgmma) or auto (bf16 for f32 "
             "outputs)"),
    cl::init("auto"), cl::cat(category));
static cl::opt<int64_t> llvmOptLevel(
    "llvm-opt-level",
    cl::desc("LLVM IR optimization level of the kernels before NVPTX code "
             "generation (0-3; ptxas optimizes at -O3 either way)"),
    cl::init(3), cl::cat(category));
static cl::opt<bool> timing(
    "timing",
    cl::desc("print one timing tree on stderr, also --mlir-timing: parsing, "
             "every pass, per chip the kernel passes, manifest rows, PTX "
             "passes and ptxas, the manifest and the output files (compiles "
             "the chips one after the other)"),
    cl::init(false), cl::cat(category));
static cl::alias mlirTiming("mlir-timing", cl::desc("alias for --timing"),
                            cl::aliasopt(timing), cl::cat(category));

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

/// Why a chip got no kernels, from the manifest: MX ops left uncompiled
/// (listed under "uncompiled"), or the precision policy kept every op in
/// bf16 (its decisions are in policy-report.json).
std::string noKernelsWhy(const mlir::mxmoe::CompileResult &result) {
  llvm::Expected<llvm::json::Value> manifest =
      llvm::json::parse(result.manifestJson);
  if (!manifest) {
    llvm::consumeError(manifest.takeError());
    return "the manifest is unreadable";
  }
  const llvm::json::Object *root = manifest->getAsObject();
  const llvm::json::Array *uncompiled =
      root ? root->getArray("uncompiled") : nullptr;
  if (uncompiled && !uncompiled->empty())
    return std::to_string(uncompiled->size()) +
           " MX op(s) are listed under \"uncompiled\" in the manifest";
  const llvm::json::Array *programs =
      root ? root->getArray("programs") : nullptr;
  if (programs && !programs->empty())
    return "every MX op has nothing to compute (e.g. zero tokens): the "
           "manifest's launch programs have no kernel steps";
  return "the precision policy kept every op in bf16";
}

/// Pass arguments that ran (for --dump-ir-after's "no such pass" error).
llvm::StringSet<> passesRun;
bool dumped = false;

/// True when one of MLIR's IR-printing, statistics or timing options of the
/// pass manager was given (--mlir-print-ir-after-all, ...): their output
/// would interleave across per-chip threads.
bool passManagerOutputRequested() {
  for (auto &entry : cl::getRegisteredOptions()) {
    StringRef name = entry.first;
    if ((name.starts_with("mlir-print-ir") || name == "mlir-pass-statistics" ||
         name == "mlir-timing") &&
        entry.second->getNumOccurrences() > 0)
      return true;
  }
  return false;
}

void configure(PassManager &pm) {
  // MLIR's standard pass-manager options (--mlir-print-ir-after-all,
  // --mlir-print-ir-before=PASS, --mlir-pass-statistics, ...), on every
  // pass manager of the compile, as mlir-opt applies them.
  if (failed(applyPassManagerCLOptions(pm)))
    llvm::errs() << "mxmoe-compile: cannot apply the --mlir-* pass manager "
                    "options\n";
  if (!dumpIRAfter.empty())
    pm.enableIRPrinting([](Pass *, Operation *) { return false; },
                        [](Pass *p, Operation *) {
                          passesRun.insert(p->getArgument());
                          bool match = p->getArgument() == dumpIRAfter;
                          dumped |= match;
                          return match;
                        },
                        /*printModuleScope=*/true,
                        /*printAfterOnlyOnChange=*/false);
}

/// The bundled Llama 4 Scout layer: <bin>/../share/mxmoe/examples/ of an
/// installed mxmoe-compile, else the source tree's examples/.
std::string defaultInput(const char *argv0) {
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&defaultInput));
  llvm::SmallString<256> installed(llvm::sys::path::parent_path(exe));
  llvm::sys::path::append(installed, "..", "share", "mxmoe");
  llvm::sys::path::append(installed, "examples", MXMOE_DEFAULT_INPUT_NAME);
  llvm::sys::path::remove_dots(installed, /*remove_dot_dot=*/true);
  if (!exe.empty() && llvm::sys::fs::exists(installed))
    return std::string(installed);
  llvm::SmallString<256> source(MXMOE_SOURCE_EXAMPLES);
  llvm::sys::path::append(source, MXMOE_DEFAULT_INPUT_NAME);
  return std::string(source);
}

} // namespace

int main(int argc, char **argv) {
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    ::mxmoe::printVersion(os, "mxmoe-compile");
  });
  llvm::InitLLVM init(argc, argv);
  // MLIR's standard options, accepted as by mlir-opt (not listed by --help,
  // which shows this tool's own): context (--mlir-disable-threading, ...),
  // pass manager (--mlir-print-ir-after-all, --mlir-print-ir-after=PASS,
  // --mlir-print-ir-module-scope, --mlir-pass-statistics, ...) and asm
  // printer (--mlir-print-debuginfo, ...).
  // --mlir-print-ir-{before,after}=PASS name passes through the registry,
  // which must be filled before the options are created.
  registerAllPasses();
  mlir::mxmoe::registerMXMoEConversionPasses();
  mlir::mxmoe::registerMXMoETransformsPasses();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerAsmPrinterCLOptions();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "mxmoe driver: IR file -> kernels\n\nAlso accepts MLIR's standard "
      "--mlir-* options (IR printing, pass statistics, threading, debug "
      "info), as mlir-opt does.\n");
  auto start = std::chrono::steady_clock::now();
  if (inputFile.empty())
    inputFile = defaultInput(argv[0]);
  if (chips.empty()) {
    chips.push_back("sm_90a");
    chips.push_back("sm_100a");
  }
  for (const std::string &chip : chips)
    if (!mlir::mxmoe::isSupportedChip(chip)) {
      llvm::errs() << "mxmoe-compile: unsupported chip '" << chip
                   << "'; supported: " << mlir::mxmoe::kSupportedChips << "\n";
      return 1;
    }

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<mlir::mxmoe::MXMoEDialect>();
  mlir::mxmoe::registerMXMoEToGPUInterfaces(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics name file:line:col and show the source line; the op itself
  // (for module-level errors: the whole module) is not printed after them.
  context.printOpOnDiagnostic(false);
  // Module-scope IR printing needs a single-threaded context.
  if (!dumpIRAfter.empty())
    context.disableMultithreading();

  // --timing: one tree over every stage (compileModule nests its own).
  DefaultTimingManager tm;
  tm.setEnabled(timing);
  tm.setDisplayMode(DefaultTimingManager::DisplayMode::Tree);
  TimingScope timingRoot = tm.getRootScope();
  TimingScope stage = timingRoot.nest("parse");
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diag(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(inputFile.getValue(), sourceMgr, &context);
  stage.stop();
  if (!module) {
    // The diagnostics above say why (a missing file, a syntax error, or an
    // op the verifier rejects).
    llvm::errs() << "mxmoe-compile: cannot read '" << inputFile
                 << "' as valid mxmoe IR\n";
    return 1;
  }
  if (llvm::sys::fs::exists(outDir) && !llvm::sys::fs::is_directory(outDir)) {
    llvm::errs() << "mxmoe-compile: -o " << outDir
                 << " exists and is not a directory\n";
    return 1;
  }
  // Remove the artifacts of an earlier compile first: a launcher must never
  // find another model's kernels (or a stale cubin) next to this manifest,
  // also when this compile fails or builds no cubin.
  for (StringRef name :
       {"manifest.json", "model.mlir", "mxmoe_kernels.h", "policy-report.json"})
    llvm::sys::fs::remove(outDir + "/" + name);
  for (StringRef chip : mlir::mxmoe::kSupportedChipList)
    for (StringRef name : {"kernels.ptx", "kernels.cubin"})
      llvm::sys::fs::remove(outDir + "/" + chip + "/" + name);
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir)) {
    llvm::errs() << "mxmoe-compile: cannot create '" << outDir
                 << "': " << ec.message() << "\n";
    return 1;
  }

  mlir::mxmoe::CompileOptions opts;
  opts.chips.assign(chips.begin(), chips.end());
  opts.toolkit = toolkit;
  opts.inputName = inputFile.getValue();
  opts.policyReport = outDir + "/policy-report.json";
  opts.quantizeWeightsOnce = quantizeWeightsOnce;
  opts.programsOnly = programsOnly;
  opts.excludes.assign(excludes.begin(), excludes.end());
  opts.tokensPerShard = tokensPerShard;
  opts.gemmTileN = gemmTileN;
  opts.gemmStages = gemmStages;
  opts.gemmCTAs = gemmCTAs;
  opts.gemmCluster = gemmCluster;
  std::pair<llvm::StringRef, std::string> named[] = {
      {"rounding", rounding},
      {"recipe", recipe},
      {"tile-rule", tileRule},
      {"gemm-sm90-mma", gemmSm90Mma}};
  for (auto &[option, value] : named)
    if (std::string error;
        !mlir::mxmoe::parseCompileOption(option, value, opts, error)) {
      llvm::errs() << "mxmoe-compile: " << error << "\n";
      return 1;
    }
  opts.llvmOptLevel = llvmOptLevel;
  opts.configure = configure;
  opts.timing = &timingRoot;
  // Per-chip threads would interleave the timing reports and IR dumps.
  opts.parallelChips =
      !timing && dumpIRAfter.empty() && !passManagerOutputRequested();
  mlir::mxmoe::CompileResult result;
  if (failed(mlir::mxmoe::compileModule(*module, opts, result)))
    return 1;
  if (!dumpIRAfter.empty() && !dumped) {
    SmallVector<StringRef> names;
    for (const auto &e : passesRun)
      names.push_back(e.getKey());
    llvm::sort(names);
    llvm::errs() << "mxmoe-compile: --dump-ir-after=" << dumpIRAfter
                 << ": no pass of that name ran; the pipeline's passes: "
                 << llvm::join(names, ", ") << "\n";
    return 1;
  }
  stage = timingRoot.nest("write outputs");
  if (!writeFile(outDir + "/model.mlir", result.modelIR))
    return 1;
  for (const mlir::mxmoe::ChipArtifacts &art : result.chips) {
    if (programsOnly)
      break;
    if (art.ptx.empty()) {
      llvm::errs() << "mxmoe-compile: no MX kernels for " << art.chip
                   << " (no MX op was compiled: " << noKernelsWhy(result)
                   << "; every decision and its rule: " << outDir
                   << "/policy-report.json)\n";
      continue;
    }
    if (art.cubin.empty())
      llvm::errs() << "mxmoe-compile: note: " << art.chip
                   << ": PTX only, no cubin (" << art.cubinNote << ")\n";
    std::string dir = outDir + "/" + art.chip;
    llvm::sys::fs::create_directories(dir);
    if (!writeFile(dir + "/kernels.ptx", art.ptx) ||
        (!art.cubin.empty() && !writeFile(dir + "/kernels.cubin", art.cubin)))
      return 1;
  }
  if (!writeFile(outDir + "/manifest.json", result.manifestJson) ||
      (!programsOnly && !writeFile(outDir + "/mxmoe_kernels.h", result.header)))
    return 1;
  stage.stop();
  timingRoot.stop();
  tm.print();
  tm.setEnabled(false); // printed: nothing more at its destruction
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  llvm::outs() << "mxmoe-compile: " << inputFile << " -> " << outDir << " ("
               << llvm::join(llvm::map_range(result.chips,
                                             [](const auto &a) -> StringRef {
                                               return a.chip;
                                             }),
                             ", ")
               << ") in " << llvm::format("%.2f", secs) << " s\n";
  return 0;
}
