//===- Manifest.h - manifest rows of a compiled module ----------*- C++ -*-===//
//
// The parts of mxmoe-compile's manifest.json that describe a module after
// kernel generation (convert-mxmoe-to-gpu with host-launch=false and
// mxmoe-dedupe-kernels: ops annotated with `mxmoe.kernel` and
// `mxmoe.kernel_args`). Field by field: docs/mxmoe-compile.md.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_TARGET_MANIFEST_H
#define MXMOE_TARGET_MANIFEST_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

namespace mlir::mxmoe::target {

/// One row per gpu.func of `chip`'s kernel module: name, parameters, grid
/// and block, shared memory, the ops (function, fqn, pass) it implements
/// and `kernel_hash` (xxh3 of its IR, equal for equal kernels).
llvm::json::Array describeKernels(ModuleOp module, llvm::StringRef chip);

/// Launch programs: every function whose body is a straight line of
/// kernel-annotated mxmoe ops (the expanded <fqn>.forward / .input_grad /
/// .weight_grad functions) becomes a list of steps a runtime can replay:
/// each step names its kernel and binds every kernel parameter to a
/// function argument, an intermediate buffer, a status buffer, or a tensor
/// map over one of those (from the ops' `mxmoe.kernel_args`). Functions
/// that cannot be one are appended to `withoutProgram` with the reason.
llvm::json::Array describePrograms(ModuleOp module,
                                   llvm::json::Array &withoutProgram);

/// The shard partition of every tiled MLP's forward loops, so a runtime
/// runs the shards the kernels were compiled for: per static loop, its
/// shards [first, first + count) of `shard_tokens` tokens and the suffix
/// of its MX linears' functions ("": <linear fqn>.forward ..., ".tail":
/// <linear fqn>.tail.forward ...).
llvm::json::Array describeTiledMLPs(ModuleOp module);

/// MX ops the expansion left in place (inside tiled-MLP shard loops: their
/// token count is dynamic) get no kernels: say so, in the diagnostics (one
/// warning per tiled MLP, at its location) and in the manifest, instead of
/// letting the policy report's "mxfp8" stand.
llvm::json::Array describeUncompiled(ModuleOp module);

} // namespace mlir::mxmoe::target

#endif // MXMOE_TARGET_MANIFEST_H
