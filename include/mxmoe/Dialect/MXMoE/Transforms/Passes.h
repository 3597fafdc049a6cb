//===- Passes.h - mxmoe model-level passes ----------------------*- C++ -*-===//

#ifndef MXMOE_DIALECT_MXMOE_TRANSFORMS_PASSES_H
#define MXMOE_DIALECT_MXMOE_TRANSFORMS_PASSES_H

#include "mxmoe/Dialect/MXMoE/IR/MXMoEDialect.h"
#include "mxmoe/Dialect/MXMoE/Transforms/OptionEnums.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"

#include <string>
#include <vector>

namespace mlir::mxmoe {

#define GEN_PASS_DECL
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h.inc"

/// The default exclude patterns of mxmoe-precision-policy.
std::vector<std::string> getDefaultPrecisionExcludes();

/// True when the dot-separated components of `pattern` occur as a
/// contiguous run of the components of `fqn` ("*" matches any component).
bool fqnMatches(llvm::StringRef fqn, llvm::StringRef pattern);

class LinearOp;
class ScaledGroupedMatmulOp;
class SwiGLUExpertsOp;

/// The functions mxmoe-expand-scaled-matmul creates for one MX
/// `mxmoe.linear` or `mxmoe.scaled_grouped_matmul` (forward, inputGrad,
/// weightGrad, biasGrad) or `mxmoe.swiglu_experts` (forward, backward);
/// null when not created: no backward, or no bias.
struct LinearFunctions {
  func::FuncOp forward, inputGrad, weightGrad, biasGrad, backward;
};

/// Creates, in `symbols`, the MX functions of the linear `op` (precision
/// mxfp8/mxfp4, static shapes): `@"<name>.forward"(x [..., K], w [N, K]
/// [, bias [N]]) -> y [..., N]`, and with `backward` also
/// `@"<name>.input_grad"(dy, w) -> dx`, `@"<name>.weight_grad"(dy, x) -> dw
/// [N, K]` (bf16 operands when `weightGradBF16`; dw in `weightGradElem`,
/// default the weight's element type, e.g. f32 for an f32 gradient
/// accumulator; also db's) and, for a biased linear,
/// `@"<name>.bias_grad"(dy) -> db` (f32 sum over tokens). Each GEMM's
/// operands are quantized along its own contraction axis (OCP MX v1.0
/// section 5; TorchAO torchao/prototype/moe_training/mxfp8_grouped_mm.py);
/// the token count need not be a multiple of 32. Every function carries
/// `mxmoe.fqn` (the op's fqn) and `mxmoe.pass`. `op` itself is left
/// unchanged.
/// Errors (emitted on `op`): dynamic shapes; a name already taken.
FailureOr<LinearFunctions>
createLinearFunctions(LinearOp op, llvm::StringRef name, SymbolTable &symbols,
                      bool backward, bool weightGradBF16,
                      Type weightGradElem = {});

/// Creates, in `symbols`, the MX functions of the grouped GEMM `op`
/// (static shapes): `@"<name>.forward"(x [M, K], w [G, N, K], offsets [G])
/// -> y [M, N]` and with `backward` also `@"<name>.input_grad"(dy [M, N],
/// w, offsets) -> dx [M, K]` and `@"<name>.weight_grad"(dy, x, offsets)
/// -> dw [G, N, K]` (each group's rows contracted; dw in
/// `weightGradElem`, default the weight's element type; bf16 operands when
/// `weightGradBF16`). With `quantizeWeightsOnce` (an MX128 recipe) the
/// forward also returns w's transposed quantization and its scales, which
/// input_grad takes instead of w. Each GEMM's operands are quantized along
/// its own contraction axis (TorchAO
/// torchao/prototype/moe_training/mxfp8_grouped_mm.py); functions carry
/// `mxmoe.fqn` and `mxmoe.pass`; `op` is left unchanged.
/// Errors (emitted on `op`): dynamic shapes; a name already taken.
FailureOr<LinearFunctions>
createGroupedMatmulFunctions(ScaledGroupedMatmulOp op, llvm::StringRef name,
                             SymbolTable &symbols, bool backward,
                             bool weightGradBF16, bool quantizeWeightsOnce,
                             Type weightGradElem = {});

/// Creates, in `symbols`, the functions of the experts block `op`
/// (`@"<name>.forward"` and with `backward` `@"<name>.backward"`, their
/// signatures in mxmoe-expand-scaled-matmul's description, Passes.td):
/// both grouped GEMMs' steps with the SwiGLU and its backward as producers
/// of their quantizations, and for a routed op the dispatch and combine.
/// `quantizeWeightsOnce` (an MX128 recipe) adds the transposed weight
/// copies to the forward's results and the backward's arguments.
/// Errors (emitted on `op`): an FP4 recipe; a name already taken.
FailureOr<LinearFunctions>
createSwiGLUExpertsFunctions(SwiGLUExpertsOp op, llvm::StringRef name,
                             SymbolTable &symbols, bool backward,
                             bool weightGradBF16, bool quantizeWeightsOnce);

} // namespace mlir::mxmoe

#endif // MXMOE_DIALECT_MXMOE_TRANSFORMS_PASSES_H
