"""mxmoe for PyTorch: a TorchAO-style drop-in MXFP8 grouped GEMM.

    from mxmoe.torch import scaled_grouped_mm
    y = scaled_grouped_mm(A, B_t, offs)          # was: torchao's
                                                 # _to_mxfp8_then_scaled_grouped_mm(A, B_t, offs)

`scaled_grouped_mm(A, B_t, offs)` takes TorchAO's arguments: A [M, K]
bf16 (the routed tokens, grouped by expert), B_t [E, K, N] bf16 as TorchAO
passes it, i.e. W.transpose(-2, -1) of the expert weights W [E, N, K], and
offs [E] int32 end offsets of the groups along M (monotone, at most M; rows
past the last offset give zeros). It returns y [M, N] bf16 with y[rows of
group g] = A[rows] @ W[g]^T, computed by mxmoe's MXFP8 kernels: forward,
and under autograd the input gradient (dy @ W[g]) and the weight gradient
(dy_g^T @ A_g), each operand quantized along its GEMM's contraction axis
(recipe "auto": MX128, 1x128 / 128x128 power-of-two scales, on sm_90a;
MX32, OCP MX 1x32 blocks, on sm_100a / sm_103a; or "mx32" / "mx128").
With wgrad_with_hp=True the weight gradient is a bf16 grouped GEMM
(torch._grouped_mm) instead.

The 2D x 2D form, `scaled_grouped_mm(dy.t(), x, offs)` (dy [M, N], x
[M, K]), is the weight gradient alone: out [E, N, K], out[g] = dy_g^T @ x_g
(no autograd).

Any M and any offsets: the kernels of one (E, N, K, recipe, chip) are
compiled once, on first use, and cached on disk (mxmoe.kernel_cache:
`$MXMOE_CACHE_DIR`, else ~/.cache/mxmoe); a new token count binds the same
kernels in ~0.1 s without compiling them again. The chip is the current
device's. Layouts are checked, never silently copied: a B_t whose strides
are not W.transpose(-2, -1)'s (a contiguous [E, K, N] tensor, for one) is a
ValueError naming the expected strides. Offsets are checked by the
kernels (decreasing, negative or past M: KernelRejectedInput, raised at a
later call or by mxmoe.program.check_deferred()).

The ops are torch.library custom ops (mxmoe::scaled_grouped_mm and its
backward, mxmoe::scaled_grouped_mm_wgrad) with fake kernels, so they trace
under torch.compile(fullgraph=True) and capture into CUDA graphs
(mxmoe.program's module docstring says how).
"""
from __future__ import annotations

import os
import threading
from typing import Dict, Tuple

import torch

from . import kernel_cache, program
from .compiler import RECIPES

ROUNDINGS = ("floor", "rceil", "ceil", "even")
_CHIPS = {(9, 0): "sm_90a", (10, 0): "sm_100a", (10, 3): "sm_103a"}

_LOCK = threading.Lock()
_CACHE = None
_PROGRAMS: Dict[Tuple[str, str], tuple] = {}
_BY_SIZE: Dict[tuple, tuple] = {}


def kernel_cache_in_use() -> "kernel_cache.KernelCache":
    """The process's KernelCache (its `stats` count compiles and hits)."""
    global _CACHE
    with _LOCK:
        if _CACHE is None:
            _CACHE = kernel_cache.KernelCache()
        return _CACHE


def _chip(device: torch.device) -> str:
    cc = torch.cuda.get_device_capability(device)
    if cc not in _CHIPS:
        raise RuntimeError(
            f"mxmoe: no kernels for compute capability {cc[0]}.{cc[1]} ({device}); "
            "supported: 9.0 (sm_90a: H100, H200), 10.0 (sm_100a: B200), 10.3 (sm_103a)")
    return _CHIPS[cc]


def _programs(m: int, k: int, n: int, experts: int, device, recipe: str, rounding: str):
    """(forward, input_grad, weight_grad) Programs for these sizes (looked up
    once per process; every call of the ops after that is one dict lookup)."""
    key = (m, k, n, experts, device.index, recipe, rounding)
    hit = _BY_SIZE.get(key)
    if hit is None:
        hit = _BY_SIZE[key] = _bind_programs(m, k, n, experts, device, recipe, rounding)
    return hit


def _bind_programs(m, k, n, experts, device, recipe, rounding):
    chip = _chip(device)
    options = {"recipe": recipe, "rounding": rounding,
               "toolkit": os.environ.get("MXMOE_CUDA_TOOLKIT", "/usr/local/cuda")}
    d = kernel_cache_in_use().grouped_mm(m=m, k=k, n=n, experts=experts, chip=chip,
                                         options=options)
    hit = _PROGRAMS.get((d, chip))
    if hit is None:
        hit = tuple(program.Program(d, f"{kernel_cache.FUNCTION}.{p}", chip, check="deferred")
                    for p in ("forward", "input_grad", "weight_grad"))
        _PROGRAMS[(d, chip)] = hit
    return hit


def _check_options(recipe: str, rounding: str, out_dtype) -> None:
    if recipe not in RECIPES:
        raise ValueError(f"scaled_grouped_mm: recipe must be one of {RECIPES}, got {recipe!r}")
    if rounding not in ROUNDINGS:
        raise ValueError(f"scaled_grouped_mm: rounding must be one of {ROUNDINGS}, got {rounding!r}")
    if out_dtype != torch.bfloat16:
        raise ValueError(f"scaled_grouped_mm: out_dtype must be torch.bfloat16, got {out_dtype}")


def _check_common(what: str, tensors, offs, groups: int) -> None:
    for name, t in tensors:
        if t.dtype != torch.bfloat16:
            raise ValueError(f"{what}: {name} must be bfloat16, got {t.dtype}")
        if not t.is_cuda:
            raise ValueError(f"{what}: {name} must be a CUDA tensor, got {t.device}")
    if offs.dtype != torch.int32 or offs.dim() != 1 or offs.numel() != groups:
        raise ValueError(f"{what}: offs must be int32 [{groups}] (end offsets of the groups), "
                         f"got {offs.dtype} {list(offs.shape)}")
    devices = {t.device for _, t in tensors} | {offs.device}
    if len(devices) != 1:
        raise ValueError(f"{what}: all tensors must be on one device, got {sorted(map(str, devices))}")


def _weight_from_b_t(A: torch.Tensor, B_t: torch.Tensor) -> torch.Tensor:
    """W [E, N, K] of TorchAO's B_t [E, K, N] = W.transpose(-2, -1)."""
    if A.dim() != 2 or not A.is_contiguous():
        raise ValueError(f"scaled_grouped_mm: A must be a contiguous [M, K] tensor, got shape "
                         f"{list(A.shape)} strides {tuple(A.stride())}")
    e, k, n = B_t.shape
    if k != A.shape[1]:
        raise ValueError(f"scaled_grouped_mm: A is [M, K] = {list(A.shape)} and B_t is [E, K, N] = "
                         f"{list(B_t.shape)}: K differs")
    w = B_t.transpose(-2, -1)
    if not w.is_contiguous():
        raise ValueError(
            f"scaled_grouped_mm: B_t [E, K, N] = {list(B_t.shape)} must be W.transpose(-2, -1) of "
            f"contiguous expert weights W [E, N, K], strides {(n * k, 1, k)}; got strides "
            f"{tuple(B_t.stride())} (a contiguous [E, K, N] tensor is not W^T: transpose the "
            "[E, N, K] weight instead of copying it)")
    return w


def scaled_grouped_mm(A: torch.Tensor, B_t: torch.Tensor, offs: torch.Tensor, *,
                      recipe: str = "auto", out_dtype=torch.bfloat16,
                      wgrad_with_hp: bool = False, rounding: str = "rceil") -> torch.Tensor:
    """See the module docstring: 2D x 3D (A [M, K], B_t [E, K, N]) -> [M, N]
    with autograd, or 2D x 2D (dy.t() [N, M], x [M, K]) -> [E, N, K]."""
    _check_options(recipe, rounding, out_dtype)
    if A.dim() == 2 and B_t.dim() == 3:
        w = _weight_from_b_t(A, B_t)
        _check_common("scaled_grouped_mm", (("A", A), ("B_t", B_t)), offs, B_t.shape[0])
        return torch.ops.mxmoe.scaled_grouped_mm(A, w, offs, recipe, rounding, wgrad_with_hp)
    if A.dim() == 2 and B_t.dim() == 2:
        dy = A.t()
        if not dy.is_contiguous() or not B_t.is_contiguous() or dy.shape[0] != B_t.shape[0]:
            raise ValueError(
                f"scaled_grouped_mm (2D x 2D, weight gradient): A must be dy.t() of a contiguous "
                f"dy [M, N] (strides (1, N)) and B a contiguous x [M, K] with the same M; got A "
                f"{list(A.shape)} strides {tuple(A.stride())}, B {list(B_t.shape)} strides "
                f"{tuple(B_t.stride())}")
        _check_common("scaled_grouped_mm", (("A", A), ("B", B_t)), offs, offs.numel())
        return torch.ops.mxmoe.scaled_grouped_mm_wgrad(dy, B_t, offs, recipe, rounding)
    raise ValueError(f"scaled_grouped_mm: A must be 2-D and B_t 2-D or 3-D, got {A.dim()}-D and "
                     f"{B_t.dim()}-D")


def _sizes(x, w):
    return x.shape[0], x.shape[1], w.shape[1], w.shape[0]  # M, K, N, E


@torch.library.custom_op("mxmoe::scaled_grouped_mm", mutates_args=(),
                         schema="(Tensor x, Tensor w, Tensor offs, str recipe, str rounding, "
                                "bool wgrad_with_hp) -> Tensor")
def _forward(x, w, offs, recipe, rounding, wgrad_with_hp):
    fwd, _, _ = _programs(*_sizes(x, w), x.device, recipe, rounding)
    return fwd(x, w, offs.contiguous())[0]


@_forward.register_fake
def _(x, w, offs, recipe, rounding, wgrad_with_hp):
    return x.new_empty((x.shape[0], w.shape[1]), dtype=torch.bfloat16)


@torch.library.custom_op("mxmoe::scaled_grouped_mm_backward", mutates_args=(),
                         schema="(Tensor grad, Tensor x, Tensor w, Tensor offs, str recipe, "
                                "str rounding, bool wgrad_with_hp) -> Tensor[]")
def _backward(grad, x, w, offs, recipe, rounding, wgrad_with_hp):
    _, dgrad, wgrad = _programs(*_sizes(x, w), x.device, recipe, rounding)
    g, offs = grad.contiguous(), offs.contiguous()
    dx = dgrad(g, w, offs)[0]
    if wgrad_with_hp:  # bf16 tensor cores, fp32 accumulation
        dw = torch._grouped_mm(g.t(), x, offs=offs).to(w.dtype)
    else:
        dw = wgrad(g, x, offs)[0]
    return [dx, dw]


@_backward.register_fake
def _(grad, x, w, offs, recipe, rounding, wgrad_with_hp):
    return [torch.empty_like(x), torch.empty_like(w)]


def _setup_context(ctx, inputs, output):
    x, w, offs, recipe, rounding, hp = inputs
    ctx.save_for_backward(x, w, offs)
    ctx.options = (recipe, rounding, hp)


def _autograd(ctx, grad):
    x, w, offs = ctx.saved_tensors
    dx, dw = _backward(grad, x, w, offs, *ctx.options)
    return dx, dw, None, None, None, None


_forward.register_autograd(_autograd, setup_context=_setup_context)


@torch.library.custom_op("mxmoe::scaled_grouped_mm_wgrad", mutates_args=(),
                         schema="(Tensor dy, Tensor x, Tensor offs, str recipe, str rounding) "
                                "-> Tensor")
def _wgrad(dy, x, offs, recipe, rounding):
    m, k, n, e = dy.shape[0], x.shape[1], dy.shape[1], offs.numel()
    _, _, wgrad = _programs(m, k, n, e, x.device, recipe, rounding)
    return wgrad(dy, x, offs.contiguous())[0]


@_wgrad.register_fake
def _(dy, x, offs, recipe, rounding):
    return x.new_empty((offs.shape[0], dy.shape[1], x.shape[1]), dtype=torch.bfloat16)


def convert(model, recipe: str = "auto", filter_fqns=None):
    """mxmoe.hf.convert: the routed experts of a transformers MoE model run
    through scaled_grouped_mm (see python/mxmoe/hf.py)."""
    from .hf import convert as convert_model
    return convert_model(model, recipe=recipe, filter_fqns=filter_fqns)
