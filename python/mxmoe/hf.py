"""One-call conversion of Hugging Face transformers MoE models to mxmoe.

`convert(model)` (also `mxmoe.torch.convert`) finds the routed-experts
modules of the transformers (5.x) MoE families and replaces their forward
(the module, its parameters, their names and the state dict stay; FSDP2
wrapping of the module still works) by one whose two expert GEMMs run
through `mxmoe.torch.scaled_grouped_mm` (MXFP8 forward, input and weight
gradients). The family's router, top-k and weighting are kept: the new
forward receives what the old one did. Everything else (router, attention,
shared experts, embeddings, output head) stays bf16.

Which expert GEMMs run in MX, and with which recipe, is mxmoe's precision
policy's decision (the `mxmoe-precision-policy` pass of the compiler,
docs/passes-and-lowering.md): `convert` writes the model's expert GEMMs
and routers as model-level IR (`policy_ir`), runs the policy on it through
the compiler library (or finds its report in the kernel cache:
mxmoe.kernel_cache.KernelCache.policy_report) and runs each GEMM as the
report says: MX32 or MX128 through scaled_grouped_mm, or bf16
(`torch._grouped_mm`) where a rule keeps it in bf16 (an fqn exclude,
`min-dim`, a contraction that is not a multiple of 32). The report is
returned (`report["policy"]`) and available without converting
(`precision_report(model)`). A GPU machine without the compiler library
reads both from a kernel cache filled elsewhere: `fill_kernel_cache(model,
rows, chip, cache)` on a machine with the compiler, with the model itself
or a torch-free `stand_in` of its experts and routers (`ShapeOnly`
parameters under the model's fqns).

Families (module class -> what is replaced):
  Qwen3MoeExperts, MixtralExperts, DeepseekV3Experts and any experts module
      with gate_up_proj [E, 2I, H], down_proj [E, H, I], act_fn and
      forward(hidden_states, top_k_index, top_k_weights): its forward.
  GptOssExperts (gate_up_proj [E, H, 2I] with interleaved gate/up columns,
      biases, the module's own clamped gate `_apply_gate`): its forward.
      Its weights are stored transposed ([E, K, N]), so each forward copies
      them into [E, N, K] (mxmoe's kernels read W [E, N, K]).
  Llama4TextMoe (sigmoid router scaling the expert inputs, a shared
      expert): its forward; Llama4TextExperts' [E, H, 2I] weights are copied
      as for gpt-oss.

Token routing: the rows of each expert are gathered in expert order
(a stable argsort of the top-k indices), offsets are the cumulative counts
(an index equal to E, transformers' "no expert" mark, lands past the last
offset and contributes nothing), results are weighted and summed back with
index_add. Offsets are checked by the kernels; a rejection is raised by a
later mxmoe call or at the next forward of the converted model (a forward
pre-hook checks the calls that have completed without waiting), or by
`mxmoe.program.check_deferred()`, which waits.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Tuple

try:  # the module matching and the policy IR need no torch (test/Python)
    import torch
except ImportError:  # pragma: no cover
    torch = None

from .compiler import RECIPES

POLICY_ROWS = 8192  # the token rows every GEMM of the policy IR is written with


def _route(top_k_index: torch.Tensor, experts: int, weights: torch.Tensor):
    """(token, offsets, row weights) of the routed rows: row r of the grouped
    input is token `token[r]`, rows sorted by expert (stable); int32 end
    offsets; each row's routing weight, 0 for the "no expert" index E."""
    k = top_k_index.shape[1]
    flat = top_k_index.reshape(-1)
    order = torch.argsort(flat, stable=True)
    counts = torch.zeros(experts + 1, dtype=torch.int64, device=flat.device)
    counts.scatter_add_(0, flat.clamp(0, experts), torch.ones_like(flat))
    offs = torch.cumsum(counts[:experts], 0).to(torch.int32)
    row_weights = weights.reshape(-1)[order, None] * (flat[order, None] < experts)
    return order // k, offs, row_weights, flat[order].clamp(max=experts - 1)


def _gmm(x, w, offs, recipe):
    """x [M, K] by w [E, N, K] per group: through scaled_grouped_mm with
    `recipe` ("mx32" / "mx128"), or in bf16 where the policy said so (None)."""
    if recipe is None:  # rows past the last offset are not written: zero them
        y = torch._grouped_mm(x.contiguous(), w.transpose(-2, -1), offs=offs)
        rows = torch.arange(y.shape[0], device=y.device)[:, None] < offs[-1]
        return torch.where(rows, y, torch.zeros((), dtype=y.dtype, device=y.device))
    from .torch import scaled_grouped_mm
    return scaled_grouped_mm(x.contiguous(), w.transpose(-2, -1), offs, recipe=recipe)


def _combine(hidden, token, y, row_weights):
    out = torch.zeros_like(hidden)
    return out.index_add(0, token, (y * row_weights).to(hidden.dtype))


def _fused_forward(mod, recipes):
    """forward(hidden_states, top_k_index, top_k_weights) of experts with
    gate_up_proj [E, 2I, H] (gate rows first) and down_proj [E, H, I]."""
    def forward(hidden_states, top_k_index, top_k_weights):
        e = mod.gate_up_proj.shape[0]
        token, offs, row_weights, _ = _route(top_k_index, e, top_k_weights)
        h = _gmm(hidden_states[token], mod.gate_up_proj, offs, recipes[0])
        gate, up = h.chunk(2, dim=-1)
        y = _gmm(mod.act_fn(gate) * up, mod.down_proj, offs, recipes[1])
        return _combine(hidden_states, token, y, row_weights)
    return forward


def _gpt_oss_forward(mod, recipes):
    """GptOssExperts.forward(hidden_states, router_indices, routing_weights)."""
    def forward(hidden_states, router_indices=None, routing_weights=None):
        e = mod.gate_up_proj.shape[0]
        token, offs, row_weights, expert = _route(router_indices, e, routing_weights)
        w13 = mod.gate_up_proj.transpose(1, 2).contiguous()  # [E, 2I, H]
        w2 = mod.down_proj.transpose(1, 2).contiguous()      # [E, H, I]
        h = _gmm(hidden_states[token], w13, offs, recipes[0]) + mod.gate_up_proj_bias[expert]
        y = _gmm(mod._apply_gate(h), w2, offs, recipes[1]) + mod.down_proj_bias[expert]
        return _combine(hidden_states, token, y, row_weights)
    return forward


def _llama4_forward(mod, recipes):
    """Llama4TextMoe.forward(hidden_states) -> (out, router_logits)."""
    def forward(hidden_states):
        x = hidden_states.reshape(-1, mod.hidden_dim)
        router_scores, router_logits = mod.router(x)
        top_k_index = torch.topk(router_logits, mod.top_k, dim=1).indices
        token, offs, scores, _ = _route(top_k_index, mod.num_experts,
                                        router_scores.gather(1, top_k_index))
        experts = mod.experts
        w13 = experts.gate_up_proj.transpose(1, 2).contiguous()  # [E, 2I, H]
        w2 = experts.down_proj.transpose(1, 2).contiguous()      # [E, H, I]
        h = _gmm(x[token] * scores, w13, offs, recipes[0])
        gate, up = h.chunk(2, dim=-1)
        y = _gmm(up * experts.act_fn(gate), w2, offs, recipes[1])
        out = mod.shared_expert(x)
        return out + torch.zeros_like(out).index_add(0, token, y.to(out.dtype)), router_logits
    return forward


def _family(mod: torch.nn.Module) -> Optional[str]:
    name = type(mod).__name__
    if name == "Llama4TextMoe":
        return "llama4"
    if name == "GptOssExperts":
        return "gpt_oss"
    gu, dn = getattr(mod, "gate_up_proj", None), getattr(mod, "down_proj", None)
    if (_is_param(gu) and _is_param(dn) and gu.dim() == 3 and dn.dim() == 3 and hasattr(mod, "act_fn")
            and gu.shape[1] == 2 * dn.shape[2] and gu.shape[2] == dn.shape[1]
            and not hasattr(mod, "gate_up_proj_bias") and name != "Llama4TextExperts"):
        return "fused"
    return None


def _is_param(p) -> bool:
    """A parameter (duck-typed for the torch-free stubs of test/Python)."""
    if torch is not None and isinstance(p, torch.Tensor):
        return isinstance(p, torch.nn.Parameter)
    return p is not None and hasattr(p, "shape") and hasattr(p, "dim")


_FORWARDS = {"fused": _fused_forward, "gpt_oss": _gpt_oss_forward, "llama4": _llama4_forward}


def _candidates(model, skip: List[str]) -> Tuple[Dict[str, tuple], Dict[str, str]]:
    """({fqn: (module, family)} of the routed-experts modules to convert,
    {fqn: why not} of the ones left as they are)."""
    found, skipped = {}, {}
    for fqn, mod in model.named_modules():  # parents before their children
        if any(fqn.startswith(c + ".") for c in found):
            continue  # inside a converted Llama4TextMoe (its experts)
        family = _family(mod)
        if family is None:
            if "expert" in type(mod).__name__.lower():
                skipped[fqn] = f"{type(mod).__name__}: not a routed-experts layout mxmoe knows"
            continue
        if any(s in fqn for s in skip):
            skipped[fqn] = "filter_fqns"
            continue
        found[fqn] = (mod, family)
    return found, skipped


def _gemms(fqn: str, mod, family: str) -> List[Tuple[str, int, int, int]]:
    """(fqn, E, N, K) of the module's two grouped GEMMs (gate_up, down)."""
    ex = mod.experts if family == "llama4" else mod
    pre = fqn + ".experts" if family == "llama4" else fqn
    e, a, b = ex.gate_up_proj.shape
    if family == "fused":  # [E, 2I, H], [E, H, I]
        return [(pre + ".gate_up_proj", e, a, b),
                (pre + ".down_proj", e, ex.down_proj.shape[1], ex.down_proj.shape[2])]
    # gpt-oss and Llama4 store [E, H, 2I], [E, I, H]
    return [(pre + ".gate_up_proj", e, b, a),
            (pre + ".down_proj", e, ex.down_proj.shape[2], ex.down_proj.shape[1])]


def _router(modules: Dict[str, object], fqn: str, mod, family: str):
    """(fqn, E, H) of the module's router: a child "router" or "gate" (of
    the MoE block: the experts' parent, or the Llama4TextMoe itself) with a
    2-D weight [E, H]; None if there is none."""
    parent = fqn if family == "llama4" else fqn.rpartition(".")[0]
    experts = _gemms(fqn, mod, family)[0][1]
    for child in ("router", "gate"):
        name = f"{parent}.{child}" if parent else child
        w = getattr(modules.get(name), "weight", None)
        if w is not None and w.dim() == 2 and w.shape[0] == experts:
            return name, experts, w.shape[1]
    return None


def policy_ir(candidates: Dict[str, tuple], modules: Dict[str, object],
              rows: int = POLICY_ROWS) -> str:
    """Model-level IR of the candidates' expert GEMMs
    (`mxmoe.scaled_grouped_matmul`, `rows` routed rows each) and their
    routers (`mxmoe.linear`, `rows` tokens), fqns as in the model, in one
    function @experts: what the precision policy decides on."""
    args, ops = [], []
    for fqn, (mod, family) in candidates.items():
        r = _router(modules, fqn, mod, family)
        if r is not None:
            name, e, h = r
            i = len(args)
            args += [f"%a{i}: tensor<{rows}x{h}xbf16>", f"%a{i + 1}: tensor<{e}x{h}xbf16>"]
            ops.append(f"  %r{i} = mxmoe.linear %a{i}, %a{i + 1} {{fqn = \"{name}\"}} : "
                       f"(tensor<{rows}x{h}xbf16>, tensor<{e}x{h}xbf16>) -> tensor<{rows}x{e}xbf16>")
        for name, e, n, k in _gemms(fqn, mod, family):
            i = len(args)
            x, w, o = f"tensor<{rows}x{k}xbf16>", f"tensor<{e}x{n}x{k}xbf16>", f"tensor<{e}xi32>"
            args += [f"%a{i}: {x}", f"%a{i + 1}: {w}", f"%a{i + 2}: {o}"]
            ops.append(f"  %r{i} = mxmoe.scaled_grouped_matmul %a{i}, %a{i + 1}, %a{i + 2} "
                       f"{{fqn = \"{name}\"}} : ({x}, {w}, {o}) -> tensor<{rows}x{n}xbf16>")
    return ("func.func @experts(" + ", ".join(args) + ") {\n" + "\n".join(ops)
            + "\n  return\n}\n")


def _chip_of_device() -> str:
    if torch is None or not torch.cuda.is_available():
        raise RuntimeError("mxmoe.hf: no CUDA device to take the chip from; pass chip=")
    from .torch import _chip
    return _chip(torch.device("cuda", torch.cuda.current_device()))


def _check_recipe(recipe: str) -> None:
    if recipe not in RECIPES:
        raise ValueError(f"convert: recipe must be one of {RECIPES}, got {recipe!r}")


def _policy(candidates, modules, recipe: str, chip: Optional[str], cache) -> dict:
    if cache is None:
        from .kernel_cache import KernelCache
        from . import torch as mt
        cache = mt.kernel_cache_in_use() if torch is not None else KernelCache()
    return cache.policy_report(policy_ir(candidates, modules), chip=chip or _chip_of_device(),
                               options={"recipe": recipe})


def _recipes(candidates, report: dict) -> Dict[str, tuple]:
    """{module fqn: ((gate_up fqn, recipe), (down fqn, recipe))}, each recipe
    "mx32" / "mx128" or None (bf16), from the policy report's decisions."""
    decided = {d["fqn"]: d for d in report.get("decisions", [])}
    plan = {}
    for fqn, (mod, family) in candidates.items():
        recipes = []
        for name, *_ in _gemms(fqn, mod, family):
            d = decided.get(name, {})
            if d.get("precision") not in ("mxfp8", "bf16"):
                raise ValueError(f"convert: the precision policy decided {d or 'nothing'} "
                                 f"for {name}; scaled_grouped_mm runs MXFP8 or bf16")
            recipes.append((name, d.get("recipe") if d["precision"] == "mxfp8" else None))
        plan[fqn] = tuple(recipes)
    return plan


def precision_report(model, recipe: str = "auto", filter_fqns: Optional[Iterable[str]] = None,
                     chip: Optional[str] = None, cache=None) -> dict:
    """The precision policy's JSON report for the routed experts `convert`
    would convert (and their routers), without converting anything:
    {"pass", "recipe", "decisions": [{fqn, op, M, N, K, groups, precision,
    recipe, rule, reason}]}. `chip` defaults to the current CUDA device's;
    `cache` (a KernelCache) to mxmoe.torch's."""
    _check_recipe(recipe)
    candidates, _ = _candidates(model, list(filter_fqns or []))
    return _policy(candidates, dict(model.named_modules()), recipe, chip, cache)


def convert(model, recipe: str = "auto", filter_fqns: Optional[Iterable[str]] = None,
            chip: Optional[str] = None, cache=None) -> Dict[str, dict]:
    """Converts the routed experts of `model` in place (see the module
    docstring). `filter_fqns`: module names containing any of these strings
    are left as they are (TorchAO's filter_fqns). Returns a report:
    {"converted": {fqn: family}, "skipped": {fqn: why}, "gemms": {GEMM fqn:
    "mx32" | "mx128" | "bf16"}, "bf16": what stays bf16, "policy": the
    precision policy's report}. A model with no recognized experts module
    is a ValueError naming the MoE-looking modules found; a compile error
    of the policy IR (mxmoe.compiler.CompileError) or a missing compiler
    library with no cached report is raised before anything changes."""
    _check_recipe(recipe)
    candidates, skipped = _candidates(model, list(filter_fqns or []))
    if not candidates and not filter_fqns:
        raise ValueError(f"convert: no routed-experts module found in {type(model).__name__} "
                         f"(MoE-looking modules: {skipped or 'none'})")
    modules = dict(model.named_modules())
    report = _policy(candidates, modules, recipe, chip, cache) if candidates else {}
    plan = _recipes(candidates, report)  # every decision checked before any change
    converted = {}
    for fqn, (mod, family) in candidates.items():
        mod.forward = _FORWARDS[family](mod, tuple(r for _, r in plan[fqn]))
        mod._mxmoe_converted = family
        converted[fqn] = family
    gemms = {name: r or "bf16" for pairs in plan.values() for name, r in pairs}
    if converted and not getattr(model, "_mxmoe_hook", None):
        model._mxmoe_hook = model.register_forward_pre_hook(_check_completed)
    return {"converted": converted, "skipped": skipped, "gemms": gemms,
            "bf16": "routers, attention, shared experts, embeddings and the output head",
            "policy": report}


class ShapeOnly:
    """A parameter's shape, for stand-in models (`stand_in`) on a machine
    without torch."""

    def __init__(self, *shape: int):
        self.shape = shape

    def dim(self) -> int:
        return len(self.shape)


class _StandIn:
    def __init__(self, modules):
        self._modules = modules

    def named_modules(self):
        return iter(self._modules.items())


def stand_in(modules: Dict[str, Tuple[str, dict]]):
    """A model as far as `precision_report` reads it, without torch:
    {fqn: (class name, {attribute: ShapeOnly or stand-in})}, e.g. a Qwen3-MoE
    layer's "model.layers.0.mlp.experts": ("Qwen3MoeExperts", {"gate_up_proj":
    ShapeOnly(E, 2I, H), "down_proj": ShapeOnly(E, H, I), "act_fn": None}).
    The fqns must be the real model's: they are the policy's input."""
    tree = {"": None}
    for fqn, (cls, attrs) in modules.items():
        tree[fqn] = type(cls, (), dict(attrs))()
    return _StandIn(tree)


def fill_kernel_cache(model, rows: int, chip: str, cache, options: Optional[dict] = None,
                      recipe: str = "auto") -> dict:
    """Fills `cache` (a KernelCache) with what `convert(model)` and its
    training steps need at `rows` routed rows per GEMM on `chip`: the
    policy report and, for every expert GEMM it puts in MX, its kernels
    with the recipe it chose. `model` may be a `stand_in`: a machine with
    the compiler fills a cache that GPU machines with only the runtime
    read. `options`: further KernelCache.grouped_mm options (rounding,
    toolkit). Returns the report."""
    report = precision_report(model, recipe=recipe, chip=chip, cache=cache)
    for d in report["decisions"]:
        if d["precision"] == "mxfp8" and d["op"] == "mxmoe.scaled_grouped_matmul":
            cache.grouped_mm(m=rows, k=d["K"], n=d["N"], experts=d["groups"], chip=chip,
                             options=dict(options or {}, recipe=d["recipe"]))
    return report


def _check_completed(module, args):
    """Raises KernelRejectedInput for an earlier mxmoe call whose status
    copy has completed (does not wait)."""
    from . import program
    program._drain(block=False)
