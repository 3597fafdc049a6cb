//===- PTX.cpp - ptxas and the embedded-PTX header
//-------------------------===//
//
// The last step of mxmoe-compile per chip: the generated PTX assembled by
// the CUDA toolkit's ptxas into a cubin, and the PTX as C string literals
// for the header (mxmoe_kernels.h).
//
//===----------------------------------------------------------------------===//

#include "mxmoe/Target/PTX.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::mxmoe;

std::string mlir::mxmoe::target::cStringLiteral(StringRef text) {
  std::string s = "\"";
  for (char c : text) {
    switch (c) {
    case '\n':
      s += "\\n\"\n\"";
      break;
    case '"':
      s += "\\\"";
      break;
    case '\\':
      s += "\\\\";
      break;
    default:
      s += c;
    }
  }
  return s + "\"";
}

std::string mlir::mxmoe::target::readFile(StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  return buf ? (*buf)->getBuffer().str() : std::string();
}

LogicalResult mlir::mxmoe::target::assemble(Location loc,
                                            const std::string &toolkit,
                                            ChipArtifacts &art) {
  std::string ptxas = toolkit + "/bin/ptxas";
  if (toolkit.empty() || !llvm::sys::fs::can_execute(ptxas)) {
    art.cubinNote = toolkit.empty() ? "not built: no CUDA toolkit given"
                                    : "not built: ptxas not found at " + ptxas;
    return success();
  }
  SmallString<128> in, out;
  if (llvm::sys::fs::createTemporaryFile("mxmoe", "ptx", in) ||
      llvm::sys::fs::createTemporaryFile("mxmoe", "cubin", out))
    return emitError(loc, "mxmoe: cannot create temporary files for ptxas");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec)
      return emitError(loc, "mxmoe: cannot write ")
             << in << ": " << ec.message();
    os << art.ptx;
  }
  std::string arch = "-arch=" + art.chip;
  // -split-compile 0: ptxas optimizes the kernels on as many threads as the
  // machine has CPUs (same machine code; the GEMM kernels dominate).
  StringRef args[] = {ptxas, arch, "-split-compile", "0", in, "-o", out};
  std::string err;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, {}, 0, 0, &err);
  art.cubin = rc == 0 ? readFile(out) : std::string();
  if (rc == 0 && art.cubin.empty()) {
    llvm::sys::fs::remove(in);
    llvm::sys::fs::remove(out);
    return emitError(loc, "mxmoe: ")
           << ptxas << " exited 0 but wrote no cubin for " << art.chip;
  }
  llvm::sys::fs::remove(in);
  llvm::sys::fs::remove(out);
  if (rc != 0)
    return emitError(loc, "mxmoe: ptxas failed for ")
           << art.chip << ": " << err;
  return success();
}
