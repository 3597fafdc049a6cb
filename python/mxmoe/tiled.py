"""Tiled MLP for PyTorch: the token axis split into shards, each shard's
activations recomputed in backward (what `mxmoe.tiled_mlp` +
`mxmoe-tile-mlp` compile; DeepSpeed TiledMLP, Axolotl PR #3666).

`tiled_mlp(fn, x, params, shards)` computes `fn(x, *params)` shard by shard
along the token axis (dim 0 after flattening the batch into tokens) without
keeping any shard's intermediate activations (each shard is a non-reentrant
activation checkpoint); backward re-runs `fn` on each shard, yields the
concatenated input gradient and the SUM over shards of the parameter
gradients (never the mean). Shard count: an
int, or "auto" = ceil(tokens / tokens_per_shard) (32768, the compiler's
default), or "square" = ceil(tokens / hidden) (the older rule); never more
shards than tokens; the same split in forward and backward.

With compiled kernels: `mxmoe-compile` compiles a tiled MLP with a static
token count into kernels per shard size (`<fqn>.*` and `<fqn>.tail.*`,
mxmoe-tile-mlp); `fn` calls them through
`mxmoe.program.mx_linear_function(out_dir, fqn)`, which picks the variant
of the shard's shape (test/Integration/tiled_mlp_compiled_gpu.py). This
function's partition is the compiler's, so every shard has a compiled
shape.

Under FSDP2 the parameters stay gathered for the whole backward shard loop:
the loop runs inside one module's backward, between FSDP's pre-backward
all-gather and its post-backward reshard, so a module that wraps the tiled
MLP is all-gathered once per backward, not once per shard.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence, Union

import torch


def shard_count(tokens: int, hidden: int, shards: Union[int, str] = "auto",
                tokens_per_shard: int = 32768) -> int:
    if tokens <= 0:
        raise ValueError(f"tokens must be positive, got {tokens}")
    if shards == "auto":
        n = math.ceil(tokens / tokens_per_shard)
    elif shards == "square":
        n = math.ceil(tokens / hidden)
    elif isinstance(shards, int) and shards >= 1:
        n = shards
    else:
        raise ValueError(f"shards must be a positive int, 'auto' or 'square', got {shards!r}")
    return max(1, min(n, tokens))


def _bounds(tokens: int, n: int):
    """Balanced split: the first tokens % n shards get one extra token."""
    base, extra = divmod(tokens, n)
    start = 0
    for i in range(n):
        size = base + (1 if i < extra else 0)
        yield start, start + size
        start += size


def tiled_mlp(fn: Callable, x, params: Sequence, shards: Union[int, str] = "auto",
              tokens_per_shard: int = 32768):
    """fn(x, *params) computed shard by shard along the token axis; each
    shard runs under non-reentrant activation checkpointing, so only its
    input is kept and backward recomputes it; autograd sums the parameter
    gradients over the shards. torch.compile traces it without a graph
    break (checkpoint is a higher-order op there)."""
    from torch.utils.checkpoint import checkpoint
    shape = x.shape
    x2d = x.reshape(-1, shape[-1])
    n = shard_count(x2d.shape[0], x2d.shape[-1], shards, tokens_per_shard)
    outs = [checkpoint(fn, x2d[a:b], *params, use_reentrant=False)
            for a, b in _bounds(x2d.shape[0], n)]
    y = outs[0] if n == 1 else torch.cat(outs, 0)
    return y.reshape(*shape[:-1], y.shape[-1])
