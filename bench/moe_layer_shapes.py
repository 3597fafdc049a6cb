#!/usr/bin/env python3
"""The MoE-layer benchmark's shape grid, and the IR of its routed-expert
GEMMs (for bench/moe_layer_bench.py --grid).

    python3 bench/moe_layer_shapes.py -o .device/layer_grid.mlir
    build/bin/mxmoe-compile .device/layer_grid.mlir --chip sm_90a --recipe mx128 -o .device/grid128

One `func.func @<model>_t<tokens>` per (model, token count) with the layer's
two routed-expert GEMMs: w13 (gate and up fused, [E, 2I, H]) and w2
([E, H, I]), fqns `<model>_t<tokens>.w13` / `.w2`, and one
`@<model>_t<tokens>_block` with the same experts as one
`mxmoe.swiglu_experts` (fqn `<model>_t<tokens>.experts`), and one
`@<model>_t<tokens>_routed` with the whole routed block (dispatch, experts,
weighted combine: `mxmoe.swiglu_experts` with `routing`, fqn
`<model>_t<tokens>.routed`). Routed rows = tokens x
top_k. The kernels take their sizes at run time, so the compile output
holds each distinct kernel once (mxmoe-compile's kernel reuse) however
many shapes the grid has.

Models (hidden H, expert dim I, experts E, top-k from each model's
config.json):
  scout            Llama 4 Scout: H 5120, I 8192, 16 experts, top-1
  qwen3            Qwen3-30B-A3B: H 2048, I 768, 128 experts, top-8
  deepseek_v3_ep8  DeepSeek-V3, the routed experts one GPU of an EP=8
                   group holds: 32 of the 256 experts (H 7168, I 2048);
                   top-8 of 256 routes tokens x 8 x 32 / 256 = tokens rows
                   to a rank on average, modelled as top-1 over the 32
                   local experts (same GEMM shapes, one router)
  gpt_oss_20b      gpt-oss-20b: H 2880, I 2880, 32 experts, top-4
                   (K = 2880 is not a multiple of 128: the last 1x128
                   block of a row holds 64 live elements, and the MX128
                   GEMM runs only the live k32 steps of it)
"""
from __future__ import annotations

import argparse
import sys

MODELS = {
    "scout": dict(k=1, E=16, H=5120, I=8192),
    "qwen3": dict(k=8, E=128, H=2048, I=768),
    "deepseek_v3_ep8": dict(k=1, E=32, H=7168, I=2048),
    "gpt_oss_20b": dict(k=4, E=32, H=2880, I=2880),
}
TOKENS = (8192, 16384, 65536)


def grid(models=tuple(MODELS), tokens=TOKENS):
    """[(function name, dict(T, k, E, H, I))] for every model x token count."""
    return [(f"{m}_t{T}", dict(T=T, **MODELS[m])) for m in models for T in tokens]


def function_ir(name: str, s: dict) -> str:
    M, E, H, I = s["T"] * s["k"], s["E"], s["H"], s["I"]
    x, w13, w2 = f"tensor<{M}x{H}xbf16>", f"tensor<{E}x{2 * I}x{H}xbf16>", f"tensor<{E}x{H}x{I}xbf16>"
    h, a, y, off = f"tensor<{M}x{2 * I}xbf16>", f"tensor<{M}x{I}xbf16>", f"tensor<{M}x{H}xbf16>", f"tensor<{E}xi32>"
    t, idx, sc = f"tensor<{s['T']}x{H}xbf16>", f"tensor<{M}xi32>", f"tensor<{s['T']}x{s['k']}xf32>"
    return f"""// {name}: {s['T']} tokens x top-{s['k']} = {M} routed rows, {E} experts, hidden {H}, expert dim {I}.
func.func @{name}(%x: {x}, %w13: {w13}, %w2: {w2}, %offsets: {off}) -> ({h}, {y}) {{
  %h = mxmoe.scaled_grouped_matmul %x, %w13, %offsets {{fqn = "{name}.w13"}}
      : ({x}, {w13}, {off}) -> {h}
  %a = tensor.extract_slice %h[0, 0] [{M}, {I}] [1, 1] : {h} to {a}
  %y = mxmoe.scaled_grouped_matmul %a, %w2, %offsets {{fqn = "{name}.w2"}}
      : ({a}, {w2}, {off}) -> {y}
  return %h, %y : {h}, {y}
}}
// {name}_block: the same experts as one mxmoe.swiglu_experts (w13, SwiGLU, w2;
// forward and backward programs with the SwiGLU fused into the quantize kernels).
func.func @{name}_block(%x: {x}, %w13: {w13}, %w2: {w2}, %offsets: {off}) -> {y} {{
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offsets {{fqn = "{name}.experts"}}
      : ({x}, {w13}, {w2}, {off}) -> {y}
  return %y : {y}
}}
// {name}_routed: the whole routed block (dispatch of the {s['T']} token rows, the
// experts, score-weighted combine) as one mxmoe.swiglu_experts with routing.
func.func @{name}_routed(%x: {t}, %w13: {w13}, %w2: {w2}, %offsets: {off}, %idx: {idx}, %s: {sc}) -> {t} {{
  %y = mxmoe.swiglu_experts %x, %w13, %w2, %offsets routing(%idx, %s : {idx}, {sc}) {{fqn = "{name}.routed"}}
      : ({t}, {w13}, {w2}, {off}) -> {t}
  return %y : {t}
}}
"""


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-o", "--output", default="-", help="output .mlir file (default stdout)")
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of: " + ", ".join(MODELS))
    p.add_argument("--tokens", default=",".join(map(str, TOKENS)), help="comma-separated token counts")
    a = p.parse_args(argv)
    models = [m for m in a.models.split(",") if m]
    bad = [m for m in models if m not in MODELS]
    if bad:
        p.error(f"unknown model(s) {', '.join(bad)}; have {', '.join(MODELS)}")
    try:
        tokens = [int(t) for t in a.tokens.split(",") if t]
    except ValueError:
        p.error(f"--tokens must be comma-separated integers, got {a.tokens!r}")
    if not tokens or min(tokens) <= 0:
        p.error("--tokens needs at least one positive token count")
    text = "// Generated by bench/moe_layer_shapes.py: routed-expert GEMMs of one MoE layer.\n"
    text += "\n".join(function_ir(n, s) for n, s in grid(models, tokens))
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
