#!/usr/bin/env python3
"""MemLLM's accelerator comparison: the three ISP accelerators across
recomputation ratios, under one power budget.

For each model and recomputation ratio, generates one shape-only request
(`ispsim trace gen`, seeded HKVD masks) and runs it on MemLLM with each
accelerator (`--set modules.isp_accelerator=NAME`): the Elastic-SIMD with its
Stream Filter (elastic_simd, MemLLM's design), the Elastic-SIMD without Stream
Filter (elastic_no_filter) and the decoupled SIMD + systolic-array pair
(systolic_pair). Their defaults share one power budget: 128 MAC units per
channel at the same clock, MAC energy and static power (0.292 W peak each;
`ispsim describe isp_accelerator`).

Printed (Markdown), per model, ratio and accelerator, from the run's statistics
(system.ssd.attention.*, summed over the request's attention ops, each op
counted on its busiest channel):
  - compute latency: isp_compute_time, the accelerator's time (MACs, softmax,
    and its SRAM I/O);
  - SRAM I/O latency: isp_sram_io_time, the exposed scratchpad / SRAM traffic
    within it (the Stream Filter's pass, the staging of recomputed entries,
    the systolic pair's A/P exchange);
  - the fused prefill's time and the end-to-end latency (ms), where NAND reads
    hide part of the compute.

--set KEY=VALUE is passed to every run (ispsim rejects an isp.* parameter the
accelerator does not read: restrict the runs with --accelerators).
--vary KEY=V1,V2,... is a sensitivity study: besides the default runs, each
accelerator that reads KEY (per `ispsim describe isp_accelerator`; a key
outside isp.* counts as read by all) runs once per value; one parameter is
varied at a time, the others stay at their defaults. A second table per model
gives compute / SRAM I/O latency (ms) for every value; accelerators that do not
read KEY show their default run, marked "=".
--json PATH writes every run's figures (machine-readable; the input of
tools/plot/accelerators_plot.py). Every setting is checked by `ispsim describe`
before the first run. Bad input: one line on stderr, exit 2.

usage: tools/accelerators/compare_accelerators.py [--ispsim build/release/tools/ispsim/ispsim]
         [--models SmolLM2-360M,OPT-350M] [--dataset cad] [--ratios 0.05,0.10,0.15,0.20,0.25]
         [--answer-tokens 1] [--seed 1] [--trace-options '--docs 1 --context-tokens 512'] [--accelerators elastic_simd,...] [--set KEY=VALUE ...]
         [--vary KEY=V1,V2,... ...] [--json PATH] [--workdir DIR]
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

PROGRAM = "compare_accelerators.py"


def fail(message):
    print(f"{PROGRAM}: error: {message}", file=sys.stderr)
    sys.exit(2)


def check(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode == 2:  # ispsim's bad input (e.g. a --set it refuses): its own line
        fail(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"{' '.join(cmd)}: exit 2")
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def accelerator_parameters(ispsim):
    """{accelerator: {parameter: default text}} from `ispsim describe isp_accelerator`, the
    platforms' default accelerator first (the others relate to it), then the rest as listed."""
    params, current, default = {}, None, None
    for line in check([ispsim, "describe", "isp_accelerator"]).splitlines():
        chosen = re.search(r'\(default "([a-z0-9_]+)"\)', line)
        if chosen:
            default = chosen.group(1)
        header = re.match(r"^([a-z0-9_]+): ", line)
        if header and header.group(1) != "modes":  # "NAME: what it is", then "modes: ..."
            current = header.group(1)
            params[current] = {}
        elif current and line.startswith("isp."):
            fields = line.split()
            params[current][fields[0]] = fields[2] if len(fields) > 2 else ""
    if default in params:
        params = {default: params[default], **{k: v for k, v in params.items() if k != default}}
    return params


def run(ispsim, trace, accelerator, overrides, stats):
    cmd = [ispsim, "run", "--platform", "memllm", "--trace", trace, "--format", "json", "--stats", stats,
           "--set", f"modules.isp_accelerator={accelerator}"]
    for o in overrides:
        cmd += ["--set", o]
    summary = json.loads(check(cmd))["runs"][0]
    with open(stats) as f:
        attention = json.load(f)["system"]["ssd"]["attention"]
    return {
        "compute_ms": attention["isp_compute_time"]["value"] * 1e3,
        "sram_io_ms": attention["isp_sram_io_time"]["value"] * 1e3,
        "macs": summary["metrics"]["ssd_attention_macs"],
        "prefill_ms": summary["metrics"].get("phase.fused_prefill_s", 0.0) * 1e3,
        "latency_ms": summary["metrics"]["latency_s"] * 1e3,
    }


def key_value(option, text):
    key, sep, value = text.partition("=")
    if not sep or not key or not value:
        fail(f"{option} {text}: not KEY=VALUE")
    return key, value


def same_number(a, b):
    try:
        return float(a) == float(b)
    except ValueError:
        return False


def plan_variations(varies, accelerators, params):
    """[(key, value, [accelerators that run it], is the default)] for every --vary value."""
    out = []
    for text in varies:
        key, values = key_value("--vary", text)
        readers = [a for a in accelerators if key in params.get(a, {}) or not key.startswith("isp.")]
        if not readers:
            fail(f"--vary {key}: none of {', '.join(accelerators)} reads it (ispsim describe isp_accelerator)")
        default = params[readers[0]].get(key, "") if key.startswith("isp.") else ""
        for value in values.split(","):
            if not value:
                fail(f"--vary {text}: an empty value")
            out.append((key, value, readers, same_number(value, default)))
    return out


def preflight(ispsim, accelerators, overrides, variations):
    """Every setting of every run checked by `ispsim describe` (names, ranges) before the first
    run, so a bad value fails in a second, not after minutes of runs."""
    settings = [[f"modules.isp_accelerator={acc}"] + overrides for acc in accelerators]
    settings += [[f"modules.isp_accelerator={acc}", f"{key}={value}"] + overrides
                 for key, value, readers, _ in variations for acc in readers]
    for s in settings:
        check([ispsim, "describe", "memllm"] + [x for o in s for x in ("--set", o)])


def parse_ratios(text):
    try:
        ratios = [float(r) for r in text.split(",")]
    except ValueError:
        fail(f"--ratios {text}: not a comma-separated list of numbers")
    if any(not 0 < r < 1 for r in ratios):
        fail(f"--ratios {text}: each ratio must lie in (0, 1)")
    return ratios


class Progress:
    """A line on stderr when it is a terminal; quiet otherwise."""

    def __init__(self, total):
        self.total, self.done, self.shown = total, 0, sys.stderr.isatty()

    def step(self, what):
        self.done += 1
        if self.shown:
            print(f"\r[{self.done}/{self.total}] {what}\033[K", end="", file=sys.stderr, flush=True)

    def close(self):
        if self.shown:
            print("\r\033[K", end="", file=sys.stderr, flush=True)


class JsonOutput:
    """Opened early (a bad path fails before any run), written complete under a
    temporary name and renamed at the end (no half-written file)."""

    def __init__(self, path):
        self.path, self.tmp, self.file = path, None, None
        if path:
            self.tmp = f"{path}.tmp.{os.getpid()}"
            try:
                self.file = open(self.tmp, "w")
            except OSError as e:
                fail(f"--json {path}: cannot write ({e.strerror})")

    def commit(self, data):
        if self.file:
            json.dump(data, self.file, indent=1)
            self.file.close()
            os.replace(self.tmp, self.path)

    def abandon(self):
        if self.file:
            self.file.close()
            os.remove(self.tmp)


def milliseconds(r):
    return f"{r['compute_ms']:.3f} / {r['sram_io_ms']:.3f}"


def print_comparison(rows, accelerators, ratios):
    print("| recomputation | accelerator | compute (ms) | of which SRAM I/O (ms) | MACs (G) "
          "| fused prefill (ms) | end-to-end (ms) |")
    print("|---|---|---|---|---|---|---|")
    for ratio in ratios:
        for accelerator in accelerators:
            r = rows[(ratio, accelerator, None)]
            print(f"| {ratio * 100:.0f} % | {accelerator} | {r['compute_ms']:.3f} | {r['sram_io_ms']:.3f} "
                  f"| {r['macs'] * 1e-9:.2f} | {r['prefill_ms']:.3f} | {r['latency_ms']:.3f} |")
    print()


def print_sensitivity(rows, accelerators, ratios, variations):
    relative = "elastic_simd" in accelerators and "elastic_no_filter" in accelerators
    print("compute / of which SRAM I/O latency (ms); \"=\": the accelerator does not read the parameter "
          "(its default run)" + ("; last column: elastic_no_filter's compute relative to elastic_simd's" if relative else "")
          + "\n")
    print("| parameter | value | recomputation | " + " | ".join(accelerators) +
          (" | no filter vs filter (%) |" if relative else " |"))
    print("|---" * (3 + len(accelerators) + relative) + "|")
    for key, value, readers, is_default in variations:
        for ratio in ratios:
            cells, compute = [], {}
            for a in accelerators:
                r = rows[(ratio, a, None if is_default or a not in readers else (key, value))]
                compute[a] = r["compute_ms"]
                cells.append(("" if a in readers else "= ") + milliseconds(r))
            if relative:
                cells.append(f"{(compute['elastic_no_filter'] / compute['elastic_simd'] - 1) * 100:+.2f}")
            print(f"| `{key}` | {value}{' (default)' if is_default else ''} | {ratio * 100:.0f} % | " +
                  " | ".join(cells) + " |")
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ispsim", default="build/release/tools/ispsim/ispsim")
    ap.add_argument("--models", default="SmolLM2-360M,OPT-350M")
    ap.add_argument("--dataset", default="cad")
    ap.add_argument("--ratios", default="0.05,0.10,0.15,0.20,0.25")
    ap.add_argument("--answer-tokens", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--trace-options", default="",
                    help="more options for `ispsim trace gen`, e.g. '--docs 1 --context-tokens 512' (a smaller request)")
    ap.add_argument("--accelerators", default="",
                    help="accelerators to run, in table order (default: every one `ispsim describe isp_accelerator` lists)")
    ap.add_argument("--set", action="append", default=[], dest="overrides",
                    help="KEY=VALUE passed to every run (repeatable)")
    ap.add_argument("--vary", action="append", default=[],
                    help="KEY=V1,V2,...: a sensitivity table over these values (repeatable; one key varied at a time)")
    ap.add_argument("--json", help="write every run's figures here (machine-readable)")
    ap.add_argument("--workdir", default=None, help="keep traces and statistics here (default: a temporary directory)")
    a = ap.parse_args()
    if not os.access(a.ispsim, os.X_OK):
        fail(f"--ispsim {a.ispsim}: not an executable (build it: cmake --build build/release --target ispsim)")
    ratios = parse_ratios(a.ratios)
    models = [m for m in a.models.split(",") if m]
    for o in a.overrides:
        key_value("--set", o)
    params = accelerator_parameters(a.ispsim)
    accelerators = [x for x in a.accelerators.split(",") if x] if a.accelerators else list(params)
    unknown = [x for x in accelerators if x not in params]
    if unknown or not accelerators:
        fail(f"--accelerators {a.accelerators}: unknown {', '.join(unknown) or 'empty list'} "
             f"(known: {', '.join(sorted(params))})")
    variations = plan_variations(a.vary, accelerators, params)
    preflight(a.ispsim, accelerators, a.overrides, variations)
    output = JsonOutput(a.json)
    workdir = a.workdir or tempfile.mkdtemp(prefix="ispsim-accelerators-")
    os.makedirs(workdir, exist_ok=True)

    # (ratio, accelerator, None | (key, value)) per model; the default runs first, then the variations.
    jobs = [(ratio, acc, None) for ratio in ratios for acc in accelerators]
    jobs += [(ratio, acc, (key, value)) for key, value, readers, is_default in variations if not is_default
             for ratio in ratios for acc in readers]
    progress = Progress(len(models) * len(jobs))
    results = []
    try:
        print(f"MemLLM platform, dataset profile {a.dataset}, seed {a.seed}, {a.answer_tokens} answer token(s)"
              f"{', trace gen ' + a.trace_options if a.trace_options else ''}{''.join(', --set ' + o for o in a.overrides)}; times summed over the request's attention ops "
              "(busiest channel per op).\n")
        for model in models:
            rows = {}
            for ratio in ratios:
                trace = os.path.join(workdir, f"{model}_{a.dataset}_{ratio:.2f}.trace")
                check([a.ispsim, "trace", "gen", "--shape", model, "--dataset", a.dataset, "--ratio", str(ratio),
                       "--seed", str(a.seed), "--answer-tokens", str(a.answer_tokens), "--out", trace]
                      + shlex.split(a.trace_options))
            for ratio, acc, variation in jobs:
                progress.step(f"{model} {ratio * 100:.0f} % {acc} {'='.join(variation or ())}")
                trace = os.path.join(workdir, f"{model}_{a.dataset}_{ratio:.2f}.trace")
                extra = [f"{variation[0]}={variation[1]}"] if variation else []
                stats = os.path.join(workdir, f"{model}_{ratio:.2f}_{acc}{'_' + '_'.join(variation) if variation else ''}.json")
                rows[(ratio, acc, variation)] = run(a.ispsim, trace, acc, a.overrides + extra, stats)
                results.append({"model": model, "ratio": ratio, "accelerator": acc,
                                "vary": dict([variation]) if variation else {}, **rows[(ratio, acc, variation)]})
            progress.close()
            print(f"#### {model}\n")
            print_comparison(rows, accelerators, ratios)
            if variations:
                print(f"#### {model}: sensitivity\n")
                print_sensitivity(rows, accelerators, ratios, variations)
            sys.stdout.flush()
    except BaseException:
        progress.close()
        output.abandon()
        raise
    output.commit({"platform": "memllm", "dataset": a.dataset, "seed": a.seed, "answer_tokens": a.answer_tokens,
                   "trace_options": a.trace_options,
                   "set": a.overrides, "accelerators": accelerators,
                   "units": {"compute_ms": "ms", "sram_io_ms": "ms", "macs": "MAC operations", "prefill_ms": "ms",
                             "latency_ms": "ms", "ratio": "fraction of context tokens recomputed"},
                   "runs": results})


if __name__ == "__main__":
    main()
