//===- Interfaces.h - external models the lowering attaches ----*- C++ -*-===//
//
// The parts of registerMXMoEToGPUInterfaces (mxmoe/Conversion/Passes.h).
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_LIB_CONVERSION_MXMOETOGPU_INTERFACES_H
#define MXMOE_LIB_CONVERSION_MXMOETOGPU_INTERFACES_H

namespace mlir {
class DialectRegistry;
namespace mxmoe::kernels {

/// nvgpu's ConvertToLLVMPatternInterface: !nvgpu.tensormap.descriptor to
/// !llvm.ptr (TensorMapToLLVM.cpp).
void registerTensorMapToLLVMInterface(DialectRegistry &registry);

/// BufferizableOpInterface of the mxmoe ops with a generated kernel
/// (BufferizableOpInterfaceImpl.cpp).
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace mxmoe::kernels
} // namespace mlir

#endif // MXMOE_LIB_CONVERSION_MXMOETOGPU_INTERFACES_H
