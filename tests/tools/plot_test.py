#!/usr/bin/python3
"""Figures of tools/plot/ispsim_plot.py from a hand-written sweep results file:
each is a valid SVG (XML with an <svg> root) and PNG (signature, IHDR size), has
exactly the expected bars or points (SVG ids bar-*, oom-bar-*, point-*, ...),
marks out-of-memory cells instead of dropping them, and labels axes with units.

usage: plot_test.py PATH/TO/ispsim_plot.py
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SCRIPT = sys.argv[1]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def run(*args):
    return subprocess.run(["/usr/bin/python3", SCRIPT, *args], capture_output=True, text=True)


def row(dataset, system, ratio="0.1", status="ok", latency=10.0, extra=None):
    platform = {"GPU-FullCompute": "gpu_fullcompute", "MemLLM-Base": "memllm_base", "MemLLM": "memllm"}[system]
    seconds = latency / 1e3  # `latency` in ms; results carry SI units
    metrics = {} if status != "ok" else {
        "latency_s": seconds, "compute_s": seconds * 0.3, "exposed_nand_s": seconds * 0.2,
        "phase.decode_s": seconds * 0.5, "pcie_host_to_device_bytes": 2e6, "pcie_device_to_host_bytes": 1e6,
        "controller_dram_bytes": 5e6, "average_power_w": 8.0, "peak_power_w": 18.0, "energy_j": 0.5}
    metrics.update(extra or {})
    return {"id": f"{dataset}{system}{ratio}", "inputs": {"trace.dataset": dataset, "platform": platform, "trace.ratio": ratio},
            "system": system, "status": status, "message": "weights exceed the host DRAM budget" if status == "oom" else "",
            "metrics": metrics, "version": "test"}


def results(runs, axes=("trace.dataset", "platform", "trace.ratio")):
    return {"sweep": "t", "axes": list(axes), "metrics": [], "runs": runs}


def finish(name):
    """Prints the failures and exits 1 if there were any."""
    for f in failures:
        print("FAIL: " + f)
    print(f"{name}: {'FAILED' if failures else 'ok'} ({len(failures)} failures)")
    sys.exit(1 if failures else 0)


def ids(svg_path):
    root = ET.parse(svg_path).getroot()
    check(root.tag.endswith("svg"), f"{svg_path}: root element is {root.tag}, not svg")
    found = {}
    for e in root.iter():
        i = e.get("id", "")
        for kind in ("oom-bar-", "err-bar-", "na-bar-", "bar-", "oom-point-", "err-point-", "point-"):
            if i.startswith(kind):
                found[kind] = found.get(kind, 0) + 1
                break
    return found


def texts(svg_path):
    return " ".join(t.text or "" for t in ET.parse(svg_path).getroot().iter() if t.tag.endswith("text"))


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    check(head[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG")
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def figure(tmp, name, data, args, expect, units):
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump(data, f)
    out = os.path.join(tmp, name)
    r = run(path, "--out", out, *args)
    check(r.returncode == 0, f"{name}: exit {r.returncode}: {r.stderr.strip()}")
    if r.returncode:
        return
    w, h = png_size(out + ".png")
    check(w > 100 and h > 100, f"{name}: PNG is {w}x{h}")
    got = ids(out + ".svg")
    check(got == expect, f"{name}: SVG elements {got}, expected {expect}")
    words = texts(out + ".svg")
    for unit in units:
        check(unit in words, f"{name}: no axis label with '{unit}' in the SVG")


def main():
    base = [row(d, s, latency=l) for d, s, l in
            (("cov", "GPU-FullCompute", 20.0), ("cov", "MemLLM-Base", 16.0), ("cov", "MemLLM", 10.0),
             ("hpt", "GPU-FullCompute", 30.0), ("hpt", "MemLLM", 12.0))]
    base.append(row("hpt", "MemLLM-Base", status="oom"))
    with tempfile.TemporaryDirectory() as tmp:
        # 2 datasets x 3 systems: 5 bars and the OOM cell marked.
        figure(tmp, "speedup", results(base), ["--figure", "speedup"], {"bar-": 5, "oom-bar-": 1},
               ["speedup over GPU-FullCompute (x)"])
        # Over MemLLM-Base, which ran out of memory on hpt: both hpt cells are marked.
        figure(tmp, "ablation", results(base), ["--figure", "ablation", "--systems", "MemLLM-Base,MemLLM"],
               {"bar-": 2, "oom-bar-": 1, "na-bar-": 1}, ["speedup over MemLLM-Base (x)"])
        # Stacked: 5 cells x 3 parts, the OOM cell one marker.
        figure(tmp, "breakdown", results(base), ["--figure", "breakdown"], {"bar-": 15, "oom-bar-": 1}, ["(ms)"])
        figure(tmp, "pcie", results(base), ["--figure", "pcie"], {"bar-": 10, "oom-bar-": 1}, ["(MB)"])
        # Average and peak over both datasets: MemLLM-Base has an OOM run, so both its cells are marked.
        figure(tmp, "power", results(base), ["--figure", "power"], {"bar-": 4, "oom-bar-": 2}, ["power (W)"])
        figure(tmp, "bars", results(base), ["--figure", "bars", "--y", "controller_dram_bytes"],
               {"bar-": 5, "oom-bar-": 1}, ["controller_dram (bytes)"])
        # Any metrics of one unit stacked: 5 cells x 2 parts, the OOM cell one marker; mixed units are refused.
        figure(tmp, "stack", results(base), ["--figure", "stack", "--parts", "compute_s,exposed_nand_s",
                                             "--y-label", "prefill time (ms)"],
               {"bar-": 10, "oom-bar-": 1}, ["prefill time (ms)"])
        r = run(os.path.join(tmp, "stack.json"), "--out", os.path.join(tmp, "mixed"), "--figure", "stack",
                "--parts", "compute_s,energy_j")
        check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, f"stack of mixed units: {r.stderr}")
        figure(tmp, "where", results(base), ["--figure", "speedup", "--where", "trace.dataset=cov"], {"bar-": 3}, ["(x)"])
        # A line per system over 3 ratios, one point OOM.
        line = [row("cov", s, ratio=r, latency=l * float(r))
                for s, l in (("GPU-FullCompute", 100.0), ("MemLLM", 60.0)) for r in ("0.1", "0.2", "0.3")]
        line[5] = row("cov", "MemLLM", ratio="0.3", status="oom")
        figure(tmp, "line", results(line), ["--figure", "line", "--x", "trace.ratio", "--x-label", "recomputation ratio (fraction)"],
               {"point-": 5, "oom-point-": 1}, ["latency (ms)", "recomputation ratio (fraction)"])
        figure(tmp, "line_speedup", results(line), ["--figure", "line", "--x", "trace.ratio", "--y", "speedup"],
               {"point-": 5, "oom-point-": 1}, ["speedup over GPU-FullCompute (x)"])
        # NAND bandwidth: one bar per read mode.
        bw = [{"id": m, "inputs": {"platform": "nand_stream", "stream.read_mode": m}, "system": "NAND-Stream",
               "status": "ok", "message": "", "metrics": {"nand_stream_read_bandwidth_bytes_per_s": g * 1e9}, "version": "test"}
              for m, g in (("SEQUENTIAL", 11.0), ("PIPELINED", 19.2))]
        figure(tmp, "nand_bw", results(bw, axes=("platform", "stream.read_mode")),
               ["--figure", "nand_bw", "--x", "stream.read_mode"], {"bar-": 2}, ["(GB/s)"])

        # The table marks the OOM cell.
        path = os.path.join(tmp, "table.json")
        with open(path, "w") as f:
            json.dump(results(base), f)
        r = run(path, "--out", os.path.join(tmp, "table"), "--figure", "table", "--rows", "trace.ratio",
                "--columns", "trace.dataset", "--systems", "MemLLM-Base")
        check(r.returncode == 0, f"table: {r.stderr.strip()}")
        if r.returncode == 0:
            table = open(os.path.join(tmp, "table.md")).read()
            check("| 0.1 | 1.25 | OOM |" in table, f"table: row not as expected:\n{table}")
        # Several systems: a column per system and column value; --columns platform: one per system.
        r = run(path, "--out", os.path.join(tmp, "table2"), "--figure", "table", "--rows", "trace.ratio",
                "--columns", "platform", "--systems", "MemLLM-Base,MemLLM", "--y", "latency_s", "--where", "trace.dataset=cov")
        check(r.returncode == 0, f"table of two systems: {r.stderr.strip()}")
        if r.returncode == 0:
            table = open(os.path.join(tmp, "table2.md")).read()
            check("| trace.ratio | MemLLM-Base | MemLLM |" in table and "| 0.1 | 16.00 | 10.00 |" in table,
                  f"table of two systems:\n{table}")

        # Bad input: one line, exit 2, no figure.
        r = run(os.path.join(tmp, "missing.json"), "--figure", "speedup", "--out", os.path.join(tmp, "bad"))
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and "missing.json" in r.stderr,
              f"missing results: exit {r.returncode}, stderr {r.stderr!r}")
        r = run(path, "--figure", "speedup", "--baseline", "Nobody", "--out", os.path.join(tmp, "bad"))
        check(r.returncode == 2 and "Nobody" in r.stderr, f"unknown baseline: exit {r.returncode}, {r.stderr!r}")
        check(not os.path.exists(os.path.join(tmp, "bad.svg")), "a failed figure left a file")

    finish("plot_test")


if __name__ == "__main__":
    main()
