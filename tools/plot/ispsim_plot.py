#!/usr/bin/python3
"""Paper-style figures from the results of `ispsim sweep` (results.json).

usage: ispsim_plot.py RESULTS.json --figure NAME --out PREFIX [options]
writes PREFIX.svg and PREFIX.png. Figures:
  speedup    bars of baseline latency / latency, grouped by --group (default
             trace.dataset), one bar per system (--baseline, default GPU-FullCompute)
  ablation   the ablation ladder: speedup over the first of --systems
             (default MemLLM-Base, MemLLM-Fused, MemLLM-PerCh, MemLLM)
  breakdown  stacked bars per system: prefill compute, exposed NAND in prefill, decode (ms)
  pcie       PCIe traffic per request, host-to-device and device-to-host stacked (MB)
  power      average and peak power per system (W)
  nand_bw    aggregate NAND read bandwidth per value of --x (e.g. stream.read_mode), GB/s,
             with MemLLM's reported 11 and 19 GB/s as reference lines
  line       --y metric over the swept axis --x, one line per system
  bars       --y metric as grouped bars (group --group, one bar per system)
  stack      stacked bars per (group, system) of the metrics --parts M1,M2,... (same unit),
             e.g. paper 1's stage breakdown stage.weights_s,stage.kv_write_s,...
  table      a markdown table PREFIX.md of speedup (or --y metric): --rows AXIS x --columns AXIS,
             for the systems of --systems (several: one column per system and column value;
             --columns platform: one column per system); OOM cells read "OOM"
--where AXIS=VALUE (repeatable) keeps only the runs with that input.
Runs that ran out of memory are drawn as hatched "OOM" markers, never dropped;
runs that failed are drawn as "ERR" markers. Where other inputs than the group
and the system vary (e.g. several models), bars show their geometric mean and
the title says so. Every bar has the SVG id bar-<k> (OOM: oom-bar-<k>, failed:
err-bar-<k>) and every point point-<k> (oom-point-<k>), so tests can count them.
Needs Debian's python3-matplotlib (run with /usr/bin/python3).
"""
import argparse
import json
import math
import os
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MEMLLM_LADDER = ["MemLLM-Base", "MemLLM-Fused", "MemLLM-PerCh", "MemLLM"]
# Deterministic SVG output: no dates or random ids in the file.
plt.rcParams["svg.hashsalt"] = "ispsim"
plt.rcParams["svg.fonttype"] = "none"
METADATA_SVG = {"Date": None, "Creator": os.path.basename(sys.argv[0])}
METADATA_PNG = {"Software": os.path.basename(sys.argv[0])}


def fail(message):
    """Bad input: one line on stderr, exit 2 (the running script's name, as other plot scripts import this)."""
    print(f"{os.path.basename(sys.argv[0])}: error: " + message, file=sys.stderr)
    sys.exit(2)


def load(path):
    try:
        with open(path) as f:
            data = json.load(f)
        runs = data["runs"]
        for r in runs:
            r["inputs"], r["status"], r["metrics"], r["system"]  # noqa: B018
        return data
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"{path}: not the results.json of an ispsim sweep ({e})")


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def ordered(values):
    """Unique values in first-seen order; numbers sorted numerically."""
    seen = list(dict.fromkeys(values))
    if seen and all(number(v) is not None for v in seen):
        seen.sort(key=float)
    return seen


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


class Cell:
    """The runs behind one bar or point. A cell with any run out of memory or
    failed, or whose baseline ran out of memory or failed ("n/a"), has no value
    and is drawn as a marker."""

    def __init__(self):
        self.values, self.oom, self.err, self.na = [], 0, 0, 0

    def add(self, run, value, na=False):
        if run["status"] == "oom":
            self.oom += 1
        elif run["status"] != "ok":
            self.err += 1
        elif na:
            self.na += 1
        elif value is None:
            self.err += 1
        else:
            self.values.append(value)

    def value(self):
        if self.values and not (self.oom or self.err or self.na) and min(self.values) > 0:
            return geomean(self.values)
        return None

    def kind(self):
        return "oom" if self.oom else "err" if self.err else "na" if self.na else ""

    def mark(self):
        return {"oom": "OOM", "err": "ERR", "na": "n/a"}.get(self.kind(), "")


def other_axes(data, used):
    """Inputs, besides `used`, that take more than one value."""
    out = []
    for axis in data["axes"]:
        if axis in used:
            continue
        if len({r["inputs"][axis] for r in data["runs"]}) > 1:
            out.append(axis)
    return out


def key_without(run, axes):
    return tuple((a, v) for a, v in sorted(run["inputs"].items()) if a not in axes)


def speedups(data, baseline):
    """(run, speedup or None, baseline unusable) for every run: baseline latency /
    latency of the run with the same inputs except the platform."""
    base = {}
    for r in data["runs"]:
        if r["system"] == baseline:
            base[key_without(r, {"platform"})] = r
    if not base:
        fail(f"no run of the baseline system '{baseline}' in the results")
    out = []
    for r in data["runs"]:
        b = base.get(key_without(r, {"platform"}))
        if r["status"] != "ok" or b is None or b["status"] != "ok":
            out.append((r, None, r["status"] == "ok"))
        else:
            out.append((r, b["metrics"]["latency_s"] / r["metrics"]["latency_s"], False))
    return out, base


def systems_of(data, wanted):
    present = ordered(r["system"] for r in data["runs"])
    if not wanted:
        return present
    missing = [s for s in wanted if s not in present]
    if missing:
        fail("no runs of system(s) " + ", ".join(missing) + " in the results (present: " + ", ".join(present) + ")")
    return wanted


def grouped_cells(data, triples, group, systems):
    """triples: (run, value, baseline unusable)."""
    groups = ordered(r["inputs"].get(group, "all") for r, _, _ in triples)
    cells = {(g, s): Cell() for g in groups for s in systems}
    for r, v, na in triples:
        k = (r["inputs"].get(group, "all"), r["system"])
        if k in cells:
            cells[k].add(r, v, na)
    return groups, cells


def mean_note(data, used):
    rest = other_axes(data, used)
    return f" (geometric mean over {', '.join(rest)})" if rest else ""


def bar_figure_width(groups, series):
    return min(10.0, max(6.0, 0.25 * len(groups) * max(1, len(series)) + 2))


def draw_grouped_bars(ax, groups, series, cells, ylabel, reference=None):
    """Bars per group, one per series; OOM/ERR as hatched markers."""
    width = 0.8 / max(1, len(series))
    k = 0
    top = max([c.value() for c in cells.values() if c.value() is not None] + [1e-9])
    for i, s in enumerate(series):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        for x, g in zip(xs, groups):
            c = cells[(g, s)]
            v = c.value()
            if v is not None:
                bar = ax.bar(x, v, width, color=f"C{i}", label=s if x == xs[0] else None)
                bar.patches[0].set_gid(f"bar-{k}")
            else:
                bar = ax.bar(x, top * 0.04, width, color="white", edgecolor=f"C{i}", hatch="xx",
                             label=s if x == xs[0] else None)
                bar.patches[0].set_gid(f"{c.kind()}-bar-{k}")
                ax.text(x, top * 0.05, c.mark(), ha="center", va="bottom", fontsize=7, rotation=90)
            k += 1
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, top * 1.3)  # room for the legend above the bars
    if reference is not None:
        ax.axhline(reference, color="black", linewidth=0.8, linestyle="--")
    ax.legend(fontsize=7, ncol=min(3, len(series)))


def figure_speedup(data, args, systems=None, baseline=None, title="Speedup"):
    baseline = baseline or args.baseline
    triples, _ = speedups(data, baseline)
    systems = systems_of(data, systems or args.systems)
    groups, cells = grouped_cells(data, triples, args.group, systems)
    fig, ax = plt.subplots(figsize=(bar_figure_width(groups, systems), 3.6))
    draw_grouped_bars(ax, groups, systems, cells, f"speedup over {baseline} (x)", reference=1.0)
    ax.set_xlabel(axis_label(args.group))
    ax.set_title(title + mean_note(data, {args.group, "platform"}), fontsize=9)
    return fig


def figure_ablation(data, args):
    ladder = args.systems or MEMLLM_LADDER
    return figure_speedup(data, args, systems=ladder, baseline=ladder[0], title="Ablation ladder")


def figure_stacked(data, args, parts, ylabel, title):
    """Stacked bars: one per (group, system); parts = [(label, function(metrics) -> value)]."""
    systems = systems_of(data, args.systems)
    groups = ordered(r["inputs"].get(args.group, "all") for r in data["runs"])
    cells = {(g, s, p): Cell() for g in groups for s in systems for p in range(len(parts))}
    for r in data["runs"]:
        g, s = r["inputs"].get(args.group, "all"), r["system"]
        if s not in systems:
            continue
        for p, (_, f) in enumerate(parts):
            cells[(g, s, p)].add(r, f(r["metrics"]) if r["status"] == "ok" else None)
    fig, ax = plt.subplots(figsize=(min(12.0, max(6, 0.4 * len(groups) * len(systems) + 2)), 3.8))
    labels, k, x, highest = [], 0, 0, 1e-9
    top = max([c.value() or 0 for c in cells.values()] + [1e-9])
    for g in groups:
        for s in systems:
            bottom = 0.0
            first = cells[(g, s, 0)]
            if any(cells[(g, s, p)].value() is None for p in range(len(parts))) and first.mark():
                bar = ax.bar(x, top * 0.04, 0.8, color="white", edgecolor="black", hatch="xx")
                bar.patches[0].set_gid(f"{first.kind()}-bar-{k}")
                ax.text(x, top * 0.05, first.mark(), ha="center", va="bottom", fontsize=7, rotation=90)
                k += 1
            else:
                for p, (label, _) in enumerate(parts):
                    v = cells[(g, s, p)].value() or 0.0
                    bar = ax.bar(x, v, 0.8, bottom=bottom, color=f"C{p}", label=label if (g, s) == (groups[0], systems[0]) else None)
                    bar.patches[0].set_gid(f"bar-{k}")
                    bottom += v
                    k += 1
                highest = max(highest, bottom)
            labels.append(s if len(groups) == 1 else f"{s}\n{g}")
            x += 1
        x += 0.5
    positions, x = [], 0
    for g in groups:
        for s in systems:
            positions.append(x)
            x += 1
        x += 0.5
    ax.set_xticks(positions)
    ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, highest * 1.35)  # room for the legend above the tallest bar
    ax.legend(fontsize=7, ncol=min(3, len(parts)))
    ax.set_title(title + mean_note(data, {args.group, "platform"}), fontsize=9)
    fig.tight_layout()
    return fig


def figure_stack(data, args):
    if not args.parts:
        fail("--figure stack needs --parts METRIC,METRIC,... (metrics of one unit)")
    units = {unit_of(m) for m in args.parts}
    if len(units) != 1 or None in units:
        fail("--parts " + ",".join(args.parts) + ": the metrics must share one unit (suffix " + ", ".join(UNITS) + ")")
    unit = units.pop()
    prefix = os.path.commonprefix(args.parts)
    prefix = prefix[:prefix.rfind(".") + 1] if "." in prefix else ""
    parts = [(metric_label(m[len(prefix):]).rpartition(" (")[0], lambda metrics, m=m: displayed(metrics, m)) for m in args.parts]
    ylabel = args.y_label or f"{prefix.rstrip('.') or 'sum'} ({unit})"
    return figure_stacked(data, args, parts, ylabel, "Breakdown")


def figure_breakdown(data, args):
    parts = [("prefill compute", lambda m: displayed(m, "compute_s")),
             ("prefill exposed NAND", lambda m: displayed(m, "exposed_nand_s")),
             ("decode", lambda m: displayed(m, "phase.decode_s") or 0.0)]
    return figure_stacked(data, args, parts, "time per request (ms)", "Latency breakdown")


def figure_pcie(data, args):
    parts = [("host to device", lambda m: displayed(m, "pcie_host_to_device_bytes", 1e-6)),
             ("device to host", lambda m: displayed(m, "pcie_device_to_host_bytes", 1e-6))]
    return figure_stacked(data, args, parts, "PCIe traffic per request (MB)", "PCIe traffic")


def figure_power(data, args):
    systems = systems_of(data, args.systems)
    groups = ["average", "peak"]
    cells = {(g, s): Cell() for g in groups for s in systems}
    for r in data["runs"]:
        if r["system"] in systems:
            cells[("average", r["system"])].add(r, r["metrics"].get("average_power_w"))
            cells[("peak", r["system"])].add(r, r["metrics"].get("peak_power_w"))
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    draw_grouped_bars(ax, groups, systems, cells, "power (W)")
    ax.set_title("Average and peak power" + mean_note(data, {"platform"}), fontsize=9)
    return fig


def figure_nand_bw(data, args):
    x_axis = args.x or "stream.read_mode"
    groups = ordered(r["inputs"].get(x_axis, "all") for r in data["runs"])
    cells = {(g, "bandwidth"): Cell() for g in groups}
    for r in data["runs"]:
        cells[(r["inputs"].get(x_axis, "all"), "bandwidth")].add(r, displayed(r["metrics"], "nand_stream_read_bandwidth_bytes_per_s"))
    fig, ax = plt.subplots(figsize=(5, 3.6))
    draw_grouped_bars(ax, groups, ["bandwidth"], cells, "aggregate NAND read bandwidth (GB/s)")
    top = max([c.value() or 0 for c in cells.values()] + [19])
    ax.set_ylim(0, top * 1.15)
    for ref in (11, 19):
        ax.axhline(ref, color="grey", linewidth=0.8, linestyle=":")
        ax.text(-0.45, ref, f"MemLLM reports ≈{ref} GB/s", fontsize=7, ha="left", va="bottom")
    ax.get_legend().remove()
    ax.set_xlabel(axis_label(x_axis))
    ax.set_title("Naive vs pipelined NAND reads" + mean_note(data, {x_axis}), fontsize=9)
    return fig


# Results carry SI units, named by the metric's suffix (`ispsim describe
# metrics`); figures show them as (unit, factor): seconds as ms, bytes/s as GB/s,
# ratios (stage_share.*) as %.
UNITS = {"_bytes_per_s": ("GB/s", 1e-9), "_s": ("ms", 1e3), "_bytes": ("bytes", 1), "_j": ("J", 1),
         "_w": ("W", 1)}
SHARE = ("%", 100)


def display(name):
    """(unit, factor) a figure shows the metric `name` in, or (None, 1)."""
    if name.startswith("stage_share."):
        return SHARE
    for suffix, shown_as in UNITS.items():
        if name.endswith(suffix):
            return shown_as
    return None, 1


def displayed(metrics, name, factor=None):
    """The metric `name` of a run in the figure's unit (None when absent)."""
    v = metrics.get(name)
    return None if v is None else v * (display(name)[1] if factor is None else factor)


AXIS_LABELS = {"trace.dataset": "dataset profile", "trace.model": "model", "trace.ratio": "recomputation ratio",
               "stream.read_mode": "NAND read mode", "platform": "platform",
               "trace.context_tokens": "context tokens"}


def axis_label(name):
    return AXIS_LABELS.get(name, name)


def unit_of(name):
    return display(name)[0]


METRIC_NAMES = {"tbt": "time between tokens", "tbt_eq4": "time between tokens, eq. (4)",
                "energy_per_token": "energy per token"}


def metric_label(name):
    if name.startswith("stage_share."):
        return f"{name} ({SHARE[0]})"
    for suffix, (unit, _) in UNITS.items():
        if name.endswith(suffix):
            base = name[:-len(suffix)]
            return f"{METRIC_NAMES.get(base, base)} ({unit})"
    if name == "speedup":
        return "speedup (x)"
    return name


def figure_bars(data, args):
    y = args.y or "latency_s"
    systems = systems_of(data, args.systems)
    triples = [(r, displayed(r["metrics"], y), False) for r in data["runs"]]
    groups, cells = grouped_cells(data, triples, args.group, systems)
    fig, ax = plt.subplots(figsize=(bar_figure_width(groups, systems), 3.6))
    draw_grouped_bars(ax, groups, systems, cells, metric_label(y))
    ax.set_xlabel(axis_label(args.group))
    ax.set_title(metric_label(y) + mean_note(data, {args.group, "platform"}), fontsize=9)
    return fig


def table(data, args):
    """Markdown table of the speedup (or --y metric) of the --systems, rows x columns."""
    if not args.rows or not args.columns:
        fail("--figure table needs --rows AXIS and --columns AXIS")
    if not args.systems:
        fail("--figure table needs --systems NAME[,NAME...]")
    systems = systems_of(data, args.systems)
    y = args.y or "speedup"
    triples = speedups(data, args.baseline)[0] if y == "speedup" else [(r, displayed(r["metrics"], y), False) for r in data["runs"]]

    def column(r):
        if args.columns == "platform":
            return r["system"]
        value = r["inputs"].get(args.columns, "all")
        return value if len(systems) == 1 else f"{r['system']} {value}"

    shown = [r for r in data["runs"] if r["system"] in systems]
    rows = ordered(r["inputs"].get(args.rows, "all") for r in shown)
    cols = ordered(column(r) for r in sorted(shown, key=lambda r: systems.index(r["system"])))
    cells = {(a, b): Cell() for a in rows for b in cols}
    for r, v, na in triples:
        if r["system"] in systems:
            cells[(r["inputs"].get(args.rows, "all"), column(r))].add(r, v, na)
    unit = f"speedup over {args.baseline} (x)" if y == "speedup" else metric_label(y)
    lines = [f"{', '.join(systems)}: {unit}" + mean_note(data, {args.rows, args.columns, "platform"}), "",
             "| " + args.rows + " | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for a in rows:
        texts = []
        for b in cols:
            c = cells[(a, b)]
            v = c.value()
            texts.append(f"{v:.2f}" if v is not None else (c.mark() or "-"))
        lines.append(f"| {a} | " + " | ".join(texts) + " |")
    return "\n".join(lines) + "\n"


def figure_line(data, args):
    if not args.x:
        fail("--figure line needs --x AXIS (a swept input)")
    if args.x not in data["axes"]:
        fail(f"--x {args.x} is not an axis of the sweep (axes: {', '.join(data['axes'])})")
    xs = ordered(r["inputs"][args.x] for r in data["runs"])
    if any(number(x) is None for x in xs):
        fail(f"--x {args.x} has non-numeric values; use a bar figure")
    y = args.y or "latency_s"
    if y == "speedup":
        triples, _ = speedups(data, args.baseline)
    else:
        triples = [(r, displayed(r["metrics"], y), False) for r in data["runs"]]
    systems = systems_of(data, args.systems)
    cells = {(x, s): Cell() for x in xs for s in systems}
    for r, v, na in triples:
        k = (r["inputs"][args.x], r["system"])
        if k in cells:
            cells[k].add(r, v, na)
    fig, ax = plt.subplots(figsize=(6, 3.6))
    k = 0
    values = [c.value() for c in cells.values() if c.value() is not None]
    floor = min(values) if values else 0
    for i, s in enumerate(systems):
        pts = [(float(x) * args.x_scale, cells[(x, s)].value()) for x in xs]
        good = [(x, v) for x, v in pts if v is not None]
        if good:
            ax.plot([p[0] for p in good], [p[1] for p in good], color=f"C{i}", label=s)
        else:  # no value anywhere: the system is still in the legend, with its markers' kind
            kinds = {cells[(x, s)].mark() for x in xs} - {""}
            ax.plot([], [], color=f"C{i}", marker="x", linestyle="none", label=f"{s} ({'/'.join(sorted(kinds))})")
        for x, v in pts:
            if v is not None:
                ax.plot([x], [v], marker="o", color=f"C{i}", gid=f"point-{k}")
            else:
                c = cells[(shortest(x, xs, args.x_scale), s)]
                ax.plot([x], [floor], marker="x", markersize=9, color=f"C{i}", gid=f"{c.kind()}-point-{k}")
                ax.annotate(c.mark(), (x, floor), fontsize=7, xytext=(3, 3), textcoords="offset points")
            k += 1
    ax.set_xlabel(args.x_label or axis_label(args.x))
    ax.set_ylabel(metric_label(y) if y != "speedup" else f"speedup over {args.baseline} (x)")
    ax.legend(fontsize=7)
    ax.set_title(f"{ax.get_ylabel()} vs {args.x_label or axis_label(args.x)}" + mean_note(data, {args.x, "platform"}), fontsize=9)
    return fig


def shortest(x, xs, scale):
    """The axis text of the plotted (scaled) value x."""
    for t in xs:
        if float(t) * scale == x:
            return t
    return str(x)


FIGURES = {"bars": figure_bars, "stack": figure_stack, "table": None, "speedup": figure_speedup, "ablation": figure_ablation, "breakdown": figure_breakdown,
           "pcie": figure_pcie, "power": figure_power, "nand_bw": figure_nand_bw, "line": figure_line}


def write_atomically(path, text):
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        fail(f"{path}: cannot write ({e.strerror})")


def save_figure(fig, prefix):
    """Writes PREFIX.svg and PREFIX.png, each under a temporary name renamed when
    complete (no half-written figure)."""
    fig.tight_layout()
    for ext, options in (("svg", {"metadata": METADATA_SVG}), ("png", {"dpi": 110, "metadata": METADATA_PNG})):
        tmp = f"{prefix}.{ext}.tmp.{os.getpid()}"
        try:
            fig.savefig(tmp, format=ext, **options)
            os.replace(tmp, f"{prefix}.{ext}")
        except OSError as e:
            if os.path.exists(tmp):
                os.remove(tmp)
            fail(f"{prefix}.{ext}: cannot write ({e.strerror})")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results")
    p.add_argument("--figure", required=True, choices=sorted(FIGURES))
    p.add_argument("--out", required=True, help="output prefix: writes PREFIX.svg and PREFIX.png")
    p.add_argument("--baseline", default="GPU-FullCompute", help="system the speedup is measured against")
    p.add_argument("--group", default="trace.dataset", help="input whose values group the bars")
    p.add_argument("--systems", type=lambda s: [x for x in s.split(",") if x], help="systems to show, in order")
    p.add_argument("--x", help="swept input on the x axis (line, nand_bw)")
    p.add_argument("--x-label", help="x-axis label with its unit (line), e.g. 'context tokens per document'")
    p.add_argument("--x-scale", type=float, default=1.0,
                   help="factor for the x values (line), e.g. 1e-9 for bytes shown as GB; say so in --x-label")
    p.add_argument("--y", help="metric on the y axis (line; default latency_s; 'speedup' for speedup)")
    p.add_argument("--parts", type=lambda s: [x for x in s.split(",") if x], help="metrics stacked in each bar (stack)")
    p.add_argument("--y-label", help="y-axis label with its unit (stack), e.g. 'time per token (ms)'")
    p.add_argument("--title", help="figure title (replaces the default)")
    p.add_argument("--rows", help="input whose values are the table's rows (table)")
    p.add_argument("--columns", help="input whose values are the table's columns (table)")
    p.add_argument("--where", action="append", default=[], help="AXIS=VALUE: keep only these runs (repeatable)")
    args = p.parse_args()
    data = load(args.results)
    for cond in args.where:
        axis, sep, value = cond.partition("=")
        if not sep or axis not in data["axes"]:
            fail(f"--where {cond}: not AXIS=VALUE with an axis of the sweep ({', '.join(data['axes'])})")
        data["runs"] = [r for r in data["runs"] if r["inputs"][axis] == value]
    if not data["runs"]:
        fail(f"{args.results}: no runs" + (" match --where" if args.where else ""))
    if args.figure == "table":
        write_atomically(args.out + ".md", table(data, args))
        return
    fig = FIGURES[args.figure](data, args)
    if args.where and not args.title:
        ax = fig.axes[0]
        ax.set_title(ax.get_title() + " [" + ", ".join(args.where) + "]", fontsize=9)
    if args.title:
        fig.axes[0].set_title("\n".join(textwrap.wrap(args.title, 70)), fontsize=9)
    save_figure(fig, args.out)


if __name__ == "__main__":
    main()
