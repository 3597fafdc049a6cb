"""DeepGEMM's SM90 FP8 grouped GEMMs as a benchmark peer of mxmoe's MX128
kernel (issue 21). This file is mxmoe's driver; DeepGEMM itself is a
snapshot in a git-ignored folder (`.peers/deepgemm`, fetched, carried to the
device and built there; never committed), named by $MXMOE_DEEPGEMM.

Recipe of the peer (DeepGEMM README, "fine-grained scaling"): e4m3 data,
1x128 activation scales and 128x128 weight scales for the M-grouped forward
(`m_grouped_fp8_gemm_nt_contiguous`: rows of expert g tagged g in an int32
per-row layout, each expert's segment padded to 128 rows), 1x128 scales
along the tokens of both operands for the K-grouped weight gradient
(`k_grouped_fp8_gemm_nt_contiguous`, f32 output, per-group K padded to 128).
Scales are powers of two (`use_ue8m0=True`: ceil to UE8M0) held in fp32
containers. mxmoe's MX128 differs in two ways: e8m0 bytes in the blocked MX
scale layout (valid MXFP8 for tcgen05) and jagged groups (the 128-token
windows restart at each group's own start; no padding).

Build on the device (about 90 s): `python3 bench/deepgemm_peer.py --build`.
"""
import os
import subprocess
import sys

ROOT = os.environ.get("MXMOE_DEEPGEMM", "")


def build():
    """Builds DeepGEMM's extension in place (develop.sh's steps without
    its rm -rf of the carried tree): the CUTLASS include links and
    `setup.py build`, then links the .so into deep_gemm/."""
    inc = os.path.join(ROOT, "deep_gemm", "include")
    for name in ("cutlass", "cute"):
        link = os.path.join(inc, name)
        if not os.path.exists(link):
            os.symlink(os.path.join(ROOT, "third-party", "cutlass", "include", name), link)
    env = dict(os.environ, DG_USE_LOCAL_VERSION="0")
    subprocess.run([sys.executable, "setup.py", "build"], cwd=ROOT, env=env, check=True)
    for dirpath, _, files in os.walk(os.path.join(ROOT, "build")):
        for f in files:
            if f.endswith(".so"):
                dst = os.path.join(ROOT, "deep_gemm", f)
                if os.path.lexists(dst):
                    os.remove(dst)
                os.symlink(os.path.join(dirpath, f), dst)
                return dst
    raise RuntimeError("DeepGEMM build produced no .so")


def _import():
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    import deep_gemm  # noqa: E402
    from deep_gemm.utils import per_token_cast_to_fp8, per_block_cast_to_fp8  # noqa: E402
    return deep_gemm, per_token_cast_to_fp8, per_block_cast_to_fp8


def segments(T, G):
    """Balanced routing of T tokens over G experts (as gemm_gpu.py's
    'balanced'), and each segment padded to DeepGEMM's 128."""
    base, extra = divmod(T, G)
    actual = [base + (1 if g < extra else 0) for g in range(G)]
    aligned = [-(-s // 128) * 128 for s in actual]
    return actual, aligned


def make_m_grouped(actual, aligned, N, K):
    """Operands of the M-grouped forward [sum(aligned), K] x [G, N, K]^T with
    power-of-two 1x128 / 128x128 scales; padding rows tagged -1."""
    import torch
    _, tok_cast, blk_cast = _import()
    G, M = len(actual), sum(aligned)
    a16 = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b16 = torch.randn(G, N, K, device="cuda", dtype=torch.bfloat16)
    m_idx = torch.full((M,), -1, dtype=torch.int32, device="cuda")
    start = 0
    for g, (s, p) in enumerate(zip(actual, aligned)):
        m_idx[start:start + s] = g
        a16[start + s:start + p] = 0
        start += p
    a = tok_cast(a16, use_ue8m0=True, gran_k=128)
    b8 = torch.empty_like(b16, dtype=torch.float8_e4m3fn)
    bs = torch.empty((G, -(-N // 128), -(-K // 128)), device="cuda", dtype=torch.float)
    for g in range(G):
        b8[g], bs[g] = blk_cast(b16[g], use_ue8m0=True, gran_k=128)
    d = torch.empty((M, N), device="cuda", dtype=torch.bfloat16)
    ref = (a16.float(), b16.float(), m_idx)
    return a, (b8, bs), d, m_idx, ref


def call_m_grouped(a, b, d, m_idx):
    dg, _, _ = _import()
    dg.m_grouped_fp8_gemm_nt_contiguous(a, b, d, m_idx)


def make_k_grouped(aligned, M, N):
    """Operands of the K-grouped weight gradient: per group g, d[g] (f32
    [M, N]) = A_g^T B_g over the group's (128-padded) tokens, both operands
    K-major with 1x128 power-of-two scales along the tokens."""
    import torch
    _, tok_cast, _ = _import()
    K = sum(aligned)
    a16 = torch.randn(K, M, device="cuda", dtype=torch.bfloat16)
    b16 = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    a_flat = torch.empty(K * M, dtype=torch.float8_e4m3fn, device="cuda")
    b_flat = torch.empty(K * N, dtype=torch.float8_e4m3fn, device="cuda")
    sfa, sfb = [], []
    start = 0
    for k in aligned:
        qa, sa = tok_cast(a16[start:start + k].t().contiguous(), use_ue8m0=True, gran_k=128)
        qb, sb = tok_cast(b16[start:start + k].t().contiguous(), use_ue8m0=True, gran_k=128)
        a_flat[start * M:(start + k) * M] = qa.flatten()
        b_flat[start * N:(start + k) * N] = qb.flatten()
        sfa.append(sa.t())
        sfb.append(sb.t())
        start += k
    # [sum(k) / 128, M] per-channel scales, passed as their [M, sum(k) / 128]
    # transpose (DeepGEMM's tests/test_fp8_fp4.py does the same)
    sfa = torch.cat(sfa).t()
    sfb = torch.cat(sfb).t()
    layout = torch.tensor(aligned, dtype=torch.int32, device="cuda")
    d = torch.zeros((len(aligned), M, N), device="cuda", dtype=torch.float)
    ref = (a16.float(), b16.float())
    return (a_flat, sfa), (b_flat, sfb), d, layout, ref


def call_k_grouped(a, b, d, aligned, layout):
    dg, _, _ = _import()
    dg.k_grouped_fp8_gemm_nt_contiguous(a, b, d, aligned, layout, d)


def run_checks():
    """Normwise relative error of both peers against float32 of their bf16
    inputs on small shapes (the fp8 quantization error, about 3e-2, and no
    more): a peer that computes garbage is not timed."""
    import torch
    actual, aligned = segments(3 * 128 + 40, 3)
    a, b, d, m_idx, (a32, b32, idx) = make_m_grouped(actual, aligned, 256, 512)
    call_m_grouped(a, b, d, m_idx)
    ref = torch.zeros_like(d, dtype=torch.float)
    live = idx >= 0
    ref[live] = torch.einsum("mk,mnk->mn", a32[live], b32[idx[live].long()])
    e_m = float((d.float()[live] - ref[live]).norm() / ref[live].norm())
    A, B, dk, layout, (a32, b32) = make_k_grouped([256, 128, 384], 256, 384)
    call_k_grouped(A, B, dk, [256, 128, 384], layout)
    errs, start = [], 0
    for g, k in enumerate([256, 128, 384]):
        r = a32[start:start + k].t() @ b32[start:start + k]
        errs.append(float((dk[g] - r).norm() / r.norm()))
        start += k
    return {"m_grouped_rel_err": e_m, "k_grouped_rel_err": max(errs)}


if __name__ == "__main__":
    if not ROOT:
        sys.exit("deepgemm_peer.py: set MXMOE_DEEPGEMM to the DeepGEMM snapshot")
    if "--build" in sys.argv:
        print("built", build())
    print(run_checks())
