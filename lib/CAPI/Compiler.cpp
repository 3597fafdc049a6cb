//===- Compiler.cpp - C API of the mxmoe compiler -------------------------===//

#include "mxmoe-c/Compiler.h"

#include "mxmoe/Conversion/Passes.h"
#include "mxmoe/Dialect/MXMoE/IR/MXMoEDialect.h"
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h"
#include "mxmoe/Pipelines/Compile.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <string>

using namespace mlir;

struct MxmoeCompiler_ {
  std::unique_ptr<MLIRContext> context;
  std::string lastError;
};

struct MxmoeArtifacts_ {
  mlir::mxmoe::CompileResult result;
  std::string warnings;
};

namespace {
MxmoeStringRef toRef(const std::string &s) { return {s.data(), s.size()}; }
const std::string &emptyString() {
  static const std::string e;
  return e;
}
std::vector<std::string> splitList(const char *s) {
  std::vector<std::string> out;
  if (!s)
    return out;
  SmallVector<StringRef> parts;
  StringRef(s).split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef p : parts)
    out.push_back(p.trim().str());
  return out;
}
} // namespace

extern "C" {

MxmoeCompileOptions mxmoeCompileOptionsDefault(void) {
  return {nullptr, nullptr, nullptr, nullptr, 32768, 0, 0, 132,
          nullptr, 3,       nullptr, nullptr, 0,     0, 0};
}

MxmoeCompiler mxmoeCompilerCreate(void) {
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<mlir::mxmoe::MXMoEDialect>();
  mlir::mxmoe::registerMXMoEToGPUInterfaces(registry);
  auto *c = new MxmoeCompiler_;
  c->context = std::make_unique<MLIRContext>(registry);
  // Diagnostics name name:line:col; the op (for module-level errors the
  // whole module) is not appended to them.
  c->context->printOpOnDiagnostic(false);
  c->context->loadAllAvailableDialects();
  return c;
}

void mxmoeCompilerDestroy(MxmoeCompiler compiler) { delete compiler; }

MxmoeLogicalResult mxmoeCompile(MxmoeCompiler compiler, MxmoeStringRef ir,
                                MxmoeStringRef sourceName,
                                const MxmoeCompileOptions *options,
                                MxmoeArtifacts *artifacts) {
  if (artifacts)
    *artifacts = nullptr;
  if (!compiler || !artifacts || (!ir.data && ir.length)) {
    if (compiler)
      compiler->lastError = "mxmoeCompile: null compiler, IR or output";
    return {0};
  }
  compiler->lastError.clear();
  MLIRContext &ctx = *compiler->context;
  std::string name = sourceName.data
                         ? std::string(sourceName.data, sourceName.length)
                         : std::string("<ir>");
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(
                            StringRef(ir.data ? ir.data : "", ir.length), name),
                        llvm::SMLoc());
  // Diagnostics (errors, warnings) are collected as "file:line:col: ...".
  std::string diags;
  llvm::raw_string_ostream os(diags);
  SourceMgrDiagnosticHandler handler(sm, &ctx, os);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sm, &ctx);
  if (!module) {
    compiler->lastError =
        diags.empty() ? "mxmoeCompile: cannot parse " + name : diags;
    return {0};
  }
  MxmoeCompileOptions o = options ? *options : mxmoeCompileOptionsDefault();
  mlir::mxmoe::CompileOptions opts;
  if (o.chips && *o.chips)
    opts.chips = splitList(o.chips);
  opts.excludes = splitList(o.excludes);
  opts.toolkit = o.toolkit ? o.toolkit : "";
  opts.tokensPerShard = o.tokensPerShard;
  opts.gemmTileN = o.gemmTileN;
  opts.gemmCluster = o.gemmCluster;
  opts.gemmStages = o.gemmStages;
  opts.gemmCTAs = o.gemmCTAs;
  opts.llvmOptLevel = o.llvmOptLevel;
  // The enum options by name (NULL or "": the default).
  std::pair<const char *, const char *> named[] = {
      {"rounding", o.rounding},
      {"recipe", o.recipe},
      {"tile-rule", o.tileRule},
      {"gemm-sm90-mma", o.gemmSm90Mma}};
  for (auto [option, value] : named)
    if (value && *value &&
        !mlir::mxmoe::parseCompileOption(option, value, opts,
                                         compiler->lastError))
      return {0};
  opts.quantizeWeightsOnce = o.quantizeWeightsOnce != 0;
  opts.programsOnly = o.programsOnly != 0;
  opts.inputName = name;
  auto art = std::make_unique<MxmoeArtifacts_>();
  if (failed(mlir::mxmoe::compileModule(*module, opts, art->result))) {
    compiler->lastError =
        diags.empty() ? "mxmoeCompile: compilation failed" : diags;
    return {0};
  }
  art->warnings = std::move(diags);
  *artifacts = art.release();
  return {1};
}

MxmoeStringRef mxmoeCompilerLastError(MxmoeCompiler compiler) {
  return compiler ? toRef(compiler->lastError) : toRef(emptyString());
}

MxmoeStringRef mxmoeArtifactsGetManifest(MxmoeArtifacts a) {
  return a ? toRef(a->result.manifestJson) : toRef(emptyString());
}
MxmoeStringRef mxmoeArtifactsGetModel(MxmoeArtifacts a) {
  return a ? toRef(a->result.modelIR) : toRef(emptyString());
}
MxmoeStringRef mxmoeArtifactsGetPolicyReport(MxmoeArtifacts a) {
  return a ? toRef(a->result.policyReport) : toRef(emptyString());
}
MxmoeStringRef mxmoeArtifactsGetHeader(MxmoeArtifacts a) {
  return a ? toRef(a->result.header) : toRef(emptyString());
}
MxmoeStringRef mxmoeArtifactsGetWarnings(MxmoeArtifacts a) {
  return a ? toRef(a->warnings) : toRef(emptyString());
}
size_t mxmoeArtifactsGetNumChips(MxmoeArtifacts a) {
  return a ? a->result.chips.size() : 0;
}
MxmoeStringRef mxmoeArtifactsGetChip(MxmoeArtifacts a, size_t i) {
  return a && i < a->result.chips.size() ? toRef(a->result.chips[i].chip)
                                         : toRef(emptyString());
}
MxmoeStringRef mxmoeArtifactsGetPTX(MxmoeArtifacts a, size_t i) {
  return a && i < a->result.chips.size() ? toRef(a->result.chips[i].ptx)
                                         : toRef(emptyString());
}
MxmoeStringRef mxmoeArtifactsGetCubin(MxmoeArtifacts a, size_t i) {
  return a && i < a->result.chips.size() ? toRef(a->result.chips[i].cubin)
                                         : toRef(emptyString());
}
void mxmoeArtifactsDestroy(MxmoeArtifacts a) { delete a; }

void mxmoeRegisterDialects(MlirDialectRegistry registry) {
  auto *r = static_cast<DialectRegistry *>(registry.ptr);
  r->insert<mlir::mxmoe::MXMoEDialect>();
  mlir::mxmoe::registerMXMoEToGPUInterfaces(*r);
}

void mxmoeRegisterPasses(void) {
  mlir::mxmoe::registerMXMoEConversionPasses();
  mlir::mxmoe::registerMXMoETransformsPasses();
  mlir::mxmoe::registerMXMoEPipelines();
}

} // extern "C"
