#!/usr/bin/env python3
"""Trains a Hugging Face transformers Qwen3-MoE model (small config, random
init, no downloads) on byte-level Shakespeare twice: once in bf16 (the
transformers expert path) and once with every routed-expert GEMM (forward,
input gradient, weight gradient) running through mxmoe's MXFP8 sm_90a
kernels (torch.library ops over the manifest programs compiled from
test/Integration/moe_train.mlir). Same init, same batches. Writes the loss
curves to $OUT/train_qwen3moe.png and $OUT/train_qwen3moe.json, and checks
that the MXFP8 run tracks bf16: final loss (mean of the last 20 steps)
within 2 %, no divergence. Last line `N passed, N failed`.

With `--mx128 DIR2` (programs compiled from the same IR with
`mxmoe-compile --recipe mx128`: 1x128 activation / gradient and 128x128
weight scale tiles) a third model trains beside them, same init and
batches, with the same 2 % check; the plot shows every curve.

Usage (device): train_hf_moe.py DIR [--mx128 DIR2] [--steps 500]
"""
from __future__ import annotations

import argparse
import copy
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
from mxmoe import program as mp  # noqa: E402

H, I, E, K = 256, 128, 8, 2
B, T = 8, 256


def make_config():
    from transformers import Qwen3MoeConfig
    return Qwen3MoeConfig(
        vocab_size=256, hidden_size=H, intermediate_size=512,
        moe_intermediate_size=I, num_experts=E, num_experts_per_tok=K,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        head_dim=64, max_position_embeddings=T, norm_topk_prob=True,
        decoder_sparse_step=1, mlp_only_layers=[], router_aux_loss_coef=0.0,
        output_router_logits=False, tie_word_embeddings=False)


def expert_weights(experts):
    """[E, 2I, H] gate+up and [E, H, I] down weights of a transformers
    experts container (per-expert MLP modules, or fused parameters)."""
    if isinstance(experts, torch.nn.ModuleList):
        w13 = torch.stack([torch.cat([e.gate_proj.weight, e.up_proj.weight], 0)
                           for e in experts])
        w2 = torch.stack([e.down_proj.weight for e in experts])
        return w13, w2
    gu, dn = experts.gate_up_proj, experts.down_proj
    # Fused parameters are either both in nn.Linear layout ([E, 2I, H],
    # [E, H, I]) or both transposed ([E, H, 2I], [E, I, H]); down_proj tells
    # which (2I may equal H, I does not here).
    if dn.shape[1] == I:
        gu, dn = gu.transpose(1, 2), dn.transpose(1, 2)
    return gu, dn


def patch_moe_blocks(model, op13, op2):
    """Replaces the forward of every sparse MoE block by one whose routed
    experts run through mxmoe (router, top-k and weighting unchanged)."""
    patched = 0
    for mod in model.modules():
        if not type(mod).__name__.endswith("SparseMoeBlock"):
            continue
        with torch.no_grad():
            probe = mod.forward(torch.zeros(1, 2, H, device=next(mod.parameters()).device,
                                            dtype=next(mod.parameters()).dtype))
        returns_tuple = isinstance(probe, tuple)
        norm = getattr(mod, "norm_topk_prob", True)

        def forward(hidden, mod=mod, returns_tuple=returns_tuple, norm=norm):
            shape = hidden.shape
            xt = hidden.reshape(-1, H)
            gate = mod.gate
            logits = gate(xt) if isinstance(gate, torch.nn.Linear) else F.linear(xt, gate.weight)
            probs = torch.softmax(logits.float(), -1)
            topv, topi = probs.topk(K, -1)
            if norm:
                topv = topv / topv.sum(-1, keepdim=True)
            flat = topi.reshape(-1)
            order = torch.argsort(flat, stable=True)
            token = order // K
            offs = torch.cumsum(torch.bincount(flat, minlength=E), 0).to(torch.int32)
            w13, w2 = expert_weights(mod.experts)
            h = op13(xt[token].contiguous(), w13.contiguous(), offs)
            g, u = h.chunk(2, -1)
            y = op2((F.silu(g) * u).contiguous(), w2.contiguous(), offs)
            wts = topv.reshape(-1)[order].unsqueeze(1).to(y.dtype)
            out = torch.zeros_like(xt).index_add(0, token, y * wts).reshape(shape)
            return (out, logits) if returns_tuple else out

        mod.forward = forward
        patched += 1
    return patched


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--mx128", default="", help="programs of the mx128 recipe")
    args = ap.parse_args()
    dev = torch.device("cuda")
    import transformers
    from transformers import Qwen3MoeForCausalLM
    print("transformers", transformers.__version__, "torch", torch.__version__, flush=True)

    data = torch.frombuffer(bytearray(open(os.path.join(ROOT, "data", "tinyshakespeare.txt"), "rb").read()),
                            dtype=torch.uint8).to(dev).long()
    torch.manual_seed(0)
    bf16 = Qwen3MoeForCausalLM(make_config()).to(dev, torch.bfloat16)
    models = {"bf16": bf16}
    results = []
    dirs = {"mxfp8": (args.dir, "mxmoe_train")}
    if args.mx128:
        dirs["mx128"] = (args.mx128, "mxmoe_train128")
    for name, (d, ns) in dirs.items():
        mx = copy.deepcopy(bf16)
        op13 = mp.register_torch_op(d, "experts.w13", namespace=ns)
        op2 = mp.register_torch_op(d, "experts.w2", namespace=ns)
        n = patch_moe_blocks(mx, op13, op2)
        print(f"{name}: patched {n} MoE blocks", flush=True)
        # The patched block equals the transformers block up to MX rounding.
        with torch.no_grad():
            x = torch.randint(0, 256, (B, T), device=dev)
            lb, lm = bf16(x).logits.float(), mx(x).logits.float()
            e = ((lm - lb).norm() / lb.norm()).item()
        ok = n == 2 and e < 5e-2
        results.append(ok)
        print(f"{name + ': patched model vs transformers (logits)':44s} {'PASS' if ok else 'FAIL'}  "
              f"rel.err {e:.2e}", flush=True)
        models[name] = mx

    opts = {name: torch.optim.AdamW(m.parameters(), lr=2e-3, weight_decay=0.0)
            for name, m in models.items()}
    curves = {name: [] for name in models}
    gen = torch.Generator(device=dev).manual_seed(1)
    t0 = time.time()
    for step in range(args.steps):
        starts = torch.randint(0, data.numel() - T - 1, (B,), device=dev, generator=gen)
        idx = starts[:, None] + torch.arange(T + 1, device=dev)
        batch = data[idx]
        for name, m in models.items():
            out = m(batch[:, :-1]).logits.float()
            loss = F.cross_entropy(out.reshape(-1, 256), batch[:, 1:].reshape(-1))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            opts[name].step()
            opts[name].zero_grad(set_to_none=True)
            curves[name].append(loss.item())
        mp.check_deferred()  # the mxmoe ops check their offsets without syncing
        if step % 50 == 0 or step == args.steps - 1:
            losses = "  ".join(f"{k} {v[-1]:.4f}" for k, v in curves.items())
            print(f"step {step:4d}  {losses}  ({time.time() - t0:.0f}s)", flush=True)

    final = {name: sum(c[-20:]) / 20 for name, c in curves.items()}
    fb = final["bf16"]
    for name in dirs:
        fm = final[name]
        gap = abs(fm - fb) / fb
        finite = all(math.isfinite(v) for v in curves[name])
        ok = gap <= 0.02 and finite and fm < curves[name][0] * 0.6
        results.append(ok)
        print(f"{name + ': final loss (last 20 steps) within 2 %':44s} {'PASS' if ok else 'FAIL'}  "
              f"bf16 {fb:.4f}, {name} {fm:.4f}, gap {100 * gap:.2f} %", flush=True)

    out_dir = os.environ.get("OUT", ".")
    with open(os.path.join(out_dir, "train_qwen3moe.json"), "w") as f:
        json.dump({"steps": args.steps, "batch": [B, T], "curves": curves,
                   **{f"final_{k}": v for k, v in final.items()}}, f)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    labels = {"bf16": "bf16", "mxfp8": "MX32 (1x32 scales)", "mx128": "MX128 (1x128 / 128x128)"}
    for name in curves:
        ax.plot(curves[name], label=f"{labels[name]} (final {final[name]:.3f})", lw=1)
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats/byte)")
    ax.set_title("Qwen3-MoE (2 layers, 8 experts, top-2), byte-level Shakespeare")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "train_qwen3moe.png"), dpi=120)
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
