//===- CheckedPassOptions.h - pass options validated when parsed -*- C++
//-*-===//
//
// mxmoe's passes check their option values (ranges, names) in one function,
// `std::string optionError()` ("" = valid, else the message naming the
// option and its value). CheckedPassOptions runs it twice:
//  - initializeOptions (textual pipelines: mxmoe-opt, --pass-pipeline):
//    an invalid value fails when the pipeline is built, before any pass
//    runs, as upstream's typed options do;
//  - optionsValid(op) at the start of runOnOperation (passes built in C++
//    skip initializeOptions): the error at the op's location, without the
//    op printed after it (no module dump).
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_DIALECT_MXMOE_UTILS_CHECKEDPASSOPTIONS_H
#define MXMOE_DIALECT_MXMOE_UTILS_CHECKEDPASSOPTIONS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "mlir/Pass/Pass.h"

#include <string>

namespace mlir::mxmoe {

/// Mixin between a pass and its TableGen base `BaseT`: `struct P :
/// CheckedPassOptions<P, impl::PBase<P>>`, with `std::string optionError()`
/// in P.
template <typename Derived, typename BaseT>
struct CheckedPassOptions : public BaseT {
  using BaseT::BaseT;

  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(BaseT::initializeOptions(options, errorHandler)))
      return failure();
    std::string error = static_cast<Derived *>(this)->optionError();
    return error.empty() ? success() : errorHandler(error);
  }

  /// False (the error emitted at `op`'s location) when an option is
  /// invalid.
  bool optionsValid(Operation *op) {
    return optionsValid(op, static_cast<Derived *>(this)->optionError());
  }

  /// The same for an `error` the pass computed itself (a check that also
  /// derives configuration from the options, so it runs once).
  static bool optionsValid(Operation *op, const std::string &error) {
    if (error.empty())
      return true;
    mlir::emitError(op->getLoc()) << error;
    return false;
  }
};

} // namespace mlir::mxmoe

#endif // MXMOE_DIALECT_MXMOE_UTILS_CHECKEDPASSOPTIONS_H
