#!/usr/bin/env python3
"""Whole-model compile time of mxmoe-compile (CPU only, no GPU needed).

For each model (Qwen3-30B-A3B, Llama 4 Scout, DeepSeek-V3: the MoE layer of
`mxmoe.builders`, repeated N times with fqns `layers.<i>.*`,
`mxmoe.builders.model_ir`) and each layer count N, this compiles the model
for both chips with ptxas and measures:

  wall       seconds of `mxmoe-compile --chip CHIPS --toolkit TK` (chips on
             parallel threads, the default): the fastest of --repeat runs,
             which go round the layer counts (1, 8, 48, 61, 1, 8, ...) so
             that a busy spell of the shared machine falls on all of them;
  CPU        user + system seconds of that process and the ptxas it ran
             (less disturbed by another job than wall time), the least;
  rss        peak resident memory (os.wait4: the largest of mxmoe-compile
             and the ptxas it ran), MiB;
  per layer  (t(N) - t(1)) / (N - 1) / t(1), of wall and of CPU time: what
             one added layer costs as a fraction of the one-layer compile
             (this machine is shared and noisy, a ratio travels better than
             seconds);
  kernels    distinct kernels per chip in the manifest, and the ops they
             serve (`uses`);
  other      how many of the 2 cores other jobs kept busy on average during
             the fastest run (/proc/stat busy time minus this compile's
             CPU time; the machine is shared: near 0 the run had it alone);
  stages     --timing-repeat `--timing` runs (chips one after the other):
             the seconds of every stage and pass of the timing tree (parse,
             model passes, per chip kernel passes, manifest rows, PTX passes,
             ptxas, manifest, output files), summed over the chips, each
             stage's fastest.

Prints a markdown table per measurement kind and appends one JSON row per
measurement to --jsonl (what, shape, impl, metric, value, unit, device,
date, command).

Usage: python3 bench/compile_time_bench.py [--build build] [--layers 1,8,48,61]
           [--models qwen3_30b_a3b,llama4_scout,deepseek_v3] [--repeat 3]
           [--timing-repeat 2] [--no-timing] [--label TEXT]
           [--jsonl bench/results/compile_time_<date>.jsonl]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from mxmoe import builders  # noqa: E402

# One line of the timing tree: "    0.0123 (  0.9%)    Canonicalizer".
TIMING_LINE = re.compile(r"^\s*([0-9.]+) \(\s*[0-9.]+%\)  ( *)(\S.*?)\s*$")


def busy_cpu_seconds() -> float:
    """CPU seconds the whole machine has been busy (/proc/stat: user, nice,
    system, irq, softirq, steal), for what other jobs used during a run."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:9]]
    user, nice, system, _, _, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def run(argv: List[str]) -> Tuple[float, float, float, str, float]:
    """Runs `argv`; returns (wall s, CPU s (user + system, with the ptxas
    it ran), peak RSS MiB, stderr text, cores other jobs kept busy on
    average meanwhile)."""
    with tempfile.TemporaryFile() as err:
        busy = busy_cpu_seconds()
        start = time.perf_counter()
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - start
        busy = busy_cpu_seconds() - busy
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode(errors="replace")
    if p.returncode != 0:
        sys.exit(f"compile_time_bench: {shlex.join(argv)} failed "
                 f"({p.returncode}):\n{text}")
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 1024.0, text, max(0.0, busy - cpu) / wall


def parse_timing(text: str, chips: List[str]) -> Dict[str, float]:
    """Seconds per stage of a --timing tree, keyed by its path below the
    root with chip names dropped (so both chips' passes are summed):
    "parse", "kernel passes/MXMoEDedupeKernels", ..."""
    stages: Dict[str, float] = {}
    path: List[str] = []
    for line in text.splitlines():
        m = TIMING_LINE.match(line)
        if not m or m.group(3) == "Total":
            continue
        depth = len(m.group(2)) // 2
        path[depth:] = [m.group(3)]
        key = "/".join(p for p in path if p not in chips)
        if key:  # (a chip's own line: its stages are summed instead)
            stages[key] = stages.get(key, 0.0) + float(m.group(1))
    return stages


def compile_once(args: argparse.Namespace, ir: str, out: str,
                 timing: bool) -> Tuple[float, float, float, str, float]:
    """One `mxmoe-compile` of `ir` into `out` (see `run`)."""
    argv = [os.path.join(args.build, "bin", "mxmoe-compile"), ir, "--chip",
            args.chips, "--toolkit", args.toolkit, "-o", out]
    return run(argv + (["--timing"] if timing else []))


def kernel_counts(out: str, chips: List[str]) -> Tuple[int, int]:
    """(distinct kernels per chip, ops served per chip) of a manifest."""
    with open(os.path.join(out, "manifest.json")) as f:
        kernels = json.load(f)["kernels"]
    return (len(kernels) // len(chips),
            sum(len(k.get("uses", [])) for k in kernels) // len(chips))


def measure_model(args: argparse.Namespace, model: str, layers: List[int],
                  work: str) -> List[dict]:
    """One row per layer count. The repeats go round the layer counts (1, 8,
    48, 61, 1, 8, ...) so that a busy spell of the shared machine falls on
    all of them; each row keeps the fastest run (the least disturbed)."""
    chips = args.chips.split(",")
    rows = []
    for n in layers:
        ir = os.path.join(work, f"{model}_{n}.mlir")
        with open(ir, "w") as f:
            f.write(builders.model_ir(builders.CONFIGS[model], args.tokens, n))
        rows.append({"model": model, "layers": n, "ir": ir, "runs": [],
                     "out": os.path.join(work, f"{model}_{n}.out"),
                     "stages": {}, "timing_wall": None})
    for _ in range(args.repeat):
        for r in rows:
            wall, cpu, rss, _, other = compile_once(args, r["ir"], r["out"],
                                                    False)
            r["runs"].append((wall, cpu, rss, other))
    for r in rows:
        r["kernels"], r["uses"] = kernel_counts(r["out"], chips)
        fastest = min(r["runs"])
        r["wall"], r["other"] = fastest[0], fastest[3]
        r["cpu"] = min(x[1] for x in r["runs"])
        r["rss"] = max(x[2] for x in r["runs"])
        for _ in range(0 if args.no_timing else args.timing_repeat):
            wall, _, _, text, _ = compile_once(args, r["ir"], r["out"], True)
            r["timing_wall"] = min(wall, r["timing_wall"] or wall)
            for k, v in parse_timing(text, chips).items():
                r["stages"][k] = min(v, r["stages"].get(k, v))
        print(f"# {model} x {r['layers']}: {r['wall']:.2f} s, "
              f"{r['rss']:.0f} MiB", file=sys.stderr)
    return rows


def per_layer(rows: List[dict], r: dict, key: str) -> str:
    """(t(N) - t(1)) / (N - 1) / t(1) of `key` (wall or cpu), in %."""
    one = next((x for x in rows if x["model"] == r["model"] and
                x["layers"] == 1), None)
    if one is None or r["layers"] == 1:
        return "-"
    return f"{100 * (r[key] - one[key]) / (r['layers'] - 1) / one[key]:.2f} %"


def print_tables(rows: List[dict], chips: str, repeat: int) -> None:
    print(f"| model | layers | wall ({chips}, ptxas) | CPU | added layer / "
          f"1 layer (wall) | added layer / 1 layer (CPU) | peak RSS | kernels "
          f"per chip | ops served per chip | other jobs (cores busy, fastest "
          f"of {repeat} runs) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['layers']} | {r['wall']:.2f} s | "
              f"{r['cpu']:.2f} s | {per_layer(rows, r, 'wall')} | "
              f"{per_layer(rows, r, 'cpu')} | {r['rss']:.0f} MiB | "
              f"{r['kernels']} | {r['uses']} | "
              f"{r['other']:.2f} |")
    for model in dict.fromkeys(r["model"] for r in rows):
        mrows = [r for r in rows if r["model"] == model]
        keys = list(dict.fromkeys(k for r in mrows for k in r["stages"]))
        if not keys:
            continue
        print(f"\n{model}, --timing (s, both chips summed):\n")
        print("| stage | " + " | ".join(f"{r['layers']} layers" for r in mrows)
              + " |")
        print("|---|" + "---|" * len(mrows))
        for k in keys:
            print(f"| {k} | " + " | ".join(
                f"{r['stages'].get(k, 0.0):.3f}" for r in mrows) + " |")
        print("| (timing run wall) | " + " | ".join(
            f"{r['timing_wall']:.3f}" for r in mrows) + " |")


def jsonl_rows(rows: List[dict], args: argparse.Namespace,
               command: str) -> List[dict]:
    """The rows of bench/results/*.jsonl: one per measurement of a row."""
    date = datetime.date.today().isoformat()
    out = []
    for r in rows:
        base = {"what": "whole-model compile", "build": args.label,
                "shape": f"{r['model']} x {r['layers']} layers",
                "model": r["model"], "layers": r["layers"], "tokens": args.tokens,
                "impl": f"mxmoe-compile --chip {args.chips} (ptxas)",
                "device": "build machine (2 CPU cores, shared)", "date": date,
                "command": command}
        for metric, value, unit in (
                ("wall", round(r["wall"], 3), "s"),
                ("wall_runs", [round(x[0], 3) for x in r["runs"]], "s"),
                ("cpu", round(r["cpu"], 3), "s"),
                ("peak_rss", round(r["rss"], 1), "MiB"),
                ("kernels_per_chip", r["kernels"], "kernels"),
                ("ops_served_per_chip", r["uses"], "ops"),
                ("other_jobs_cores", [round(x[3], 2) for x in r["runs"]],
                 "cores")):
            out.append(dict(base, metric=metric, value=value, unit=unit))
        if r["stages"]:
            out.append(dict(base, metric="stages", unit="s",
                            value={k: round(v, 4) for k, v in r["stages"].items()}))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models", default="qwen3_30b_a3b,llama4_scout,deepseek_v3")
    ap.add_argument("--layers", default="1,8,48,61")
    ap.add_argument("--tokens", type=int, default=8192)
    ap.add_argument("--chips", default="sm_90a,sm_100a")
    ap.add_argument("--toolkit", default="/usr/local/cuda")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timing-repeat", type=int, default=2,
                    help="--timing runs per row (each stage: the fastest)")
    ap.add_argument("--no-timing", action="store_true",
                    help="no --timing run (e.g. for a build whose --timing "
                         "prints another format)")
    ap.add_argument("--label", default=None,
                    help="what the rows call the build (default: mxmoe "
                         "commit <git HEAD of this checkout>)")
    ap.add_argument("--jsonl", default=None,
                    help="append rows here (default: "
                         "bench/results/compile_time_<date>.jsonl; '-' = none)")
    args = ap.parse_args()
    if not os.access(os.path.join(args.toolkit, "bin", "ptxas"), os.X_OK):
        ap.error(f"no ptxas under {args.toolkit}/bin (--toolkit)")
    if args.label is None:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        args.label = f"mxmoe commit {head or 'unknown'}"
    layers = [int(n) for n in args.layers.split(",")]
    if 1 not in layers:
        layers.insert(0, 1)  # the reference of the per-layer ratio
    rows = []
    with tempfile.TemporaryDirectory(prefix="mxmoe-compile-bench") as work:
        for model in args.models.split(","):
            rows += measure_model(args, model, layers, work)
    print_tables(rows, args.chips, args.repeat)
    path = args.jsonl or os.path.join(
        ROOT, "bench", "results",
        f"compile_time_{datetime.date.today().isoformat()}.jsonl")
    if path != "-":
        command = "python3 bench/compile_time_bench.py " + shlex.join(sys.argv[1:])
        with open(path, "a") as f:
            for row in jsonl_rows(rows, args, command.strip()):
                f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
