#!/usr/bin/env python3
"""Expert parallelism (mxmoe.ep.routed_experts) against the whole layer on
one rank, on P GPUs (torchrun --nproc-per-node P; P = 1 runs the same
collectives over one rank). NOT YET RUN (written in the twenty-seventh
session without a GPU; issue 26).

Every rank builds the same E expert weights (one seed) and keeps its E / P;
its own tokens differ (seed per rank; T_r = 1000 + 37 r, uneven). Cases:
balanced routing, skewed routing (90 % of choices to rank 0's experts), and
every choice on rank 0's experts (the other ranks receive zero rows).

* y and dx: equal to the whole layer computed on the rank with all E
  experts (`group=None`, the same grouped GEMMs on the same rows:
  quantization is per row and per 128x128 weight block, so the results
  should be bit-equal; reported, bound 1e-2 normwise);
* the local experts' dw13, dw2: the whole layer's gradients all-reduced
  over the ranks and sliced to this rank's experts (the sums run in
  another row order: 2e-2 normwise);
* both recipes (mxmoe MX128 via scaled_grouped_mm, and bf16
  torch._grouped_mm as the baseline path).

Kernels: the GPU machine has no compiler, so the grouped GEMMs' programs
come from a kernel cache filled on the build machine (`--fill DIR`, as
dropin_gpu.py does). A rank's received row count depends on the routing
drawn on the device, so the mxmoe paths run with `token_bucket=1024`: the
rows are padded to a multiple of 1024, and the fill binds every bucket a
rank can see at P = 1 and 2 (0 to 4096 rows; E = 16 experts for the whole
layer and P = 1, 8 per rank at P = 2).

Usage:
  ep_moe_gpu.py --fill DIR   (build machine) fills the kernel cache DIR
  (device) MXMOE_CACHE_DIR=DIR NCCL_NVLS_ENABLE=0 torchrun --nproc-per-node P test/Integration/ep_moe_gpu.py
Last line (rank 0) `N passed, N failed`.
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
E, H, I, K = 16, 256, 256, 2


BUCKET = 1024
# Rows a rank can receive: up to all tokens of both ranks (T_r = 1000 + 37 r).
MAX_ROWS = (1000 + 1037) * K


def fill(root: str) -> None:
    """The programs of the P = 1 and P = 2 runs: both GEMMs (w13: K = H, N
    = 2I; w2: K = I, N = H) of E and E / 2 experts at every bucket of rows,
    both MX recipes."""
    import json
    from mxmoe import kernel_cache
    cache = kernel_cache.KernelCache(root)
    # (The first M of a key compiles its kernels: not 0, which has none.)
    buckets = list(range(BUCKET, -(-MAX_ROWS // BUCKET) * BUCKET + 1, BUCKET)) + [0]
    for recipe in ("mx128", "mx32"):
        for experts in (E, E // 2):
            for k, n in ((H, 2 * I), (I, H)):
                for m in buckets:
                    cache.grouped_mm(m=m, k=k, n=n, experts=experts, chip="sm_90a",
                                     options={"recipe": recipe, "rounding": "rceil",
                                              "toolkit": "/usr/local/cuda"})
    print(json.dumps(cache.stats))


if __name__ == "__main__" and sys.argv[1:2] == ["--fill"]:
    fill(sys.argv[2])  # (the build machine has no torch)
    sys.exit(0)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

sys.path.insert(0, HERE)
from checks import Checks, rel  # noqa: E402
from mxmoe import ep  # noqa: E402


def routing(T, P, case, gen, dev):
    logits = torch.randn(T, E, generator=gen)
    if case == "skewed":
        logits[:, : E // P] += 3.0
    if case == "rank0":
        logits[:, E // P:] = -1e4
    w, e = torch.topk(torch.softmax(logits, -1), K, dim=-1)
    return (w / w.sum(-1, keepdim=True)).to(dev), e.to(dev)


def main() -> int:
    dist.init_process_group("nccl")
    rank, P = dist.get_rank(), dist.get_world_size()
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
    torch.cuda.set_device(dev)
    checks = Checks(width=60)
    g0 = torch.Generator().manual_seed(7)
    w13 = (torch.randn(E, 2 * I, H, generator=g0) * 0.06).to(torch.bfloat16).to(dev)
    w2 = (torch.randn(E, H, I, generator=g0) * 0.06).to(torch.bfloat16).to(dev)
    mine = slice(rank * E // P, (rank + 1) * E // P)
    gen = torch.Generator().manual_seed(100 + rank)
    T = 1000 + 37 * rank
    x = torch.randn(T, H, generator=gen).to(torch.bfloat16).to(dev)
    dy = torch.randn(T, H, generator=gen).to(torch.bfloat16).to(dev)
    for gemm_name, gemm, recipe, bucket in (("mx128", None, "mx128", BUCKET),
                                            ("mx32", None, "mx32", BUCKET),
                                            ("bf16", ep.bf16_gemm, "mx128", 0)):
        for case in ("balanced", "skewed", "rank0"):
            wt, ex = routing(T, P, case, gen, dev)
            # The whole layer on this rank (all E experts, no collectives).
            leaves = [t.clone().requires_grad_() for t in (x, w13, w2)]
            ref = ep.routed_experts(leaves[0], wt, ex, leaves[1], leaves[2], num_experts=E,
                                    gemm=gemm, recipe=recipe, token_bucket=bucket)
            ref.backward(dy)
            dw = [leaves[1].grad.float(), leaves[2].grad.float()]
            for g in dw:
                dist.all_reduce(g)
            # Expert parallel.
            xs = x.clone().requires_grad_()
            l13 = w13[mine].clone().requires_grad_()
            l2 = w2[mine].clone().requires_grad_()
            y = ep.routed_experts(xs, wt, ex, l13, l2, num_experts=E, group=dist.group.WORLD,
                                  gemm=gemm, recipe=recipe, token_bucket=bucket)
            y.backward(dy)
            torch.cuda.synchronize()
            same = torch.equal(y, ref) and torch.equal(xs.grad, leaves[0].grad)
            errs = [rel(y, ref), rel(xs.grad, leaves[0].grad),
                    rel(l13.grad, dw[0][mine]), rel(l2.grad, dw[1][mine])]
            ok = errs[0] <= 1e-2 and errs[1] <= 1e-2 and max(errs[2:]) <= 2e-2
            ok_all = torch.tensor(int(ok), device=dev)
            dist.all_reduce(ok_all, op=dist.ReduceOp.MIN)
            if rank == 0:
                checks.report(f"P={P} {gemm_name} {case}: y, dx, dw13, dw2 vs whole layer",
                              bool(ok_all.item()),
                              ("bit-equal y dx; " if same else "") +
                              " ".join(f"{e:.1e}" for e in errs))
    code = checks.summary() if rank == 0 else 0
    dist.destroy_process_group()
    return code


if __name__ == "__main__":
    sys.exit(main())
