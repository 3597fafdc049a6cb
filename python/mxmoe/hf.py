"""One-call conversion of Hugging Face transformers MoE models to mxmoe.

`convert(model)` (also `mxmoe.torch.convert`) finds the routed-experts
modules of the transformers (5.x) MoE families and replaces their forward
(the module, its parameters, their names and the state dict stay; FSDP2
wrapping of the module still works) by one whose two expert GEMMs run
through `mxmoe.torch.scaled_grouped_mm` (MXFP8 forward, input and weight
gradients). The family's router, top-k and weighting are kept: the new
forward receives what the old one did. Everything else (router, attention,
shared experts, embeddings, output head) stays bf16, as mxmoe's precision
policy decides for them (routers, output projections and attention keep
bf16: docs/passes-and-lowering.md).

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

from typing import Dict, Iterable, Optional

import torch
import torch.nn.functional as F


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
    from .torch import scaled_grouped_mm
    return scaled_grouped_mm(x.contiguous(), w.transpose(-2, -1), offs, recipe=recipe)


def _combine(hidden, token, y, row_weights):
    out = torch.zeros_like(hidden)
    return out.index_add(0, token, (y * row_weights).to(hidden.dtype))


def _fused_forward(mod, recipe):
    """forward(hidden_states, top_k_index, top_k_weights) of experts with
    gate_up_proj [E, 2I, H] (gate rows first) and down_proj [E, H, I]."""
    def forward(hidden_states, top_k_index, top_k_weights):
        e = mod.gate_up_proj.shape[0]
        token, offs, row_weights, _ = _route(top_k_index, e, top_k_weights)
        h = _gmm(hidden_states[token], mod.gate_up_proj, offs, recipe)
        gate, up = h.chunk(2, dim=-1)
        y = _gmm(mod.act_fn(gate) * up, mod.down_proj, offs, recipe)
        return _combine(hidden_states, token, y, row_weights)
    return forward


def _gpt_oss_forward(mod, recipe):
    """GptOssExperts.forward(hidden_states, router_indices, routing_weights)."""
    def forward(hidden_states, router_indices=None, routing_weights=None):
        e = mod.gate_up_proj.shape[0]
        token, offs, row_weights, expert = _route(router_indices, e, routing_weights)
        w13 = mod.gate_up_proj.transpose(1, 2).contiguous()  # [E, 2I, H]
        w2 = mod.down_proj.transpose(1, 2).contiguous()      # [E, H, I]
        h = _gmm(hidden_states[token], w13, offs, recipe) + mod.gate_up_proj_bias[expert]
        y = _gmm(mod._apply_gate(h), w2, offs, recipe) + mod.down_proj_bias[expert]
        return _combine(hidden_states, token, y, row_weights)
    return forward


def _llama4_forward(mod, recipe):
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
        h = _gmm(x[token] * scores, w13, offs, recipe)
        gate, up = h.chunk(2, dim=-1)
        y = _gmm(up * experts.act_fn(gate), w2, offs, recipe)
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
    if (isinstance(gu, torch.nn.Parameter) and isinstance(dn, torch.nn.Parameter)
            and gu.dim() == 3 and dn.dim() == 3 and hasattr(mod, "act_fn")
            and gu.shape[1] == 2 * dn.shape[2] and gu.shape[2] == dn.shape[1]
            and not hasattr(mod, "gate_up_proj_bias") and name != "Llama4TextExperts"):
        return "fused"
    return None


_FORWARDS = {"fused": _fused_forward, "gpt_oss": _gpt_oss_forward, "llama4": _llama4_forward}


def convert(model: torch.nn.Module, recipe: str = "auto",
            filter_fqns: Optional[Iterable[str]] = None) -> Dict[str, dict]:
    """Converts the routed experts of `model` in place (see the module
    docstring). `filter_fqns`: module names containing any of these strings
    are left as they are (TorchAO's filter_fqns). Returns a report:
    {"converted": {fqn: family}, "skipped": {fqn: why}, "bf16": what stays
    bf16}. A model with no recognized experts module is a ValueError
    naming the MoE-looking modules found."""
    from .torch import RECIPES
    if recipe not in RECIPES:
        raise ValueError(f"convert: recipe must be one of {RECIPES}, got {recipe!r}")
    skip = list(filter_fqns or [])
    converted, skipped = {}, {}
    for fqn, mod in model.named_modules():  # parents before their children
        if any(fqn.startswith(c + ".") for c in converted):
            continue  # inside a converted Llama4TextMoe (its experts)
        family = _family(mod)
        if family is None:
            if "expert" in type(mod).__name__.lower():
                skipped[fqn] = f"{type(mod).__name__}: not a routed-experts layout mxmoe knows"
            continue
        if any(s in fqn for s in skip):
            skipped[fqn] = "filter_fqns"
            continue
        mod.forward = _FORWARDS[family](mod, recipe)
        mod._mxmoe_converted = family
        converted[fqn] = family
    if not converted and not skip:
        raise ValueError(f"convert: no routed-experts module found in {type(model).__name__} "
                         f"(MoE-looking modules: {skipped or 'none'})")
    if converted and not getattr(model, "_mxmoe_hook", None):
        model._mxmoe_hook = model.register_forward_pre_hook(_check_completed)
    return {"converted": converted, "skipped": skipped,
            "bf16": "routers, attention, shared experts, embeddings and the output head"}


def _check_completed(module, args):
    """Raises KernelRejectedInput for an earlier mxmoe call whose status
    copy has completed (does not wait)."""
    from . import program
    program._drain(block=False)
