#!/usr/bin/env python3
"""mxmoe.torch.convert on transformers MoE models: Qwen3-MoE, Mixtral,
gpt-oss and Llama4 (text), small configs, random init, no downloads.

  convert_hf_gpu.py --fill DIR   (build machine) fills the kernel cache DIR
                                 for every family's expert GEMMs at the
                                 token counts below (the GPU machine has no
                                 compiler: libMLIR)
  convert_hf_gpu.py DIR [--steps N]   (GPU machine, MXMOE_CACHE_DIR=DIR)

Per family: one call converts the model (a deep copy of the bf16 one); the
state dict keys are unchanged; the precision policy's report (cached by
--fill from stand-ins of the models' experts and routers under their
transformers names) puts all four expert GEMMs in MX128 and both routers
in bf16; the first converted module against the
family's own forward in fp32 on the inputs it saw (relative error < 8e-2:
two MX-quantized GEMMs); the model's logits against the bf16 model's
(< 0.15); both train N steps (default 200) on byte-level Shakespeare with
the same batches and the converted final loss (mean of the last 20) is at
most 2 % above bf16's. Then a converted Qwen3-MoE under FSDP2 (one rank)
trains as the unwrapped one does (10 steps, losses within 1 %).
Every kernel call must hit the filled cache. Prints `N passed, N failed`.
"""
from __future__ import annotations

import copy
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))

B, T = 8, 256
H, I, E = 256, 128, 8
COMMON = dict(vocab_size=256, hidden_size=H, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, head_dim=64, max_position_embeddings=T,
              tie_word_embeddings=False)
# family -> (config class, causal-LM class, top-k, config fields)
FAMILIES = {
    "qwen3_moe": ("Qwen3MoeConfig", "Qwen3MoeForCausalLM", 2, dict(
        intermediate_size=512, moe_intermediate_size=I, num_experts=E, num_experts_per_tok=2,
        norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[],
        router_aux_loss_coef=0.0, output_router_logits=False)),
    "mixtral": ("MixtralConfig", "MixtralForCausalLM", 2, dict(
        intermediate_size=I, num_local_experts=E, num_experts_per_tok=2,
        router_jitter_noise=0.0, router_aux_loss_coef=0.0, output_router_logits=False)),
    "gpt_oss": ("GptOssConfig", "GptOssForCausalLM", 2, dict(
        intermediate_size=I, num_local_experts=E, num_experts_per_tok=2,
        router_aux_loss_coef=0.0, output_router_logits=False)),
    "llama4": ("Llama4TextConfig", "Llama4ForCausalLM", 1, dict(
        intermediate_size=I, intermediate_size_mlp=2 * I, num_local_experts=E,
        num_experts_per_tok=1, interleave_moe_layer_step=1, router_aux_loss_coef=0.0,
        output_router_logits=False)),
}
# What mxmoe.torch binds kernels with (recipe: the policy's, from "auto").
OPTIONS = {"rounding": "rceil", "toolkit": "/usr/local/cuda"}


def stand_in(family: str):
    """The experts and routers of FAMILIES[family]'s model under their
    transformers 5 names (model.layers.<i>.mlp.{experts,gate,router},
    model.layers.<i>.feed_forward.{router,experts}): what convert writes the
    precision-policy IR from, so the report can be cached here."""
    from mxmoe.hf import ShapeOnly as S, stand_in as tree
    mods = {}
    for i in range(COMMON["num_hidden_layers"]):
        p = f"model.layers.{i}."
        if family == "llama4":
            ex = type("Llama4TextExperts", (), {"gate_up_proj": S(E, H, 2 * I),
                                                "down_proj": S(E, I, H)})()
            mods[p + "feed_forward"] = ("Llama4TextMoe", {"experts": ex})
            mods[p + "feed_forward.router"] = ("Llama4Router", {"weight": S(E, H)})
        elif family == "gpt_oss":
            mods[p + "mlp.router"] = ("GptOssTopKRouter", {"weight": S(E, H)})
            mods[p + "mlp.experts"] = ("GptOssExperts", {"gate_up_proj": S(E, H, 2 * I),
                                                         "down_proj": S(E, I, H)})
        else:
            mods[p + "mlp.gate"] = ("TopKRouter", {"weight": S(E, H)})
            mods[p + "mlp.experts"] = ("Experts", {"gate_up_proj": S(E, 2 * I, H),
                                                   "down_proj": S(E, H, I), "act_fn": None})
    return tree(mods)


def fill(root: str) -> None:
    from mxmoe import hf, kernel_cache
    cache = kernel_cache.KernelCache(root)
    for name, (_, _, k, _) in FAMILIES.items():
        hf.fill_kernel_cache(stand_in(name), B * T * k, "sm_90a", cache,
                             options=OPTIONS)
    print(json.dumps(cache.stats))


def main(root: str, steps: int) -> int:
    import torch
    import torch.nn.functional as F
    import transformers
    sys.path.insert(0, HERE)
    from checks import Checks
    from mxmoe import program
    from mxmoe import torch as mt

    os.environ["MXMOE_CACHE_DIR"] = root
    cache = mt.kernel_cache_in_use()

    refused = []

    def refuse(*a, **kw):  # an OSError, as a missing compiler library is
        refused.append(1)
        raise OSError("no compiler on the GPU machine: the kernel cache was not filled")
    cache._compile = refuse
    checks = Checks(width=58)
    print("transformers", transformers.__version__, "torch", torch.__version__, flush=True)
    dev = torch.device("cuda")
    text = open(os.path.join(ROOT, "data", "tinyshakespeare.txt"), "rb").read()
    data = torch.frombuffer(bytearray(text), dtype=torch.uint8).to(dev).long()
    curves = {}
    for name, (cfg_cls, lm_cls, _, fields) in FAMILIES.items():
        try:
            curves[name] = run_family(checks, torch, F, transformers, mt, program, data, dev,
                                      name, cfg_cls, lm_cls, fields, steps)
        except Exception as err:  # one family's failure does not hide the others
            checks.report(f"{name}: converted and trained", False, repr(err)[:300])
    try:
        fsdp2(checks, torch, F, transformers, mt, program, data, dev)
    except Exception as err:  # reported as the failure
        checks.report("qwen3_moe: converted under FSDP2 == unwrapped", False, repr(err)[:300])
    checks.report("every kernel call a cache hit", not refused and cache.stats["kernels"] == 0,
                  json.dumps(cache.stats) + f"; {len(refused)} compiles refused")
    with open(os.path.join(os.environ.get("OUT", "."), "convert_hf_curves.json"), "w") as f:
        json.dump({"steps": steps, "batch": [B, T], "curves": curves}, f)
    return checks.summary()


def train(torch, F, models, data, dev, steps, seed, clip):
    """`steps` AdamW steps (lr 2e-3, no weight decay) of every model on the
    same random byte windows; the loss curve of each."""
    opts = {k: torch.optim.AdamW(m.parameters(), lr=2e-3, weight_decay=0.0)
            for k, m in models.items()}
    curve = {k: [] for k in models}
    gen = torch.Generator(device=dev).manual_seed(seed)
    for _ in range(steps):
        starts = torch.randint(0, data.numel() - T - 1, (B,), device=dev, generator=gen)
        batch = data[starts[:, None] + torch.arange(T + 1, device=dev)]
        for k, m in models.items():
            out = m(batch[:, :-1]).logits.float()
            loss = F.cross_entropy(out.reshape(-1, 256), batch[:, 1:].reshape(-1))
            loss.backward()
            if clip:
                torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            opts[k].step()
            opts[k].zero_grad(set_to_none=True)
            curve[k].append(loss.item())
    return curve


def fsdp2(checks, torch, F, transformers, mt, program, data, dev, steps=10):
    """A converted Qwen3-MoE wrapped with FSDP2 (fully_shard per decoder
    layer and the model, one rank: the parameters are DTensors gathered per
    layer) trains as the unwrapped converted model does."""
    import torch.distributed as dist
    from torch.distributed.fsdp import fully_shard
    if not dist.is_initialized():
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29561", rank=0,
                                world_size=1)
    cfg_cls, lm_cls, _, fields = FAMILIES["qwen3_moe"]
    torch.manual_seed(0)
    plain = getattr(transformers, lm_cls)(getattr(transformers, cfg_cls)(**COMMON, **fields))
    plain = plain.to(dev, torch.bfloat16)
    wrapped = copy.deepcopy(plain)
    mt.convert(plain)
    mt.convert(wrapped)
    for layer in wrapped.model.layers:
        fully_shard(layer)
    fully_shard(wrapped)
    losses = train(torch, F, {"plain": plain, "fsdp2": wrapped}, data, dev, steps, seed=3,
                   clip=False)
    program.check_deferred()
    diff = max(abs(a - b) / a for a, b in zip(losses["plain"], losses["fsdp2"]))
    checks.report("qwen3_moe: converted under FSDP2 == unwrapped", diff < 1e-2,
                  f"{steps} steps, max rel. loss diff {diff:.1e}; last {losses['fsdp2'][-1]:.4f}")


def run_family(checks, torch, F, transformers, mt, program, data, dev, name, cfg_cls,
               lm_cls, fields, steps):
    config = getattr(transformers, cfg_cls)(**COMMON, **fields)
    torch.manual_seed(0)
    bf16 = getattr(transformers, lm_cls)(config).to(dev, torch.bfloat16)
    mx = copy.deepcopy(bf16)
    report = mt.convert(mx)
    same_keys = list(mx.state_dict()) == list(bf16.state_dict())
    n = len(report["converted"])
    routers = {d["fqn"]: d["precision"] for d in report["policy"]["decisions"]
               if d["op"] == "mxmoe.linear"}
    policy_ok = (list(report["gemms"].values()) == ["mx128"] * 4 and len(routers) == 2
                 and set(routers.values()) == {"bf16"})
    checks.report(f"{name}: convert(model)", n == 2 and same_keys and policy_ok,
                  f"{n} modules ({sorted(set(report['converted'].values()))}), state dict keys "
                  f"unchanged: {same_keys}; skipped {report['skipped']}; policy: GEMMs "
                  f"{sorted(set(report['gemms'].values()))} x{len(report['gemms'])}, routers "
                  f"{routers}")
    first = next(iter(report["converted"]))
    orig, conv = dict(bf16.named_modules())[first], dict(mx.named_modules())[first]
    captured = {}

    def capture(module, args, output):  # returns None: the output stays
        captured.setdefault("args", args)
    hook = orig.register_forward_hook(capture)
    x = torch.randint(0, 256, (B, T), device=dev)
    with torch.no_grad():
        lb, lm = bf16(x).logits.float(), mx(x).logits.float()
        hook.remove()
        args = captured["args"]
        ref = copy.deepcopy(orig).float()(*[a.float() if a.is_floating_point() else a
                                            for a in args])
        ours = conv(*args)
    program.check_deferred()

    def out0(o):
        return (o[0] if isinstance(o, tuple) else o).double()
    err_mod = ((out0(ours) - out0(ref)).norm() / out0(ref).norm()).item()
    err = ((lm - lb).norm() / lb.norm()).item()
    # The converted module against the family's own forward in fp32: two
    # MX-quantized GEMMs (each ~3.8e-2, the e4m3 rounding of both operands).
    checks.report(f"{name}: {first} vs its fp32 forward", err_mod < 8e-2,
                  f"rel.err {err_mod:.2e}")
    # Whole-model logits vs the bf16 model: how much of the residual stream
    # the experts' outputs make at this random init decides the size.
    checks.report(f"{name}: logits vs transformers bf16", err < 0.15, f"rel.err {err:.2e}")
    curve = train(torch, F, {"bf16": bf16, "mxmoe": mx}, data, dev, steps, seed=1, clip=True)
    program.check_deferred()
    fb, fm = (sum(curve[k][-20:]) / 20 for k in ("bf16", "mxmoe"))
    gap = (fm - fb) / fb
    # Not worse than bf16 by more than 2 % (lower is not a failure: the two
    # runs' rounding differs, and at 200 steps either can be ahead).
    ok = gap <= 0.02 and all(math.isfinite(v) for v in curve["mxmoe"]) and fm < curve["mxmoe"][0] * 0.7
    checks.report(f"{name}: {steps} steps, final loss <= bf16's + 2 %", ok,
                  f"bf16 {fb:.4f}, mxmoe {fm:.4f} (gap {100 * gap:.2f} %; start "
                  f"{curve['mxmoe'][0]:.3f})")
    return curve


if __name__ == "__main__":
    if sys.argv[1] == "--fill":
        fill(sys.argv[2])
    else:
        steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 200
        sys.exit(main(sys.argv[1], steps))
