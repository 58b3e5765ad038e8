#!/usr/bin/env python3
"""Which resource bounds each MemLLM ablation system in each phase, from a run's statistics.

For MemLLM-Base, -Fused, -PerCh and MemLLM on one trace, prints per phase each
resource's busy time (`system.run.phase_busy.<phase>.*`) as a share of the
phase's time (`system.run.phase.<phase>.time`):
NAND streaming (the flash delivering the attention's KV pages), the SSD's
internal bus, the controller DRAM, the ISP compute (the busiest accelerator),
PCIe (the busier direction) and the host GPU. The resource with the largest
share is the bottleneck; shares of resources busy at the same time may add up
to more than 100 %. With --sensitivity, MemLLM-Base again with the controller
DRAM and the internal bus at other bandwidths: the two parameters that decide
its bottleneck (schema/ssd.proto).

Usage:
  python3 tools/baselines/bottleneck.py TRACE [--sensitivity]
    [--ispsim build/release/tools/ispsim/ispsim]
Only the Python standard library is used.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PLATFORMS = ["memllm_base", "memllm_fused", "memllm_perch", "memllm"]
RESOURCES = [  # (column, keys of system.run.phase_busy.<phase>.* holding its busy time in s)
    ("NAND stream", ("nand_stream",)),
    ("internal bus", ("internal_bus",)),
    ("controller DRAM", ("controller_dram",)),
    ("ISP compute", ("isp_compute",)),
    ("PCIe", ("pcie_host_to_device", "pcie_device_to_host")),
    ("host GPU", ("host_gpu",)),
]
SENSITIVITY = [("ssd.dram_bandwidth_gbps", ["6.4", "12.8", "25.6", "51.2"]), ("ssd.bus_bandwidth_gbps", ["8", "16", "32"])]


def flat(stats, prefix=""):
    out = {}
    for key, value in stats.items():
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict) and "value" in value and "unit" in value:
            out[path] = value["value"]
        elif isinstance(value, dict):
            out.update(flat(value, path))
    return out


def run(ispsim, platform, trace, settings):
    with tempfile.TemporaryDirectory() as tmp:
        stats_path = os.path.join(tmp, "stats.json")
        command = [ispsim, "run", "--platform", platform, "--trace", trace, "--stats", stats_path]
        for s in settings:
            command += ["--set", s]
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"bottleneck: {' '.join(command)}: {done.stderr.strip()}")
        with open(stats_path) as f:
            return flat(json.load(f))


def phase_time(stats, phase):
    return stats.get("system.run.phase." + phase + ".time", 0.0)


def phases(stats):
    prefix = "system.run.phase_busy."
    return sorted({k[len(prefix):].rsplit(".", 1)[0] for k in stats if k.startswith(prefix)},
                  key=lambda p: -phase_time(stats, p))


def rows(label, stats):
    out = []
    for phase in phases(stats):
        base = "system.run.phase_busy." + phase + "."
        elapsed = phase_time(stats, phase)
        if elapsed <= 0:
            continue
        shares = [(name, 100.0 * max(stats.get(base + k, 0.0) for k in keys) / elapsed) for name, keys in RESOURCES]
        bottleneck = max(shares, key=lambda s: s[1])[0]
        cells = " | ".join(f"{share:.1f} %" for _, share in shares)
        out.append(f"| {label} | {phase.replace('_', ' ')} | {elapsed * 1e3:.1f} | {cells} | {bottleneck} |")
    return out


def header(first):
    print(f"| {first} | phase | phase time (ms) | " + " | ".join(name for name, _ in RESOURCES) + " | bottleneck |")
    print("|---|---|---|" + "---|" * len(RESOURCES) + "---|")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--sensitivity", action="store_true")
    parser.add_argument("--ispsim", default=os.path.join(ROOT, "build", "release", "tools", "ispsim", "ispsim"))
    args = parser.parse_args()
    header("system")
    for platform in PLATFORMS:
        print("\n".join(rows(platform, run(args.ispsim, platform, args.trace, []))))
    if args.sensitivity:
        print()
        header("MemLLM-Base with")
        for parameter, values in SENSITIVITY:
            for value in values:
                setting = f"{parameter}={value}"
                print("\n".join(rows(setting, run(args.ispsim, "memllm_base", args.trace, [setting]))))


if __name__ == "__main__":
    main()
