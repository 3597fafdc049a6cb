//===- PrecisionPolicy.cpp - mxmoe-precision-policy -----------------------===//
//
// Chooses MX or bf16 per linear / grouped GEMM. Rules and defaults follow the
// TorchAO / TorchTitan MXFP8 MoE recipe (PyTorch blog "MXFP8 training for
// MoEs", Llama4 Scout on GB200; TorchTitan components/quantization/utils.py
// module_filter_fn): the output projection, the router gate and attention
// wk/wv stay bf16; a GEMM must contract over multiples of 32 to be quantized.
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Dialect/MXMoE/IR/MXMoEOps.h"
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h"
#include "mxmoe/Dialect/MXMoE/Utils/CheckedPassOptions.h"
#include "mxmoe/Dialect/MXMoE/Utils/MXFormats.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::mxmoe {
#define GEN_PASS_DEF_MXMOEPRECISIONPOLICY
#include "mxmoe/Dialect/MXMoE/Transforms/Passes.h.inc"
} // namespace mlir::mxmoe

using namespace mlir;
using namespace mlir::mxmoe;

std::vector<std::string> mlir::mxmoe::getDefaultPrecisionExcludes() {
  // TorchTitan names, then the Hugging Face names of the same layers: the
  // router of Qwen3-MoE / DeepSeek-V3 (mlp.gate), Mixtral
  // (block_sparse_moe.gate), gpt-oss (mlp.router) and Llama 4
  // (feed_forward.router); attention k/v.
  return {"output",
          "lm_head",
          "router.gate",
          "attention.wk",
          "attention.wv",
          "mlp.gate",
          "block_sparse_moe.gate",
          "mlp.router",
          "feed_forward.router",
          "self_attn.k_proj",
          "self_attn.v_proj"};
}

bool mlir::mxmoe::fqnMatches(StringRef fqn, StringRef pattern) {
  SmallVector<StringRef> f, p;
  fqn.split(f, '.');
  pattern.split(p, '.');
  if (p.empty() || p.size() > f.size())
    return false;
  for (size_t start = 0; start + p.size() <= f.size(); ++start) {
    bool all = true;
    for (size_t i = 0; i < p.size() && all; ++i)
      all = p[i] == "*" || p[i] == f[start + i];
    if (all)
      return true;
  }
  return false;
}

namespace {

/// The GEMM dimensions of a model-level op: M tokens (dynamic allowed), N
/// outputs, K inputs, G groups (1 for a linear).
struct GemmShape {
  int64_t m, n, k, g;
};

GemmShape getShape(Operation *op) {
  if (auto lin = dyn_cast<LinearOp>(op)) {
    RankedTensorType x = lin.getInput().getType();
    int64_t m = 1;
    for (int64_t d : x.getShape().drop_back())
      m = ShapedType::isDynamic(d) || ShapedType::isDynamic(m)
              ? ShapedType::kDynamic
              : m * d;
    return {m, lin.getWeight().getType().getDimSize(0), x.getShape().back(), 1};
  }
  // The experts block: N = I and K = H (each GEMM's dimensions are
  // multiples of these: w13 is [2I, H], w2 [H, I]).
  if (auto ex = dyn_cast<SwiGLUExpertsOp>(op))
    return {ex.getRoutedRows(), ex.getExpertDim(), ex.getHidden(),
            ex.getNumExperts()};
  auto sg = cast<ScaledGroupedMatmulOp>(op);
  RankedTensorType w = sg.getWeight().getType();
  return {sg.getInput().getType().getDimSize(0), w.getDimSize(1),
          w.getDimSize(2), w.getDimSize(0)};
}

struct Decision {
  Precision precision;
  std::string rule;
  std::string reason;
};

struct PrecisionPolicyPass
    : CheckedPassOptions<
          PrecisionPolicyPass,
          ::mlir::mxmoe::impl::MXMoEPrecisionPolicyBase<PrecisionPolicyPass>> {
  using CheckedPassOptions::CheckedPassOptions;

  /// "" when precision and min-dim are valid, else the error naming the
  /// option (the enum options are checked when parsed; bf16 is a Precision
  /// but not one to assign; resolveRecipe checks the recipe against the
  /// precision and the chips).
  std::string optionError() {
    if (precision == Precision::bf16)
      return "mxmoe-precision-policy: precision must be mxfp8 or mxfp4, got "
             "bf16";
    if (minDim < 0)
      return "mxmoe-precision-policy: min-dim must be >= 0, got " +
             std::to_string(static_cast<int64_t>(minDim));
    return "";
  }

  void runOnOperation() override {
    if (!optionsValid(getOperation()))
      return signalPassFailure();
    std::optional<Precision> target = precision.getValue();
    // The user's patterns first (they name the rule), then the defaults.
    std::vector<std::string> excludes(exclude.begin(), exclude.end());
    if (defaultExcludes)
      for (const std::string &d : getDefaultPrecisionExcludes())
        excludes.push_back(d);
    llvm::erase_if(excludes, [](const std::string &s) { return s.empty(); });
    std::vector<std::string> includes(include.begin(), include.end());
    llvm::erase_if(includes, [](const std::string &s) { return s.empty(); });

    MLIRContext *ctx = &getContext();
    FailureOr<ScaleGranularity> granularity = resolveRecipe(*target);
    if (failed(granularity))
      return signalPassFailure();
    Type elem = *target == Precision::mxfp4 ? Type(Float4E2M1FNType::get(ctx))
                                            : Type(Float8E4M3FNType::get(ctx));
    auto recipe = MXRecipeAttr::get(ctx, elem, ::mxmoe::kMXBlockSize, rounding,
                                    *granularity);

    llvm::json::Array rows;
    WalkResult walk =
        getOperation().walk([&](Operation *op) {
          if (!isa<LinearOp, ScaledGroupedMatmulOp, SwiGLUExpertsOp>(op))
            return WalkResult::advance();
          StringRef fqn = op->getAttrOfType<StringAttr>("fqn").getValue();
          GemmShape s = getShape(op);
          Decision d = decide(op, fqn, s, *target, excludes, includes);
          // A recipe set by the user fixes the MX element type, hence the MX
          // precision: mxfp8 for fp8 elements, mxfp4 for fp4 (the verifier
          // rejects any other pairing). FP6 has no MX precision.
          auto userRecipe = op->getAttrOfType<MXRecipeAttr>("recipe");
          if (!op->hasAttr("precision") && userRecipe &&
              d.precision != Precision::bf16) {
            Type elem = userRecipe.getElement();
            std::optional<Precision> fromRecipe;
            if (isa<Float8E4M3FNType, Float8E5M2Type>(elem))
              fromRecipe = Precision::mxfp8;
            else if (isa<Float4E2M1FNType>(elem))
              fromRecipe = Precision::mxfp4;
            if (!fromRecipe) {
              op->emitError() << "mxmoe-precision-policy: " << fqn
                              << ": the op's recipe element type " << elem
                              << " has no MX precision (mxfp8: f8E4M3FN or "
                                 "f8E5M2, mxfp4: f4E2M1FN)";
              return WalkResult::interrupt();
            }
            if (*fromRecipe != d.precision) {
              std::string why;
              llvm::raw_string_ostream os(why);
              os << "the op's recipe has " << elem << " elements";
              d = {*fromRecipe, "recipe", why};
            }
          }
          // A recipe on the op wins over the option (the op's author chose
          // it); a different scale granularity is said, since the option then
          // has no effect on this op.
          if (userRecipe && d.precision != Precision::bf16 &&
              userRecipe.getGranularity() != *granularity)
            op->emitWarning()
                << "mxmoe-precision-policy: " << fqn
                << " keeps the recipe written on it ("
                << stringifyScaleGranularity(userRecipe.getGranularity())
                << "); the pipeline's recipe is "
                << stringifyScaleGranularity(*granularity)
                << " (remove the op's recipe to follow the option)";
          if (!op->hasAttr("precision")) {
            op->setAttr("precision", PrecisionAttr::get(ctx, d.precision));
            if (d.precision != Precision::bf16 && !op->hasAttr("recipe"))
              op->setAttr("recipe", recipe);
          }
          reportDecision(op, fqn, d);
          auto dim = [](int64_t v) -> llvm::json::Value {
            if (ShapedType::isDynamic(v))
              return nullptr;
            return v;
          };
          llvm::json::Object row{{"fqn", fqn},
                                 {"op", op->getName().getStringRef()},
                                 {"M", dim(s.m)},
                                 {"N", dim(s.n)},
                                 {"K", dim(s.k)},
                                 {"groups", s.g},
                                 {"precision", stringifyPrecision(d.precision)},
                                 {"rule", d.rule},
                                 {"reason", d.reason}};
          if (auto r = op->getAttrOfType<MXRecipeAttr>("recipe");
              r && d.precision != Precision::bf16)
            row["recipe"] = stringifyScaleGranularity(r.getGranularity());
          rows.push_back(std::move(row));
          return WalkResult::advance();
        });
    if (walk.wasInterrupted())
      return signalPassFailure();
    if (!report.empty() && failed(writeReport(std::move(rows), *granularity)))
      return signalPassFailure();
  }

  /// A remark per decision (unless `remarks=false`); a warning when a
  /// routed-expert GEMM falls back to bf16 because of its shape: it gets no
  /// MX kernels, which a user should not learn from the speed.
  void reportDecision(Operation *op, StringRef fqn, const Decision &d) {
    if (isa<ScaledGroupedMatmulOp, SwiGLUExpertsOp>(op) &&
        d.precision == Precision::bf16 && d.rule == "legality")
      op->emitWarning() << "mxmoe-precision-policy: routed-expert GEMM '" << fqn
                        << "' stays bf16 (rule legality: " << d.reason
                        << "): it gets no MX kernels and stays in the host IR";
    else if (remarks)
      op->emitRemark() << "mxmoe-precision-policy: " << fqn << " -> "
                       << stringifyPrecision(d.precision) << " (rule " << d.rule
                       << ": " << d.reason << ")";
  }

  /// The granularity of the assigned recipe: `recipe` (mx32, mx128), or
  /// for auto mx128 when the chips include sm_90a and the elements are
  /// fp8, else mx32.
  FailureOr<ScaleGranularity> resolveRecipe(Precision target) {
    if (recipe == RecipeChoice::automatic) {
      if (chips.empty()) {
        mlir::emitError(getOperation().getLoc())
            << "mxmoe-precision-policy: recipe=auto needs the target chips "
               "(chips=sm_90a,sm_100a); or choose recipe=mx32 or mx128";
        return failure();
      }
      for (const std::string &chip : chips)
        if (chip != "sm_90a" && chip != "sm_100a" && chip != "sm_103a") {
          mlir::emitError(getOperation().getLoc())
              << "mxmoe-precision-policy: unknown chip '" << chip
              << "' in chips; expected sm_90a, sm_100a or sm_103a";
          return failure();
        }
      bool hopper = llvm::is_contained(chips, "sm_90a");
      return hopper && target == Precision::mxfp8 ? ScaleGranularity::mx128
                                                  : ScaleGranularity::mx32;
    }
    ScaleGranularity g = recipe == RecipeChoice::mx128 ? ScaleGranularity::mx128
                                                       : ScaleGranularity::mx32;
    if (g == ScaleGranularity::mx128 && target != Precision::mxfp8) {
      mlir::emitError(getOperation().getLoc())
          << "mxmoe-precision-policy: recipe=mx128 (1x128 / 128x128 scale "
             "tiles) needs precision=mxfp8, got precision="
          << stringifyPrecision(target);
      return failure();
    }
    return g;
  }

  Decision decide(Operation *op, StringRef fqn, const GemmShape &s,
                  Precision target, ArrayRef<std::string> excludes,
                  ArrayRef<std::string> includes) {
    if (auto p = op->getAttrOfType<PrecisionAttr>("precision"))
      return {p.getValue(), "user", "precision set on the op"};
    if (!includes.empty() &&
        llvm::none_of(includes, [&](const std::string &pat) {
          return fqnMatches(fqn, pat);
        }))
      return {Precision::bf16, "include", "fqn matches no include pattern"};
    for (const std::string &pat : excludes)
      if (fqnMatches(fqn, pat))
        return {Precision::bf16, "exclude",
                "fqn matches exclude pattern '" + pat + "'"};
    for (auto [name, size] :
         {std::pair<StringRef, int64_t>{"K", s.k}, {"N", s.n}})
      if (!ShapedType::isDynamic(size) && size % ::mxmoe::kMXBlockSize != 0)
        return {Precision::bf16, "legality",
                (name + " = " + Twine(size) +
                 " is not a multiple of 32 (MX blocks along every GEMM's "
                 "contraction axis)")
                    .str()};
    if (minDim > 0)
      for (auto [name, size] :
           {std::pair<StringRef, int64_t>{"K", s.k}, {"N", s.n}, {"M", s.m}})
        if (!ShapedType::isDynamic(size) && size < minDim)
          return {Precision::bf16, "min-dim",
                  (name + " = " + Twine(size) +
                   " < min-dim = " + Twine(static_cast<int64_t>(minDim)))
                      .str()};
    return {target, "default", "passes every rule"};
  }

  LogicalResult writeReport(llvm::json::Array rows,
                            ScaleGranularity granularity) {
    std::string resolved = stringifyScaleGranularity(granularity).str();
    if (recipe == RecipeChoice::automatic)
      resolved = "auto -> " + resolved;
    llvm::json::Value doc =
        llvm::json::Object{{"pass", "mxmoe-precision-policy"},
                           {"recipe", resolved},
                           {"decisions", std::move(rows)}};
    if (report == "-") {
      // stderr: the IR the tool prints stays alone on stdout.
      llvm::errs() << llvm::formatv("{0:2}", doc) << "\n";
      return success();
    }
    std::error_code ec;
    llvm::raw_fd_ostream os(report, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return getOperation().emitError()
             << "mxmoe-precision-policy: cannot write report '" << report
             << "': " << ec.message();
    os << llvm::formatv("{0:2}", doc) << "\n";
    return success();
  }
};

} // namespace
