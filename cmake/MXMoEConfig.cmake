# find_package(MXMoE) for projects that embed the mxmoe compiler or launch
# its kernels. Imported targets:
#   MXMoE::mxmoe_compiler  C API of the compiler (mxmoe-c/Compiler.h)
#   MXMoE::mxmoe_runtime   kernel runtime over the CUDA driver API
#                          (mxmoe-c/Runtime.h)
include("${CMAKE_CURRENT_LIST_DIR}/MXMoETargets.cmake")
get_filename_component(MXMoE_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(MXMoE_INCLUDE_DIRS "${MXMoE_PREFIX}/include")
set(MXMoE_FOUND TRUE)
