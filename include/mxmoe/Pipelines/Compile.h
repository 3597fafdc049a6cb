//===- Compile.h - the mxmoe compilation driver as a library ---*- C++ -*-===//
//
// What mxmoe-compile does, callable from other compilers (and wrapped by the
// C API in include/mxmoe-c/Compiler.h): run the default pipeline on a
// model-level module (precision policy, forward/backward expansion, scale
// packing, tiled MLP), generate the kernels per chip (sm_90a and/or
// sm_100a), lower them to PTX, assemble cubins with ptxas when a CUDA
// toolkit is given, and describe everything in a JSON manifest (kernels:
// name, chip, op, function, fqn, pass, parameters with kinds, shapes,
// dtypes and tensor-map records, grid, block, dynamic shared memory;
// programs: the launch sequences of the expanded functions).
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_PIPELINES_COMPILE_H
#define MXMOE_PIPELINES_COMPILE_H

#include "mxmoe/Pipelines/DefaultPipeline.h"
#include "mxmoe/Target/PTX.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir::mxmoe {

struct CompileOptions : DefaultPipelineOptions {
  /// CUDA toolkit root whose bin/ptxas assembles cubins ("" = PTX only).
  std::string toolkit;
  /// Recorded as the manifest's "input".
  std::string inputName = "<module>";
  /// Called on every PassManager before it runs (timing, IR printing).
  std::function<void(PassManager &)> configure;
  /// When set (and enabled), compileModule times its stages in scopes
  /// nested in this one: "model passes" (each pass inside), "tiled MLPs
  /// and uncompiled ops", per chip a scope named after it ("clone",
  /// "kernel passes", "model IR text and programs", "manifest rows", "PTX
  /// passes", "ptxas") and "manifest and header" (mxmoe-compile --timing).
  TimingScope *timing = nullptr;
  /// Stop each chip after kernel generation: the manifest's kernel rows
  /// (each with its `kernel_hash`) and programs, no PTX, cubin or header.
  /// Binds new sizes to kernels compiled before: kernels with run-time
  /// sizes are the same for every token count, and equal hashes prove it
  /// (python/mxmoe/dropin.py).
  bool programsOnly = false;
  /// Compile the chips on parallel threads (when the context is
  /// multithreaded); false keeps one chip after the other, e.g. for
  /// readable --timing or --dump-ir-after output.
  bool parallelChips = true;
};

struct CompileResult {
  std::string manifestJson; ///< the manifest (pretty-printed JSON)
  std::string modelIR;      ///< the module after kernel generation
  std::string policyReport; ///< mxmoe-precision-policy's JSON report
  std::string header;       ///< C header embedding the PTX of every chip
  std::vector<ChipArtifacts> chips;
};

/// Sets the enum option named `option` ("rounding", "recipe", "tile-rule",
/// "gemm-sm90-mma": their names in mxmoe-compile and the C API) of `opts`
/// from its value's name. False, with `error` = "mxmoe: <option> must be
/// <the valid values>, got '<value>'", for an unknown value or option.
bool parseCompileOption(llvm::StringRef option, llvm::StringRef value,
                        CompileOptions &opts, std::string &error);

/// Compiles `module` in place (it ends at the model/MX level; kernels are
/// generated on clones, one per chip). Failures are reported through the
/// context's diagnostics (file, line and op of the offending IR) and return
/// failure; an unsupported chip is an error listing the supported ones.
LogicalResult compileModule(ModuleOp module, const CompileOptions &options,
                            CompileResult &result);

} // namespace mlir::mxmoe

#endif // MXMOE_PIPELINES_COMPILE_H
