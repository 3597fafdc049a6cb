#!/usr/bin/env python3
"""The tiled MoE block's load-balancing statistics, run as compiled: the
launch programs of test/Integration/tiled_moe_aux.mlir (`a<N>` forward,
`ab<N>.backward`) replayed by the C runtime. The tiled MLP returns, besides
y, two results summed over shards: per expert the shard's sort_by_expert
end offsets as f32 (summed: the cumulative choice counts) and the sum over
tokens of the router's softmax scores. From them the Switch / transformers
auxiliary loss aux = c E sum_e f_e P_e (f_e = count_e / (T k), P_e = the
mean score; `load_balancing_loss_func`) is computed in PyTorch, and its
gradient enters the backward program as the score sums' cotangent
(c E f_e / T for every token: mxmoe.router_topk_grad's [E] scores_grad).

* counts (differences of the summed cumulative offsets) equal torch's
  bincount of the reference top-2 choices, exactly, for 1, 2, 3, 4, 8 shards;
* score sums within 1e-5 of float64 (f32 sums of polynomial exp);
* aux loss alone (dy = 0): the router weight's and x's gradients within
  2e-2 of float64 autograd of the aux loss (nonzero: a test that fails if
  the cotangent is dropped), for every shard count;
* y and aux together (dy random, c = 1): y, dx, drw, dw13, dw2 within
  1e-1 of float64 autograd of sum(y dy) + aux, and y, dx bit-equal to one
  shard;
* save_routing (`s<N>`, 1, 2, 4 shards): `sb<N>.forward` returns y, the
  statistics, the router's weights and experts [T, 2] and the sort's
  indices [2T] and per-shard end offsets [N * 16] (the experts
  equal to the reference top-2, as sets per token); `sb<N>.backward`
  reading them gives y and every gradient bit-equal to the recomputing
  block of the same shard count (the choice is the same: the kernels are
  deterministic), and with the saved weights replaced by other values
  dx and the expert gradients change (the backward does read them);
* balanced and skewed routing; fresh random data. The router weight is
  [I_16 | 0]: the logits are x[:, :16] exactly (distinct multiples of 1/4
  per row), so no top-2 choice depends on rounding.

Usage (device): tiled_moe_aux_gpu.py OUT_DIR, with
  mxmoe-compile test/Integration/tiled_moe_aux.mlir --chip sm_90a --recipe mx128 -o OUT_DIR
Last line `N passed, N failed`.
"""
from __future__ import annotations

import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import Checks, rel  # noqa: E402
from tiled_moe_block_gpu import E, NAMES, T, dev, forward64, inputs  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from mxmoe import program as mp  # noqa: E402

CHECKS = Checks(width=64)
report = CHECKS.report


def aux_loss(counts, psum, coef):
    """transformers' load_balancing_loss_func for one layer: c E sum_e
    (count_e / T) (psum_e / T), counts over the T * k choices."""
    return coef * E * (counts / T * psum / T).sum()


def reference(x, rw, w13, w2, dy, coef):
    """float64 y, every gradient of sum(y dy) + aux, the counts and the
    score sums (tiled_moe_block_gpu.forward64: the same block)."""
    leaves, y, p, top = forward64(x, rw, w13, w2)
    counts = torch.bincount(top.flatten().cpu(), minlength=E).double()
    psum = p.sum(0)
    loss = (y * dy.double()).sum() + aux_loss(counts.to(p.device), psum, coef)
    loss.backward()
    return (y.detach(), *(t.grad for t in leaves)), counts, psum.detach()


def run(out, n, data, dy, coef):
    """y, counts, score sums and the gradients of sum(y dy) + aux."""
    y, cum, psum = mp.Program(out, f"a{n}")(*data)
    counts = torch.diff(cum.double(), prepend=torch.zeros(1, device=dev, dtype=torch.double))
    # d aux / d psum_e = c E count_e / T^2 (the counts carry no gradient).
    dpsum = (coef * E * counts / (T * T)).float()
    grads = mp.Program(out, f"ab{n}.backward")(
        *data, dy.to(torch.bfloat16), torch.zeros_like(cum), dpsum)
    torch.cuda.synchronize()
    # (Copies: a program reuses its output buffers from call to call.)
    return tuple(t.clone() for t in (y, *grads)), counts, psum.clone()


def check(out, data, dy, label):
    zero = torch.zeros_like(dy)
    ref_aux, counts_ref, psum_ref = reference(*data, zero, 1.0)
    ref, _, _ = reference(*data, dy, 1.0)
    one = None
    for n in (1, 2, 3, 4, 8):
        res_aux, counts, psum = run(out, n, data, zero, 1.0)
        report(f"{label} {n} shards: counts exact, score sums vs float64",
               torch.equal(counts.cpu(), counts_ref) and rel(psum, psum_ref) <= 1e-5,
               f"sums {rel(psum, psum_ref):.1e}")
        errs = [rel(res_aux[i], ref_aux[i]) for i in (1, 2)]
        nonzero = all(ref_aux[i].abs().max() > 0 for i in (1, 2))
        report(f"{label} {n} shards: aux only: dx, drw vs float64",
               nonzero and max(errs) <= 2e-2,
               " ".join(f"{e:.2e}" for e in errs))
        res, _, _ = run(out, n, data, dy, 1.0)
        errs = [rel(a, r) for a, r in zip(res, ref)]
        ok = max(errs) <= 1e-1
        if one is None:
            one = res
        else:
            ok = ok and torch.equal(res[0], one[0]) and torch.equal(res[1], one[1])
        report(f"{label} {n} shards: y + aux: all vs float64" +
               (", y dx = 1 shard" if n > 1 else ""), ok,
               " ".join(f"{nm} {e:.1e}" for nm, e in zip(NAMES, errs)))


def check_saved(out, data, dy, label):
    """save_routing against the recomputing block, shard count by shard
    count (a<N> with 1, 2, 4 shards: the same partition)."""
    _, _, p, top = forward64(*data)
    for n in (1, 2, 4):
        ref, _, _ = run(out, n, data, dy, 1.0)
        # y, the statistics, then the saved routing: weights, experts and
        # (static shard loops) the sort's indices and per-shard offsets.
        y, cum, psum, w, e, *sort = mp.Program(out, f"sb{n}.forward")(*data)
        counts = torch.diff(cum.double(), prepend=torch.zeros(1, device=dev, dtype=torch.double))
        dpsum = (E * counts / (T * T)).float()
        bwd = mp.Program(out, f"sb{n}.backward")
        zc = torch.zeros_like(cum)
        # (A program reuses its output buffers from call to call: copies.)
        grads = [g.clone() for g in bwd(*data, w, e, *sort, dy.to(torch.bfloat16), zc, dpsum)]
        torch.cuda.synchronize()
        same_e = torch.equal(e.sort(-1).values.long().cpu(), top.sort(-1).values.cpu())
        equal = all(torch.equal(a, b) for a, b in zip((y, *grads), ref))
        report(f"{label} {n} shards saved: experts = top-2, all = recomputing",
               same_e and equal)
        other = bwd(*data, w.flip(-1).contiguous(), e, *sort, dy.to(torch.bfloat16), zc, dpsum)
        torch.cuda.synchronize()
        # (dx and the expert weights' gradients scale with the weights;
        # the router's gradient does not read them: it recomputes the
        # probabilities from the logits and takes dL/dw, which the weights
        # do not change.)
        report(f"{label} {n} shards saved: other weights change dx, dw13",
               not torch.equal(other[0], grads[0]) and not torch.equal(other[2], grads[2]))
    # The autograd form keeps the saved routing between its programs.
    block = mp.tiled_block_function(out, "s2", "sb2")
    leaves = [t.clone().requires_grad_() for t in data]
    y, cum, psum = block.apply(*leaves)
    counts = torch.diff(cum.detach().double(), prepend=torch.zeros(1, device=dev, dtype=torch.double))
    # (The score sums' cotangent exactly as run() passes it: c E count / T^2.)
    dpsum = (E * counts / (T * T)).float()
    loss = (y.float() * dy).sum() + (psum * dpsum).sum()
    loss.backward()
    ref, _, _ = run(out, 2, data, dy, 1.0)
    report(f"{label} tiled_block_function(s2): y and grads = programs",
           all(torch.equal(a, b) for a, b in zip((y, *(t.grad for t in leaves)), ref)))


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    gen = torch.Generator().manual_seed(20261208)
    for skew in (False, True):
        *data, dy = inputs(skew, gen)
        label = "skewed" if skew else "balanced"
        check(sys.argv[1], data, dy.float(), label)
        check_saved(sys.argv[1], data, dy.float(), label)
    return CHECKS.summary()


if __name__ == "__main__":
    sys.exit(main())
