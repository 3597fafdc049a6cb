"""Replays the launch programs of an mxmoe-compile output on PyTorch tensors.

mxmoe-compile writes, next to the PTX/cubin of every chip, a manifest whose
"programs" list the straight-line kernel sequences of the expanded functions
(e.g. `layers.0.moe.experts.w13.forward`, `.input_grad`, `.weight_grad`):
per step the kernel and, per kernel parameter, a binding to a function
argument, an intermediate buffer, a status buffer, or a TMA descriptor over
one of those. `Program` allocates the intermediates, builds the tensor maps
(through the mxmoe C runtime), launches the steps on the current CUDA
stream's device, checks every grouped kernel's status, and returns the
results as torch tensors.

`MXGroupedMM` wraps a forward / input_grad / weight_grad triple as a
torch.autograd.Function: forward = quantize(x), quantize(W) and the MXFP8
grouped GEMM; backward = the input and weight gradients, each with its own
MX quantization along that GEMM's contraction axis (TorchAO's MXFP8 MoE
recipe, compiled by mxmoe).
"""
from __future__ import annotations

import json
import os
from typing import Dict, List, Sequence

from . import runtime as rt

_MODULES: Dict[str, "rt.Module"] = {}


def _torch():
    import torch  # imported lazily: the package is usable without torch
    return torch


def _dtype(name: str):
    torch = _torch()
    return {
        "bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
        "i32": torch.int32, "f8E4M3FN": torch.float8_e4m3fn,
        "f8E5M2": torch.float8_e5m2, "f8E8M0FNU": torch.uint8,
        "f4E2M1FN": torch.uint8,
    }[name]


class Program:
    """One program of a manifest, ready to run on `chip` (sm_90a here)."""

    def __init__(self, out_dir: str, function: str, chip: str = "sm_90a"):
        manifest = json.load(open(os.path.join(out_dir, "manifest.json")))
        progs = {p["function"]: p for p in manifest.get("programs", [])}
        if function not in progs:
            raise KeyError(f"no program '{function}' in {out_dir}/manifest.json "
                           f"(have: {', '.join(sorted(progs))})")
        self.prog = progs[function]
        self.kernels = {k["name"]: k for k in manifest["kernels"] if k["chip"] == chip}
        missing = [s["kernel"] for s in self.prog["steps"] if s["kernel"] not in self.kernels]
        if missing:
            raise KeyError(f"kernels {missing} not built for {chip}")
        key = os.path.join(out_dir, chip)
        if key not in _MODULES:
            path = os.path.join(out_dir, chip, "kernels.cubin")
            if not os.path.exists(path):
                path = os.path.join(out_dir, chip, "kernels.ptx")
            data = open(path, "rb").read() + (b"\0" if path.endswith(".ptx") else b"")
            _MODULES[key] = rt.Module(data)
        self.module = _MODULES[key]

    def _check_args(self, args):
        spec = self.prog["args"]
        if len(args) != len(spec):
            raise ValueError(f"{self.prog['function']}: expected {len(spec)} arguments, got {len(args)}")
        for i, (a, s) in enumerate(zip(args, spec)):
            want = _dtype(s["dtype"])
            if list(a.shape) != s["shape"] or a.dtype != want or not a.is_contiguous() or not a.is_cuda:
                raise ValueError(
                    f"{self.prog['function']}: argument {i} must be a contiguous CUDA "
                    f"tensor {s['shape']} {want}, got {list(a.shape)} {a.dtype}"
                    f"{'' if a.is_contiguous() else ' (not contiguous)'}")

    def __call__(self, *args, return_buffers: bool = False):
        torch = _torch()
        self._check_args(args)
        dev = args[0].device
        bufs = [torch.empty(b["bytes"], dtype=torch.uint8, device=dev)
                for b in self.prog["buffers"]]
        keep, statuses = [], []

        def ptr(b):
            return args[b["arg"]].data_ptr() if "arg" in b else bufs[b["buffer"]].data_ptr()

        for step in self.prog["steps"]:
            k = self.kernels[step["kernel"]]
            ptrs = []
            for b, param in zip(step["bindings"], k["params"]):
                if b.get("status"):
                    st = torch.full((1,), -1, dtype=torch.int32, device=dev)
                    statuses.append((st, k["name"]))
                    ptrs.append(st.data_ptr())
                elif b.get("tensor_map"):
                    blob = rt.tensor_map_for(param, ptr(b))
                    t = torch.frombuffer(bytearray(blob), dtype=torch.uint8).to(dev)
                    keep.append(t)
                    ptrs.append(t.data_ptr())
                else:
                    ptrs.append(ptr(b))
            self.module.launch(k["name"], k["grid"], k["block"], ptrs,
                               shared_bytes=k.get("dynamic_shared_memory", 0),
                               stream=torch.cuda.current_stream(dev).cuda_stream)
        for st, name in statuses:
            if int(st.item()) != 0:
                raise rt.KernelRejectedInput(5, f"kernel '{name}' rejected its group offsets "
                                                f"(status {int(st.item())})")
        out = []
        for r in self.prog["returns"]:
            if "arg" in r:
                out.append(args[r["arg"]])
                continue
            spec = self.prog["buffers"][r["buffer"]]
            out.append(self._view(bufs[r["buffer"]], spec))
        if return_buffers:
            return out, [self._view(b, s) for b, s in zip(bufs, self.prog["buffers"])]
        return out

    @staticmethod
    def _view(buf, spec):
        """Typed view of an intermediate (packed FP4 data stays bytes)."""
        dt = _dtype(spec["dtype"])
        if spec["dtype"] == "f4E2M1FN":
            return buf
        return buf.view(dt).view(spec["shape"])


def mx_grouped_mm_function(out_dir: str, fqn: str, chip: str = "sm_90a"):
    """torch.autograd.Function for the routed-expert GEMM `fqn`:
    y = x @ W[g]^T per token group (x [M, K] bf16, W [G, N, K] bf16, offsets
    [G] int32 end offsets), forward and both gradients through mxmoe's MXFP8
    kernels. Shapes are the ones the IR was compiled for."""
    torch = _torch()
    fwd = Program(out_dir, fqn + ".forward", chip)
    dgrad = Program(out_dir, fqn + ".input_grad", chip)
    wgrad = Program(out_dir, fqn + ".weight_grad", chip)

    class MXGroupedMM(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, offsets):
            ctx.save_for_backward(x, w, offsets)
            return fwd(x, w, offsets)[0]

        @staticmethod
        def backward(ctx, grad_out):
            x, w, offsets = ctx.saved_tensors
            g = grad_out.contiguous()
            gx = dgrad(g, w, offsets)[0] if ctx.needs_input_grad[0] else None
            gw = wgrad(g, x, offsets)[0] if ctx.needs_input_grad[1] else None
            return gx, gw, None

    return MXGroupedMM


def register_torch_op(out_dir: str, fqn: str, chip: str = "sm_90a",
                      namespace: str = "mxmoe"):
    """Registers `torch.ops.<namespace>.<name>(x, w, offsets)` (name = fqn
    with '.' -> '_') as a torch.library custom op over the compiled
    forward/input_grad/weight_grad programs, with a fake (meta) kernel for
    tracing and an autograd formula, so it runs under torch.compile as one
    graph node (fullgraph=True works). Returns the op."""
    torch = _torch()
    fwd = Program(out_dir, fqn + ".forward", chip)
    dgrad = Program(out_dir, fqn + ".input_grad", chip)
    wgrad = Program(out_dir, fqn + ".weight_grad", chip)
    name = fqn.replace(".", "_")
    out_spec = fwd.prog["buffers"][fwd.prog["returns"][0]["buffer"]]

    # Explicit schemas: annotations are strings under `from __future__
    # import annotations`, which infer_schema cannot resolve.
    @torch.library.custom_op(f"{namespace}::{name}", mutates_args=(),
                             schema="(Tensor x, Tensor w, Tensor offsets) -> Tensor")
    def op(x, w, offsets):
        return fwd(x.contiguous(), w.contiguous(), offsets.contiguous())[0].clone()

    @op.register_fake
    def _(x, w, offsets):
        return x.new_empty(out_spec["shape"], dtype=_dtype(out_spec["dtype"]))

    @torch.library.custom_op(
        f"{namespace}::{name}_backward", mutates_args=(),
        schema="(Tensor grad, Tensor x, Tensor w, Tensor offsets) -> Tensor[]")
    def backward_op(grad, x, w, offsets):
        g = grad.contiguous()
        return [dgrad(g, w, offsets)[0].clone(), wgrad(g, x, offsets)[0].clone()]

    @backward_op.register_fake
    def _(grad, x, w, offsets):
        return [torch.empty_like(x), torch.empty_like(w)]

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    def backward(ctx, grad):
        x, w, offsets = ctx.saved_tensors
        gx, gw = backward_op(grad, x, w, offsets)
        return gx, gw, None

    op.register_autograd(backward, setup_context=setup_context)
    return op
