//===- EnumPassOptions.h - enum pass options that list their values -*- C++
//-*-===//
//
// An MLIR pass or pipeline option of enum type (TableGen `Option<"chip",
// "chip", "::mlir::mxmoe::Chip", ...>` or `PassPipelineOptions::Option<T>`
// with `llvm::cl::values`) is parsed by MLIR's
// detail::PassOptions::GenericOptionParser<T>, i.e. llvm::cl::parser<T>,
// whose error for an unknown value is "Cannot find option named 'sm_80'!".
// MXMOE_ENUM_OPTION_LISTS_VALUES(T) specializes that parser for T so that
// every such option rejects it, while the options are parsed (before any
// IR is read), with
//     for the --chip option: 'sm_80' is not one of: sm_90a, sm_100a, sm_103a
// TableGen pass options cannot name a parser type (ODS `Option` has no
// parser field), hence a specialization of the default one rather than an
// option argument. Use the macro at global namespace scope, after T is
// declared and before any option of T is (the header declaring T, e.g.
// mxmoe/Conversion/Chips.h).
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_DIALECT_MXMOE_UTILS_ENUMPASSOPTIONS_H
#define MXMOE_DIALECT_MXMOE_UTILS_ENUMPASSOPTIONS_H

#include "mlir/Pass/PassOptions.h"
#include "llvm/Support/CommandLine.h"

#include <optional>
#include <string>

namespace mlir::mxmoe {

/// llvm::cl::parser<T> whose unknown-value error lists the valid values,
/// with the lookup of a value's name that MLIR's pass options print with.
template <typename T> struct ValueListingParser : public llvm::cl::parser<T> {
  using llvm::cl::parser<T>::parser;

  bool parse(llvm::cl::Option &opt, llvm::StringRef argName,
             llvm::StringRef arg, T &value) {
    for (auto &v : this->Values)
      if (v.Name == arg) {
        value = v.V.getValue();
        return false;
      }
    std::string valid;
    for (auto &v : this->Values)
      valid += (valid.empty() ? "" : ", ") + v.Name.str();
    return opt.error("'" + arg + "' is not one of: " + valid, argName);
  }

  /// The name of `value` (pass pipelines print options by name).
  std::optional<llvm::StringRef> findArgStrForValue(const T &value) {
    for (auto &v : this->Values)
      if (v.V.compare(value))
        return v.Name;
    return std::nullopt;
  }
};

} // namespace mlir::mxmoe

/// Makes every MLIR pass and pipeline option of enum type T parse with
/// mlir::mxmoe::ValueListingParser<T> (see the file comment).
#define MXMOE_ENUM_OPTION_LISTS_VALUES(T)                                      \
  template <>                                                                  \
  struct mlir::detail::PassOptions::GenericOptionParser<T>                     \
      : public ::mlir::mxmoe::ValueListingParser<T> {                          \
    using ::mlir::mxmoe::ValueListingParser<T>::ValueListingParser;            \
  }

#endif // MXMOE_DIALECT_MXMOE_UTILS_ENUMPASSOPTIONS_H
