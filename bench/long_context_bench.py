#!/usr/bin/env python3
"""Long-context MoE layer (issue 24 item 4): peak memory and tokens/s of
one MoE layer, forward + backward, at 16K-512K tokens, untiled and tiled
along the token axis, bf16 PyTorch and mxmoe, Qwen3-30B-A3B and Llama4
Scout shapes.

Paths (rows' `path`):
  bf16               PyTorch: bf16 router routing as the builders' block
                     does, sort by expert, torch._grouped_mm w13, SwiGLU,
                     w2, combine, plus the shared expert (Scout) as two
                     bf16 linears; autograd keeps every activation.
  bf16 tiled RULE    the same function under mxmoe.tiled.tiled_mlp (each
                     shard checkpointed, recomputed in backward; Axolotl
                     PR #3666's scheme), RULE = auto (32K tokens per
                     shard) or square (ceil(T / H) shards).
  mxmoe              untiled: Qwen3's routed block compiled as one
                     mxmoe.swiglu_experts with routing (MX128; dispatch,
                     experts, weighted combine: bench/moe_layer_shapes.py's
                     `_routed`), Scout's experts as one unrouted
                     swiglu_experts (`_block`) between PyTorch's scaled
                     dispatch and combine; router and shared expert bf16.
  mxmoe tiled RULE   the builders' tiled MoE block (mxmoe.builders
                     --tiled-block --shards RULE) compiled whole: forward
                     and backward are launch programs with loop steps run
                     by the C runtime (mxmoe.program.tiled_block_function),
                     router, top-k, sort, experts, combine and shared
                     expert all kernels; parameter gradients accumulated
                     in the parameters' dtype. "mxmoe tiled RULE f32acc":
                     the same with grad_accumulator = f32.
A block without a launch program (the manifest's
functions_without_program) gives a row with "unsupported" and the reason.
The untiled paths route as the builders' blocks do (Scout: sigmoid top-1,
the dispatched row scaled by its score; Qwen3: softmax top-8
renormalized), so `grad_rel_err` compares like with like; the compiled
block's shared expert is MX128 (a one-expert swiglu_experts), the untiled
paths' bf16.

Each row: ms per forward + backward (CUDA events, `--iters` steps after
one warm-up), tokens/s, peak GiB above the inputs and parameters
(torch.cuda.max_memory_allocated: PyTorch's and the programs' buffers,
which come from PyTorch's allocator), and for a path that does not fit,
"oom": true. Rows with `grad_rel_err` compare the tiled paths' parameter
gradients with the untiled path's of the same precision (normwise).

Build machine (writes the compile outputs, ~2 MB each):
    python3 bench/long_context_bench.py --build .device/lc [--models qwen3,scout] \\
        [--tokens 16384,65536,131072,262144,524288] [--rules auto,square] [--save-routing]
Device:
    python3 bench/long_context_bench.py .device/lc [--models ...] [--tokens ...] \\
        [--rules ...] [--paths bf16,mxmoe tiled auto,...] [--iters 3] [--profile]
(--profile: each row also splits the step's GPU time by kernel, as
bench/moe_layer_bench.py --profile does; --save-routing builds the auto
rule's block with `save_routing` too: the row "mxmoe tiled auto saved")
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)
import moe_layer_shapes  # noqa: E402
from cli import option  # noqa: E402

MODELS = {"qwen3": "qwen3_30b_a3b", "scout": "llama4_scout"}
SHARED = {"qwen3": 0, "scout": 8192}  # shared-expert dim (0: none)
TOKENS = (16384, 65536, 131072, 262144, 524288)
RULES = ("auto", "square")



def grid(argv):
    models = option(argv, "--models", ",".join(MODELS)).split(",")
    tokens = [int(t) for t in option(argv, "--tokens", ",".join(map(str, TOKENS))).split(",")]
    rules = option(argv, "--rules", ",".join(RULES)).split(",")
    for m in models:
        if m not in MODELS:
            raise SystemExit(f"--models: unknown model {m!r} (have {', '.join(MODELS)})")
    for r in rules:
        if r not in RULES:
            raise SystemExit(f"--rules: unknown rule {r!r} (have auto, square)")
    return models, tokens, rules


def tiled_dir(out, model, T, rule, f32acc=False):
    return os.path.join(out, f"{model}_t{T}_{rule}" + ("_f32acc" if f32acc else ""))


# -- build machine ------------------------------------------------------------

def compile_ir(ir: str, out: str, compile_bin: str, *extra: str) -> None:
    if os.path.exists(out):
        shutil.rmtree(out)
    subprocess.run([compile_bin, "-", "--chip", "sm_90a", "--recipe", "mx128", "-o", out,
                    *extra], input=ir.encode(), check=True, stdout=subprocess.DEVNULL)
    for f in ("model.mlir", "mxmoe_kernels.h", os.path.join("sm_90a", "kernels.ptx")):
        p = os.path.join(out, f)
        if os.path.exists(p):
            os.remove(p)


def build(out: str, argv) -> int:
    from mxmoe import builders
    models, tokens, rules = grid(argv)
    compile_bin = os.path.join(ROOT, "build", "bin", "mxmoe-compile")
    os.makedirs(out, exist_ok=True)
    for m in models:
        shapes = [(f"{m}_t{T}", dict(T=T, **moe_layer_shapes.MODELS[m])) for T in tokens]
        ir = "\n".join(moe_layer_shapes.function_ir(n, s) for n, s in shapes)
        compile_ir(ir, os.path.join(out, f"untiled_{m}"), compile_bin)
        config = builders.CONFIGS[MODELS[m]]
        for T in tokens:
            block = builders.tiled_moe_block_ir(config, T, shards="auto")
            for rule in rules:  # the pass's shards = auto rule
                compile_ir(block, tiled_dir(out, m, T, rule), compile_bin, "--tile-rule",
                           "tokens" if rule == "auto" else "square")
            if "--save-routing" in argv and "auto" in rules:  # the saved-routing row
                saved = builders.tiled_moe_block_ir(config, T, shards="auto", save_routing=True)
                compile_ir(saved, tiled_dir(out, m, T, "auto") + "_saved", compile_bin)
            # f32 gradient accumulators at 64 shards (the accuracy row).
            if T >= 64 * 1024 and "auto" in rules:
                acc = builders.tiled_moe_block_ir(config, T, shards="64").replace(
                    '{fqn = "layers.0.moe"}', '{fqn = "layers.0.moe", grad_accumulator = f32}')
                compile_ir(acc, tiled_dir(out, m, T, "64", f32acc=True), compile_bin)
                compile_ir(builders.tiled_moe_block_ir(config, T, shards="64"),
                           tiled_dir(out, m, T, "64"), compile_bin)
            print(f"built {m} {T}", flush=True)
    return 0


# -- device -------------------------------------------------------------------

def make_layer(torch, F, model, k, E, experts, routed=None):
    """The layer as the builders' block routes (Qwen3: softmax top-k
    renormalized, rows combined with their weights; Scout: sigmoid of the
    top-1 logit scaling the dispatched row, unweighted combine), with
    `experts(rows, w13, w2, offsets)` on the rows sorted by expert, plus the
    shared expert (bf16 linears) where the model has one."""
    def fn(x, router, w13, w2, *shared):
        logits = F.linear(x, router)
        if model == "scout":
            topv, topi = logits.topk(k, -1)
            topv = torch.sigmoid(topv.float())
        else:
            topv, topi = torch.softmax(logits.float(), -1).topk(k, -1)
            topv = topv / topv.sum(-1, keepdim=True)
        flat = topi.reshape(-1)
        order = torch.argsort(flat, stable=True)
        token = order // k
        counts = torch.zeros(E, dtype=torch.int64, device=x.device).scatter_add_(
            0, flat, torch.ones_like(flat))
        offs = torch.cumsum(counts, 0).to(torch.int32)
        if routed is not None:  # dispatch, experts, weighted combine compiled
            y = routed(x, w13, w2, offs, order.to(torch.int32), topv)
            return y + shared_out(x, shared) if shared else y
        wts = topv.reshape(-1)[order].unsqueeze(1)
        rows = x[token]
        if model == "scout":
            out = experts((rows.float() * wts).to(x.dtype).contiguous(), w13, w2, offs)
        else:
            out = experts(rows.contiguous(), w13, w2, offs) * wts.to(x.dtype)
        y = torch.zeros_like(x).index_add(0, token, out)
        return y + shared_out(x, shared) if shared else y

    def shared_out(x, shared):
        g, u = F.linear(x, shared[0]).chunk(2, -1)
        return F.linear(F.silu(g) * u, shared[1])
    return fn


def bf16_experts(torch, F):
    def experts(rows, w13, w2, offs):
        g, u = torch._grouped_mm(rows, w13.transpose(-2, -1), offs=offs).chunk(2, -1)
        return torch._grouped_mm((F.silu(g) * u).contiguous(), w2.transpose(-2, -1), offs=offs)
    return experts


def measure(torch, step, iters):
    """(ms per step, peak GiB above what was allocated before) or None on
    out-of-memory."""
    try:
        step()
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(iters):
            step()
        b.record()
        torch.cuda.synchronize()
        return a.elapsed_time(b) / iters, (torch.cuda.max_memory_allocated() - base) / 2**30
    except torch.cuda.OutOfMemoryError:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        return None


def rel(a, b):
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()


def paths_for(torch, F, out, model, T, rules, s):
    from mxmoe import program as mp
    from mxmoe.tiled import tiled_mlp
    k, E = s["k"], s["E"]
    bf16 = make_layer(torch, F, model, k, E, bf16_experts(torch, F))
    paths = [("bf16", bf16)]
    for rule in rules:
        paths.append((f"bf16 tiled {rule}",
                      lambda x, *p, rule=rule: tiled_mlp(lambda xs, *q: bf16(xs, *q), x, p,
                                                         shards=rule)))
    untiled = os.path.join(out, f"untiled_{model}")
    experts = mp.register_swiglu_experts_op(untiled, f"{model}_t{T}.experts",
                                            namespace="mxmoe_lc")
    # Qwen3 weights the combine: the routed op (dispatch and combine
    # compiled) fits; Llama4 scales the dispatch, which it does not do.
    routed = None if model == "scout" else mp.register_swiglu_experts_op(
        untiled, f"{model}_t{T}.routed", namespace="mxmoe_lc")
    paths.append(("mxmoe", make_layer(torch, F, model, k, E, experts, routed)))
    for rule in rules + (["64", "64 f32acc"] if T >= 64 * 1024 and "auto" in rules else []) + (
            ["auto saved"] if "auto" in rules else []):
        d = tiled_dir(out, model, T, rule.split()[0], f32acc=rule.endswith("f32acc"))
        d += "_saved" if rule.endswith("saved") else ""
        if not os.path.isdir(d):
            continue
        try:
            block = mp.tiled_block_function(d, "moe", "layers.0.moe")
        except KeyError:  # no launch program: the manifest says why
            why = json.load(open(os.path.join(d, "manifest.json")))["functions_without_program"]
            paths.append((f"mxmoe tiled {rule}", "; ".join(w["reason"] for w in why)))
            continue
        paths.append((f"mxmoe tiled {rule}", lambda x, *p, block=block: block.apply(x, *p)))
    return paths


def run_shape(torch, F, out, model, T, rules, argv, rows):
    s = dict(T=T, **moe_layer_shapes.MODELS[model])
    H, I, E, S = s["H"], s["I"], s["E"], SHARED[model]
    dev = torch.device("cuda")
    torch.manual_seed(0)
    x = torch.randn(T, H, device=dev, dtype=torch.bfloat16, requires_grad=True)
    params = [(torch.randn(E, H, device=dev) / math.sqrt(H)),
              (torch.randn(E, 2 * I, H, device=dev) / math.sqrt(H)),
              (torch.randn(E, H, I, device=dev) / math.sqrt(I))]
    if S:
        params += [torch.randn(2 * S, H, device=dev) / math.sqrt(H),
                   torch.randn(H, S, device=dev) / math.sqrt(S)]
    params = [p.to(torch.bfloat16).requires_grad_() for p in params]
    dy = torch.randn(T, H, device=dev, dtype=torch.bfloat16)
    keep = option(argv, "--paths", None)
    iters = int(option(argv, "--iters", "3"))
    grads = {}
    for path, fn in paths_for(torch, F, out, model, T, rules, s):
        if keep and path not in keep.split(","):
            continue
        if isinstance(fn, str):  # not compiled into programs
            row = {"model": model, "tokens": T, "path": path, "unsupported": fn}
            rows.append(row)
            print(json.dumps(row), flush=True)
            continue

        def step():
            for t in [x] + params:
                t.grad = None
            fn(x, *params).backward(dy)
        r = measure(torch, step, iters)
        row = {"model": model, "tokens": T, "path": path, "hidden": H, "expert_dim": I,
               "experts": E, "top_k": s["k"], "shared_dim": S}
        if r is None:
            row["oom"] = True
        else:
            ms, peak = r
            row.update(ms_fwd_bwd=round(ms, 2), tokens_per_s=round(T / ms * 1e3),
                       peak_gib_above_inputs=round(peak, 2))
            if "--profile" in argv:  # GPU ms per kernel class and per mxmoe kernel
                import moe_layer_bench
                row.update(moe_layer_bench.gpu_time_breakdown(step))
            base = "bf16" if path.startswith("bf16") else "mxmoe"
            g = [p.grad.detach().clone() for p in params]
            if path == base:
                grads[base] = g
            elif base in grads:
                row["grad_rel_err"] = [round(rel(a, b), 5) for a, b in zip(g, grads[base])]
        rows.append(row)
        print(json.dumps(row), flush=True)
        for t in [x] + params:
            t.grad = None
        torch.cuda.empty_cache()


def main() -> int:
    argv = sys.argv[1:]
    if "--build" in argv:
        return build(option(argv, "--build", None), argv)
    dirs = [a for i, a in enumerate(argv)
            if not a.startswith("--") and (i == 0 or not argv[i - 1].startswith("--"))]
    if len(dirs) != 1:
        print(__doc__)
        return 2
    import torch
    import torch.nn.functional as F
    models, tokens, rules = grid(argv)
    rows = []
    for m in models:
        for T in tokens:
            run_shape(torch, F, dirs[0], m, T, rules, argv, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
