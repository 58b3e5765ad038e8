#!/usr/bin/python3
"""The ISP accelerator comparison as a figure, from the --json output of
tools/accelerators/compare_accelerators.py.

usage: accelerators_plot.py COMPARISON.json --out PREFIX [--models M1,M2]
writes PREFIX.svg and PREFIX.png: one row per model, two panels, compute
latency and, within it, SRAM I/O latency (s) over the recomputation ratio (%),
one line per accelerator. Only the default runs are drawn (a --vary run of the
sensitivity study is left out). Every point has the SVG id point-<k>, so tests
can count them. Bad input: one line on stderr, exit 2, no figure.
Needs Debian's python3-matplotlib (run with /usr/bin/python3).
"""
import argparse
import json
import textwrap

from ispsim_plot import fail, ordered, plt, save_figure

PANELS = [("compute_ms", "compute latency (s)"), ("sram_io_ms", "of which SRAM I/O latency (s)")]


def load(path):
    """The default runs of a comparison, each with its model, ratio, accelerator and figures."""
    try:
        with open(path) as f:
            data = json.load(f)
        runs = [r for r in data["runs"] if not r.get("vary")]
        for r in runs:
            r["model"], r["accelerator"], float(r["ratio"])  # noqa: B018
            for metric, _ in PANELS:
                float(r[metric])
        workload = f"dataset profile {data['dataset']}" + (f", {data['trace_options']}" if data.get("trace_options") else "")
        return data["accelerators"], runs, workload
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"{path}: not the --json output of compare_accelerators.py ({e})")


def draw(ax, runs, model, accelerators, metric, ylabel, first_id):
    """One line per accelerator over the ratios of `model`; returns the next point id."""
    k = first_id
    for i, accelerator in enumerate(accelerators):
        points = sorted((float(r["ratio"]) * 100, float(r[metric]) * 1e-3)
                        for r in runs if r["model"] == model and r["accelerator"] == accelerator)
        if not points:
            continue
        ax.plot([x for x, _ in points], [y for _, y in points], color=f"C{i}", label=accelerator)
        for x, y in points:
            ax.plot([x], [y], marker="o", markersize=4, color=f"C{i}", gid=f"point-{k}")
            k += 1
    ax.set_xlabel("recomputation ratio (% of context tokens)")
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.set_title(model, fontsize=9)
    return k


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("comparison", help="the --json output of compare_accelerators.py")
    p.add_argument("--out", required=True, help="output prefix: writes PREFIX.svg and PREFIX.png")
    p.add_argument("--models", type=lambda s: [x for x in s.split(",") if x], help="models to show, in order")
    args = p.parse_args()
    accelerators, runs, workload = load(args.comparison)
    present = ordered(r["model"] for r in runs)
    if not present:
        fail(f"{args.comparison}: no default runs (only --vary runs, or none)")
    models = args.models or present
    missing = [m for m in models if m not in present]
    if missing:
        fail(f"--models: no runs of {', '.join(missing)} in {args.comparison} (present: {', '.join(present)})")
    fig, axes = plt.subplots(len(models), len(PANELS), figsize=(8, 2.9 * len(models) + 0.4), squeeze=False)
    k = 0
    for row, model in zip(axes, models):
        for ax, (metric, ylabel) in zip(row, PANELS):
            k = draw(ax, runs, model, accelerators, metric, ylabel, k)
    axes[0][0].legend(fontsize=7)
    title = f"ISP accelerators under one power budget (MemLLM; one request per ratio, {workload})"
    fig.suptitle("\n".join(textwrap.wrap(title, 90)), fontsize=10)
    save_figure(fig, args.out)


if __name__ == "__main__":
    main()
