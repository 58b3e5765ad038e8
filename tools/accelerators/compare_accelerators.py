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

usage: tools/accelerators/compare_accelerators.py [--ispsim build/release/tools/ispsim/ispsim]
         [--models SmolLM2-360M,OPT-350M] [--dataset cad] [--ratios 0.05,0.10,0.15,0.20,0.25]
         [--answer-tokens 1] [--seed 1] [--workdir DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ACCELERATORS = ["elastic_simd", "elastic_no_filter", "systolic_pair"]


def check(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def run(ispsim, trace, accelerator, stats):
    out = check([ispsim, "run", "--platform", "memllm", "--trace", trace, "--format", "json", "--stats", stats,
                 "--set", f"modules.isp_accelerator={accelerator}"])
    summary = json.loads(out)["runs"][0]
    with open(stats) as f:
        attention = json.load(f)["system"]["ssd"]["attention"]
    return {
        "compute_ms": attention["isp_compute_time"]["value"] * 1e-6,
        "sram_io_ms": attention["isp_sram_io_time"]["value"] * 1e-6,
        "macs": attention["macs"]["value"],
        "prefill_ms": summary["phase_ms"].get("fused prefill", 0.0),
        "latency_ms": summary["latency_ms"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ispsim", default="build/release/tools/ispsim/ispsim")
    ap.add_argument("--models", default="SmolLM2-360M,OPT-350M")
    ap.add_argument("--dataset", default="cad")
    ap.add_argument("--ratios", default="0.05,0.10,0.15,0.20,0.25")
    ap.add_argument("--answer-tokens", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir", default=None, help="keep traces and statistics here (default: a temporary directory)")
    a = ap.parse_args()
    ratios = [float(r) for r in a.ratios.split(",")]
    workdir = a.workdir or tempfile.mkdtemp(prefix="ispsim-accelerators-")
    os.makedirs(workdir, exist_ok=True)

    print(f"MemLLM platform, dataset profile {a.dataset}, seed {a.seed}, {a.answer_tokens} answer token(s); "
          "times in ms, summed over the request's attention ops (busiest channel per op).\n")
    for model in a.models.split(","):
        print(f"#### {model}\n")
        print("| recomputation | accelerator | compute (ms) | of which SRAM I/O (ms) | MACs (G) "
              "| fused prefill (ms) | end-to-end (ms) |")
        print("|---|---|---|---|---|---|---|")
        for ratio in ratios:
            trace = os.path.join(workdir, f"{model}_{a.dataset}_{ratio:.2f}.trace")
            check([a.ispsim, "trace", "gen", "--shape", model, "--dataset", a.dataset, "--ratio", str(ratio),
                   "--seed", str(a.seed), "--answer-tokens", str(a.answer_tokens), "--out", trace])
            for accelerator in ACCELERATORS:
                stats = os.path.join(workdir, f"{model}_{ratio:.2f}_{accelerator}.json")
                r = run(a.ispsim, trace, accelerator, stats)
                print(f"| {ratio * 100:.0f} % | {accelerator} | {r['compute_ms']:.3f} | {r['sram_io_ms']:.3f} "
                      f"| {r['macs'] * 1e-9:.2f} | {r['prefill_ms']:.3f} | {r['latency_ms']:.3f} |")
        print()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
