// --version names the project's version and the LLVM/MLIR it was built
// with (not LLVM's own version banner).
// RUN: mxmoe-compile --version | FileCheck %s --check-prefix=COMPILE
// RUN: mxmoe-opt --version | FileCheck %s --check-prefix=OPT
// COMPILE: mxmoe-compile (mxmoe {{[0-9]+\.[0-9]+\.[0-9]+}})
// COMPILE-NEXT: built with LLVM/MLIR 22.
// COMPILE-NEXT: kernel targets: sm_90a (wgmma), sm_100a and sm_103a (tcgen05)
// OPT: mxmoe-opt (mxmoe {{[0-9]+\.[0-9]+\.[0-9]+}})
// OPT-NEXT: built with LLVM/MLIR 22.
