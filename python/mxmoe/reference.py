"""Reference implementation of OCP MX quantization (numpy).

Written from the OCP Microscaling Formats (MX) v1.0 spec and the bit-level
scale formulas TorchAO uses (torchao/prototype/mx_formats/mx_tensor.py,
to_mx); the blocked 128x4 scale layout from torchao's to_blocked
(torchao/prototype/mx_formats/utils.py).

Conventions (same as the mxmoe dialect):
  * quantize(x, axis) returns data with `axis` moved last (contiguous along
    the quantized axis) and scales of shape data.shape[:-1] + (L/32,), as
    uint8 arrays holding the raw element / E8M0 bytes;
  * inputs are float32 arrays holding the values actually quantized (round
    bf16 inputs first with `round_to_bf16`).
"""
from __future__ import annotations

import numpy as np

BLOCK = 32

# name: (exponent bits, mantissa bits, bias, max normal, emax_elem, nan code)
FORMATS = {
    "f8E4M3FN": (4, 3, 7, 448.0, 8, 0x7F),
    "f8E5M2": (5, 2, 15, 57344.0, 15, 0x7F),
    "f6E2M3FN": (2, 3, 1, 7.5, 2, None),
    "f6E3M2FN": (3, 2, 3, 28.0, 4, None),
    "f4E2M1FN": (2, 1, 1, 6.0, 2, None),
}
MODES = ("floor", "rceil", "ceil", "even")


def round_to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> nearest bf16 value (RNE), returned as float32."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    nan = np.isnan(x)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    out = u.astype(np.uint32).view(np.float32)
    return np.where(nan, np.float32(np.nan), out)


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """bf16 values (float32 arrays already rounded) -> uint16 bit patterns."""
    return (np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def scale_bytes(amax: np.ndarray, elem: str, mode: str) -> np.ndarray:
    """E8M0 scale byte per block from fp32 amax (NaN/Inf amax -> 0xFF)."""
    _, mbits, _, max_pos, emax, _ = FORMATS[elem]
    amax = np.asarray(amax, dtype=np.float32)
    bits = amax.view(np.uint32).astype(np.int64)
    exp = (bits >> 23) & 0xFF
    mant = bits & 0x7FFFFF
    if mode == "floor":
        b = np.maximum(exp - emax, 0)
    elif mode == "ceil":
        b = np.maximum(exp + (mant != 0) - emax, 0)
    elif mode == "even":
        r = (bits + (1 << (23 - mbits - 1))) & 0x7F800000
        b = np.maximum((r >> 23) - emax, 0)
    elif mode == "rceil":
        inv = np.float32(1.0) / np.float32(max_pos)
        with np.errstate(over="ignore", invalid="ignore"):
            d = (amax * inv).astype(np.float32)
        db = d.view(np.uint32).astype(np.int64)
        de, dm = (db >> 23) & 0xFF, db & 0x7FFFFF
        b = np.where(de == 0, (dm > 0x400000).astype(np.int64),
                     np.minimum(de + (dm != 0), 255))
    else:
        raise ValueError(f"unknown rounding mode {mode!r}")
    b = np.minimum(b, 255)
    finite = np.isfinite(amax)
    return np.where(finite, b, 255).astype(np.uint8)


def e8m0_reciprocal(b: np.ndarray) -> np.ndarray:
    """fp32 2^(127-b); b = 254 -> 2^-127, b = 255 -> NaN."""
    b = b.astype(np.int64)
    bits = np.where(b == 254, 0x00400000, (254 - b) << 23)
    bits = np.where(b == 255, 0x7FC00000, bits)
    return bits.astype(np.uint32).view(np.float32)


def e8m0_value(b: np.ndarray) -> np.ndarray:
    """fp32 2^(b-127); b = 0 -> 2^-127 (never zero), b = 255 -> NaN."""
    b = b.astype(np.int64)
    bits = np.where(b == 0, 0x00400000, b << 23)
    bits = np.where(b == 255, 0x7FC00000, bits)
    return bits.astype(np.uint32).view(np.float32)


def to_element(v: np.ndarray, elem: str) -> np.ndarray:
    """fp32 -> element code, round-to-nearest-even, saturating (satfinite)."""
    ebits, mbits, bias, max_pos, _, nan_code = FORMATS[elem]
    v = np.asarray(v, dtype=np.float32)
    nbits = 1 + ebits + mbits
    sign = np.signbit(v).astype(np.int64)
    mag = np.abs(v.astype(np.float64))
    nan = np.isnan(mag)
    mag = np.where(nan | np.isinf(mag), max_pos, mag)
    with np.errstate(divide="ignore"):
        _, e = np.frexp(mag)
    e = e.astype(np.int64) - 1
    e = np.maximum(e, 1 - bias)
    quantum = np.ldexp(1.0, e - mbits)
    q = np.minimum(np.rint(mag / quantum) * quantum, max_pos)
    min_normal = np.ldexp(1.0, 1 - bias)
    sub = q < min_normal
    sub_code = np.rint(q / np.ldexp(1.0, 1 - bias - mbits)).astype(np.int64)
    fr, ee = np.frexp(np.where(sub, 1.0, q))
    ee = ee.astype(np.int64) - 1
    mant = np.rint((fr * 2.0 - 1.0) * (1 << mbits)).astype(np.int64)
    norm_code = ((ee + bias) << mbits) | mant
    code = np.where(sub, sub_code, norm_code) | (sign << (nbits - 1))
    if nan_code is not None:
        code = np.where(nan, nan_code, code)
    else:
        code = np.where(nan, 0, code)
    return code.astype(np.uint8)


def element_value(code: np.ndarray, elem: str) -> np.ndarray:
    """element code -> fp32 value (exact)."""
    ebits, mbits, bias, _, _, _ = FORMATS[elem]
    c = code.astype(np.int64)
    nbits = 1 + ebits + mbits
    sign = np.where((c >> (nbits - 1)) & 1, -1.0, 1.0)
    e = (c >> mbits) & ((1 << ebits) - 1)
    m = c & ((1 << mbits) - 1)
    val = np.where(e == 0, np.ldexp(m.astype(np.float64), 1 - bias - mbits),
                   np.ldexp(1.0 + m / (1 << mbits), e - bias))
    val = sign * val
    if elem == "f8E4M3FN":
        val = np.where((e == 15) & (m == 7), np.nan, val)
    if elem == "f8E5M2":
        val = np.where(e == 31, np.where(m == 0, sign * np.inf, np.nan), val)
    return val.astype(np.float32)


def quantize(x: np.ndarray, axis: int, elem: str = "f8E4M3FN",
             mode: str = "rceil"):
    """MX-quantize `x` (float32 values) along `axis`.

    Returns (data, scales): data uint8 codes with `axis` moved last;
    scales uint8 E8M0 bytes, data.shape[:-1] + (L // 32,), row-major.
    """
    xt = np.moveaxis(np.asarray(x, dtype=np.float32), axis, -1)
    if xt.shape[-1] % BLOCK:
        raise ValueError("quantized axis must be a multiple of 32")
    blocks = xt.reshape(xt.shape[:-1] + (xt.shape[-1] // BLOCK, BLOCK))
    nonfinite = ~np.isfinite(blocks).all(axis=-1)
    with np.errstate(invalid="ignore"):
        amax = np.abs(blocks).max(axis=-1)
    amax = np.where(nonfinite, np.float32(np.inf), amax).astype(np.float32)
    s = scale_bytes(amax, elem, mode)
    inv = e8m0_reciprocal(s)[..., None]
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = (blocks * inv).astype(np.float32)
    data = to_element(scaled, elem).reshape(xt.shape)
    return np.ascontiguousarray(data), s


def _amax_nan(blocks: np.ndarray, axes) -> np.ndarray:
    """fp32 amax over `axes`, +Inf where the block holds a NaN or an Inf
    (the scale is then 0xFF)."""
    nonfinite = ~np.isfinite(blocks).all(axis=axes)
    with np.errstate(invalid="ignore"):
        amax = np.abs(blocks).max(axis=axes)
    return np.where(nonfinite, np.float32(np.inf), amax).astype(np.float32)


def _quantize_blocks(xt: np.ndarray, s: np.ndarray, elem: str) -> np.ndarray:
    """Codes of xt [..., L] quantized with one scale byte per 1x32 block
    (s [..., L/32])."""
    blocks = xt.reshape(xt.shape[:-1] + (xt.shape[-1] // BLOCK, BLOCK))
    inv = e8m0_reciprocal(s)[..., None]
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = (blocks * inv).astype(np.float32)
    return np.ascontiguousarray(to_element(scaled, elem).reshape(xt.shape))


def quantize_tiled(x: np.ndarray, axis: int, tile=(1, 128),
                   elem: str = "f8E4M3FN", mode: str = "rceil"):
    """MX quantization with one scale per tile[0] x tile[1] tile (MX128:
    (1, 128) for activations, (128, 128) for weights; mxmoe.quantize's
    `scale_tile`).

    The data matrix is `x` with `axis` moved last, [..., R, L] (L a multiple
    of 32); tiles cover rows [i*r, (i+1)*r) and columns [j*c, (j+1)*c),
    partial at the tails, never crossing leading (expert) indices. Each
    tile's scale byte comes from the amax of the whole tile (NaN/Inf in the
    tile -> 0xFF); every element is quantized with its tile's scale.
    Returns (data, scales, compact): data codes [..., R, L]; MX scales
    [..., R, L/32] (each 1x32 slot holds its tile's byte); compact
    [..., ceil(R/r), ceil(L/c)] (one byte per tile).
    """
    r, c = tile
    if c % BLOCK or r < 1:
        raise ValueError("tile must be (r >= 1, c a multiple of 32)")
    xt = np.moveaxis(np.asarray(x, dtype=np.float32), axis, -1)
    *lead, R, L = xt.shape
    if L % BLOCK:
        raise ValueError("quantized axis must be a multiple of 32")
    tr, tc = -(-R // r), -(-L // c)
    pad = np.zeros(tuple(lead) + (tr * r, tc * c), dtype=np.float32)
    pad[..., :R, :L] = xt
    tiles = pad.reshape(tuple(lead) + (tr, r, tc, c))
    compact = scale_bytes(_amax_nan(tiles, (-3, -1)), elem, mode)
    rows = np.arange(R) // r
    cols = (np.arange(L // BLOCK) * BLOCK) // c
    s = compact[..., rows[:, None], cols[None, :]]
    return _quantize_blocks(xt, s, elem), np.ascontiguousarray(s), compact


def dequantize_compact(data: np.ndarray, compact: np.ndarray, axis: int,
                       tile=(1, 128), elem: str = "f8E4M3FN") -> np.ndarray:
    """mxmoe.dequantize of compact scales: each element times its tile's
    2^(b-127), with the last axis moved back to `axis`."""
    r, c = tile
    *_, R, L = data.shape
    s = compact[..., (np.arange(R) // r)[:, None],
                ((np.arange(L // BLOCK) * BLOCK) // c)[None, :]]
    return dequantize(data, s, axis, elem)


def dequantize(data: np.ndarray, scales: np.ndarray, axis: int,
               elem: str = "f8E4M3FN") -> np.ndarray:
    """x = q * 2^(b-127) in fp32, with the last axis moved back to `axis`."""
    vals = element_value(data, elem)
    blocks = vals.reshape(vals.shape[:-1] + (vals.shape[-1] // BLOCK, BLOCK))
    with np.errstate(over="ignore", invalid="ignore"):
        out = (blocks * e8m0_value(scales)[..., None]).astype(np.float32)
    return np.moveaxis(out.reshape(vals.shape), -1, axis)


def to_blocked(scales: np.ndarray) -> np.ndarray:
    """Row-major [.., R, C] scales -> blocked 128x4 bytes [.., Rp, Cp]
    (torchao to_blocked; padding bytes 0)."""
    *batch, r, c = scales.shape
    rp, cp = -(-r // 128) * 128, -(-c // 4) * 4
    padded = np.zeros(tuple(batch) + (rp, cp), dtype=np.uint8)
    padded[..., :r, :c] = scales
    rr, cc = np.meshgrid(np.arange(rp), np.arange(cp), indexing="ij")
    off = blocked_offset(rr, cc, cp)
    out = np.zeros(tuple(batch) + (rp * cp,), dtype=np.uint8)
    out[..., off.reshape(-1)] = padded.reshape(tuple(batch) + (rp * cp,))
    return out.reshape(tuple(batch) + (rp, cp))


def from_blocked(blocked: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Inverse of to_blocked: blocked [.., Rp, Cp] -> row-major [.., R, C]."""
    *batch, rp, cp = blocked.shape
    flat = blocked.reshape(tuple(batch) + (rp * cp,))
    rr, cc = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    return flat[..., blocked_offset(rr, cc, cp)]


def blocked_offset(r, c, cp: int):
    """Byte offset of scale (r, c) in the blocked layout with Cp columns."""
    r = np.asarray(r, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    return (((r // 128) * (cp // 4) + c // 4) * 512 + (r % 32) * 16
            + ((r % 128) // 32) * 4 + c % 4)


# ---------------------------------------------------------------------------
# Token groups (int32 *end* offsets; group g = [offs[g-1], offs[g]))
# ---------------------------------------------------------------------------

def padded_starts(offsets, divisor: int, round_to: int = 1) -> np.ndarray:
    """starts[g] = sum_{h<g} roundUp(ceil(size_h / divisor), round_to);
    G + 1 entries (the last is the total)."""
    offs = np.asarray(offsets, dtype=np.int64)
    sizes = np.diff(np.concatenate([[0], offs]))
    n = -(-sizes // divisor)
    n = -(-n // round_to) * round_to
    return np.concatenate([[0], np.cumsum(n)]).astype(np.int64)


def quantize_jagged(x: np.ndarray, offsets, padded_tokens: int,
                    elem: str = "f8E4M3FN", mode: str = "rceil"):
    """Columnwise (32x1) quantization of x [T, K] along tokens, restarting the
    32-blocks at every group start. Group g is stored at data column
    P_g = 32 * padded_starts(offsets, 32)[g], zero-padded; columns past the
    last group are zero. Returns data [K, Tp] codes and row-major scales
    [K, Tp/32] (0 for padding blocks)."""
    T, K = x.shape
    offs = np.asarray(offsets, dtype=np.int64)
    starts = padded_starts(offs, 32)
    xp = np.zeros((padded_tokens, K), dtype=np.float32)
    begin = 0
    for g, end in enumerate(offs):
        p = starts[g] * 32
        xp[p:p + end - begin] = x[begin:end]
        begin = end
    data, scales = quantize(xp, 0, elem, mode)
    # Padding blocks past the last group carry scale 0 (all-zero blocks
    # already give 0 with every rounding mode).
    return data, scales


def quantize_jagged_windows(x: np.ndarray, offsets, padded_tokens: int,
                            window: int = 128, elem: str = "f8E4M3FN",
                            mode: str = "rceil", padded_windows: int = None):
    """Columnwise quantization of x [T, K] along tokens with one scale per
    `window` tokens (MX128's 128x1 weight-gradient operands), the windows
    restarting at every group start. The data layout is quantize_jagged's
    (group g at column P_g = 32 * padded_starts(offsets, 32)[g],
    zero-padded to 32); window w of group g covers columns
    [P_g + w*window, P_g + min((w+1)*window, roundUp(m_g, 32))).
    Returns (data [K, Tp], MX scales [K, Tp/32] (each 1x32 slot holds its
    window's byte, 0 past the groups), compact [K, Wp]: window w of group g
    at column W_g + w, W = padded_starts(offsets, window); Wp defaults to
    floor((T + (window-1)*G) / window), columns past the groups 0)."""
    T, K = x.shape
    offs = np.asarray(offsets, dtype=np.int64)
    G = len(offs)
    starts = padded_starts(offs, 32)
    wstart = padded_starts(offs, window)
    if padded_windows is None:
        padded_windows = (T + (window - 1) * G) // window
    xp = np.zeros((padded_tokens, K), dtype=np.float32)
    scales = np.zeros((K, padded_tokens // BLOCK), dtype=np.uint8)
    compact = np.zeros((K, padded_windows), dtype=np.uint8)
    begin = 0
    for g, end in enumerate(offs):
        p = starts[g] * 32
        xp[p:p + end - begin] = x[begin:end]
        glen = (starts[g + 1] - starts[g]) * 32
        for w in range(wstart[g + 1] - wstart[g]):
            lo, hi = p + w * window, p + min((w + 1) * window, glen)
            b = scale_bytes(_amax_nan(xp[lo:hi].T, -1), elem, mode)
            scales[:, lo // BLOCK:hi // BLOCK] = b[:, None]
            compact[:, wstart[g] + w] = b
        begin = end
    data = _quantize_blocks(np.ascontiguousarray(xp.T), scales, elem)
    return data, scales, compact


def mx_to_tiled(data: np.ndarray, scales: np.ndarray, tile=(1, 128),
                elem: str = "f8E4M3FN"):
    """Converts MX (1x32) data [..., R, L] and row-major scales
    [..., R, L/32] to one scale per tile (exponent shifts): the tile's
    byte is the largest of its 1x32 blocks' bytes S (0xFF if any is 0xFF;
    scale_bytes is monotone in amax, so S is what quantize_tiled gives for
    the original values), and each code q of a block with byte s becomes
    RNE(value(q) * 2^(s - S)), exact unless it falls into the element's
    subnormal range. Returns (data, MX scales, compact) as quantize_tiled."""
    r, c = tile
    *lead, R, L = data.shape
    tr, tc = -(-R // r), -(-L // c)
    bpt = c // BLOCK
    pad = np.zeros(tuple(lead) + (tr * r, tc * bpt), dtype=np.int64)
    pad[..., :R, :L // BLOCK] = scales
    compact = pad.reshape(tuple(lead) + (tr, r, tc, bpt)).max(axis=(-3, -1))
    compact = compact.astype(np.uint8)
    rows = np.arange(R) // r
    cols = np.arange(L // BLOCK) // bpt
    s_new = compact[..., rows[:, None], cols[None, :]]
    shift = s_new.astype(np.int64) - scales.astype(np.int64)
    vals = element_value(data, elem).astype(np.float64)
    vals = vals.reshape(vals.shape[:-1] + (L // BLOCK, BLOCK))
    shifted = np.ldexp(vals, -shift[..., None]).reshape(data.shape)
    out = to_element(shifted.astype(np.float32), elem)
    nan = np.repeat(s_new == 255, BLOCK, axis=-1)
    nan_code = FORMATS[elem][5] if FORMATS[elem][5] is not None else 0
    out = np.where(nan, nan_code, out).astype(np.uint8)
    return out, np.ascontiguousarray(s_new), compact


def to_blocked_m_groups(scales: np.ndarray, offsets, padded_rows: int) -> np.ndarray:
    """Row-major [M, C] scales -> M-grouped blocked [Mp, Cp]: group g's rows
    start at padded row 128 * padded_starts(offsets, 128)[g]."""
    M, C = scales.shape
    offs = np.asarray(offsets, dtype=np.int64)
    starts = padded_starts(offs, 128)
    mat = np.zeros((padded_rows, C), dtype=np.uint8)
    begin = 0
    for g, end in enumerate(offs):
        p = starts[g] * 128
        mat[p:p + end - begin] = scales[begin:end]
        begin = end
    return to_blocked(mat)


def from_blocked_m_groups(blocked: np.ndarray, offsets, rows: int, cols: int) -> np.ndarray:
    """Inverse of to_blocked_m_groups; rows past the last offset are 0."""
    mat = from_blocked(blocked, blocked.shape[0], cols)
    offs = np.asarray(offsets, dtype=np.int64)
    starts = padded_starts(offs, 128)
    out = np.zeros((rows, cols), dtype=np.uint8)
    begin = 0
    for g, end in enumerate(offs):
        p = starts[g] * 128
        out[begin:end] = mat[p:p + end - begin]
        begin = end
    return out


def to_blocked_k_groups(scales: np.ndarray, offsets, padded_cols: int) -> np.ndarray:
    """Row-major [R, Ct] scales whose token group g occupies columns
    [c_g, c_g + k_g) (c = padded_starts(offsets, 32), k_g = ceil(m_g/32))
    -> per-K-group blocked [Rp, Qp]: group g is to_blocked of its columns,
    stored at byte Q_g * Rp with Q = padded_starts(offsets, 32, 4)."""
    R, _ = scales.shape
    rp = -(-R // 128) * 128
    c = padded_starts(offsets, 32)
    q = padded_starts(offsets, 32, 4)
    out = np.zeros(rp * padded_cols, dtype=np.uint8)
    for g in range(len(offsets)):
        kg = c[g + 1] - c[g]
        if kg == 0:
            continue
        blk = to_blocked(scales[:, c[g]:c[g] + kg]).reshape(-1)
        out[q[g] * rp:q[g] * rp + blk.size] = blk
    return out.reshape(rp, padded_cols)


def from_blocked_k_groups(blocked: np.ndarray, offsets, rows: int, cols: int) -> np.ndarray:
    """Inverse of to_blocked_k_groups; columns past the groups are 0."""
    rp, _ = blocked.shape
    flat = blocked.reshape(-1)
    c = padded_starts(offsets, 32)
    q = padded_starts(offsets, 32, 4)
    out = np.zeros((rows, cols), dtype=np.uint8)
    for g in range(len(offsets)):
        kg = c[g + 1] - c[g]
        if kg == 0:
            continue
        kgp = q[g + 1] - q[g]
        region = flat[q[g] * rp:(q[g] + kgp) * rp].reshape(rp, kgp)
        out[:, c[g]:c[g] + kg] = from_blocked(region, rows, kg)
    return out


def pack_fp4(codes: np.ndarray) -> np.ndarray:
    """E2M1 codes [..., 2n] -> bytes [..., n]: element 2i in the low nibble."""
    c = codes.astype(np.uint8)
    return (c[..., 0::2] & 0xF) | ((c[..., 1::2] & 0xF) << 4)


def unpack_fp4(packed: np.ndarray) -> np.ndarray:
    out = np.empty(packed.shape[:-1] + (packed.shape[-1] * 2,), dtype=np.uint8)
    out[..., 0::2] = packed & 0xF
    out[..., 1::2] = packed >> 4
    return out
