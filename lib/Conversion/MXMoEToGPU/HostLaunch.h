//===- HostLaunch.h - an annotated op as its kernel's launch ----*- C++ -*-===//
//
// The launch of an op's generated kernel on buffers, read from the op's
// annotation (`mxmoe.kernel`, `mxmoe.kernel_args`, `mxmoe.grid`). Two
// callers: convert-mxmoe-to-gpu with host-launch=true (buffers from
// bufferization.to_buffer, results handed back by bufferization.to_tensor)
// and the ops' BufferizableOpInterface (buffers from one-shot-bufferize).
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_LIB_CONVERSION_MXMOETOGPU_HOSTLAUNCH_H
#define MXMOE_LIB_CONVERSION_MXMOETOGPU_HOSTLAUNCH_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"

namespace mlir::mxmoe::kernels {

/// Where a launch gets the buffers of the op's tensor operands and where it
/// hands the buffers of its results.
struct LaunchBuffers {
  /// A buffer with the contents of tensor operand `v`: a memref of `v`'s
  /// shape and element type with the identity layout.
  llvm::function_ref<Value(OpBuilder &, Value v)> operand;
  /// The buffer of result `i` (a gpu.alloc'ed memref of the result's
  /// shape, identity layout), written by the kernel.
  llvm::function_ref<void(OpBuilder &, unsigned i, Value buffer)> result;
};

/// Emits at `b`'s insertion point the launch of `op`'s kernel (the gpu.func
/// named by `mxmoe.kernel`) with one argument per `mxmoe.kernel_args`
/// entry: an operand's buffer (collapsed to 1-D, or its aligned address
/// for pointer parameters), a gpu.alloc'ed result buffer, a TMA map of an
/// operand viewed as [rows, K] bytes (`nvgpu.tma.create.descriptor`,
/// encoded at run time by the CUDA driver's cuTensorMapEncodeTiled), an
/// i32 status buffer (copied back after the launch and checked with one
/// cf.assert per status of mxmoe/KernelStatus.h), or an i64 constant. The
/// grid is the op's `mxmoe.grid`, else the kernel's; block and dynamic
/// shared memory are the kernel's. Fails with a diagnostic on `op` when
/// it has no kernel, its kernel is not a gpu.func (the kernel module was
/// lowered already), or a TMA map has a type upstream's descriptor
/// encoding does not take (the 4-bit unpacking 16U4_ALIGN16B maps of
/// MXFP4 operands).
LogicalResult emitKernelLaunch(OpBuilder &b, Operation *op,
                               const LaunchBuffers &buffers);

/// The checks of emitKernelLaunch that need no IR: `op` has a kernel that
/// is a gpu.func, a binding per parameter, a launch shape and TMA maps
/// that nvgpu encodes. Errors are emitted on `op`.
LogicalResult checkKernelLaunch(Operation *op);

} // namespace mlir::mxmoe::kernels

#endif // MXMOE_LIB_CONVERSION_MXMOETOGPU_HOSTLAUNCH_H
