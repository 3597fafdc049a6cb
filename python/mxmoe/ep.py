"""Expert parallelism (EP) for the routed experts: tokens dispatched by
all-to-all to the ranks that own their experts, the local experts' grouped
GEMMs through mxmoe, the results combined by the reverse all-to-all
(TorchTitan's and Megatron's scheme; issue 26). The collectives are
PyTorch's (`torch.distributed.nn.functional.all_to_all_single`, which has
a backward: the reverse all-to-all of the gradient).

    from mxmoe.ep import routed_experts
    y = routed_experts(x, weights, experts, w13, w2, num_experts=E, group=ep_group)

Shapes and types, per rank: x [T, H] bf16 (this rank's tokens; T may
differ between ranks and may be 0), weights [T, k] f32 and experts [T, k]
int (global expert ids in [0, E), the router's top-k), w13 [E / P, 2I, H]
and w2 [E / P, H, I] bf16: this rank's experts, rank r owning experts
[r E / P, (r + 1) E / P) (P = the group's size, which must divide E).
Returns y [T, H] bf16: y[t] = sum_j weights[t, j] * w2[e] (silu(g) * u)
with [g | u] = w13[e] x[t], e = experts[t, j], computed on e's rank.

Steps: the (token, slot) pairs sorted by expert (stable); per-expert counts
exchanged (an all-to-all of E ints: the only host synchronization, for the
split sizes); the rows x[token] sent to their experts' ranks
(all_to_all_single); on the receiving rank, rows grouped by local expert
(stable: source rank, then the sender's order), the two grouped GEMMs
(`gemm`, default mxmoe.torch.scaled_grouped_mm: each operand quantized
after the dispatch, on the receiving rank, along its own contraction axis)
with the SwiGLU between; the rows sent back by the reverse all-to-all and
summed per token with their weights in f32, rounded once to bf16.
Autograd flows through every step (x, weights, w13, w2). `group=None`
runs the same steps without collectives (one rank owning every expert).

`token_bucket` (rows, default 0 = exact): the received rows are padded
with zero rows to a multiple of it before the grouped GEMMs (rows past the
last offset: the GEMMs give zeros there, sliced off before the combine).
A rank's row count depends on the routing, and every new count needs its
launch programs bound by a compile; with buckets the programs are those
of a few counts, which a kernel cache filled on a machine with the
compiler serves to GPU machines without one (test/Integration/ep_moe_gpu.py
--fill). The cost is the padding copy and the GEMMs' rows past the last
offset (skipped tiles, their quantization kept).

Errors: ValueError for shapes, dtypes, an E that P does not divide or a
negative token_bucket;
expert ids outside [0, E) are a ValueError (checked on the device, then
raised).
"""
from __future__ import annotations

from typing import Callable, Optional

import torch
import torch.nn.functional as F


def _mxmoe_gemm(recipe: str) -> Callable:
    from mxmoe.torch import scaled_grouped_mm

    def gemm(a, w, offs):
        return scaled_grouped_mm(a, w.transpose(-2, -1), offs, recipe=recipe)
    return gemm


def bf16_gemm(a, w, offs):
    """The bf16 baseline: torch._grouped_mm(a [M, K], w [E, N, K]^T, offs)."""
    return torch._grouped_mm(a, w.transpose(-2, -1), offs=offs)


def _all_to_all(x, out_splits, in_splits, group):
    """Rows of x sent in in_splits to each rank, out_splits received (with
    autograd: the backward is the reverse all-to-all)."""
    if group is None:
        return x
    from torch.distributed.nn.functional import all_to_all_single
    out = x.new_empty((sum(out_splits),) + tuple(x.shape[1:]))
    return all_to_all_single(out, x.contiguous(), out_splits, in_splits, group=group)


def _check(x, weights, experts, w13, w2, num_experts, ranks):
    if x.dim() != 2 or weights.shape != experts.shape or weights.dim() != 2 or \
            weights.shape[0] != x.shape[0]:
        raise ValueError(f"routed_experts: x must be [T, H] and weights, experts [T, k]; got "
                         f"{list(x.shape)}, {list(weights.shape)}, {list(experts.shape)}")
    if num_experts % ranks:
        raise ValueError(f"routed_experts: {ranks} ranks do not divide {num_experts} experts")
    local, H = num_experts // ranks, x.shape[1]
    if w13.dim() != 3 or w2.dim() != 3 or w13.shape[0] != local or w2.shape[0] != local or \
            w13.shape[2] != H or w2.shape[1] != H or w13.shape[1] != 2 * w2.shape[2]:
        raise ValueError(f"routed_experts: w13 must be [{local}, 2I, {H}] and w2 [{local}, {H}, I] "
                         f"(this rank's experts); got {list(w13.shape)}, {list(w2.shape)}")
    if experts.numel() and (int(experts.min()) < 0 or int(experts.max()) >= num_experts):
        raise ValueError(f"routed_experts: expert ids must be in [0, {num_experts})")


def routed_experts(x: torch.Tensor, weights: torch.Tensor, experts: torch.Tensor,
                   w13: torch.Tensor, w2: torch.Tensor, *, num_experts: int,
                   group=None, recipe: str = "auto",
                   gemm: Optional[Callable] = None, token_bucket: int = 0) -> torch.Tensor:
    """See the module docstring."""
    import torch.distributed as dist
    ranks = 1 if group is None else dist.get_world_size(group)
    _check(x, weights, experts, w13, w2, num_experts, ranks)
    if not isinstance(token_bucket, int) or token_bucket < 0:
        raise ValueError(f"routed_experts: token_bucket must be an int >= 0, got {token_bucket!r}")
    gemm = gemm or _mxmoe_gemm(recipe)
    T, k = experts.shape
    local = num_experts // ranks
    flat = experts.reshape(-1).long()
    order = torch.argsort(flat, stable=True)
    counts = torch.bincount(flat, minlength=num_experts)
    # recv[j, e]: rows of local expert e that rank j sends here.
    if group is None:
        recv = counts.view(1, local)
    else:
        recv = torch.empty_like(counts)
        dist.all_to_all_single(recv, counts, group=group)
        recv = recv.view(ranks, local)
    in_splits = counts.view(ranks, local).sum(1).tolist()
    out_splits = recv.sum(1).tolist()
    rows = _all_to_all(x[order // k], out_splits, in_splits, group)
    # Received rows: by source rank, then by local expert; regroup by expert.
    ids = torch.repeat_interleave(torch.arange(local, device=x.device).repeat(ranks),
                                  recv.reshape(-1))
    perm = torch.argsort(ids, stable=True)
    offs = torch.cumsum(recv.sum(0), 0).to(torch.int32)
    a = rows[perm]
    m = a.shape[0]
    if token_bucket and m % token_bucket:
        pad = -(-m // token_bucket) * token_bucket - m
        a = torch.cat([a, a.new_zeros((pad, a.shape[1]))])
    h = gemm(a, w13, offs)
    g, u = h.chunk(2, dim=-1)
    o = gemm(F.silu(g) * u, w2, offs)[:m]
    back = torch.empty_like(o).index_copy(0, perm, o)  # source-rank order again
    returned = _all_to_all(back, in_splits, out_splits, group)
    slots = torch.empty_like(returned).index_copy(0, order, returned).view(T, k, -1)
    y = (slots.float() * weights.unsqueeze(-1).float()).sum(1)
    return y.to(x.dtype)
