//===- OptionEnums.h - enum values of mxmoe pass options --------*- C++ -*-===//
//
// The enum pass and pipeline options of mxmoe besides the chip
// (mxmoe/Conversion/Chips.h): parsed by llvm::cl, so a bad value is
// rejected while the options are parsed, with the valid values
// (MXMOE_ENUM_OPTION_LISTS_VALUES,
// mxmoe/Dialect/MXMoE/Utils/EnumPassOptions.h):
//
//   mxmoe-precision-policy  precision = mxfp8 | mxfp4          (Precision)
//                           rounding  = floor | rceil | ceil | even
//                                                          (RoundingMode)
//                           recipe    = mx32 | mx128 | auto (RecipeChoice)
//   mxmoe-tile-mlp          rule      = tokens | square       (ShardRule)
//   convert-mxmoe-to-gpu    gemm-sm90-mma = auto | fp8 | bf16  (Sm90Mma)
//
// Precision and RoundingMode are the dialect's attribute enums (their
// math: MXMoEAttrs.td; floor is OCP MX v1.0 section 6.3).
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_DIALECT_MXMOE_TRANSFORMS_OPTIONENUMS_H
#define MXMOE_DIALECT_MXMOE_TRANSFORMS_OPTIONENUMS_H

#include "mxmoe/Dialect/MXMoE/IR/MXMoEAttrs.h"
#include "mxmoe/Dialect/MXMoE/Utils/EnumPassOptions.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"

#include <optional>

namespace mlir::mxmoe {

/// The scale granularity the precision policy assigns: a ScaleGranularity,
/// or `auto` (mx128 when the target chips include sm_90a and the elements
/// are fp8, else mx32).
enum class RecipeChoice { mx32, mx128, automatic };

/// How mxmoe-tile-mlp's `auto` shard count is derived: tokens =
/// ceil(T / tokens-per-shard), square = ceil(T / hidden) (DeepSpeed
/// TiledMLP / ALST).
enum class ShardRule { tokens, square };

/// The sm_90a grouped-GEMM MMA strategy (convert-mxmoe-to-gpu
/// gemm-sm90-mma): fp8 wgmma with promotion, bf16 upcast, or auto (bf16
/// for f32 outputs, fp8 otherwise).
enum class Sm90Mma { automatic, fp8, bf16 };

inline llvm::StringRef stringifyRecipeChoice(RecipeChoice r) {
  return r == RecipeChoice::mx32    ? "mx32"
         : r == RecipeChoice::mx128 ? "mx128"
                                    : "auto";
}
inline std::optional<RecipeChoice> symbolizeRecipeChoice(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<RecipeChoice>>(s)
      .Case("mx32", RecipeChoice::mx32)
      .Case("mx128", RecipeChoice::mx128)
      .Case("auto", RecipeChoice::automatic)
      .Default(std::nullopt);
}
inline llvm::StringRef stringifyShardRule(ShardRule r) {
  return r == ShardRule::tokens ? "tokens" : "square";
}
inline std::optional<ShardRule> symbolizeShardRule(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<ShardRule>>(s)
      .Case("tokens", ShardRule::tokens)
      .Case("square", ShardRule::square)
      .Default(std::nullopt);
}
inline llvm::StringRef stringifySm90Mma(Sm90Mma m) {
  return m == Sm90Mma::fp8 ? "fp8" : m == Sm90Mma::bf16 ? "bf16" : "auto";
}
inline std::optional<Sm90Mma> symbolizeSm90Mma(llvm::StringRef s) {
  return llvm::StringSwitch<std::optional<Sm90Mma>>(s)
      .Case("auto", Sm90Mma::automatic)
      .Case("fp8", Sm90Mma::fp8)
      .Case("bf16", Sm90Mma::bf16)
      .Default(std::nullopt);
}

} // namespace mlir::mxmoe

/// `llvm::cl::values` of the options above.
#define MXMOE_PRECISION_OPTION_VALUES                                          \
  ::llvm::cl::values(                                                          \
      clEnumValN(::mlir::mxmoe::Precision::mxfp8, "mxfp8", "MXFP8 (e4m3)"),    \
      clEnumValN(::mlir::mxmoe::Precision::mxfp4, "mxfp4", "MXFP4 (e2m1)"))
#define MXMOE_ROUNDING_OPTION_VALUES                                           \
  ::llvm::cl::values(                                                          \
      clEnumValN(::mlir::mxmoe::RoundingMode::floor, "floor",                  \
                 "floor(log2 amax) - emax (OCP MX v1.0 section 6.3)"),         \
      clEnumValN(::mlir::mxmoe::RoundingMode::rceil, "rceil",                  \
                 "ceil(log2(amax / max_pos)) (torchao RCEIL)"),                \
      clEnumValN(::mlir::mxmoe::RoundingMode::ceil, "ceil",                    \
                 "ceil(log2 amax) - emax (torchao CEIL)"),                     \
      clEnumValN(::mlir::mxmoe::RoundingMode::even, "even",                    \
                 "floor(log2(rne(amax))) - emax (torchao EVEN)"))
#define MXMOE_RECIPE_OPTION_VALUES                                             \
  ::llvm::cl::values(                                                          \
      clEnumValN(::mlir::mxmoe::RecipeChoice::mx32, "mx32",                    \
                 "1x32 blocks (OCP MX)"),                                      \
      clEnumValN(::mlir::mxmoe::RecipeChoice::mx128, "mx128",                  \
                 "1x128 activation / 128x128 weight blocks"),                  \
      clEnumValN(::mlir::mxmoe::RecipeChoice::automatic, "auto",               \
                 "mx128 when the chips include sm_90a, else mx32"))
#define MXMOE_SHARD_RULE_OPTION_VALUES                                         \
  ::llvm::cl::values(clEnumValN(::mlir::mxmoe::ShardRule::tokens, "tokens",    \
                                "ceil(T / tokens-per-shard)"),                 \
                     clEnumValN(::mlir::mxmoe::ShardRule::square, "square",    \
                                "ceil(T / hidden)"))
#define MXMOE_SM90_MMA_OPTION_VALUES                                           \
  ::llvm::cl::values(clEnumValN(::mlir::mxmoe::Sm90Mma::automatic, "auto",     \
                                "bf16 for f32 outputs, else fp8"),             \
                     clEnumValN(::mlir::mxmoe::Sm90Mma::fp8, "fp8",            \
                                "fp8 wgmma per MX block + promotion"),         \
                     clEnumValN(::mlir::mxmoe::Sm90Mma::bf16, "bf16",          \
                                "stages dequantized to bf16, bf16 wgmma"))

MXMOE_ENUM_OPTION_LISTS_VALUES(::mlir::mxmoe::Precision);
MXMOE_ENUM_OPTION_LISTS_VALUES(::mlir::mxmoe::RoundingMode);
MXMOE_ENUM_OPTION_LISTS_VALUES(::mlir::mxmoe::RecipeChoice);
MXMOE_ENUM_OPTION_LISTS_VALUES(::mlir::mxmoe::ShardRule);
MXMOE_ENUM_OPTION_LISTS_VALUES(::mlir::mxmoe::Sm90Mma);

#endif // MXMOE_DIALECT_MXMOE_TRANSFORMS_OPTIONENUMS_H
