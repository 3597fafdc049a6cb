//===- PTX.h - ptxas and the embedded-PTX header ----------------*- C++ -*-===//
//
// The last step of mxmoe-compile per chip: the PTX that
// gpu-module-to-binary (format=isa) produced, assembled by the CUDA
// toolkit's ptxas (`ptxas -arch=<chip>`, CUDA Binary Utilities), and
// written as C string literals for mxmoe_kernels.h.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_TARGET_PTX_H
#define MXMOE_TARGET_PTX_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::mxmoe {

/// What one chip's compilation produces.
struct ChipArtifacts {
  std::string chip;
  std::string ptx;       ///< PTX text of every kernel of the chip
  std::string cubin;     ///< ptxas output (empty when not built)
  std::string cubinNote; ///< why no cubin, when empty
};

namespace target {

/// Runs `toolkit`/bin/ptxas on `art.ptx` for `art.chip`, filling
/// `art.cubin`; without a toolkit or ptxas there it fills `art.cubinNote`
/// instead and succeeds. A ptxas failure (its message) or a cubin that was
/// not written is an error at `loc`.
LogicalResult assemble(Location loc, const std::string &toolkit,
                       ChipArtifacts &art);

/// `text` as a C string literal (quotes, backslashes and newlines
/// escaped; one literal line per text line).
std::string cStringLiteral(llvm::StringRef text);

/// The bytes of the file at `path` ("" when it cannot be read).
std::string readFile(llvm::StringRef path);

} // namespace target
} // namespace mlir::mxmoe

#endif // MXMOE_TARGET_PTX_H
