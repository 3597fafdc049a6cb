"""mxmoe: MX-format MoE training kernels compiled by the mxmoe MLIR compiler.

Modules:
  reference -- numpy reference of OCP MX quantization and scale layouts
               (written from the OCP MX v1.0 spec; bit-exact targets).
  runtime   -- launches emitted PTX kernels through the CUDA driver API
               (ctypes), on raw device pointers (e.g. torch data_ptr()).
  ptx       -- runs mxmoe-opt's lowering pipeline and extracts PTX + launch
               metadata (needs a build of mxmoe-opt).
"""
