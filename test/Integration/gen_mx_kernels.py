#!/usr/bin/env python3
"""Builds the quantize / dequantize / swizzle kernels the GPU test runs.

Runs on the build machine (needs build/bin/mxmoe-opt): writes one MLIR
module with every case, lowers it with `mxmoe-to-nvvm` for sm_90a and
sm_100a, checks both PTX files with ptxas when present, and writes
<out>/mx_kernels_<chip>.ptx plus <out>/cases.json (one entry per kernel:
op, shapes, dtypes, axis, rounding, layout, kernel name, grid, block).

Usage: gen_mx_kernels.py [--opt build/bin/mxmoe-opt] [--out DIR]
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from mxmoe.ptx import compile_to_ptx  # noqa: E402

ELEMS = ["f8E4M3FN", "f8E5M2"]
MODES = ["floor", "rceil", "ceil", "even"]
HP = ["bf16", "f32"]
# (input shape, axis): rowwise with K = 2880 (90 scale columns, not a
# multiple of 4) and M = 200 (not a multiple of 128); columnwise 2-D;
# 3-D per-expert weights along K and along N.
GEOMS = [((200, 2880), 1), ((320, 96), 0), ((3, 160, 64), 2),
         ((3, 64, 96), 1), ((256, 1408), 1)]


def shape_str(shape, elem, enc=""):
    return "tensor<" + "x".join(map(str, shape)) + "x" + elem + enc + ">"


def data_shape(shape, axis):
    s = list(shape)
    ax = s.pop(axis)
    return s + [ax]


def scale_shape(dshape, blocked):
    s = list(dshape)
    s[-1] //= 32
    if blocked:
        s[-2] = -(-s[-2] // 128) * 128
        s[-1] = -(-s[-1] // 4) * 4
    return s


BLOCKED = ", #mxmoe.scale_layout<blocked_128x4>"


def build_cases():
    cases, funcs = [], []
    n = 0

    def add_quantize(shape, axis, elem, hp, mode, blocked):
        nonlocal n
        ds = data_shape(shape, axis)
        ss = scale_shape(ds, blocked)
        enc = BLOCKED if blocked else ""
        name = f"case{n}"
        funcs.append(
            f"func.func @{name}(%x: {shape_str(shape, hp)}) {{\n"
            f"  %q, %s = mxmoe.quantize %x {{axis = {axis} : i64, rounding = #mxmoe.rounding<{mode}>}}"
            f" : {shape_str(shape, hp)} -> {shape_str(ds, elem)}, {shape_str(ss, 'f8E8M0FNU', enc)}\n"
            f"  return\n}}")
        cases.append(dict(op="quantize", kernel=f"{name}__quantize_0", shape=list(shape),
                          axis=axis, elem=elem, hp=hp, mode=mode, blocked=blocked,
                          data_shape=ds, scale_shape=ss))
        n += 1

    def add_dequantize(shape, axis, elem, hp, blocked):
        nonlocal n
        ds = data_shape(shape, axis)
        ss = scale_shape(ds, blocked)
        enc = BLOCKED if blocked else ""
        name = f"case{n}"
        funcs.append(
            f"func.func @{name}(%q: {shape_str(ds, elem)}, %s: {shape_str(ss, 'f8E8M0FNU', enc)}) {{\n"
            f"  %x = mxmoe.dequantize %q, %s {{axis = {axis} : i64}}"
            f" : {shape_str(ds, elem)}, {shape_str(ss, 'f8E8M0FNU', enc)} -> {shape_str(shape, hp)}\n"
            f"  return\n}}")
        cases.append(dict(op="dequantize", kernel=f"{name}__dequantize_0", shape=list(shape),
                          axis=axis, elem=elem, hp=hp, blocked=blocked, data_shape=ds,
                          scale_shape=ss))
        n += 1

    # FP8: every geometry x element x input dtype x layout x rounding mode,
    # each followed by the dequantization back to the input dtype.
    for shape, axis in GEOMS:
        for elem in ELEMS:
            for hp in HP:
                for blocked in (False, True):
                    for mode in MODES:
                        add_quantize(shape, axis, elem, hp, mode, blocked)
                    add_dequantize(shape, axis, elem, hp, blocked)
    # MXFP4 (E2M1, two codes per byte): rowwise, columnwise, 3-D.
    for shape, axis in GEOMS:
        for blocked in (False, True):
            for fhp, mode in itertools.product(HP, MODES):
                add_quantize(shape, axis, "f4E2M1FN", fhp, mode, blocked)
            add_dequantize(shape, axis, "f4E2M1FN", "f32", blocked)

    # Token groups. Offsets are drawn on the device (skewed, empty groups,
    # last offset < T); the static shapes use the always-fitting bounds.
    def bound(total, groups, mult):
        return (total + (mult - 1) * groups) // mult * mult
    # K = 36: not a multiple of the 16-byte load (the one-thread-per-block
    # kernel instead of the chunked one of QuantizeJagged.cpp).
    for T, K, G in ((300, 96, 1), (300, 96, 5), (1000, 64, 40), (75, 32, 3), (300, 36, 5)):
        Tp = bound(T, G, 32)
        Qp = -(-(Tp // 32 + 3 * G) // 4) * 4
        Kp = -(-K // 128) * 128
        for elem in ("f8E4M3FN", "f4E2M1FN") if G == 5 else ("f8E4M3FN",):
            for blocked in (False, True):
                ss = [Kp, Qp] if blocked else [K, Tp // 32]
                enc = ", #mxmoe.scale_layout<blocked_128x4, per_k_group>" if blocked else ""
                name = f"case{n}"
                funcs.append(
                    f"func.func @{name}(%x: {shape_str([T, K], 'bf16')}, %o: tensor<{G}xi32>) {{\n"
                    f"  %q, %s = mxmoe.quantize %x offsets(%o : tensor<{G}xi32>) {{axis = 0 : i64}}"
                    f" : {shape_str([T, K], 'bf16')} -> {shape_str([K, Tp], elem)}, {shape_str(ss, 'f8E8M0FNU', enc)}\n"
                    f"  %y = mxmoe.dequantize %q, %s offsets(%o : tensor<{G}xi32>) {{axis = 0 : i64}}"
                    f" : {shape_str([K, Tp], elem)}, {shape_str(ss, 'f8E8M0FNU', enc)} -> {shape_str([T, K], 'f32')}\n"
                    f"  return\n}}")
                cases.append(dict(op="quantize_jagged", kernel=f"{name}__quantize_0", dq_kernel=f"{name}__dequantize_1",
                                  T=T, K=K, G=G, Tp=Tp, elem=elem, blocked=blocked, scale_shape=ss))
                n += 1
                if blocked:
                    name = f"case{n}"
                    rm = [K, Tp // 32]
                    funcs.append(
                        f"func.func @{name}(%s: {shape_str(rm, 'f8E8M0FNU')}, %o: tensor<{G}xi32>) {{\n"
                        f"  %b = mxmoe.swizzle_scales %s offsets(%o : tensor<{G}xi32>) : {shape_str(rm, 'f8E8M0FNU')} -> {shape_str(ss, 'f8E8M0FNU', enc)}\n"
                        f"  %u = mxmoe.swizzle_scales %b offsets(%o : tensor<{G}xi32>) : {shape_str(ss, 'f8E8M0FNU', enc)} -> {shape_str(rm, 'f8E8M0FNU')}\n"
                        f"  return\n}}")
                    cases.append(dict(op="swizzle_k_groups", kernel=f"{name}__swizzle_scales_0",
                                      back_kernel=f"{name}__swizzle_scales_1", T=T, G=G, row_major=rm,
                                      blocked_shape=ss))
                    n += 1
    for M, K, G in ((300, 2880, 3), (300, 2880, 40), (1000, 128, 64), (64, 32, 1)):
        Mp = bound(M, G, 128)
        C = K // 32
        Cp = -(-C // 4) * 4
        name = f"case{n}"
        enc = BLOCKED
        funcs.append(
            f"func.func @{name}(%x: {shape_str([M, K], 'bf16')}, %o: tensor<{G}xi32>) {{\n"
            f"  %q, %s = mxmoe.quantize %x offsets(%o : tensor<{G}xi32>) {{axis = 1 : i64}}"
            f" : {shape_str([M, K], 'bf16')} -> {shape_str([M, K], 'f8E4M3FN')}, {shape_str([Mp, Cp], 'f8E8M0FNU', enc)}\n"
            f"  %y = mxmoe.dequantize %q, %s offsets(%o : tensor<{G}xi32>) {{axis = 1 : i64}}"
            f" : {shape_str([M, K], 'f8E4M3FN')}, {shape_str([Mp, Cp], 'f8E8M0FNU', enc)} -> {shape_str([M, K], 'bf16')}\n"
            f"  %r, %rs = mxmoe.quantize %x {{axis = 1 : i64}}"
            f" : {shape_str([M, K], 'bf16')} -> {shape_str([M, K], 'f8E4M3FN')}, {shape_str([M, C], 'f8E8M0FNU')}\n"
            f"  %b = mxmoe.swizzle_scales %rs offsets(%o : tensor<{G}xi32>) : {shape_str([M, C], 'f8E8M0FNU')} -> {shape_str([Mp, Cp], 'f8E8M0FNU', enc)}\n"
            f"  %u = mxmoe.swizzle_scales %b offsets(%o : tensor<{G}xi32>) : {shape_str([Mp, Cp], 'f8E8M0FNU', enc)} -> {shape_str([M, C], 'f8E8M0FNU')}\n"
            f"  return\n}}")
        cases.append(dict(op="quantize_m_groups", kernel=f"{name}__quantize_0", dq_kernel=f"{name}__dequantize_1",
                          sw_kernel=f"{name}__swizzle_scales_3", back_kernel=f"{name}__swizzle_scales_4",
                          M=M, K=K, G=G, Mp=Mp, Cp=Cp))
        n += 1

    for rm in ([200, 90], [96, 10], [3, 160, 2], [256, 44], [1, 1]):
        bl = scale_shape(rm[:-1] + [rm[-1] * 32], True)
        for to_blocked in (True, False):
            src, dst = (rm, bl) if to_blocked else (bl, rm)
            senc, denc = ("", BLOCKED) if to_blocked else (BLOCKED, "")
            name = f"case{n}"
            funcs.append(
                f"func.func @{name}(%s: {shape_str(src, 'f8E8M0FNU', senc)}) {{\n"
                f"  %b = mxmoe.swizzle_scales %s : {shape_str(src, 'f8E8M0FNU', senc)} -> {shape_str(dst, 'f8E8M0FNU', denc)}\n"
                f"  return\n}}")
            cases.append(dict(op="swizzle", kernel=f"{name}__swizzle_scales_0", row_major=rm,
                              blocked_shape=bl, to_blocked=to_blocked))
            n += 1
    n = add_tile_cases(funcs, cases, n)
    n = add_quantize_weight_cases(funcs, cases, n)
    n = add_requantize_cases(funcs, cases, n)
    return cases, "\n".join(funcs) + "\n"


# MX128 (mxmoe.quantize scale_tile): (input shape, axis, tile). Rowwise with
# K = 2880 (22.5 x 128: a 64-wide last tile) and M = 200; 64-wide tiles;
# columnwise without groups; 3-D expert weights along K and along N (the
# input gradient's weight), a 2-D weight, and a [128, 64] tile.
TILE_GEOMS = [((200, 2880), 1, (1, 128)), ((256, 1408), 1, (1, 128)),
              ((160, 96), 1, (1, 64)), ((320, 96), 0, (1, 128)),
              ((3, 200, 2880), 2, (128, 128)), ((3, 256, 192), 1, (128, 128)),
              ((200, 320), 1, (128, 128)), ((2, 200, 256), 2, (128, 64)),
              # Staged along-N tiles (QuantizeTiles2D.cpp) with partial tiles
              # in both directions, 3-D and 2-D.
              ((2, 160, 136), 1, (128, 128)), ((288, 200), 0, (128, 128))]
TILE_RECIPES = [("f8E4M3FN", "bf16", "rceil"), ("f8E4M3FN", "bf16", "floor"),
                ("f8E5M2", "f32", "rceil"), ("f8E4M3FN", "f32", "even")]


def compact_shape(dshape, tile):
    s = list(dshape)
    s[-2] = -(-s[-2] // tile[0])
    s[-1] = -(-s[-1] // tile[1])
    return s


def compact_enc(tile, per_k_group=False):
    pk = ", per_k_group" if per_k_group else ""
    return f", #mxmoe.scale_layout<compact, tile = [{tile[0]}, {tile[1]}]{pk}>"


def add_tile_cases(funcs, cases, n):
    """Quantize (and, for compact scales, dequantize) with scale tiles:
    row-major MX, blocked and compact scales; M-grouped and jagged token
    groups (128-token windows restarting per group)."""
    for shape, axis, tile in TILE_GEOMS:
        ds = data_shape(shape, axis)
        layouts = ["rowmajor", "compact"]
        if tile[0] == 1 or tile == (128, 128):
            layouts.insert(1, "blocked")
        for layout in layouts:
            if layout == "compact":
                ss, enc = compact_shape(ds, tile), compact_enc(tile)
            else:
                ss, enc = scale_shape(ds, layout == "blocked"), BLOCKED if layout == "blocked" else ""
            for elem, hp, mode in TILE_RECIPES:
                name = f"case{n}"
                st = shape_str(ss, "f8E8M0FNU", enc)
                body = (f"  %q, %s = mxmoe.quantize %x {{axis = {axis} : i64, rounding = #mxmoe.rounding<{mode}>,"
                        f" scale_tile = array<i64: {tile[0]}, {tile[1]}>}}"
                        f" : {shape_str(shape, hp)} -> {shape_str(ds, elem)}, {st}\n")
                case = dict(op="quantize_tiled", kernel=f"{name}__quantize_0", shape=list(shape), axis=axis,
                            tile=list(tile), elem=elem, hp=hp, mode=mode, layout=layout, data_shape=ds,
                            scale_shape=ss)
                if layout == "compact":
                    body += (f"  %y = mxmoe.dequantize %q, %s {{axis = {axis} : i64}}"
                             f" : {shape_str(ds, elem)}, {st} -> {shape_str(shape, 'f32')}\n")
                    case["dq_kernel"] = f"{name}__dequantize_1"
                funcs.append(f"func.func @{name}(%x: {shape_str(shape, hp)}) {{\n{body}  return\n}}")
                cases.append(case)
                n += 1

    def bound(total, groups, mult):
        return (total + (mult - 1) * groups) // mult * mult
    # M-grouped rowwise 1x128 (blocked scales, each group padded to 128 rows).
    for M, K, G in ((300, 2880, 3), (1000, 128, 64), (64, 256, 1)):
        Mp, Cp = bound(M, G, 128), -(-(K // 32) // 4) * 4
        name = f"case{n}"
        st = shape_str([Mp, Cp], "f8E8M0FNU", BLOCKED)
        funcs.append(
            f"func.func @{name}(%x: {shape_str([M, K], 'bf16')}, %o: tensor<{G}xi32>) {{\n"
            f"  %q, %s = mxmoe.quantize %x offsets(%o : tensor<{G}xi32>) {{axis = 1 : i64, scale_tile = array<i64: 1, 128>}}"
            f" : {shape_str([M, K], 'bf16')} -> {shape_str([M, K], 'f8E4M3FN')}, {st}\n  return\n}}")
        cases.append(dict(op="quantize_tiled_m_groups", kernel=f"{name}__quantize_0", M=M, K=K, G=G,
                          Mp=Mp, Cp=Cp, tile=[1, 128]))
        n += 1
    # Jagged token axis, 1 x c windows restarting at every group start.
    for T, K, G, c in ((300, 96, 5, 128), (1000, 64, 40, 128), (75, 32, 3, 128),
                       (129, 64, 1, 128), (300, 96, 5, 64), (300, 20, 5, 128)):
        Tp = bound(T, G, 32)
        Qp = -(-(Tp // 32 + 3 * G) // 4) * 4
        Kp = -(-K // 128) * 128
        Wp = (T + (c - 1) * G) // c
        for layout in ("rowmajor", "blocked", "compact"):
            if layout == "compact":
                ss, enc = [K, Wp], compact_enc((1, c), per_k_group=True)
            elif layout == "blocked":
                ss, enc = [Kp, Qp], ", #mxmoe.scale_layout<blocked_128x4, per_k_group>"
            else:
                ss, enc = [K, Tp // 32], ""
            st = shape_str(ss, "f8E8M0FNU", enc)
            name = f"case{n}"
            body = (f"  %q, %s = mxmoe.quantize %x offsets(%o : tensor<{G}xi32>) {{axis = 0 : i64,"
                    f" scale_tile = array<i64: 1, {c}>}}"
                    f" : {shape_str([T, K], 'bf16')} -> {shape_str([K, Tp], 'f8E4M3FN')}, {st}\n")
            case = dict(op="quantize_windows", kernel=f"{name}__quantize_0", T=T, K=K, G=G, Tp=Tp, window=c,
                        layout=layout, scale_shape=ss, Wp=Wp, Qp=Qp)
            if layout == "compact":
                body += (f"  %y = mxmoe.dequantize %q, %s offsets(%o : tensor<{G}xi32>) {{axis = 0 : i64}}"
                         f" : {shape_str([K, Tp], 'f8E4M3FN')}, {st} -> {shape_str([T, K], 'f32')}\n")
                case["dq_kernel"] = f"{name}__dequantize_1"
            funcs.append(f"func.func @{name}(%x: {shape_str([T, K], 'bf16')}, %o: tensor<{G}xi32>) {{\n"
                         f"{body}  return\n}}")
            cases.append(case)
            n += 1
    return n


# mxmoe.quantize_weight (one kernel, both orientations): input shapes with
# partial 128x128 tiles (N = 224, K = 2880; N = 160, K = 288; a 2-D
# weight), each pair of scale layouts the pipeline or a user may ask for.
QW_GEOMS = [(3, 224, 2880), (2, 160, 288), (288, 192)]
QW_LAYOUTS = [("blocked", "blocked"), ("rowmajor", "rowmajor"),
              ("compact", "compact"), ("rowmajor", "blocked")]
QW_RECIPES = [("f8E4M3FN", "bf16", "rceil"), ("f8E4M3FN", "bf16", "floor"),
              ("f8E5M2", "bf16", "rceil")]


def add_quantize_weight_cases(funcs, cases, n):
    """quantize_weight: the forward data/scales and the transposed ones,
    each checked against reference.quantize_tiled along its own axis."""
    tile = (128, 128)

    def scales_of(ds, layout):
        if layout == "compact":
            return compact_shape(ds, tile), compact_enc(tile)
        return scale_shape(ds, layout == "blocked"), BLOCKED if layout == "blocked" else ""

    for shape in QW_GEOMS:
        rank = len(shape)
        fwd_ds = list(shape)
        t_ds = data_shape(shape, rank - 2)
        for fl, tl in QW_LAYOUTS:
            fss, fenc = scales_of(fwd_ds, fl)
            tss, tenc = scales_of(t_ds, tl)
            for elem, hp, mode in QW_RECIPES:
                name = f"case{n}"
                body = (f"  %q, %s, %qt, %st = mxmoe.quantize_weight %x {{rounding = #mxmoe.rounding<{mode}>,"
                        f" scale_tile = array<i64: 128, 128>}} : {shape_str(shape, hp)} ->"
                        f" {shape_str(fwd_ds, elem)}, {shape_str(fss, 'f8E8M0FNU', fenc)},"
                        f" {shape_str(t_ds, elem)}, {shape_str(tss, 'f8E8M0FNU', tenc)}\n")
                funcs.append(f"func.func @{name}(%x: {shape_str(shape, hp)}) {{\n{body}  return\n}}")
                cases.append(dict(op="quantize_weight", kernel=f"{name}__quantize_weight_0", shape=list(shape),
                                  elem=elem, hp=hp, mode=mode, layout=f"{fl}/{tl}", fwd_layout=fl, t_layout=tl,
                                  data_shape=fwd_ds, scale_shape=fss, t_data_shape=t_ds, t_scale_shape=tss,
                                  tile=[128, 128]))
                n += 1
    return n


# mxmoe.requantize (MX 1x32 -> scale tiles): data shape and tile; partial
# tiles at the tails (N = 224, K = 2880; 200 rows; 300 rows of 32-row
# tiles).
REQ_GEOMS = [((3, 224, 2880), (128, 128)), ((2, 160, 256), (64, 64)),
             ((200, 2880), (1, 128)), ((300, 320), (32, 128))]


def add_requantize_cases(funcs, cases, n):
    """requantize: row-major (tile recorded) and compact tiled scales,
    e4m3 and e5m2, against reference.mx_to_tiled."""
    for shape, tile in REQ_GEOMS:
        ss = scale_shape(list(shape), False)
        for layout in ("rowmajor", "compact"):
            if layout == "compact":
                ts, enc = compact_shape(list(shape), tile), compact_enc(tile)
            else:
                ts, enc = ss, f", #mxmoe.scale_layout<row_major, tile = [{tile[0]}, {tile[1]}]>"
            for elem in ("f8E4M3FN", "f8E5M2"):
                name = f"case{n}"
                body = (f"  %q2, %s2 = mxmoe.requantize %q, %s {{scale_tile = array<i64: {tile[0]}, {tile[1]}>}}"
                        f" : {shape_str(shape, elem)}, {shape_str(ss, 'f8E8M0FNU')} ->"
                        f" {shape_str(shape, elem)}, {shape_str(ts, 'f8E8M0FNU', enc)}\n")
                funcs.append(f"func.func @{name}(%q: {shape_str(shape, elem)}, %s: {shape_str(ss, 'f8E8M0FNU')})"
                             f" {{\n{body}  return\n}}")
                cases.append(dict(op="requantize", kernel=f"{name}__requantize_0", shape=list(shape),
                                  elem=elem, tile=list(tile), layout=layout, scale_shape=ss, tiled_scale_shape=ts))
                n += 1
    return n


def main():
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    ap = argparse.ArgumentParser()
    ap.add_argument("--opt", default=os.path.join(root, "build", "bin", "mxmoe-opt"))
    ap.add_argument("--out", default=os.path.join(root, ".device", "mx"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cases, module = build_cases()
    with open(os.path.join(args.out, "mx_kernels.mlir"), "w") as f:
        f.write(module)
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    for chip in ("sm_90a", "sm_100a"):
        ptx, kernels = compile_to_ptx(module, args.opt, chip)
        path = os.path.join(args.out, f"mx_kernels_{chip}.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        missing = [c[k] for c in cases for k in ("kernel", "dq_kernel", "sw_kernel", "back_kernel")
                   if k in c and c[k] not in kernels]
        if missing:
            sys.exit(f"kernels missing from the lowering: {missing[:5]}")
        for c in cases:
            c["launch"] = {k: kernels[c[k]] for k in ("kernel", "dq_kernel", "sw_kernel", "back_kernel") if k in c}
        if os.path.exists(ptxas):
            subprocess.run([ptxas, f"-arch={chip}", path, "-o", path + ".cubin"], check=True)
            print(f"{chip}: {len(kernels)} kernels, ptxas OK")
        else:
            print(f"{chip}: {len(kernels)} kernels (ptxas not found, not assembled)")
    with open(os.path.join(args.out, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)
    print(f"{len(cases)} cases -> {args.out}")


if __name__ == "__main__":
    main()
