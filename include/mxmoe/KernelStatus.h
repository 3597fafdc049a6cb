//===- KernelStatus.h - status words of validating kernels ------*- C++ -*-===//
//
// Kernels that validate run-time input (quantize over token-group offsets,
// the grouped GEMMs) write one i32 status word before touching any output:
// 0 = input valid (the kernel ran), 1 = group offsets rejected, 2 = sizes
// rejected (grouped GEMM), 3 = routing indices rejected (the routing
// kernels, lib/Conversion/MXMoEToGPU/Routing.cpp), 4 = expert ids rejected
// (mxmoe.sort_by_expert and mxmoe.router_topk_grad, SortByExpert.cpp and
// RouterTopK.cpp). On status 1 or 2 nothing was written; on 3 the rows the
// bad indices name are zeros; on 4 the sort puts the choices of bad ids
// after every expert's rows and the router gradient skips them. The
// texts below are the one wording of these codes: the runtime's
// mxmoeRtStatusMeaning / mxmoeRtCheckStatus (include/mxmoe-c/Runtime.h, and
// through it Python's mxmoe.runtime.rejection) and the compiler's host
// launch (`cf.assert` after the status copy-back, convert-mxmoe-to-gpu)
// both use them. Header-only, no dependencies, so that the runtime library
// does not link the compiler.
//
//===----------------------------------------------------------------------===//

#ifndef MXMOE_KERNELSTATUS_H
#define MXMOE_KERNELSTATUS_H

#include <cstdint>

namespace mxmoe {

/// Values of a kernel's status word.
enum KernelStatus : int32_t {
  kKernelStatusDone = 0,
  kKernelStatusOffsetsRejected = 1,
  kKernelStatusSizesRejected = 2,
  kKernelStatusIndicesRejected = 3,
  kKernelStatusExpertsRejected = 4,
};

/// The meaning of a known nonzero status, phrased to follow "kernel 'name'"
/// (e.g. "kernel 'k' rejected its group offsets (...; status 1)"); nullptr
/// for 0 and for codes no kernel writes.
inline const char *kernelStatusText(int32_t status) {
  switch (status) {
  case kKernelStatusOffsetsRejected:
    return "rejected its group offsets (negative, decreasing, past the token "
           "axis, or more padded rows than the buffers hold; status 1)";
  case kKernelStatusSizesRejected:
    return "rejected its sizes (G, M, N, K out of range, K not a multiple of "
           "its kernel's K step, or scale extents other than the blocked "
           "layout's; status 2)";
  case kKernelStatusIndicesRejected:
    return "rejected its routing indices (an index outside [0, tokens x "
           "top_k), or indices that are not a permutation of the routed "
           "rows; status 3): the rows they name are zeros, nothing was read "
           "or written out of bounds";
  case kKernelStatusExpertsRejected:
    return "rejected its expert ids (an id outside [0, num_experts); status "
           "4): the sort places those choices after every expert's rows, the "
           "router gradient gives them no gradient; nothing was read or "
           "written out of bounds";
  default:
    return nullptr;
  }
}

/// What the runtime adds after kernelStatusText: a kernel that rejected its
/// offsets or sizes wrote nothing ("; nothing was written"); one that
/// rejected routing indices wrote its other rows ("").
inline const char *kernelStatusSuffix(int32_t status) {
  return status == kKernelStatusOffsetsRejected ||
                 status == kKernelStatusSizesRejected
             ? "; nothing was written"
             : "";
}

} // namespace mxmoe

#endif // MXMOE_KERNELSTATUS_H
