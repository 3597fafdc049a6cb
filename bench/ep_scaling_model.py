#!/usr/bin/env python3
"""A model of expert parallelism (EP) for one MoE layer, forward + backward,
from measured single-GPU compute and the interconnect's bandwidth (issue 26
item 3: how EP scales to 8 and 64 GPUs; no multi-GPU machine was lent, so
nothing here is a multi-GPU measurement).

Per rank and step (T tokens per rank, top-k, hidden H, P ranks of EP, the
experts split evenly over them; balanced routing):

* compute: the rank's experts process T * k routed rows, as many as a
  single GPU running the whole layer on T tokens, so the measured
  single-GPU layer time at T tokens stands for it (`--compute`: rows of
  bench/moe_layer_bench.py's jsonl; DeepSeek-V3's `deepseek_v3_ep8` shape
  is left out: it is already one rank's slice of an EP=8 layer whose
  "tokens" are routed rows, modelled as top-1);
* all-to-all: four per step (forward dispatch and combine; backward: the
  combine's gradient dispatched to the experts, the dispatch's gradient
  combined back), each moving T * k rows of H values, of which (P - 1) / P
  leave the rank; bf16 rows are 2H bytes; with `quantized dispatch` the
  forward dispatch sends MX128 rows (H fp8 bytes + H / 128 e8m0 scale
  bytes): the backward's weight gradient needs the rows quantized along
  the tokens, so the others stay bf16;
* bandwidth per rank and direction: NVLink 4 within a node of 8 (H100 /
  H200 SXM: 900 GB/s bidirectional, 450 per direction; NVIDIA H100 Tensor
  Core GPU datasheet), InfiniBand NDR between nodes (one 400 Gb/s
  ConnectX-7 per GPU: 50 GB/s; the DeepSeek-V3 technical report,
  arXiv 2412.19437 section 3.2.1, uses the same 50 GB/s per GPU), each
  derated by `--efficiency` (default 0.8, what NCCL all-to-all typically
  reaches of the link rate); a rank's all-to-all takes the longer of its
  NVLink share (peers in its node) and its InfiniBand share (peers
  outside);
* step time without overlap: compute + all-to-all; with perfect overlap
  (communication hidden behind another micro-batch's compute, DeepSeek-V3's
  DualPipe): max(compute, all-to-all).

Prints one table per shape (markdown, as in bench/RESULTS.md): tokens/s
per rank of bf16 and mxmoe MX128 and their throughput ratio.

    python3 bench/ep_scaling_model.py [--compute bench/results/moe_layer_bench_2026-12-06_routed_h100.jsonl]
        [--ranks 1,2,8,64] [--efficiency 0.8]
"""
from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cli import option  # noqa: E402
DEFAULT_COMPUTE = os.path.join(HERE, "results", "moe_layer_bench_2026-12-06_routed_h100.jsonl")
NVLINK_GBS, IB_GBS, NODE = 450.0, 50.0, 8
# The measured paths: bf16 (torch._grouped_mm with PyTorch routing) and
# mxmoe's compiled routed block with the MX128 recipe.
PATHS = {"bf16": "bf16 torch._grouped_mm", "mxmoe": "mxmoe mx128 routed"}



def load(path):
    """(shape, tokens) -> {"bf16": ms, "mxmoe": ms, dims}."""
    out = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r["shape"].endswith("_ep8"):
                continue  # already one rank's slice, its tokens are routed rows
            for key, name in PATHS.items():
                if r["path"] == name:
                    e = out.setdefault((r["shape"], r["tokens"]), {
                        "H": r["hidden"], "k": r["top_k"], "E": r["experts"]})
                    e[key] = r["ms_fwd_bwd"]
    return {k: v for k, v in out.items() if all(p in v for p in PATHS)}


def all_to_all_ms(rows, row_bytes, ranks, efficiency):
    """One all-to-all of `rows` rows per rank, balanced over `ranks`."""
    if ranks == 1:
        return 0.0
    per_peer = rows * row_bytes / ranks
    local = min(ranks, NODE) - 1  # peers over NVLink
    remote = ranks - 1 - local    # peers over InfiniBand
    nv = local * per_peer / (NVLINK_GBS * efficiency * 1e9)
    ib = remote * per_peer / (IB_GBS * efficiency * 1e9)
    return max(nv, ib) * 1e3


def step_comm_ms(T, k, H, ranks, efficiency, quantized):
    rows = T * k
    bf16 = 2 * H
    dispatch = (H + H // 128) if quantized else bf16
    return (all_to_all_ms(rows, dispatch, ranks, efficiency)
            + 3 * all_to_all_ms(rows, bf16, ranks, efficiency))


def table(shape, T, e, ranks, efficiency):
    H, k = e["H"], e["k"]
    lines = [f"{shape}, {T} tokens per rank (H {H}, top-{k}; compute measured at {T} tokens: "
             f"bf16 {e['bf16']:.1f} ms, mxmoe MX128 {e['mxmoe']:.1f} ms)", "",
             "| EP ranks | all-to-all ms (bf16 / quantized dispatch) | bf16 no overlap | mxmoe no overlap "
             "| mxmoe + quantized dispatch | ratio no overlap | ratio overlapped |",
             "|---|---|---|---|---|---|---|"]
    for P in ranks:
        c = step_comm_ms(T, k, H, P, efficiency, False)
        cq = step_comm_ms(T, k, H, P, efficiency, True)
        tb, tm, tq = e["bf16"] + c, e["mxmoe"] + c, e["mxmoe"] + cq
        ob, oq = max(e["bf16"], c), max(e["mxmoe"], cq)
        kt = lambda ms: f"{T / ms:.0f}K"  # noqa: E731 (tokens per ms = K tokens/s)
        lines.append(f"| {P} | {c:.1f} / {cq:.1f} | {kt(tb)} tok/s | {kt(tm)} | {kt(tq)} "
                     f"| {tb / tq:.2f}x | {ob / oq:.2f}x |")
    return "\n".join(lines)


def main(argv) -> int:
    if "--help" in argv or "-h" in argv:
        print(__doc__)
        return 0
    compute = load(option(argv, "--compute", DEFAULT_COMPUTE))
    ranks = [int(r) for r in option(argv, "--ranks", "1,2,8,64").split(",")]
    efficiency = float(option(argv, "--efficiency", "0.8"))
    if not compute or any(r < 1 for r in ranks) or not 0 < efficiency <= 1:
        print("ep_scaling_model: no measured rows, or a rank count < 1, or an "
              "efficiency outside (0, 1]", file=sys.stderr)
        return 2
    for (shape, T), e in sorted(compute.items()):
        print(table(shape, T, e, ranks, efficiency) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
