//===- TensorMapToLLVM.cpp - !nvgpu.tensormap.descriptor in to-LLVM -------===//
//
// The grouped-GEMM kernels take their TMA maps as upstream's
// `!nvgpu.tensormap.descriptor` (GroupedMatmul/Common.h,
// gemmTensorMapType). In LLVM 22 only convert-nvgpu-to-nvvm converts that
// type (to `!llvm.ptr`, the generic address of the 128-byte map), and
// only for the values it rewrites: a `gpu.func` taking one fails to
// legalize in convert-gpu-to-nvvm, which converts kernel signatures. The
// nvgpu dialect has no ConvertToLLVMPatternInterface, so this file gives
// it one that adds exactly that type conversion; convert-gpu-to-nvvm,
// gpu-to-llvm and convert-to-llvm consult the interface of every loaded
// dialect.
//
//===----------------------------------------------------------------------===//

#include "Interfaces.h"

#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

namespace {
struct TensorMapToLLVMInterface : ConvertToLLVMPatternInterface {
  using ConvertToLLVMPatternInterface::ConvertToLLVMPatternInterface;
  void populateConvertToLLVMConversionPatterns(
      ConversionTarget &target, LLVMTypeConverter &converter,
      RewritePatternSet &patterns) const final {
    converter.addConversion([](nvgpu::TensorMapDescriptorType t) -> Type {
      return LLVM::LLVMPointerType::get(t.getContext());
    });
    // Upstream's lowerings of the nvgpu ops on tensor maps that mxmoe's
    // kernels and host launches use (the acquire fence, the map's
    // creation); other nvgpu ops need the type conversions that only
    // convert-nvgpu-to-nvvm adds, so only these two are made illegal here.
    populateNVGPUToNVVMConversionPatterns(converter, patterns);
    target.addIllegalOp<nvgpu::TmaFenceOp, nvgpu::TmaCreateDescriptorOp>();
  }
};
} // namespace

void mlir::mxmoe::kernels::registerTensorMapToLLVMInterface(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *, nvgpu::NVGPUDialect *dialect) {
    if (!dialect->getRegisteredInterface<ConvertToLLVMPatternInterface>())
      dialect->addInterfaces<TensorMapToLLVMInterface>();
  });
}
