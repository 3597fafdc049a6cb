#!/usr/bin/env python3
"""The routing decision of one MoE layer, compiled (mxmoe.router_topk then
mxmoe.sort_by_expert: RouterTopK.cpp, SortByExpert.cpp) against the same
steps in PyTorch (TorchTitan's TokenChoiceTopKRouter and
`token_indices_experts_sorted`: softmax or sigmoid in f32, topk,
renormalization, a stable argsort of the flattened choices, bincount and
cumsum), on the routers of real models at several token counts.

    python3 bench/router_bench.py --emit -o .device/router_bench.mlir
    build/bin/mxmoe-compile .device/router_bench.mlir --chip sm_90a -o .device/routerb
    python3 bench/router_bench.py .device/routerb               # device

One `func.func @<model>_t<tokens>` per (model, token count), logits
[tokens, E] bf16 in; weights, experts, sorted indices and offsets out;
and `@<model>_t<tokens>_sort`, the sort alone (timed on its own too).
Prints a table (microseconds per routing decision, CUDA events, median of
20 after 3 warm-ups; both paths checked equal first) and one JSON row per
shape.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

MODELS = {
    # name: experts, top_k, score, renormalize
    "qwen3": (128, 8, "softmax", True),
    "scout": (16, 1, "sigmoid", False),
    "gpt_oss": (32, 4, "softmax", True),
}
TOKENS = (4096, 16384, 65536)


def emit(out):
    lines = []
    for m, (E, k, score, renorm) in MODELS.items():
        for T in TOKENS:
            n = T * k
            attrs = f"top_k = {k} : i64, score = #mxmoe.router_score<{score}>" + (
                ", renormalize" if renorm else "")
            res = (f"tensor<{T}x{k}xf32>, tensor<{T}x{k}xi32>, tensor<{n}xi32>, "
                   f"tensor<{E}xi32>")
            lines += [
                f"func.func @{m}_t{T}(%x: tensor<{T}x{E}xbf16>) -> ({res}) {{",
                f"  %w, %e = mxmoe.router_topk %x {{{attrs}}} : tensor<{T}x{E}xbf16> -> "
                f"tensor<{T}x{k}xf32>, tensor<{T}x{k}xi32>",
                f"  %i, %o = mxmoe.sort_by_expert %e {{num_experts = {E} : i64}} : "
                f"tensor<{T}x{k}xi32> -> tensor<{n}xi32>, tensor<{E}xi32>",
                f"  return %w, %e, %i, %o : {res}",
                "}",
                f"func.func @{m}_t{T}_sort(%e: tensor<{T}x{k}xi32>) -> (tensor<{n}xi32>, tensor<{E}xi32>) {{",
                f"  %i, %o = mxmoe.sort_by_expert %e {{num_experts = {E} : i64}} : "
                f"tensor<{T}x{k}xi32> -> tensor<{n}xi32>, tensor<{E}xi32>",
                f"  return %i, %o : tensor<{n}xi32>, tensor<{E}xi32>",
                "}",
            ]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def torch_routing(x, E, k, score, renorm):
    import torch
    s = torch.softmax(x.float(), -1) if score == "softmax" else torch.sigmoid(x.float())
    w, e = s.topk(k, -1)
    if renorm:
        w = w / (w.sum(-1, keepdim=True) + 1e-20)
    flat = e.reshape(-1)
    idx = torch.argsort(flat, stable=True).to(torch.int32)
    offs = torch.bincount(flat, minlength=E).cumsum(0).to(torch.int32)
    return w, e.to(torch.int32), idx, offs


def same_as_stable(x, got, E, k, score, renorm):
    """The compiled routing equals PyTorch's with ties to the lower expert
    (torch.topk leaves the order of equal bf16 logits open): experts,
    indices and offsets exactly, weights within 1e-5."""
    import torch
    s = torch.softmax(x.float(), -1) if score == "softmax" else torch.sigmoid(x.float())
    e = torch.sort(s, dim=-1, descending=True, stable=True).indices[:, :k]
    w = s.gather(1, e)
    if renorm:
        w = w / (w.sum(-1, keepdim=True) + 1e-20)
    flat = e.reshape(-1)
    idx = torch.argsort(flat, stable=True).to(torch.int32)
    offs = torch.bincount(flat, minlength=E).cumsum(0).to(torch.int32)
    return (torch.equal(got[1], e.to(torch.int32)) and torch.equal(got[2], idx)
            and torch.equal(got[3], offs) and torch.allclose(got[0], w, rtol=1e-5, atol=0))


def time_us(fn):
    import torch
    for _ in range(3):
        fn()
    ts = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1000)
    return sorted(ts)[len(ts) // 2]


def run(d):
    import torch
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    from mxmoe import program as mp
    g = torch.Generator(device="cuda").manual_seed(7)
    print(f"{'model':8s} {'tokens':>7s} {'mxmoe us':>9s} {'torch us':>9s} {'torch/mxmoe':>11s} same")
    rows = []
    for m, (E, k, score, renorm) in MODELS.items():
        for T in TOKENS:
            x = torch.randn(T, E, device="cuda", generator=g).bfloat16()
            prog = mp.Program(d, f"{m}_t{T}", check="deferred")
            got = prog(x)
            same = same_as_stable(x, got, E, k, score, renorm)
            tm = time_us(lambda: prog(x))
            tt = time_us(lambda: torch_routing(x, E, k, score, renorm))
            sort = mp.Program(d, f"{m}_t{T}_sort", check="deferred")
            ts = time_us(lambda: sort(got[1]))
            print(f"{m:8s} {T:7d} {tm:9.1f} {tt:9.1f} {tt / tm:11.2f} {same} (sort alone {ts:.1f} us)")
            rows.append(dict(model=m, tokens=T, experts=E, top_k=k, mxmoe_us=round(tm, 2),
                             torch_us=round(tt, 2), mxmoe_sort_us=round(ts, 2), same=same,
                             device=torch.cuda.get_device_name()))
    mp.check_deferred()
    for r in rows:
        print(json.dumps(r))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--emit", action="store_true")
    ap.add_argument("-o", "--out")
    a = ap.parse_args()
    if a.emit:
        emit(a.out)
    else:
        run(a.dir)


if __name__ == "__main__":
    main()
