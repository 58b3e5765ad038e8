#!/usr/bin/python3
"""The figures and the table of `ispsim reproduce workloads`, from its folder.

usage: workload_plot.py DIR
reads DIR/knee.csv, DIR/slo.csv and DIR/requests/<dataset>_<platform>.csv and writes,
each as .svg and .png in DIR/figures:
  knee        TTFT and end-to-end latency (p99 solid, mean dashed, s, log scale) over
              the arrival rate (requests/s), one line per system, one row per dataset
  cdf         CDFs of TTFT and of each request's mean time between tokens (s) at the
              knee's CDF load, one line per system, one row per dataset
  slo_energy  throughput at the p99-TTFT SLO (requests/s; the bisection's lower end,
              its bracket as an error bar) and energy per request (J), one bar per system
and DIR/figures/slo_energy.md, the same numbers as a markdown table. A system whose rows
have status "out of memory" is named in the legends and drawn as an empty bar marked OOM.
Bad input: one line on stderr, exit 2, no figure.
Needs Debian's python3-matplotlib (run with /usr/bin/python3).
"""
import csv
import os
import sys

from ispsim_plot import fail, plt, save_figure, write_atomically


def rows(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        fail(f"{path}: cannot read ({e.strerror})")


def by(items, key):
    """Items grouped by key, in first-seen order."""
    out = {}
    for r in items:
        out.setdefault(r[key], []).append(r)
    return out


OOM = "out of memory"


def served(r):
    return r.get("status") != OOM and r.get("bracket") != OOM


def knee(folder, knee_rows):
    datasets = by(knee_rows, "dataset")
    fig, axes = plt.subplots(len(datasets), 2, figsize=(12, 4.2 * len(datasets)), squeeze=False)
    for row, (dataset, items) in enumerate(datasets.items()):
        for col, metric in enumerate(("ttft", "latency")):
            ax = axes[row][col]
            for k, (system, points) in enumerate(by(items, "system").items()):
                colour = f"C{k % 10}"
                if not served(points[0]):
                    ax.plot([], [], "-o", color=colour, label=f"{system}: out of memory")
                    continue
                x = [float(p["rate_per_s"]) for p in points]
                ax.plot(x, [float(p[f"{metric}_p99_s"]) for p in points], "-o", color=colour, label=f"{system} p99")
                ax.plot(x, [float(p[f"{metric}_mean_s"]) for p in points], "--", color=colour, alpha=0.6)
            ax.set_yscale("log")
            ax.set_xlabel("arrival rate (requests/s)")
            ax.set_ylabel(("TTFT" if metric == "ttft" else "end-to-end latency") + " (s)")
            ax.set_title(f"{dataset}: {'TTFT' if metric == 'ttft' else 'latency'}, p99 (solid) and mean (dashed)")
            ax.grid(True, which="both", alpha=0.3)
        axes[row][0].legend(fontsize=7)
    save_figure(fig, os.path.join(folder, "figures", "knee"))


def cdf(folder, knee_rows):
    datasets = by(knee_rows, "dataset")
    fig, axes = plt.subplots(len(datasets), 2, figsize=(12, 4.2 * len(datasets)), squeeze=False)
    for row, (dataset, items) in enumerate(datasets.items()):
        for k, (platform, points) in enumerate(by(items, "platform").items()):
            system = points[0]["system"]
            if not served(points[0]):
                for ax in axes[row]:
                    ax.step([], [], color=f"C{k % 10}", label=f"{system}: out of memory")
                continue
            requests = rows(os.path.join(folder, "requests", f"{dataset}_{platform}.csv"))
            for col, column in enumerate(("ttft_s", "mean_tbt_s")):
                values = sorted(float(r[column]) for r in requests)
                share = [(i + 1) / len(values) for i in range(len(values))]
                axes[row][col].step(values, share, where="post", color=f"C{k % 10}", label=system)
        rate = next(r["rate_per_s"] for r in items if r["load"] == cdf_load(items))
        for col, what in enumerate(("TTFT", "mean time between tokens of a request")):
            ax = axes[row][col]
            ax.set_xscale("log")
            ax.set_xlabel(f"{what} (s)")
            ax.set_ylabel("share of requests")
            ax.set_title(f"{dataset} at {float(rate):.4g} requests/s: {what}")
            ax.grid(True, which="both", alpha=0.3)
        axes[row][0].legend(fontsize=7)
    save_figure(fig, os.path.join(folder, "figures", "cdf"))


def cdf_load(items):
    """The load whose runs wrote the per-request CSVs (the one reproduce names in index.md)."""
    loads = [r["load"] for r in items]
    return "0.6" if "0.6" in loads else loads[0]


def slo_energy(folder, slo_rows):
    datasets = by(slo_rows, "dataset")
    fig, axes = plt.subplots(len(datasets), 2, figsize=(12, 4 * len(datasets)), squeeze=False)
    lines = ["| dataset | system | p99 TTFT SLO (s) | throughput at the SLO (requests/s) | capacity (requests/s) "
             "| energy per request (J) |", "|---|---|---|---|---|---|"]
    for row, (dataset, items) in enumerate(datasets.items()):
        names = [r["system"] for r in items]
        value = lambda r, column: float(r[column]) if served(r) else 0.0
        met = [value(r, "met_rate_per_s") for r in items]
        upper = [max(0.0, float(r["missed_rate_per_s"]) - m) if r["bracket"] == "between" else 0 for r, m in
                 zip(items, met)]
        slo = next(float(r["slo_ttft_p99_s"]) for r in items if served(r))
        ax = axes[row][0]
        ax.bar(names, met, yerr=[[0] * len(met), upper], capsize=3, color="C0")
        ax.set_ylabel("requests/s")
        ax.set_title(f"{dataset}: throughput with p99 TTFT within {slo:.3g} s")
        ax = axes[row][1]
        ax.bar(names, [value(r, "energy_mean_j") for r in items], color="C2")
        ax.set_ylabel("J")
        ax.set_title(f"{dataset}: energy per request")
        for ax in axes[row]:
            ax.tick_params(axis="x", rotation=30, labelsize=8)
            for i, r in enumerate(items):
                if not served(r):
                    ax.text(i, 0, "OOM", ha="center", va="bottom", fontsize=8)
        for r in items:
            if not served(r):
                lines.append(f"| {dataset} | {r['system']} | {slo:.3f} | out of memory | - | - |")
                continue
            lines.append(f"| {dataset} | {r['system']} | {slo:.3f} | {bracket(r)} | "
                         f"{float(r['capacity_per_s']):.3f} | {float(r['energy_mean_j']):.2f} |")
    save_figure(fig, os.path.join(folder, "figures", "slo_energy"))
    write_atomically(os.path.join(folder, "figures", "slo_energy.md"), "\n".join(lines) + "\n")


def bracket(r):
    met, missed = float(r["met_rate_per_s"]), float(r["missed_rate_per_s"])
    if r["bracket"] == "below low":
        return f"below {float(r['low_per_s']):.3f}"
    if r["bracket"] == "at least high":
        return f"at least {float(r['high_per_s']):.3f}"
    return f"{met:.3f} to {missed:.3f}"


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) == 2 else 2)
    folder = sys.argv[1]
    knee_rows = rows(os.path.join(folder, "knee.csv"))
    slo_rows = rows(os.path.join(folder, "slo.csv"))
    if not knee_rows or not slo_rows:
        fail(f"{folder}: knee.csv or slo.csv has no rows")
    try:
        knee(folder, knee_rows)
        cdf(folder, knee_rows)
        slo_energy(folder, slo_rows)
    except (KeyError, ValueError, StopIteration) as e:
        fail(f"{folder}: not the output of `ispsim reproduce workloads` ({e})")


if __name__ == "__main__":
    main()
