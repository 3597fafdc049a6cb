//===- Version.h - mxmoe version string -------------------------*- C++ -*-===//
//
// `--version` of the mxmoe tools: the project version (CMake's
// PROJECT_VERSION), the LLVM/MLIR it was built against and the chips the
// kernels target.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_VERSION_H
#define MXMOE_VERSION_H

#include "mxmoe/VersionNumber.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/raw_ostream.h"

namespace mxmoe {

/// Prints "<tool> (mxmoe <version>)", the LLVM/MLIR version and the chips.
inline void printVersion(llvm::raw_ostream &os, const char *tool) {
  os << tool << " (mxmoe " << MXMOE_VERSION << ")\n"
     << "  built with LLVM/MLIR " << LLVM_VERSION_STRING << "\n"
     << "  kernel targets: sm_90a (wgmma), sm_100a and sm_103a (tcgen05)\n";
}

} // namespace mxmoe

#endif // MXMOE_VERSION_H
