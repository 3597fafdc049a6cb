#!/usr/bin/env python3
"""CUDA graphs on the GPU: a training step of the routed experts of
test/Integration/moe_small.mlir (w13 grouped GEMM, SwiGLU-free gelu, w2
grouped GEMM, forward and backward through the mxmoe torch ops) captured
with torch.cuda.graph and replayed, against the same step run eagerly.

Checks, per compile output given (e.g. an MX32 and an MX128 build):
  * the replayed step's output and the three gradients (x, w13, w2) equal
    the eager step's bit for bit (the kernels are deterministic: no atomics,
    no split-K);
  * after new data is copied into the graph's static inputs (x, weights,
    routing, upstream gradient), the replay equals the eager step on the
    new data, bit for bit (the tensor maps the capture encoded describe
    the static buffers, whatever they hold);
  * decreasing offsets copied into the static offsets: the replay's
    kernels reject them and check_deferred() raises KernelRejectedInput
    naming the kernel and the CUDA graph; valid offsets again: the next
    replay passes check_deferred() and equals eager;
  * a second graph captured from the same ops, replayed alternately with
    the first: both still equal eager (each capture has its own tensor
    maps and status words);
  * torch.compile(mode="reduce-overhead") (CUDA-graph trees) of the layer,
    forward and backward, three steps: equal to eager within bf16 rounding
    (Inductor fuses the gelu in its own order).

Usage (device): cuda_graph_gpu.py DIR [DIR...] [--no-compile]   (mxmoe-compile
outputs of moe_small.mlir; --no-compile skips the torch.compile check, e.g.
under compute-sanitizer). Prints a table and `N passed, N failed` last.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import Checks  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from mxmoe import program as mp  # noqa: E402
from mxmoe import runtime as rt  # noqa: E402

dev = torch.device("cuda")
CHECKS = Checks(width=52)
report = CHECKS.report


def routing(G, M, rng):
    """Skewed end offsets with one empty expert and 29 rows past the end."""
    w = rng.random(G) ** 3
    w[rng.integers(G)] = 0.0
    sizes = np.floor(w / w.sum() * (M - 29)).astype(np.int64)
    sizes[np.argmax(sizes)] += M - 29 - sizes.sum()
    return np.cumsum(sizes).astype(np.int32)


def data(shapes, rng, seed):
    """Fresh x, w13, w2, offsets, dy of the compiled shapes."""
    (M, H), (G, I, _), (_, _, _) = shapes
    g = torch.Generator(device=dev).manual_seed(seed)
    x = torch.randn(M, H, device=dev, generator=g).to(torch.bfloat16)
    w13 = (torch.randn(G, I, H, device=dev, generator=g) / H ** 0.5).to(torch.bfloat16)
    w2 = (torch.randn(G, H, I, device=dev, generator=g) / I ** 0.5).to(torch.bfloat16)
    offs = torch.tensor(routing(G, M, rng), device=dev)
    dy = torch.randn(M, H, device=dev, generator=g).to(torch.bfloat16)
    return [x, w13, w2, offs, dy]


def make_step(op13, op2):
    def layer(x, w13, w2, offs):
        return op2(torch.nn.functional.gelu(op13(x, w13, offs)), w2, offs)

    def step(x, w13, w2, offs, dy):
        y = layer(x, w13, w2, offs)
        grads = torch.autograd.grad(y, (x, w13, w2), dy)
        return [y, *grads]
    return layer, step


def leaves(inputs):
    x, w13, w2, offs, dy = inputs
    return [x.requires_grad_(), w13.requires_grad_(), w2.requires_grad_(), offs, dy]


def first_diff(a, b):
    """'' if the lists are bitwise equal, else which tensor differs and how."""
    names = ("y", "dx", "dw13", "dw2")
    for n, p, q in zip(names, a, b):
        if not torch.equal(p, q):
            return f"{n}: max |diff| {(p.float() - q.float()).abs().max().item():.3e}"
    return ""


def capture(step, static):
    """torch.cuda.graph of step(*static), after the side-stream warm-up the
    PyTorch docs ask for; returns (graph, static outputs)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            step(*static)
    torch.cuda.current_stream().wait_stream(s)
    mp.check_deferred()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = step(*static)
    return g, out


def copy_into(static, new):
    with torch.no_grad():
        for s, n in zip(static, new):
            s.copy_(n)


def check_build(out_dir, label):
    rng = np.random.default_rng(11)
    op13 = mp.register_torch_op(out_dir, "experts.w13", namespace="graph_" + label)
    op2 = mp.register_torch_op(out_dir, "experts.w2", namespace="graph_" + label)
    fwd = mp.Program(out_dir, "experts.w13.forward")
    shapes = (fwd.prog["args"][0]["shape"], fwd.prog["args"][1]["shape"],
              mp.Program(out_dir, "experts.w2.forward").prog["args"][1]["shape"])
    layer, step = make_step(op13, op2)
    static = leaves(data(shapes, rng, 1))
    g, out = capture(step, static)

    eager = step(*static)
    g.replay()
    mp.check_deferred()
    d = first_diff(out, eager)
    report(f"[{label}] replay == eager", d == "", d or "y, dx, dw13, dw2 bitwise equal")

    new = data(shapes, rng, 2)
    copy_into(static, new)
    g.replay()
    mp.check_deferred()
    eager = step(*leaves([t.clone() for t in new]))
    d = first_diff(out, eager)
    nonzero = all(t.abs().sum().item() > 0 for t in out)
    report(f"[{label}] replay on new data == eager", d == "" and nonzero,
           d or "bitwise equal; outputs nonzero")

    good = static[3].clone()
    with torch.no_grad():
        static[3].copy_(good.flip(0))  # decreasing end offsets
    g.replay()
    try:
        mp.check_deferred()
        report(f"[{label}] bad offsets in a replay raise", False, "no error")
    except rt.KernelRejectedInput as e:
        report(f"[{label}] bad offsets in a replay raise",
               "rejected its group offsets" in str(e) and "CUDA graph" in str(e), str(e)[:110])
    with torch.no_grad():
        static[3].copy_(good)
    g.replay()
    try:
        mp.check_deferred()
        d = first_diff(out, eager)
        report(f"[{label}] valid offsets again: passes, == eager", d == "", d or "bitwise equal")
    except Exception as e:  # noqa: BLE001
        report(f"[{label}] valid offsets again: passes, == eager", False, repr(e)[:110])

    static2 = leaves(data(shapes, rng, 3))
    g2, out2 = capture(step, static2)
    eager2 = step(*static2)
    for _ in range(2):
        g.replay()
        g2.replay()
    mp.check_deferred()
    d = first_diff(out, eager) or first_diff(out2, eager2)
    report(f"[{label}] two graphs replayed alternately", d == "", d or "both bitwise equal to eager")
    return layer, shapes


def check_reduce_overhead(layer, shapes, label):
    rng = np.random.default_rng(5)
    try:
        compiled = torch.compile(layer, mode="reduce-overhead", fullgraph=True)
        worst = 0.0
        for seed in (4, 5, 6):
            x, w13, w2, offs, dy = leaves(data(shapes, rng, seed))
            yc = compiled(x, w13, w2, offs)
            gc = torch.autograd.grad(yc, (x, w13, w2), dy)
            ye = layer(x, w13, w2, offs)
            ge = torch.autograd.grad(ye, (x, w13, w2), dy)
            for p, q in zip((yc, *gc), (ye, *ge)):
                worst = max(worst, ((p.double() - q.double()).norm() / q.double().norm()).item())
        mp.check_deferred()
        report(f"[{label}] torch.compile(reduce-overhead) == eager", worst <= 2e-2,
               f"max rel. diff {worst:.1e} over y and 3 grads, 3 steps")
    except Exception as e:  # noqa: BLE001
        report(f"[{label}] torch.compile(reduce-overhead) == eager", False, repr(e)[:200])


def main():
    dirs = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not dirs:
        print(__doc__)
        return 2
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    for d in dirs:
        label = os.path.basename(os.path.normpath(d)).replace("-", "_") or "build"
        layer, shapes = check_build(d, label)
        if "--no-compile" not in sys.argv[1:]:
            check_reduce_overhead(layer, shapes, label)
    return CHECKS.summary()


if __name__ == "__main__":
    sys.exit(main())
