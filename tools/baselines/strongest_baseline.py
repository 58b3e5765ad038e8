#!/usr/bin/env python3
"""The strongest-baseline report of the MemLLM evaluation grid.

Reads two sweeps' results.csv (tools/baselines/grid.textproto: every system at
default parameters; gpu_knobs.textproto: the GPU baselines over their own knobs)
and prints, per dataset profile, the mean speedup over the models (arithmetic /
geometric) of each system:
  1. over GPU-FullCompute at its defaults (the grid's table);
  2. over the strongest GPU baseline of the cell: the lowest latency that
     GPU-FullCompute or GPU-PreCompute reaches over its knobs;
and which baseline and knob setting is the strongest in each cell. Cells a
system cannot hold (OOM) are counted apart and left out of its means.

Usage (after the two sweeps):
  python3 tools/baselines/strongest_baseline.py out/grid/results.csv out/gpu_knobs/results.csv
Only the Python standard library is used.
"""

import collections
import csv
import math
import sys

DATASETS = ["fin", "tat", "cov", "cad", "prv", "wik", "web", "hpt"]
KNOBS = ["placement.prefetch_layers", "host.swap_read_gbps"]


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def cell_of(row):
    return row["trace.model"], row["trace.dataset"]


def means(values):
    if not values:
        return None
    return sum(values) / len(values), math.exp(sum(math.log(v) for v in values) / len(values))


def table(title, systems, speedups, ooms):
    print(f"\n{title}\n")
    print("| system | " + " | ".join(DATASETS) + " |")
    print("|---|" + "---|" * len(DATASETS))
    for system in systems:
        cells = []
        for d in DATASETS:
            m = means(speedups[system][d])
            text = "-" if m is None else f"{m[0]:.2f}/{m[1]:.2f}"
            if ooms[system][d]:
                text += f" {ooms[system][d]} OOM"
            cells.append(text)
        print(f"| {system} | " + " | ".join(cells) + " |")


def main(grid_csv, knobs_csv):
    grid = rows(grid_csv)
    knobs = rows(knobs_csv)
    systems = list(dict.fromkeys(r["system"] for r in grid))
    latency = {}  # (cell, system) -> ms, None when OOM
    for r in grid:
        if r["status"] not in ("ok", "oom"):
            sys.exit(f"strongest_baseline: {grid_csv}: run {r['id']} failed: {r.get('error', r['status'])}")
        latency[(cell_of(r), r["system"])] = float(r["latency_s"]) * 1e3 if r["status"] == "ok" else None
    default = {cell: ms for (cell, system), ms in latency.items() if system == "GPU-FullCompute"}
    best = {}  # cell -> (ms, description)
    for r in knobs:
        if r["status"] != "ok":
            continue
        ms = float(r["latency_s"]) * 1e3
        what = r["system"] + " " + ", ".join(f"{k.split('.')[-1]}={r[k]}" for k in KNOBS)
        cell = cell_of(r)
        if cell not in best or ms < best[cell][0]:
            best[cell] = (ms, what)
    for cell, ms in default.items():  # the defaults are candidates too
        if cell not in best or ms < best[cell][0]:
            best[cell] = (ms, "GPU-FullCompute defaults")
    for name, reference in (("over GPU-FullCompute at its defaults", default),
                            ("over the strongest GPU baseline of each cell", {c: b[0] for c, b in best.items()})):
        speedups = collections.defaultdict(lambda: collections.defaultdict(list))
        ooms = collections.defaultdict(lambda: collections.defaultdict(int))
        for (cell, system), ms in latency.items():
            if ms is None:
                ooms[system][cell[1]] += 1
            else:
                speedups[system][cell[1]].append(reference[cell] / ms)
        table(f"Mean speedup {name}, arithmetic/geometric over the models", systems, speedups, ooms)
    print("\nStrongest GPU baseline per cell (latency, setting):\n")
    for cell in sorted(best):
        print(f"- {cell[0]} {cell[1]}: {best[cell][0] / 1000:.1f} s, {best[cell][1]}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
