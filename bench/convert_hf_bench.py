#!/usr/bin/env python3
"""A transformers Qwen3-MoE at the real Qwen3-30B-A3B layer dimensions,
converted by `mxmoe.torch.convert`, trained next to the bf16 model:
step time (forward + backward + AdamW, CUDA events), tokens/s, peak
memory and the loss curves, both models on the same batches.

Dimensions (Qwen/Qwen3-30B-A3B config.json): hidden 2048, 128 routed
experts of 768 (gate and up fused: 1536), top-8, 32 query / 4 kv heads of
128, vocabulary 151936; L decoder layers (default 4, every one MoE) instead
of 48, so two models and their AdamW states fit on one GPU. Batch B x T
tokens of byte-level Shakespeare (default 2 x 4096: 65536 routed rows per
layer); random init.

  convert_hf_bench.py --fill DIR [--layers L] [--batch B] [--seq T]
        (build machine) caches the precision policy's report and the
        kernels of both expert GEMMs at B x T x 8 rows (the GPU machine
        has no compiler library)
  convert_hf_bench.py DIR [--layers L] [--batch B] [--seq T] [--steps N]
        (GPU machine) prints the table and one JSON row per path
        (append them to bench/results/convert_hf_bench_<date>.jsonl)

Ratios are throughput ratios (tokens/s of mxmoe over bf16's).
"""
from __future__ import annotations

import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, os.path.join(ROOT, "python"))

H, I, E, TOP_K = 2048, 768, 128, 8
CONFIG = dict(vocab_size=151936, hidden_size=H, intermediate_size=6144,
              moe_intermediate_size=I, num_experts=E, num_experts_per_tok=TOP_K,
              num_attention_heads=32, num_key_value_heads=4, head_dim=128,
              norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[],
              router_aux_loss_coef=0.0, output_router_logits=False,
              tie_word_embeddings=False)
# What mxmoe.torch binds kernels with (recipe: the policy's, from "auto").
OPTIONS = {"rounding": "rceil", "toolkit": "/usr/local/cuda"}


def arg(name: str, default: int) -> int:
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def stand_in(layers: int):
    """Qwen3-MoE's experts and routers under their transformers 5 names."""
    from mxmoe.hf import ShapeOnly as S, stand_in as tree
    mods = {}
    for i in range(layers):
        p = f"model.layers.{i}.mlp."
        mods[p + "gate"] = ("Qwen3MoeTopKRouter", {"weight": S(E, H)})
        mods[p + "experts"] = ("Qwen3MoeExperts", {"gate_up_proj": S(E, 2 * I, H),
                                                   "down_proj": S(E, H, I), "act_fn": None})
    return tree(mods)


def fill(root: str, layers: int, rows: int) -> None:
    from mxmoe import hf, kernel_cache
    cache = kernel_cache.KernelCache(root)
    hf.fill_kernel_cache(stand_in(layers), rows, "sm_90a", cache,
                         options=OPTIONS)
    print(json.dumps(cache.stats))


def run(root: str, layers: int, batch: int, seq: int, steps: int) -> int:
    import torch
    import torch.nn.functional as F
    import transformers
    from mxmoe import program
    from mxmoe import torch as mt

    os.environ["MXMOE_CACHE_DIR"] = root
    dev = torch.device("cuda")
    cfg = transformers.Qwen3MoeConfig(**CONFIG, num_hidden_layers=layers,
                                      max_position_embeddings=seq)
    torch.manual_seed(0)
    bf16 = transformers.Qwen3MoeForCausalLM(cfg).to(dev, torch.bfloat16)
    mx = copy.deepcopy(bf16)
    report = mt.convert(mx)
    print("converted", len(report["converted"]), "modules; GEMMs",
          sorted(set(report["gemms"].values())), "; cache", json.dumps(mt.kernel_cache_in_use().stats),
          flush=True)
    text = open(os.path.join(ROOT, "data", "tinyshakespeare.txt"), "rb").read()
    data = torch.frombuffer(bytearray(text), dtype=torch.uint8).to(dev).long()
    gen = torch.Generator(device=dev).manual_seed(1)
    batches = []
    for _ in range(steps):
        starts = torch.randint(0, data.numel() - seq - 1, (batch,), device=dev, generator=gen)
        batches.append(data[starts[:, None] + torch.arange(seq + 1, device=dev)])
    rows = []
    for path, model in (("bf16", bf16), ("mxmoe", mx)):
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.0)
        losses, times = [], []
        torch.cuda.reset_peak_memory_stats()
        for b in batches:
            t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0.record()
            out = model(b[:, :-1]).logits
            loss = F.cross_entropy(out.float().reshape(-1, out.shape[-1]), b[:, 1:].reshape(-1))
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            t1.record()
            losses.append(loss)
            times.append((t0, t1))
        torch.cuda.synchronize()
        program.check_deferred()
        ms = sorted(a.elapsed_time(z) for a, z in times[3:])  # 3 warm-up steps
        med = ms[len(ms) // 2]
        loss_values = [float(v) for v in losses]
        rows.append({"bench": "convert_hf", "model": "Qwen3-30B-A3B dims", "layers": layers,
                     "batch": batch, "seq": seq, "path": path,
                     "gemms": sorted(set(report["gemms"].values())) if path == "mxmoe" else ["bf16"],
                     "ms_step_median": round(med, 2),
                     "tokens_per_s": round(batch * seq / med * 1e3),
                     "peak_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2),
                     "loss_first": round(loss_values[0], 4),
                     "loss_last10": round(sum(loss_values[-10:]) / 10, 4),
                     "steps": steps})
        del opt
        torch.cuda.empty_cache()
    b, m = rows
    print(f"| layers | tokens/step | bf16 ms | mxmoe ms | mxmoe / bf16 (tokens/s) | peak GiB bf16 / mxmoe "
          f"| loss (last 10) bf16 / mxmoe |\n|---|---|---|---|---|---|---|\n"
          f"| {layers} | {batch * seq} | {b['ms_step_median']} | {m['ms_step_median']} | "
          f"{b['ms_step_median'] / m['ms_step_median']:.2f}x | {b['peak_gib']} / {m['peak_gib']} | "
          f"{b['loss_last10']} / {m['loss_last10']} |")
    for r in rows:
        print(json.dumps(r))
    gap = (m["loss_last10"] - b["loss_last10"]) / b["loss_last10"]
    print(f"loss gap {100 * gap:.2f} % (mxmoe vs bf16, mean of the last 10 steps)")
    return 0


if __name__ == "__main__":
    layers, batch, seq = arg("--layers", 4), arg("--batch", 2), arg("--seq", 4096)
    if sys.argv[1] == "--fill":
        fill(sys.argv[2], layers, batch * seq * TOP_K)
    else:
        sys.exit(run(sys.argv[1], layers, batch, seq, arg("--steps", 40)))
