"""mxmoe: MX-format MoE training kernels compiled by the mxmoe MLIR compiler.

Modules:
  reference -- numpy reference of OCP MX quantization and scale layouts
               (written from the OCP MX v1.0 spec; bit-exact targets).
  runtime   -- launches emitted PTX kernels through the CUDA driver API
               (ctypes), on raw device pointers (e.g. torch data_ptr()).
  ptx       -- runs mxmoe-opt's lowering pipeline and extracts PTX + launch
               metadata (needs a build of mxmoe-opt).
  builders  -- model-level IR of a MoE layer from a Hugging Face-style
               config (Llama4, DeepSeek-V3, Qwen3-MoE, gpt-oss field names);
               `python -m mxmoe.builders qwen3_30b_a3b --tokens 4096`.
  compiler  -- `compile()`: the mxmoe-compile pipeline through the C API
               (include/mxmoe-c/Compiler.h, libmxmoe_compiler.so).
  program   -- replays mxmoe-compile's launch programs on torch tensors and
               wraps forward/input_grad/weight_grad as an autograd function.
  kernel_cache -- compiled grouped GEMMs on disk, one kernel compile per
               shape and recipe, any token count bound to it.
  torch     -- `scaled_grouped_mm(A, B_t, offs)`: TorchAO's MXFP8 grouped
               GEMM call, any shape, through the kernel cache; `convert(model)`.
  hf        -- the transformers MoE families `convert` knows.
  ep        -- expert parallelism: `routed_experts` dispatches tokens by
               all-to-all to their experts' ranks (torch.distributed) and
               runs the local experts through scaled_grouped_mm (not yet
               run on GPUs: test/Integration/ep_moe_gpu.py).
"""

import importlib as _importlib

_SUBMODULES = ("reference", "runtime", "ptx", "builders", "compiler", "program", "tiled",
               "kernel_cache", "torch", "hf", "ep")


def compile(*args, **kwargs):  # noqa: A001 (the documented `mxmoe.compile`)
    """`mxmoe.compiler.compile` (the mxmoe-compile pipeline through the C
    API); imported on first call, so `import mxmoe` loads no native
    library."""
    from .compiler import compile as _compile
    return _compile(*args, **kwargs)


def __getattr__(name):
    """`mxmoe.program`, `mxmoe.builders`, ... without importing each first
    (PEP 562: submodules load on first use)."""
    if name in _SUBMODULES:
        return _importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'mxmoe' has no attribute {name!r}")
