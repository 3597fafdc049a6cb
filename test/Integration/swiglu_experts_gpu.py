#!/usr/bin/env python3
"""mxmoe.swiglu_experts on the GPU: the routed experts' w13 GEMM, SwiGLU
and w2 GEMM as one compiled block (forward and backward programs, the
SwiGLU and its backward inside the quantize kernels) against

  * the same experts through the per-GEMM torch ops (two
    mxmoe.scaled_grouped_matmul, PyTorch's SwiGLU between them: what the
    MoE layer ran before): y, dx, dw13 and dw2 bit for bit equal (the
    fused kernels quantize exactly what PyTorch's bf16 SwiGLU computes,
    test/Integration/fused_quantize_gpu.py), and
  * float64 (the bf16 inputs, exact SwiGLU, autograd): relative Frobenius
    error of y and every gradient below 0.1 (MX128 e4m3 operands).

Fresh random data per check; groups with an empty one and one that is
not a multiple of 128 rows; a second routing without recompiling; the op
under torch.compile(fullgraph=True).

The routed op (@routed: dispatch and combine compiled in; 128 tokens,
top-4 of 4 experts from a random router) against the unrouted block run
on PyTorch's gather `x[idx // k]` and backward from PyTorch's
`(score * dout[token]).bfloat16()`: dw13 and dw2 bit-equal; out, dx and
dscores within one bf16 rounding (plus f32 summation error) of float64
sums of the unrouted block's routed rows; the whole op within 0.1 of a
float64 MoE layer; a training step captured in a CUDA graph and
replayed on new data and routing equal to eager; a bad routing index
rejected (status 3). Prints
`N passed, N failed` last.

    build/bin/mxmoe-compile test/Integration/swiglu_experts.mlir --chip sm_90a --recipe mx128 -o .device/sx
    build/bin/mxmoe-compile test/Integration/swiglu_experts.mlir --chip sm_90a --recipe mx128 \
        --quantize-weights-once -o .device/sx1
    python3 test/Integration/swiglu_experts_gpu.py .device/sx .device/sx1      # device

With the second directory, a --quantize-weights-once build is checked
against the default one (same bits).
"""
from __future__ import annotations

import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import Checks  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from mxmoe import program as mp  # noqa: E402

M, H, I, E = 512, 256, 256, 4


def data(seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(M, H, device="cuda", generator=g).to(torch.bfloat16)
    w13 = (torch.randn(E, 2 * I, H, device="cuda", generator=g) / H ** 0.5).to(torch.bfloat16)
    w2 = (torch.randn(E, H, I, device="cuda", generator=g) / I ** 0.5).to(torch.bfloat16)
    dy = torch.randn(M, H, device="cuda", generator=g).to(torch.bfloat16)
    return x, w13, w2, dy


def run(fn, x, w13, w2, offs, dy):
    """y and the gradients of (x, w13, w2) of y.backward(dy)."""
    ins = [t.clone().requires_grad_() for t in (x, w13, w2)]
    y = fn(*ins, offs)
    y.backward(dy)
    return [y.detach()] + [t.grad for t in ins]


def per_gemm(g13, g2):
    def experts(x, w13, w2, offs):
        gate, up = g13(x, w13, offs).chunk(2, -1)
        return g2((F.silu(gate) * up).contiguous(), w2, offs)
    return experts


def float64(x, w13, w2, offs, dy):
    """y and gradients in float64: per group, exact SwiGLU; rows past the
    last offset give zero."""
    ins = [t.double().requires_grad_() for t in (x, w13, w2)]
    xs, a, b = ins
    ys, start = [], 0
    for e, end in enumerate(offs.tolist()):
        h = xs[start:end] @ a[e].T
        gate, up = h.chunk(2, -1)
        ys.append((F.silu(gate) * up) @ b[e].T)
        start = end
    ys.append(xs.new_zeros(M - start, H))
    y = torch.cat(ys)
    y.backward(dy.double())
    return [y.detach()] + [t.grad for t in ins]


def rel(a, ref):
    return float((a.double() - ref).norm() / ref.norm().clamp_min(1e-30))


def check_routing(c, d, block, gemms, seed, sizes):
    x, w13, w2, dy = data(seed)
    offs = torch.tensor(sizes, dtype=torch.int32, device="cuda").cumsum(0).to(torch.int32)
    got = run(block, x, w13, w2, offs, dy)
    mp.check_deferred()
    ref = run(gemms, x, w13, w2, offs, dy)
    f64 = float64(x, w13, w2, offs, dy)
    for name, a, b, r in zip(("y", "dx", "dw13", "dw2"), got, ref, f64):
        c.report(f"groups {sizes}: {name} equal to per-GEMM ops", torch.equal(a, b),
                 f"max |diff| {float((a.float() - b.float()).abs().max()):.3g}")
        e = rel(a, r)
        c.report(f"groups {sizes}: {name} vs float64", e < 0.1, f"rel. error {e:.4f}")


def routing(g, T, k):
    """(indices [T k] int32 in expert order, scores [T, k] f32, offsets [E])."""
    w, e = torch.softmax(torch.randn(T, E, device="cuda", generator=g), -1).topk(k, -1)
    idx = torch.argsort(e.reshape(-1), stable=True).to(torch.int32)
    offs = torch.bincount(e.reshape(-1), minlength=E).cumsum(0).to(torch.int32)
    return idx, w.contiguous(), offs


def within_rounding(got, ref, terms):
    """(|got - ref| <= half a bf16 ulp of ref + f32 summation error, worst
    ratio to that bound)."""
    bound = ref.abs() * 2.0 ** -8 + terms * 2.0 ** -20 + 1e-30
    ratio = float(((got.double() - ref).abs() / bound).max())
    return ratio <= 1.0, ratio


def check_graph(c, routed, x, w13, w2, g, T, k):
    """A training step of the routed op (forward, backward) captured with
    torch.cuda.graph and replayed on new data and a new routing copied into
    the static inputs: equal to the eager step bit for bit."""
    static = [t.clone() for t in (x, w13, w2)]
    idx, s, offs = routing(g, T, k)
    st = {"idx": idx, "s": s.clone(), "offs": offs,
          "dout": torch.randn(T, H, device="cuda", generator=g).to(torch.bfloat16)}

    def step():
        ins = [t.detach().requires_grad_() for t in static + [st["s"]]]
        out = routed(ins[0], ins[1], ins[2], st["offs"], st["idx"], ins[3])
        out.backward(st["dout"])
        return [out.detach()] + [t.grad for t in ins]

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = step()
    x2 = torch.randn(T, H, device="cuda", generator=g).to(torch.bfloat16)
    idx2, s2, offs2 = routing(g, T, k)
    static[0].copy_(x2)
    st["idx"].copy_(idx2)
    st["s"].copy_(s2)
    st["offs"].copy_(offs2)
    st["dout"].normal_(generator=g)
    graph.replay()
    torch.cuda.synchronize()
    mp.check_deferred()
    eager = step()
    same = all(torch.equal(a, b) for a, b in zip(captured, eager))
    c.report("routed: CUDA-graph replay (new data, routing) == eager", same)


def check_routed(c, d, block):
    T, k = 128, 4
    g = torch.Generator(device="cuda").manual_seed(31)
    x, w13, w2, _ = data(31)
    x = x[:T].contiguous()
    idx, s, offs = routing(g, T, k)
    dout = torch.randn(T, H, device="cuda", generator=g).to(torch.bfloat16)
    routed = mp.register_swiglu_experts_op(d, "routed.experts", namespace="mxmoe_sx")
    ins = [t.clone().requires_grad_() for t in (x, w13, w2, s)]
    out = routed(ins[0], ins[1], ins[2], offs, idx, ins[3])
    out.backward(dout)
    mp.check_deferred()
    dx, dw13, dw2, ds = (t.grad for t in ins)
    # The unrouted block on PyTorch's dispatch.
    tok, slot = idx.long() // k, idx.long()
    xr = x[tok].contiguous().requires_grad_()
    rw = [t.clone().requires_grad_() for t in (w13, w2)]
    y = block(xr, rw[0], rw[1], offs)
    dy = (s.reshape(-1)[slot].unsqueeze(1) * dout[tok].float()).bfloat16()
    y.backward(dy)
    c.report("routed: dw13 equal to the unrouted block", torch.equal(dw13, rw[0].grad))
    c.report("routed: dw2 equal to the unrouted block", torch.equal(dw2, rw[1].grad))
    inv = torch.empty_like(slot)
    inv[slot] = torch.arange(T * k, device="cuda")
    inv = inv.view(T, k)
    y64, sw = y.detach().double()[inv], s.double().unsqueeze(-1)
    ok, r = within_rounding(out.detach(), (y64 * sw).sum(1), (y64.abs() * sw).sum(1))
    c.report("routed: out = sum score * y (f32, one rounding)", ok, f"worst / bound {r:.3f}")
    dxr = xr.grad.double()[inv]
    ok, r = within_rounding(dx, dxr.sum(1), dxr.abs().sum(1))
    c.report("routed: dx = sum of the routed rows' dx", ok, f"worst / bound {r:.3f}")
    prod = dout.double().unsqueeze(1) * y64
    ok, r = within_rounding(ds, prod.sum(-1), prod.abs().sum(-1))
    c.report("routed: dscores = <dout, y>", ok, f"worst / bound {r:.3f}")
    # Against float64 of the whole routed layer.
    ref_in = [t.double().requires_grad_() for t in (x, w13, w2, s)]
    ys, start = [], 0
    xr64 = ref_in[0][tok]
    for e, end in enumerate(offs.tolist()):
        gate, up = (xr64[start:end] @ ref_in[1][e].T).chunk(2, -1)
        ys.append((F.silu(gate) * up) @ ref_in[2][e].T)
        start = end
    y_all = torch.cat(ys)
    out64 = (y_all[inv] * ref_in[3].unsqueeze(-1)).sum(1)
    out64.backward(dout.double())
    for name, a, b in zip(("out", "dx", "dw13", "dw2", "dscores"),
                          (out.detach(), dx, dw13, dw2, ds),
                          (out64.detach(),) + tuple(t.grad for t in ref_in)):
        e = rel(a, b)
        c.report(f"routed: {name} vs float64", e < 0.1, f"rel. error {e:.4f}")
    check_graph(c, routed, x, w13, w2, g, T, k)
    bad = idx.clone()
    bad[3] = T * k + 1
    try:
        routed(x, w13, w2, offs, bad, s)
        mp.check_deferred()
        c.report("routed: bad routing index rejected", False, "no error")
    except Exception as e:  # KernelRejectedInput
        c.report("routed: bad routing index rejected", "routing indices" in str(e), str(e)[:80])


def check_weights_once(c, d, once_dir):
    """A --quantize-weights-once build (the weights quantized once per step
    in both orientations, the transposed copies saved for the backward)
    gives the same bits as the default build, unrouted and routed."""
    x, w13, w2, dy = data(41)
    offs = torch.tensor([200, 200, 257, 512], dtype=torch.int32, device="cuda")
    for fqn in ("block.experts", "routed.experts"):
        a = mp.register_swiglu_experts_op(d, fqn, namespace="mxmoe_sx")
        b = mp.register_swiglu_experts_op(once_dir, fqn, namespace="mxmoe_sx_once")
        if fqn == "block.experts":
            ra, rb = run(a, x, w13, w2, offs, dy), run(b, x, w13, w2, offs, dy)
        else:
            T, k = 128, 4
            g = torch.Generator(device="cuda").manual_seed(43)
            idx, s, o = routing(g, T, k)
            outs = []
            for op in (a, b):
                ins = [t.clone().requires_grad_() for t in (x[:T], w13, w2, s)]
                out = op(ins[0], ins[1], ins[2], o, idx, ins[3])
                out.backward(dy[:T])
                outs.append([out.detach()] + [t.grad for t in ins])
            ra, rb = outs
        mp.check_deferred()
        c.report(f"{fqn}: weights-once build == default build",
                 all(torch.equal(u, v) for u, v in zip(ra, rb)))


def main():
    d = sys.argv[1]
    c = Checks(width=48)
    block = mp.register_swiglu_experts_op(d, "block.experts", namespace="mxmoe_sx")
    gemms = per_gemm(mp.register_torch_op(d, "gemms.w13", namespace="mxmoe_sx"),
                     mp.register_torch_op(d, "gemms.w2", namespace="mxmoe_sx"))
    check_routing(c, d, block, gemms, 21, [200, 0, 57, 255])
    check_routing(c, d, block, gemms, 22, [128, 128, 128, 100])  # 28 rows past the groups
    x, w13, w2, dy = data(23)
    offs = torch.tensor([100, 300, 301, 512], dtype=torch.int32, device="cuda")
    eager = run(block, x, w13, w2, offs, dy)
    compiled = run(torch.compile(block, fullgraph=True), x, w13, w2, offs, dy)
    c.report("torch.compile(fullgraph=True) equal to eager",
             all(torch.equal(a, b) for a, b in zip(eager, compiled)))
    check_routed(c, d, block)
    if len(sys.argv) > 2:
        check_weights_once(c, d, sys.argv[2])
    bad = torch.tensor([100, 50, 301, 512], dtype=torch.int32, device="cuda")
    try:
        block(x, w13, w2, bad)
        mp.check_deferred()
        c.report("decreasing offsets rejected", False, "no error")
    except Exception as e:  # KernelRejectedInput
        c.report("decreasing offsets rejected", "offsets" in str(e), str(e)[:80])
    return c.summary()


if __name__ == "__main__":
    sys.exit(main())
