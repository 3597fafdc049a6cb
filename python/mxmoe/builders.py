"""Model-level mxmoe IR for the MoE layer of a Hugging Face-style config.

`moe_layer_ir(config, tokens)` reads the MoE fields of a config dict (as in
a model's `config.json`) for the four families mxmoe targets and emits one
`func.func` with the routed experts as `mxmoe.scaled_grouped_matmul` ops
(gate and up projections fused into w13 [E, 2I, H], SwiGLU, down projection
w2 [E, H, I]), the router as a bf16 `mxmoe.linear`, and, where the model has
shared experts, a shared expert as an `mxmoe.tiled_mlp` over the token axis.
The precision policy, the expansion and the lowering then run on it like on
the hand-written examples (examples/*.mlir).

Field names per family (any family's names are accepted):
  Llama4       hidden_size, intermediate_size, num_local_experts,
               num_experts_per_tok, (shared expert: always one, same size)
  DeepSeek-V3  hidden_size, moe_intermediate_size, n_routed_experts,
               num_experts_per_tok, n_shared_experts
  Qwen3-MoE    hidden_size, moe_intermediate_size, num_experts,
               num_experts_per_tok (no shared expert)
  gpt-oss      hidden_size, intermediate_size, num_local_experts,
               num_experts_per_tok (no shared expert)
  Qwen2-MoE    hidden_size, moe_intermediate_size, num_experts,
               num_experts_per_tok, shared_expert_intermediate_size (one
               shared expert of that size; its sigmoid shared_expert_gate
               scales the shared output where the framework combines the
               outputs, as for the routing weights: not in this IR)

`tiled_moe_block_ir(config, tokens)` (CLI `--tiled-block`) emits the whole
MoE block instead, routing included, as one `mxmoe.tiled_mlp` over the
token axis (long-context training): router, the family's top-k, expert
sort, gather, experts, combine and shared expert per shard; the backward
recomputes each shard (mxmoe-tile-mlp).

`model_ir(config, tokens, layers)` stacks `layers` such layers into one
module (functions @moe_<i>, fqns `layers.<i>.*`), e.g. for whole-model
compile-time measurements (bench/compile_time_bench.py).

The routed-expert ops carry no MX recipe unless `rounding` or
`granularity` is given: the pipeline then decides (mxmoe-compile /
`compile()`'s `recipe` and `rounding`, e.g. recipe="mx128"), and a recipe
written on an op would win over those options. With either argument the
ops get `#mxmoe.mx_recipe<f8E4M3FN, block_size = 32, rounding = R[,
granularity = G]>` (R default rceil).

`tokens` is the number of tokens of the batch (batch x sequence); routed
rows = tokens x top-k. Experts per GPU can be reduced with `experts` (expert
parallelism: the local slice). Errors (missing or non-positive fields)
raise ValueError naming the field. Sizes that are not multiples of 32 are
not an error here: the precision policy keeps those GEMMs in bf16 (with a
remark and an entry in the policy report).
"""
from __future__ import annotations

from typing import Mapping, Optional

def _recipe_attr(rounding: Optional[str], granularity: Optional[str]) -> str:
    """`, recipe = ...` for the expert ops, or "" (the pipeline decides)."""
    if rounding is None and granularity is None:
        return ""
    if rounding is not None and rounding not in ("floor", "rceil", "ceil", "even"):
        raise ValueError(f"rounding must be floor, rceil, ceil or even, got {rounding}")
    if granularity is not None and granularity not in ("mx32", "mx128"):
        raise ValueError(f"granularity must be mx32 or mx128, got {granularity}")
    g = f", granularity = {granularity}" if granularity == "mx128" else ""
    return (f", recipe = #mxmoe.mx_recipe<f8E4M3FN, block_size = 32, "
            f"rounding = {rounding or 'rceil'}{g}>")


def _first(config: Mapping, *names: str, required: bool = True):
    for n in names:
        if n in config and config[n] is not None:
            return config[n]
    if required:
        raise ValueError(f"config has none of the fields {', '.join(names)}")
    return None


def _family(config: Mapping) -> str:
    mt = str(config.get("model_type", ""))
    if mt:
        return mt
    if "n_routed_experts" in config:
        return "deepseek_v3"
    if "num_local_experts" in config:
        return "llama4"
    return "qwen3_moe"


def moe_dims(config: Mapping) -> dict:
    """Hidden size H, expert dim I, experts E, top-k and shared experts of a
    Hugging Face-style MoE config (text_config is looked into for Llama4)."""
    if "text_config" in config and isinstance(config["text_config"], Mapping):
        config = config["text_config"]
    fam = _family(config)
    H = int(_first(config, "hidden_size"))
    I = int(_first(config, "moe_intermediate_size", "intermediate_size"))
    E = int(_first(config, "n_routed_experts", "num_local_experts", "num_experts"))
    k = int(_first(config, "num_experts_per_tok"))
    shared = _first(config, "n_shared_experts", required=False)
    qwen2_shared = _first(config, "shared_expert_intermediate_size", required=False)
    if shared is None:
        shared = 1 if fam.startswith("llama4") or qwen2_shared else 0
    if qwen2_shared:
        shared_I = int(qwen2_shared)
    elif fam.startswith("llama4"):
        shared_I = int(_first(config, "intermediate_size", required=False) or I)
    else:
        shared_I = I
    for name, v in (("hidden_size", H), ("intermediate size", I), ("experts", E),
                    ("num_experts_per_tok", k)):
        if v <= 0:
            raise ValueError(f"{name} must be positive, got {v}")
    return dict(family=fam, H=H, I=I, E=E, top_k=k, shared=int(shared), shared_I=shared_I)


def _t(shape, elem="bf16"):
    return "tensor<" + "x".join(str(s) for s in shape) + "x" + elem + ">"


def moe_layer_ir(config: Mapping, tokens: int, layer: int = 0,
                 experts: Optional[int] = None, rounding: Optional[str] = None,
                 shards: str = "auto", name: str = "moe",
                 granularity: Optional[str] = None) -> str:
    """The MoE layer as model-level mxmoe IR text (one func.func @<name>,
    fqns `layers.<layer>.moe.*`)."""
    d = moe_dims(config)
    H, I, k = d["H"], d["I"], d["top_k"]
    E = d["E"] if experts is None else int(experts)
    if E <= 0 or E > d["E"]:
        raise ValueError(f"experts must be in [1, {d['E']}], got {E}")
    if tokens <= 0:
        raise ValueError(f"tokens must be positive, got {tokens}")
    M = tokens * k * E // d["E"] if experts is not None else tokens * k
    M = max(M, 1)
    p = f"layers.{layer}.moe"
    recipe = _recipe_attr(rounding, granularity)
    args = [f"%h: {_t([tokens, H])}", f"%router_w: {_t([d['E'], H])}",
            f"%routed_x: {_t([M, H])}", f"%offsets: {_t([E], 'i32')}",
            f"%w13: {_t([E, 2 * I, H])}", f"%w2: {_t([E, H, I])}"]
    results = [_t([tokens, d["E"]]), _t([M, H])]
    body = [
        f"  %logits = mxmoe.linear %h, %router_w {{fqn = \"{p}.router.gate\"}}",
        f"      : ({_t([tokens, H])}, {_t([d['E'], H])}) -> {_t([tokens, d['E']])}",
        f"  %gate_up = mxmoe.scaled_grouped_matmul %routed_x, %w13, %offsets",
        f"      {{fqn = \"{p}.experts.w13\"{recipe}}}",
        f"      : ({_t([M, H])}, {_t([E, 2 * I, H])}, {_t([E], 'i32')}) -> {_t([M, 2 * I])}",
        f"  %gate = tensor.extract_slice %gate_up[0, 0] [{M}, {I}] [1, 1]",
        f"      : {_t([M, 2 * I])} to {_t([M, I])}",
        f"  %up = tensor.extract_slice %gate_up[0, {I}] [{M}, {I}] [1, 1]",
        f"      : {_t([M, 2 * I])} to {_t([M, I])}",
        f"  %one = arith.constant dense<1.0> : {_t([M, I])}",
        f"  %neg = arith.negf %gate : {_t([M, I])}",
        f"  %exp = math.exp %neg : {_t([M, I])}",
        f"  %den = arith.addf %one, %exp : {_t([M, I])}",
        f"  %silu = arith.divf %gate, %den : {_t([M, I])}",
        f"  %act = arith.mulf %silu, %up : {_t([M, I])}",
        f"  %routed_out = mxmoe.scaled_grouped_matmul %act, %w2, %offsets",
        f"      {{fqn = \"{p}.experts.w2\"{recipe}}}",
        f"      : ({_t([M, I])}, {_t([E, H, I])}, {_t([E], 'i32')}) -> {_t([M, H])}",
    ]
    rets = ["%logits", "%routed_out"]
    if d["shared"]:
        S = d["shared_I"] * d["shared"]
        args += [f"%shared_w13: {_t([2 * S, H])}", f"%shared_w2: {_t([H, S])}"]
        results.append(_t([tokens, H]))
        body += [
            f"  %shared_out = mxmoe.tiled_mlp shards = {shards} (%h, %shared_w13, %shared_w2)",
            f"      {{fqn = \"{p}.shared_expert\"}}",
            f"      : ({_t([tokens, H])}, {_t([2 * S, H])}, {_t([H, S])}) -> {_t([tokens, H])} {{",
            f"  ^bb0(%xs: {_t(['?', H])}, %sw13: {_t([2 * S, H])}, %sw2: {_t([H, S])}):",
            f"    %c0 = arith.constant 0 : index",
            f"    %n = tensor.dim %xs, %c0 : {_t(['?', H])}",
            f"    %gu = mxmoe.linear %xs, %sw13 {{fqn = \"{p}.shared_expert.w13\"}}",
            f"        : ({_t(['?', H])}, {_t([2 * S, H])}) -> {_t(['?', 2 * S])}",
        ] + _swiglu("a", "gu", "n", S, "") + [
            f"    %o = mxmoe.linear %a, %sw2 {{fqn = \"{p}.shared_expert.w2\"}}",
            f"        : ({_t(['?', S])}, {_t([H, S])}) -> {_t(['?', H])}",
            f"    mxmoe.yield %o : {_t(['?', H])}",
            f"  }}",
        ]
        rets.append("%shared_out")
    head = (f"// MoE layer {layer} of a {d['family']} config: H={H}, I={I}, "
            f"E={E} of {d['E']}, top-{k}, {tokens} tokens -> {M} routed rows.\n")
    return (head + f"func.func @{name}(" + ", ".join(args) + ")\n    -> (" +
            ", ".join(results) + ") {\n" + "\n".join(body) +
            f"\n  return {', '.join(rets)} : {', '.join(results)}\n}}\n")


def _routing(config: Mapping, fam: str) -> dict:
    """The family's router: score function, correction bias, group limit,
    renormalization, scaling factor, and whether the weights scale the
    dispatched rows (Llama4: the input is multiplied by its sigmoid score
    before the experts) or the combine (the others)."""
    if "text_config" in config and isinstance(config["text_config"], Mapping):
        config = config["text_config"]
    if fam.startswith("llama4"):
        return dict(score="sigmoid", bias=False, groups=None, renormalize=False,
                    scaling=1.0, scaled_dispatch=True)
    if fam.startswith("deepseek"):
        n_group = _first(config, "n_group", required=False)
        topk_group = _first(config, "topk_group", required=False)
        groups = (int(n_group), int(topk_group)) if n_group and topk_group else None
        norm = _first(config, "norm_topk_prob", required=False)
        scaling = _first(config, "routed_scaling_factor", required=False)
        return dict(score=_first(config, "scoring_func", required=False) or "sigmoid",
                    bias=True, groups=groups,
                    renormalize=True if norm is None else bool(norm),
                    scaling=float(scaling) if scaling else 1.0, scaled_dispatch=False)
    # gpt-oss: softmax over the top-k logits, i.e. the renormalized softmax,
    # and a router bias. Qwen3-MoE / Qwen2-MoE: norm_topk_prob (transformers'
    # default False).
    if fam.startswith("gpt_oss"):
        return dict(score="softmax", bias=False, linear_bias=True, groups=None,
                    renormalize=True, scaling=1.0, scaled_dispatch=False)
    norm = _first(config, "norm_topk_prob", required=False)
    return dict(score="softmax", bias=False, groups=None, renormalize=bool(norm),
                scaling=1.0, scaled_dispatch=False)


def _swiglu(out: str, gu: str, rows: str, inner: int, pre: str,
            indent: str = "    ") -> list:
    """SwiGLU of the [rows, 2*inner] tensor %gu (gate | up) into %out, in the
    arith / math ops mxmoe-tile-mlp differentiates: silu(g) = g * (0.5 +
    0.5 tanh(g / 2)), whose gradient stays finite (g / (1 + exp(-g)) gives
    0 * inf = NaN below about -88.7); `rows` is a dynamic row count value."""
    t2, t = _t(["?", 2 * inner]), _t(["?", inner])
    lines = [
        f"%{pre}g = tensor.extract_slice %{gu}[0, 0] [%{rows}, {inner}] [1, 1] : {t2} to {t}",
        f"%{pre}u = tensor.extract_slice %{gu}[0, {inner}] [%{rows}, {inner}] [1, 1] : {t2} to {t}",
        f"%{pre}half = arith.constant 0.5 : bf16",
        f"%{pre}halves = tensor.splat %{pre}half[%{rows}] : {t}",
        f"%{pre}hg = arith.mulf %{pre}halves, %{pre}g : {t}",
        f"%{pre}th = math.tanh %{pre}hg : {t}",
        f"%{pre}hth = arith.mulf %{pre}halves, %{pre}th : {t}",
        f"%{pre}sig = arith.addf %{pre}halves, %{pre}hth : {t}",
        f"%{pre}sg = arith.mulf %{pre}g, %{pre}sig : {t}",
        f"%{out} = arith.mulf %{pre}sg, %{pre}u : {t}",
    ]
    return [indent + l for l in lines]


def tiled_moe_block_ir(config: Mapping, tokens: int, layer: int = 0,
                       shards: str = "auto", name: str = "moe",
                       rounding: Optional[str] = None,
                       granularity: Optional[str] = None,
                       router_stats: bool = False,
                       save_routing: bool = False) -> str:
    """The whole MoE block as one `mxmoe.tiled_mlp` over the token axis
    (Axolotl's tiled MoE; issue 24): per shard the bf16 router, the
    family's top-k (`mxmoe.router_topk`: score function, correction bias,
    group limit, renormalization, scaling factor), the expert sort with the
    shard's group offsets (`mxmoe.sort_by_expert`), the gather of routed
    rows, the experts' w13 and w2 grouped GEMMs around the SwiGLU, the
    weighted combine and, where the model has one, the shared expert added.
    One func.func @<name>(h [T, H], router_w [E, H][, router_bias [E] f32],
    w13 [E, 2I, H], w2 [E, H, I][, shared_w13, shared_w2]) -> [T, H], fqns
    `layers.<layer>.moe.*`. `shards`: a count or "auto" (the pass's rule).
    mxmoe-tile-mlp lowers it to static shard loops whose GEMMs are expanded
    per shard size, and its backward. With `router_stats` the function also
    returns the router's load-balancing statistics, summed over shards
    (`summed_results = 2`): per expert the cumulative choice counts (the
    shards' sort_by_expert end offsets as f32; counts = their differences)
    and the sum over tokens of the family's scores (softmax or sigmoid over
    all E experts: router_topk's `scores`), from which a caller computes
    transformers' `load_balancing_loss_func` (E sum_e f_e P_e times the
    config's router_aux_loss_coef); the score sums' gradient flows back
    into the router. With `save_routing` the forward keeps the router's
    top-k weights and experts for the backward (`@"<fqn>.forward"` returns
    them; `<fqn>.backward` reads them instead of recomputing the choice)."""
    d = moe_dims(config)
    H, I, E, k = d["H"], d["I"], d["E"], d["top_k"]
    if tokens <= 0:
        raise ValueError(f"tokens must be positive, got {tokens}")
    r = _routing(config, d["family"])
    p = f"layers.{layer}.moe"
    recipe = _recipe_attr(rounding, granularity)
    S = d["shared_I"] * d["shared"]
    if d["shared"] and _first(config.get("text_config", config), "shared_expert_intermediate_size",
                               required=False):
        raise ValueError("the Qwen2-MoE shared expert's sigmoid gate is not in the tiled "
                         "block (its output would be added ungated)")
    params = [("rw", _t([E, H]))]
    if r.get("linear_bias"):
        params.append(("rlb", _t([E])))
    if r["bias"]:
        params.append(("rb", _t([E], "f32")))
    params += [("ew13", _t([E, 2 * I, H])), ("ew2", _t([E, H, I]))]
    if S:
        params += [("sw13", _t([2 * S, H])), ("sw2", _t([H, S]))]
    outer = {"rw": "router_w", "rlb": "router_b", "rb": "router_bias", "ew13": "w13", "ew2": "w2",
             "sw13": "shared_w13", "sw2": "shared_w2"}
    args = [f"%h: {_t([tokens, H])}"] + [f"%{outer[n]}: {t}" for n, t in params]
    xt, lt, wt, et = _t(["?", H]), _t(["?", E]), _t(["?", k], "f32"), _t(["?", k], "i32")
    attrs = [f"top_k = {k} : i64", f"score = #mxmoe.router_score<{r['score']}>"]
    if r["renormalize"]:
        attrs.append("renormalize")
    if r["scaling"] != 1.0:
        attrs.append(f"scaling_factor = {r['scaling']!r}")
    if r["groups"]:
        attrs += [f"num_groups = {r['groups'][0]} : i64", f"topk_groups = {r['groups'][1]} : i64"]
    bias = f" bias %rb : {_t([E], 'f32')}" if r["bias"] else ""
    scaled = f" scaled_by %wt : {wt}"
    lbias = " bias %rlb" if r.get("linear_bias") else ""
    lbiasT = f", {_t([E])}" if r.get("linear_bias") else ""
    it = _t(["?"], "i32")
    body = [
        f"    %c0 = arith.constant 0 : index",
        f"    %n = tensor.dim %xs, %c0 : {xt}",
        f"    %logits = mxmoe.linear %xs, %rw{lbias} {{fqn = \"{p}.router.gate\", precision = #mxmoe.precision<bf16>}}",
        f"        : ({xt}, {_t([E, H])}{lbiasT}) -> {lt}",
        f"    %wt, %e{', %s' if router_stats else ''} = mxmoe.router_topk %logits{bias} "
        f"{{{', '.join(attrs)}}} : {lt} -> {wt}, {et}{', ' + _t(['?', E], 'f32') if router_stats else ''}",
        f"    %idx, %offs = mxmoe.sort_by_expert %e {{num_experts = {E} : i64}} : {et} -> {it}, {_t([E], 'i32')}",
    ]
    if not r["scaled_dispatch"]:
        # The routed experts as one op: dispatch, w13, SwiGLU, w2 and the
        # weighted combine, the SwiGLU and the gathers fused into the
        # quantize kernels.
        body += [
            f"    %y = mxmoe.swiglu_experts %xs, %ew13, %ew2, %offs routing(%idx, %wt : {it}, {wt})",
            f"        {{fqn = \"{p}.experts\"{recipe}}}",
            f"        : ({xt}, {_t([E, 2 * I, H])}, {_t([E, H, I])}, {_t([E], 'i32')}) -> {xt}",
        ]
    else:
        # Llama4: the score scales the dispatched rows (before the SwiGLU):
        # the scaled gather, the experts as one unrouted swiglu_experts
        # (SwiGLU fused into its quantize kernels), the unweighted combine.
        body += [
            f"    %r = mxmoe.gather_rows %xs[%idx]{scaled} {{top_k = {k} : i64}} : {xt}, {it} -> {xt}",
            f"    %o = mxmoe.swiglu_experts %r, %ew13, %ew2, %offs {{fqn = \"{p}.experts\"{recipe}}}",
            f"        : ({xt}, {_t([E, 2 * I, H])}, {_t([E, H, I])}, {_t([E], 'i32')}) -> {xt}",
            f"    %inv = mxmoe.invert_permutation %idx : {it} -> {it}",
            f"    %y = mxmoe.combine_rows %o, %idx, %inv {{top_k = {k} : i64}}",
            f"        : {xt}, {it}, {it} -> {xt}",
        ]
    out = "y"
    if S:
        # The shared expert as a one-expert swiglu_experts over the shard's
        # rows (offsets [n]; its weights seen as [1, 2S, H] and [1, H, S]).
        o1 = _t([1], "i32")
        body += [
            f"    %n32 = arith.index_cast %n : index to i32",
            f"    %soffs = tensor.from_elements %n32 : {o1}",
            f"    %s13 = tensor.expand_shape %sw13 [[0, 1], [2]] output_shape [1, {2 * S}, {H}]"
            f" : {_t([2 * S, H])} into {_t([1, 2 * S, H])}",
            f"    %s2 = tensor.expand_shape %sw2 [[0, 1], [2]] output_shape [1, {H}, {S}]"
            f" : {_t([H, S])} into {_t([1, H, S])}",
            f"    %so = mxmoe.swiglu_experts %xs, %s13, %s2, %soffs {{fqn = \"{p}.shared_expert\"{recipe}}}",
            f"        : ({xt}, {_t([1, 2 * S, H])}, {_t([1, H, S])}, {o1}) -> {xt}",
            f"    %ys = arith.addf %y, %so : {xt}",
        ]
        out = "ys"
    ptypes = [t for _, t in params]
    yt, ft = _t([tokens, H]), _t([E], "f32")
    outs, yields, rtypes, extra = [out], [xt], [yt], ""
    if router_stats:
        body += _router_stats(E)
        outs += ["cum", "psum"]
        yields += [ft, ft]
        rtypes += [ft, ft]
        extra = ", summed_results = 2"
    if save_routing:
        extra += ", save_routing"
    results = ", ".join(f"%{v}" for v in ("y", "cum", "psum")[:len(outs)])
    rtype = rtypes[0] if len(rtypes) == 1 else "(" + ", ".join(rtypes) + ")"
    head = (f"// Tiled MoE block {layer} of a {d['family']} config: H={H}, I={I}, "
            f"E={E}, top-{k}, {tokens} tokens, routed rows computed per shard.\n")
    return (head + f"func.func @{name}(" + ", ".join(args) + f") -> {rtype} {{\n"
            f"  {results} = mxmoe.tiled_mlp shards = {shards} (%h, "
            + ", ".join(f"%{outer[n]}" for n, _ in params) + f") {{fqn = \"{p}\"{extra}}}\n"
            f"      : ({yt}, " + ", ".join(ptypes) + f") -> {rtype} {{\n"
            f"  ^bb0(%xs: {xt}, " + ", ".join(f"%{n}: {t}" for n, t in params) + "):\n"
            + "\n".join(body) + "\n    mxmoe.yield " + ", ".join(f"%{v}" for v in outs)
            + " : " + ", ".join(yields) + "\n  }\n"
            f"  return {results} : " + ", ".join(rtypes) + "\n}\n")


def _router_stats(E: int) -> list:
    """The shard's load-balancing statistics from the body's %offs and %s
    (router_topk's scores): %cum = the end offsets as f32, %psum = the
    scores summed over the shard's tokens (a linalg.reduce over dim 0)."""
    ft, st = _t([E], "f32"), _t(["?", E], "f32")
    return [
        f"    %cum = arith.sitofp %offs : {_t([E], 'i32')} to {ft}",
        "    %szero = arith.constant 0.0 : f32",
        f"    %sempty = tensor.empty() : {ft}",
        f"    %sinit = linalg.fill ins(%szero : f32) outs(%sempty : {ft}) -> {ft}",
        f"    %psum = linalg.reduce ins(%s : {st}) outs(%sinit : {ft}) dimensions = [0]",
        "      (%sa: f32, %sb: f32) {",
        "        %st = arith.addf %sa, %sb : f32",
        "        linalg.yield %st : f32",
        "      }",
    ]


def model_ir(config: Mapping, tokens: int, layers: int,
             experts: Optional[int] = None, rounding: Optional[str] = None,
             shards: str = "auto", granularity: Optional[str] = None) -> str:
    """`layers` MoE layers of one model as one module: func.func @moe_<i>
    with fqns `layers.<i>.moe.*` for i in [0, layers), each the layer of
    `moe_layer_ir` (same shapes, so their kernels are shared)."""
    if layers < 1:
        raise ValueError(f"layers must be >= 1, got {layers}")
    return "\n".join(moe_layer_ir(config, tokens, layer=i, experts=experts,
                                  rounding=rounding, shards=shards,
                                  granularity=granularity,
                                  name=f"moe_{i}") for i in range(layers))


# Configs of the four target models (the MoE fields of their config.json).
CONFIGS = {
    "llama4_scout": {"model_type": "llama4_text", "hidden_size": 5120,
                     "intermediate_size": 8192, "num_local_experts": 16,
                     "num_experts_per_tok": 1},
    "deepseek_v3": {"model_type": "deepseek_v3", "hidden_size": 7168,
                    "moe_intermediate_size": 2048, "n_routed_experts": 256,
                    "num_experts_per_tok": 8, "n_shared_experts": 1,
                    "n_group": 8, "topk_group": 4, "routed_scaling_factor": 2.5,
                    "norm_topk_prob": True, "scoring_func": "sigmoid"},
    "qwen3_30b_a3b": {"model_type": "qwen3_moe", "hidden_size": 2048,
                      "moe_intermediate_size": 768, "num_experts": 128,
                      "num_experts_per_tok": 8, "norm_topk_prob": True},
    "gpt_oss_20b": {"model_type": "gpt_oss", "hidden_size": 2880,
                    "intermediate_size": 2880, "num_local_experts": 32,
                    "num_experts_per_tok": 4},
}


if __name__ == "__main__":
    import argparse
    import json
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config", help="config.json path or one of: " + ", ".join(CONFIGS))
    ap.add_argument("--tokens", type=int, default=8192)
    ap.add_argument("--experts", type=int, default=None, help="local experts (EP slice)")
    ap.add_argument("--rounding", default=None, choices=["floor", "rceil", "ceil", "even"],
                    help="write an MX recipe with this rounding on the expert ops "
                         "(default: none, the pipeline's --rounding applies)")
    ap.add_argument("--granularity", default=None, choices=["mx32", "mx128"],
                    help="write an MX recipe with this scale granularity on the expert ops "
                         "(default: none, the pipeline's --recipe applies)")
    ap.add_argument("--tiled-block", action="store_true",
                    help="the whole MoE block (router, top-k, sort, experts, combine, "
                         "shared expert) as one mxmoe.tiled_mlp over the token axis")
    ap.add_argument("--router-stats", action="store_true",
                    help="with --tiled-block: also return the router's load-balancing "
                         "statistics (cumulative choice counts and score sums per expert, "
                         "summed over shards) for an auxiliary loss")
    ap.add_argument("--save-routing", action="store_true",
                    help="with --tiled-block: keep the router's top-k weights and experts "
                         "and the expert sort from the forward for the backward (about "
                         "T * top_k * 12 bytes) instead of recomputing them")
    ap.add_argument("--shards", default="auto",
                    help="with --tiled-block: the shard count or auto (default)")
    ap.add_argument("--layers", type=int, default=None,
                    help="N layers in one module (@moe_<i>, fqns layers.<i>.*); "
                         "default: one layer as @moe")
    a = ap.parse_args()
    if a.layers is not None and a.layers < 1:
        ap.error(f"--layers must be >= 1, got {a.layers}")
    if a.tokens < 1:
        ap.error(f"--tokens must be >= 1, got {a.tokens}")
    if a.experts is not None and a.experts < 1:
        ap.error(f"--experts must be >= 1, got {a.experts}")
    cfg = CONFIGS.get(a.config)
    if cfg is None:
        try:
            with open(a.config) as f:
                cfg = json.load(f)
        except (OSError, ValueError) as ex:
            ap.error(f"config '{a.config}' is neither one of {', '.join(CONFIGS)} "
                     f"nor a readable config.json ({ex})")
    if a.tiled_block and a.layers is not None:
        ap.error("--tiled-block builds one layer: drop --layers")
    if (a.router_stats or a.save_routing) and not a.tiled_block:
        ap.error("--router-stats and --save-routing need --tiled-block")
    if a.tiled_block and a.experts is not None:
        ap.error("--tiled-block routes over every expert: drop --experts")
    if a.shards != "auto" and not (a.shards.isdigit() and int(a.shards) >= 1):
        ap.error(f"--shards must be auto or a positive count, got {a.shards}")
    try:
        if a.tiled_block:
            print(tiled_moe_block_ir(cfg, a.tokens, shards=a.shards, rounding=a.rounding,
                                     granularity=a.granularity,
                                     router_stats=a.router_stats,
                                     save_routing=a.save_routing), end="")
        elif a.layers is None:
            print(moe_layer_ir(cfg, a.tokens, experts=a.experts, rounding=a.rounding,
                               granularity=a.granularity), end="")
        else:
            print(model_ir(cfg, a.tokens, a.layers, experts=a.experts,
                           rounding=a.rounding, granularity=a.granularity), end="")
    except (KeyError, ValueError) as ex:
        ap.error(f"cannot build the MoE layer from '{a.config}': {ex!r}")
