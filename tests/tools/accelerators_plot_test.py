#!/usr/bin/python3
"""The accelerator comparison end to end on a tiny request: compare_accelerators.py
runs ispsim (2 models x 2 ratios x 3 accelerators, one request of 512 context
tokens, and a --vary of isp.staging.bytes_per_cycle), writes its --json, and
tools/plot/accelerators_plot.py draws it: a valid SVG and PNG with exactly one
point per (model, ratio, accelerator, panel) of the default runs (the --vary runs
left out) and axis labels with units. The --vary runs are on the accelerators
that read the key only. Bad input to either script: exit 2, one line on stderr,
no output file.

usage: accelerators_plot_test.py ISPSIM COMPARE_ACCELERATORS.py ACCELERATORS_PLOT.py
"""
import json
import os
import subprocess
import sys
import tempfile

from plot_test import check, finish, ids, png_size, texts

ISPSIM, COMPARE, PLOT = sys.argv[1:4]
MODELS, RATIOS = ["SmolLM2-360M", "OPT-350M"], ["0.1", "0.25"]
ACCELERATORS = ["elastic_simd", "elastic_no_filter", "systolic_pair"]


def compare(*args):
    return subprocess.run([sys.executable, COMPARE, "--ispsim", ISPSIM, *args], capture_output=True, text=True)


def plot(*args):
    return subprocess.run(["/usr/bin/python3", PLOT, *args], capture_output=True, text=True)


def bad(what, r, name, output):
    """Exit 2, one line naming `name`, and no output file."""
    check(r.returncode == 2 and r.stderr.count("\n") == 1 and name in r.stderr,
          f"{what}: exit {r.returncode}, stderr {r.stderr!r}")
    check(not any(os.path.exists(output + ext) for ext in ("", ".svg", ".png")), f"{what}: left {output}")


def check_comparison(path):
    with open(path) as f:
        runs = json.load(f)["runs"]
    default = {(r["model"], str(r["ratio"]), r["accelerator"]) for r in runs if not r["vary"]}
    check(default == {(m, q, a) for m in MODELS for q in RATIOS for a in ACCELERATORS},
          f"default runs: {sorted(default)}")
    varied = sorted((r["model"], str(r["ratio"]), r["accelerator"], r["vary"]["isp.staging.bytes_per_cycle"])
                    for r in runs if r["vary"])
    check(varied == sorted((m, q, a, "16") for m in MODELS for q in RATIOS for a in ACCELERATORS[1:]),
          f"--vary runs (the staging is read by elastic_no_filter and systolic_pair only): {varied}")
    for r in runs:
        check(0 < r["sram_io_ms"] < r["compute_ms"], f"run {r}: SRAM I/O is not within the compute latency")
    staged = {(r["model"], str(r["ratio"]), r["accelerator"], bool(r["vary"])): r["sram_io_ms"] for r in runs}
    for m in MODELS:
        for q in RATIOS:
            # Half the staging rate: the staging part of the no-filter design's SRAM I/O doubles.
            check(staged[(m, q, "elastic_no_filter", True)] > staged[(m, q, "elastic_no_filter", False)],
                  f"{m} {q}: staging at 16 B/cycle is not slower than at 32")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        comparison = os.path.join(tmp, "comparison.json")
        r = compare("--models", ",".join(MODELS), "--ratios", ",".join(RATIOS), "--trace-options",
                    "--docs 1 --context-tokens 512", "--vary", "isp.staging.bytes_per_cycle=16,32",
                    "--json", comparison, "--workdir", os.path.join(tmp, "work"))
        check(r.returncode == 0, f"compare_accelerators.py: exit {r.returncode}: {r.stderr.strip()}")
        check("| `isp.staging.bytes_per_cycle` | 32 (default) | 10 % | = " in r.stdout,
              f"no sensitivity row for the default staging rate:\n{r.stdout}")
        if r.returncode:
            return
        check_comparison(comparison)

        out = os.path.join(tmp, "figure")
        r = plot(comparison, "--out", out)
        check(r.returncode == 0, f"accelerators_plot.py: exit {r.returncode}: {r.stderr.strip()}")
        if r.returncode == 0:
            w, h = png_size(out + ".png")
            check(w > 100 and h > 100, f"PNG is {w}x{h}")
            points = len(MODELS) * len(RATIOS) * len(ACCELERATORS) * 2
            check(ids(out + ".svg") == {"point-": points}, f"SVG elements {ids(out + '.svg')}, expected {points} points")
            words = texts(out + ".svg")
            for label in ("compute latency (s)", "SRAM I/O latency (s)", "recomputation ratio (% of context tokens)"):
                check(label in words, f"no axis label '{label}' in the SVG")
        r = plot(comparison, "--out", os.path.join(tmp, "one"), "--models", "OPT-350M")
        check(r.returncode == 0 and ids(os.path.join(tmp, "one.svg")) == {"point-": len(RATIOS) * len(ACCELERATORS) * 2},
              f"--models OPT-350M: exit {r.returncode}, {r.stderr.strip()}")

        # Bad input to the plot: a missing file, a file of another kind, an unknown model.
        bad("missing comparison", plot(os.path.join(tmp, "missing.json"), "--out", os.path.join(tmp, "b1")),
            "missing.json", os.path.join(tmp, "b1"))
        other = os.path.join(tmp, "other.json")
        with open(other, "w") as f:
            json.dump({"sweep": "t", "axes": [], "runs": [{"inputs": {}}]}, f)
        bad("another JSON", plot(other, "--out", os.path.join(tmp, "b2")), "other.json", os.path.join(tmp, "b2"))
        bad("unknown model", plot(comparison, "--out", os.path.join(tmp, "b3"), "--models", "Nobody"),
            "Nobody", os.path.join(tmp, "b3"))
        # Bad input to the comparison, before any run: no --json file is left.
        out = os.path.join(tmp, "bad.json")
        bad("--vary without values", compare("--vary", "isp.staging.bytes_per_cycle", "--json", out), "--vary", out)
        bad("--vary of a key no accelerator reads",
            compare("--accelerators", "elastic_simd", "--vary", "isp.staging.bytes_per_cycle=8", "--json", out),
            "isp.staging.bytes_per_cycle", out)
        bad("--vary value out of range (checked by ispsim describe before any run)",
            compare("--vary", "isp.staging.bytes_per_cycle=0", "--json", out), "isp.staging.bytes_per_cycle", out)
        bad("unknown accelerator", compare("--accelerators", "tpu", "--json", out), "tpu", out)
        bad("ratio out of range", compare("--ratios", "0.1,1.5", "--json", out), "--ratios", out)
        bad("--json into a missing folder", compare("--json", os.path.join(tmp, "no", "x.json")), "x.json",
            os.path.join(tmp, "no", "x.json"))
        # ispsim's own refusal (a parameter the accelerator does not read) passes through as one line.
        bad("--set the accelerator ignores",
            compare("--models", "SmolLM2-360M", "--ratios", "0.1", "--trace-options", "--docs 1 --context-tokens 512",
                    "--accelerators", "systolic_pair", "--set", "isp.pes=64", "--json", out,
                    "--workdir", os.path.join(tmp, "work2")),
            "isp.pes", out)

    finish("accelerators_plot_test")


if __name__ == "__main__":
    main()
