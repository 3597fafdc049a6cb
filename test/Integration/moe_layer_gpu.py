#!/usr/bin/env python3
"""End to end on the GPU: the routed-expert GEMMs of a model-level module,
compiled by mxmoe-compile (precision policy -> forward/backward expansion ->
scale packing -> quantize + grouped-GEMM kernels), replayed from the
manifest's launch programs on PyTorch tensors (python/mxmoe/program.py).

For every program (<fqn>.forward / .input_grad / .weight_grad) of
test/Integration/moe_small.mlir, on fresh random bf16 data and a skewed
routing with an empty expert and rows past the last offset:
  * the grouped GEMM step equals the float64 product of its dequantized MX
    operands (the quantize kernels' actual outputs): rel. error <= 4e-3;
  * the program's result against the unquantized bf16 math in float64:
    rel. error <= 6e-2 (two MXFP8 quantizations; reported);
  * rows past the last offset and the empty expert's weight gradient are
    exactly zero.
Then the autograd function (forward + both gradients through mxmoe) against
torch autograd in float32, the torch op under torch.compile, a transposed
view of the weight rejected by the op (a strided one copied), and offsets
rejected by the kernels (raised at the call, or later with deferred
checks). Prints a table and `N passed, N failed` last.

Usage (device): moe_layer_gpu.py DIR   (DIR = mxmoe-compile output)
"""
from __future__ import annotations

import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import Checks, rel  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from mxmoe import program as mp  # noqa: E402
from mxmoe import reference as ref  # noqa: E402

dev = torch.device("cuda")
CHECKS = Checks(width=42)
report = CHECKS.report



def deq_scales(scales_u8, spec, offsets, rows, cols):
    """Row-major scale bytes of a blocked buffer (layout from the manifest)."""
    s = scales_u8.cpu().numpy()
    layout = spec.get("layout", "")
    if "per_k_group" in layout:
        return ref.from_blocked_k_groups(s, offsets, rows, cols)
    if s.ndim == 3:
        return ref.from_blocked(s, rows, cols)
    return ref.from_blocked_m_groups(s, offsets, rows, cols)


def dequant(data, scales_rm):
    """data [..., L] fp8 (torch) * 2^(scale - 127) per 32 along the last axis."""
    x = data.float().double()
    e = torch.from_numpy(scales_rm.astype(np.float64)).to(dev)
    return x * torch.pow(2.0, e - 127).repeat_interleave(32, -1)[..., :x.shape[-1]]


def gemm_reference(prog, bufs, args, offsets):
    step = next(s for s in prog.prog["steps"] if s["op"] == "mxmoe.grouped_matmul")
    b = step["bindings"]
    get = lambda x: args[x["arg"]] if "arg" in x else bufs[x["buffer"]]
    spec = lambda x: prog.prog["args"][x["arg"]] if "arg" in x else prog.prog["buffers"][x["buffer"]]
    lhs, rhs = get(b[0]), get(b[2])
    out = get(b[5])
    if rhs.dim() == 3:  # 2D x 3D
        M, K = lhs.shape
        G, N, _ = rhs.shape
        sa = deq_scales(get(b[1]), spec(b[1]), offsets, M, K // 32)
        sb = deq_scales(get(b[3]), spec(b[3]), offsets, N, K // 32)
        A, B = dequant(lhs, sa), dequant(rhs, sb)
        r = torch.zeros((M, N), dtype=torch.float64, device=dev)
        begin = 0
        for g, end in enumerate(offsets.tolist()):
            r[begin:end] = A[begin:end] @ B[g].T
            begin = end
    else:  # 2D x 2D over the padded token axis
        M, Tp = lhs.shape
        N = rhs.shape[0]
        sa = deq_scales(get(b[1]), spec(b[1]), offsets, M, Tp // 32)
        sb = deq_scales(get(b[3]), spec(b[3]), offsets, N, Tp // 32)
        A, B = dequant(lhs, sa), dequant(rhs, sb)
        starts = ref.padded_starts(offsets, 32) * 32
        G = len(offsets)
        r = torch.zeros((G, M, N), dtype=torch.float64, device=dev)
        begin = 0
        for g, end in enumerate(offsets.tolist()):
            m, p = end - begin, int(starts[g])
            if m:
                r[g] = A[:, p:p + m] @ B[:, p:p + m].T
            begin = end
    return out, r


def routing(G, M, rng, tail):
    w = 1.0 / np.arange(1, G + 1) ** 1.1
    rng.shuffle(w)
    w[rng.integers(G)] = 0.0  # one empty expert
    used = M - tail
    sizes = np.floor(w / w.sum() * used).astype(np.int64)
    sizes[np.argmax(sizes)] += used - sizes.sum()
    return np.cumsum(sizes).astype(np.int32)


def grouped_bf16(x, w, offsets):
    """float64 reference of x @ w[g]^T per group (rows past the end: 0)."""
    out = torch.zeros((x.shape[0], w.shape[1]), dtype=torch.float64, device=dev)
    begin = 0
    for g, end in enumerate(offsets.tolist()):
        out[begin:end] = x[begin:end].double() @ w[g].double().T
        begin = end
    return out


def main():
    out_dir = sys.argv[1]
    rng = np.random.default_rng(7)
    torch.manual_seed(7)
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    for fqn in ("experts.w13", "experts.w2"):
        fwd = mp.Program(out_dir, fqn + ".forward")
        M, K = fwd.prog["args"][0]["shape"]
        G, N, _ = fwd.prog["args"][1]["shape"]
        offs_np = routing(G, M, rng, tail=37)
        offs = torch.tensor(offs_np, device=dev)
        x = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
        w = (torch.randn(G, N, K, device=dev) / K ** 0.5).to(torch.bfloat16)
        dy = torch.randn(M, N, device=dev, dtype=torch.bfloat16)
        empty = int(np.nonzero(np.diff(np.concatenate([[0], offs_np])) == 0)[0][0])

        # forward (a --quantize-weights-once build also returns the weight
        # quantized for input_grad: the forward's codes, transposed)
        once = mp._saves_quantized_weight(fwd)
        outs, bufs = fwd(x, w, offs, return_buffers=True)
        y, wq = outs[0], tuple(outs[1:]) if once else (w,)
        if once:
            step = next(s for s in fwd.prog["steps"] if s["op"] == "mxmoe.quantize_weight")
            data = bufs[step["bindings"][3]["buffer"]]
            same = torch.equal(wq[0].view(torch.uint8), data.transpose(-1, -2).view(torch.uint8))
            report(f"{fqn}.forward weight once, transposed", same,
                   f"input_grad's weight == forward's codes transposed: {same}")
        got, exact = gemm_reference(fwd, bufs, (x, w, offs), offs_np)
        e = rel(got, exact)
        report(f"{fqn}.forward GEMM vs f64(deq MX)", e <= 4e-3, f"rel.err {e:.2e}")
        e2 = rel(y, grouped_bf16(x, w, offs))
        tail_zero = bool((y[int(offs_np[-1]):] == 0).all())
        report(f"{fqn}.forward vs bf16 math", e2 <= 6e-2 and tail_zero,
               f"rel.err {e2:.2e}, rows past last offset zero: {tail_zero}")

        # input gradient: dx = dy @ W[g]
        dgrad = mp.Program(out_dir, fqn + ".input_grad")
        (dx,), bufs = dgrad(dy, *wq, offs, return_buffers=True)
        got, exact = gemm_reference(dgrad, bufs, (dy, *wq, offs), offs_np)
        e = rel(got, exact)
        report(f"{fqn}.input_grad GEMM vs f64(deq MX)", e <= 4e-3, f"rel.err {e:.2e}")
        ref_dx = torch.zeros((M, K), dtype=torch.float64, device=dev)
        begin = 0
        for g, end in enumerate(offs_np.tolist()):
            ref_dx[begin:end] = dy[begin:end].double() @ w[g].double()
            begin = end
        e2 = rel(dx, ref_dx)
        report(f"{fqn}.input_grad vs bf16 math", e2 <= 6e-2, f"rel.err {e2:.2e}")

        # weight gradient: dW[g] = dy_g^T @ x_g
        wgrad = mp.Program(out_dir, fqn + ".weight_grad")
        (dw,), bufs = wgrad(dy, x, offs, return_buffers=True)
        got, exact = gemm_reference(wgrad, bufs, (dy, x, offs), offs_np)
        e = rel(got, exact)
        report(f"{fqn}.weight_grad GEMM vs f64(deq MX)", e <= 4e-3, f"rel.err {e:.2e}")
        ref_dw = torch.zeros((G, N, K), dtype=torch.float64, device=dev)
        begin = 0
        for g, end in enumerate(offs_np.tolist()):
            ref_dw[g] = dy[begin:end].double().T @ x[begin:end].double()
            begin = end
        e2 = rel(dw, ref_dw)
        zero = bool((dw[empty] == 0).all())
        report(f"{fqn}.weight_grad vs bf16 math", e2 <= 6e-2 and zero,
               f"rel.err {e2:.2e}, empty expert {empty} exactly zero: {zero}")

    # autograd through mxmoe (w13), against torch autograd in float32
    fn = mp.mx_grouped_mm_function(out_dir, "experts.w13")
    fwd = mp.Program(out_dir, "experts.w13.forward")
    M, K = fwd.prog["args"][0]["shape"]
    G, N, _ = fwd.prog["args"][1]["shape"]
    offs_np = routing(G, M, rng, tail=0)
    offs = torch.tensor(offs_np, device=dev)
    x = torch.randn(M, K, device=dev, dtype=torch.bfloat16, requires_grad=True)
    w = (torch.randn(G, N, K, device=dev) / K ** 0.5).to(torch.bfloat16).requires_grad_()
    dy = torch.randn(M, N, device=dev, dtype=torch.bfloat16)
    y = fn.apply(x, w, offs)
    y.backward(dy)
    xr = x.detach().float().requires_grad_()
    wr = w.detach().float().requires_grad_()
    outs, begin = [], 0
    for g, end in enumerate(offs_np.tolist()):
        outs.append(xr[begin:end] @ wr[g].T)
        begin = end
    yr = torch.cat(outs)
    yr.backward(dy.float())
    ey, ex, ew = rel(y, yr), rel(x.grad, xr.grad), rel(w.grad, wr.grad)
    report("autograd experts.w13 (y, dx, dW)", max(ey, ex, ew) <= 6e-2,
           f"rel.err y {ey:.2e}, dx {ex:.2e}, dW {ew:.2e}")

    # the same GEMM as a torch.library custom op under torch.compile
    # (fullgraph: no graph break), against the eager custom op and against
    # the fp32 reference of the whole function
    op = mp.register_torch_op(out_dir, "experts.w13")

    def layer(a, b, o):
        return torch.nn.functional.silu(op(a, b, o).float()) * 2.0

    try:
        xs = [x.detach().clone().requires_grad_() for _ in range(2)]
        ws = [w.detach().clone().requires_grad_() for _ in range(2)]
        compiled = torch.compile(layer, fullgraph=True)
        yc = compiled(xs[0], ws[0], offs)
        ye = layer(xs[1], ws[1], offs)
        yc.backward(dy.float())
        ye.backward(dy.float())
        xr2 = x.detach().float().requires_grad_()
        wr2 = w.detach().float().requires_grad_()
        parts, begin = [], 0
        for g, end in enumerate(offs_np.tolist()):
            parts.append(xr2[begin:end] @ wr2[g].T)
            begin = end
        yref = torch.nn.functional.silu(torch.cat(parts)) * 2.0
        yref.backward(dy.float())
        # Inductor fuses silu * 2 in its own order: y agrees to fp32
        # rounding; the gradients then differ where the MX quantization of
        # the incoming gradient rounds a perturbed element the other way.
        dy_ = rel(yc, ye)
        dg = max(rel(xs[0].grad, xs[1].grad), rel(ws[0].grad, ws[1].grad))
        ec = max(rel(yc, yref), rel(xs[0].grad, xr2.grad), rel(ws[0].grad, wr2.grad))
        report("torch.compile(fullgraph) custom op", dy_ <= 1e-5 and dg <= 1e-2 and ec <= 6e-2,
               f"compiled vs eager: y {dy_:.1e}, grads {dg:.1e}; max rel.err vs fp32 {ec:.2e}")
    except Exception as ex:  # noqa: BLE001
        report("torch.compile(fullgraph) custom op", False, repr(ex)[:300])

    # A transposed view of the weight (TorchAO's B_t = W.transpose(-2, -1)
    # read as [G, N, K]) is rejected, not copied into a wrong layout; a
    # strided, non-transposed weight (every other K of a wider tensor) is
    # copied and gives the contiguous weight's result.
    try:
        wt = w.detach().transpose(-2, -1).contiguous().transpose(-2, -1)
        try:
            op(x.detach(), wt, offs)
            report("transposed-view weight rejected", False, "no error")
        except ValueError as e:
            report("transposed-view weight rejected", "transposed view" in str(e), str(e)[:120])
        wide = torch.stack([w.detach(), w.detach()], -1).flatten(-2)[..., ::2]
        same = rel(op(x.detach(), wide, offs), op(x.detach(), w.detach().contiguous(), offs))
        report("strided weight copied", not wide.is_contiguous() and same == 0.0,
               f"result vs contiguous weight: {same:.1e}")
    except Exception as ex:  # noqa: BLE001
        report("transposed-view weight rejected", False, repr(ex)[:300])

    # bad routing: the kernels reject decreasing offsets, nothing is returned
    bad = torch.tensor(offs_np[::-1].copy(), device=dev)
    try:
        fwd(x.detach(), w.detach(), bad)
        report("decreasing offsets rejected", False, "no error raised")
    except Exception as ex:  # noqa: BLE001
        report("decreasing offsets rejected", "rejected" in str(ex), str(ex)[:90])

    # a dense MX linear through its programs (one-group offsets are a
    # program constant; the weight gradient is returned as [N, K])
    try:
        pf = mp.Program(out_dir, "proj.forward")
        M, K = pf.prog["args"][0]["shape"]
        N = pf.prog["args"][1]["shape"][0]
        xl = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
        wl = (torch.randn(N, K, device=dev) / K ** 0.5).to(torch.bfloat16)
        dyl = torch.randn(M, N, device=dev, dtype=torch.bfloat16)
        (yl,) = pf(xl, wl)
        (dxl,) = mp.Program(out_dir, "proj.input_grad")(dyl, wl)
        (dwl,) = mp.Program(out_dir, "proj.weight_grad")(dyl, xl)
        errs = [rel(yl, xl.double() @ wl.double().T), rel(dxl, dyl.double() @ wl.double()),
                rel(dwl, dyl.double().T @ xl.double())]
        shapes = [list(yl.shape), list(dxl.shape), list(dwl.shape)]
        report("linear proj forward / input_grad / weight_grad",
               max(errs) <= 6e-2 and shapes == [[M, N], [M, K], [N, K]],
               "rel.err " + ", ".join(f"{e:.2e}" for e in errs) + f"; shapes {shapes}")
    except Exception as ex:  # noqa: BLE001
        report("linear proj forward / input_grad / weight_grad", False, repr(ex)[:200])

    # deferred checks (the autograd function's and torch op's default): the
    # rejecting call returns, and the rejection is raised by check_deferred()
    # or, once the GPU has finished it, by the next call; a good call after
    # that passes.
    for how in ("check_deferred()", "next call"):
        fwd_d = mp.Program(out_dir, "experts.w13.forward", check="deferred")
        try:
            fwd_d(x.detach(), w.detach(), bad)
            returned = True
        except Exception:  # noqa: BLE001
            returned = False
        try:
            if how == "check_deferred()":
                mp.check_deferred()
            else:
                torch.cuda.synchronize()
                fwd_d(x.detach(), w.detach(), offs)
            report(f"deferred rejection raised by {how}", False, "no error raised")
        except Exception as ex:  # noqa: BLE001
            ok = returned and isinstance(ex, mp.rt.KernelRejectedInput) and "deferred" in str(ex)
            report(f"deferred rejection raised by {how}", ok, str(ex)[:90])
    try:
        y_ok = mp.Program(out_dir, "experts.w13.forward", check="deferred")(
            x.detach(), w.detach(), offs)[0]
        mp.check_deferred()
        report("deferred check of a good call", bool(torch.isfinite(y_ok.float()).all()), "no error")
    except Exception as ex:  # noqa: BLE001
        report("deferred check of a good call", False, repr(ex)[:90])

    return CHECKS.summary()


if __name__ == "__main__":
    sys.exit(main())
