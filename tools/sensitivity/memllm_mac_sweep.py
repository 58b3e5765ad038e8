#!/usr/bin/env python3
"""MemLLM's speedup over GPU-FullCompute as a function of the ISP MAC rate.

Sweeps isp.macs_per_pe_per_cycle (a stated assumption, never fitted) against
the host storage path and the host DRAM budget on shape-only traces of a few
dataset profiles, and prints two Markdown tables:

  1. speedup of MemLLM over GPU-FullCompute (GPU-FullCompute latency / MemLLM
     latency; "OOM" where a platform cannot hold the weights), with MemLLM's
     summed ISP compute and NAND stream time of its SSD attention ops at the
     default MAC rate, so the bound is visible;
  2. the Elastic-SIMD power each MAC rate implies: channels x PEs x MACs/cycle x
     clock x pJ/MAC (dynamic, all PEs busy), plus the accelerators' and the
     Flash-Coordinator's static power, against MemLLM's ~3 W envelope.

Every number comes from `ispsim` (run --format json, describe); the parameter
values of the power table are read from `ispsim describe memllm`.

usage: tools/sensitivity/memllm_mac_sweep.py [--ispsim build/release/tools/ispsim/ispsim]
         [--model SmolLM2-1.7B] [--datasets cad,wik,hpt] [--macs 1,2,4,8,16,32,64]
         [--dram-gib 8,16] [--paths orin,4GBps,server] [--jobs 2] [--workdir DIR]
         [--trace-options '--answer-tokens 8'] [--set ssd.stream_model=AGGREGATED ...]
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

# Host storage read paths: name -> --set overrides. "orin" is the default, the
# Jetson Orin NX read path fitted to MemLLM Sec. III-A (host.storage_read_gbps =
# 0.25 GB/s, at the bound of its plausible range); "server" is the A100 server's
# fit (100 GB/s, platforms/server_gpu_*.textproto); "4GBps" lies between.
STORAGE_PATHS = {
    "orin": [],
    "4GBps": ["host.storage_read_gbps=4"],
    "server": ["host.storage_read_gbps=100"],
}


def run(ispsim, platform, trace, overrides):
    cmd = [ispsim, "run", "--platform", platform, "--trace", trace, "--format", "json"]
    for o in overrides:
        cmd += ["--set", o]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 3):  # 3: out of memory, reported in the JSON
        raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    r = json.loads(p.stdout)["runs"][0]
    return r


def describe_values(ispsim, platform, names):
    out = subprocess.run([ispsim, "describe", platform], capture_output=True, text=True, check=True).stdout
    values = {}
    for name in names:
        m = re.search(r"^\s*" + re.escape(name) + r"\s+(\S+)", out, re.M)
        if not m:
            raise SystemExit(f"ispsim describe {platform}: no parameter {name}")
        values[name] = float(m.group(1))
    return values


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ispsim", default="build/release/tools/ispsim/ispsim")
    ap.add_argument("--model", default="SmolLM2-1.7B")
    ap.add_argument("--datasets", default="cad,wik,hpt")
    ap.add_argument("--macs", default="1,2,4,8,16,32,64")
    ap.add_argument("--dram-gib", default="8,16")
    ap.add_argument("--paths", default=",".join(STORAGE_PATHS))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--trace-options", default="",
                    help="extra 'ispsim trace gen' options, e.g. '--answer-tokens 8' to bound long decodes")
    ap.add_argument("--set", action="append", default=[], dest="overrides",
                    help="an extra --set for every run, e.g. ssd.stream_model=AGGREGATED for long contexts")
    ap.add_argument("--workdir", default=None, help="keep the traces here (default: a temporary directory)")
    a = ap.parse_args()
    macs = [int(m) for m in a.macs.split(",")]
    drams = [float(g) for g in a.dram_gib.split(",")]
    datasets = a.datasets.split(",")
    paths = a.paths.split(",")
    for p in paths:
        if p not in STORAGE_PATHS:
            raise SystemExit(f"--paths: unknown storage path '{p}' (known: {', '.join(STORAGE_PATHS)})")

    workdir = a.workdir or tempfile.mkdtemp(prefix="ispsim_mac_sweep_")
    os.makedirs(workdir, exist_ok=True)
    traces = {}
    for d in datasets:
        t = os.path.join(workdir, f"{a.model}-{d}.trace")
        subprocess.run([a.ispsim, "trace", "gen", "--shape", a.model, "--dataset", d, "--out", t] +
                       a.trace_options.split(), check=True, capture_output=True)
        traces[d] = t

    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for d in datasets:
            for p in paths:
                for g in drams:
                    base = a.overrides + STORAGE_PATHS[p] + [f"host.dram_capacity_bytes={int(g * 2**30)}"]
                    jobs[(d, p, g, "fc")] = pool.submit(run, a.ispsim, "gpu_fullcompute", traces[d], base)
                    for m in macs:
                        jobs[(d, p, g, m)] = pool.submit(run, a.ispsim, "memllm", traces[d],
                                                         base + [f"isp.macs_per_pe_per_cycle={m}"])
        results = {k: f.result() for k, f in jobs.items()}

    def cell(fc, ml):
        if fc["status"] != "ok" or ml["status"] != "ok":
            return "OOM" if "out_of_memory" in (fc["status"], ml["status"]) else "failed"
        return f"{fc['metrics']['latency_s'] / ml['metrics']['latency_s']:.2f}"

    print(f"Speedup of MemLLM over GPU-FullCompute, {a.model}, shape-only traces (seed 1"
          f"{', ' + a.trace_options if a.trace_options else ''}"
          f"{''.join(', --set ' + o for o in a.overrides)}); "
          f"ISP compute / NAND stream = MemLLM's SSD attention ops summed, at {macs[0]} MAC/PE/cycle\n")
    print("| dataset | storage path | host DRAM | GPU-FC (ms) | " +
          " | ".join(f"{m} MAC" for m in macs) + f" | ISP compute (ms) | NAND stream (ms) |")
    print("|---|---|---|---|" + "---|" * len(macs) + "---|---|")
    for d in datasets:
        for p in paths:
            for g in drams:
                fc = results[(d, p, g, "fc")]
                first = results[(d, p, g, macs[0])]
                row = [d, p, f"{g:g} GiB", f"{fc['metrics']['latency_s'] * 1e3:.1f}" if fc["status"] == "ok" else "OOM"]
                row += [cell(fc, results[(d, p, g, m)]) for m in macs]
                row += [f"{first['metrics']['isp_compute_s'] * 1e3:.1f}" if first["status"] == "ok" else "-",
                        f"{first['metrics']['nand_stream_s'] * 1e3:.1f}" if first["status"] == "ok" else "-"]
                print("| " + " | ".join(row) + " |")

    v = describe_values(a.ispsim, "memllm", ["nand.channels", "isp.pes", "isp.clock_ghz", "isp.mac_pj",
                                             "isp.static_power_w", "flash_coordinator.static_power_w"])
    static = v["nand.channels"] * v["isp.static_power_w"] + v["flash_coordinator.static_power_w"]
    print(f"\nElastic-SIMD power per MAC rate ({v['nand.channels']:g} channels x {v['isp.pes']:g} PEs x "
          f"{v['isp.clock_ghz']:g} GHz x {v['isp.mac_pj']:g} pJ/MAC, all PEs busy; static = "
          f"{v['nand.channels']:g} x {v['isp.static_power_w']:g} W + coordinator "
          f"{v['flash_coordinator.static_power_w']:g} W = {static:.2f} W)\n")
    print("| MAC/PE/cycle | peak MAC rate (TMAC/s) | SIMD dynamic (W) | + static (W) | within ~3 W |")
    print("|---|---|---|---|---|")
    for m in macs:
        rate = v["nand.channels"] * v["isp.pes"] * m * v["isp.clock_ghz"] * 1e9
        dyn = rate * v["isp.mac_pj"] * 1e-12
        print(f"| {m} | {rate / 1e12:.3f} | {dyn:.2f} | {dyn + static:.2f} | {'yes' if dyn + static <= 3.0 else 'no'} |")


if __name__ == "__main__":
    main()
