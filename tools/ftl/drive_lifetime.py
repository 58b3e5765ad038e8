#!/usr/bin/env python3
"""The drive-lifetime table: each MemLLM-study system on a fresh and on an aged 1 TiB drive.

For a mix of requests (SmolLM2-1.7B, one request of each dataset profile given,
in equal shares; default: the hpt profile alone, the README's example request)
and each of the eight systems of the default compare group, runs every request on a fresh 1 TiB drive and on an aged one
(`ispsim_age_drive`: filled, then overwritten in aligned 64-page runs at random
until the WAF settles; saved once and loaded by every aged run) and prints a
Markdown table: bytes a request wrote to flash (host programs, GC excluded; mean
over the mix), the requests' WAF on the aged drive ((host + GC programs) / host
programs over the mix), the drive's lifetime in days at one request per minute,
the mean latency on the fresh and on the aged drive, and the aged runs' largest
peak RSS.

Lifetime = endurance x physical bytes / (WAF x bytes written per day), with the
aged drive's steady-state WAF (its last aging window): the rate at which GC
multiplies writes once the drive is full, which single requests are too short to
measure (models/ssd/ftl/README.md, "Lifetime").

Usage:
  python3 tools/ftl/drive_lifetime.py OUT_DIR [--build build/release]
    [--shape SmolLM2-1.7B] [--datasets hpt] [--platforms gpu_fullcompute,...]
--datasets fin,tat,cov,cad,prv,wik,web,hpt is the mix of all eight profiles; on the
aged drive the ISP systems' long-context requests (cad) take tens of seconds to
minutes each: GC runs beside their attention, whose passes then run on page events,
and no pass is looked up (docs/validation.md). Only the Python standard library is
used; peak RSS needs /usr/bin/time.
"""

import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "baselines"))
from bottleneck import flat  # noqa: E402  statistics JSON -> {dotted name: value}
PLATFORMS = ["gpu_fullcompute", "gpu_precompute", "instattention", "aif", "memllm_base", "memllm_fused",
             "memllm_perch", "memllm"]
BLOCKS_PER_PLANE = 2048  # the default flash (8 channels x 4 dies x 2 planes, 512 pages of 16 KiB) at 1 TiB
RUN_PAGES = 64
REQUESTS_PER_DAY = 24 * 60
ENDURANCE = 3000  # ftl.endurance_pe_cycles, the default of the platforms' drive


def check(command, **kwargs):
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)
    if done.returncode != 0:
        sys.exit(f"drive_lifetime: {' '.join(command)}: {done.stderr.strip()}")
    return done


def aged_drive(build, out):
    path = os.path.join(out, "aged_1tib.ftl")
    report = os.path.join(out, "aged_1tib.txt")
    if not os.path.exists(path):
        done = check([os.path.join(build, "bench", "ispsim_age_drive"), path, str(BLOCKS_PER_PLANE), str(RUN_PAGES)])
        with open(report, "w") as f:
            f.write(done.stdout)
    with open(report) as f:
        text = f.read()
    steady = float(re.search(r"window WAF:.* ([0-9.]+)\n", text).group(1))
    pages = int(re.search(r"drive: (\d+) physical", text).group(1))
    physical_bytes = pages * int(re.search(r"pages of (\d+) bytes", text).group(1))
    return path, steady, physical_bytes, text


def run(ispsim, platform, trace, stats_path, drive=None):
    command = ["/usr/bin/time", "-f", "maxrss_kb %M", ispsim, "run", "--platform", platform, "--trace", trace,
               "--set", f"nand.blocks_per_plane={BLOCKS_PER_PLANE}", "--stats", stats_path]
    if drive:
        command += ["--drive-state", drive]
    done = check(command)
    with open(stats_path) as f:
        raw = json.load(f)
    stats = flat(raw["system"], "system")  # device statistics, SI units
    stats.update(raw["metrics"])  # the metric list's names (docs/results.md)
    stats["maxrss_kb"] = int(re.search(r"maxrss_kb (\d+)", done.stderr).group(1))
    return stats


def row(platform, fresh, aged, steady_waf, physical_bytes):
    """One table row from the lists of a system's fresh and aged runs (one per request of the mix)."""
    host_pages = sum(a["system.ssd.nand_pages_programmed"] for a in aged)
    gc_pages = sum(a["gc_pages_programmed"] for a in aged)
    written = sum(a["nand_written_bytes"] for a in aged) / len(aged)
    request_waf = f"{(host_pages + gc_pages) / host_pages:.2f}" if host_pages else "-"
    days = "unbounded (writes nothing)"
    if written:
        days = f"{ENDURANCE * physical_bytes / (steady_waf * written * REQUESTS_PER_DAY):,.0f}"
    latency = lambda runs: sum(r["latency_s"] for r in runs) / len(runs) * 1e3
    return (f"| {platform} | {written / 1e6:.1f} | {request_waf} | {days} | {latency(fresh):.3f} | "
            f"{latency(aged):.3f} | {max(a['maxrss_kb'] for a in aged) / 1024:.0f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    parser.add_argument("--shape", default="SmolLM2-1.7B")
    parser.add_argument("--datasets", default="hpt")
    parser.add_argument("--platforms", default=",".join(PLATFORMS), help="systems to run, comma-separated")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    ispsim = os.path.join(args.build, "tools", "ispsim", "ispsim")
    traces = {}
    for d in args.datasets.split(","):
        traces[d] = os.path.join(args.out, f"{d}.trace")
        check([ispsim, "trace", "gen", "--shape", args.shape, "--dataset", d, "--out", traces[d]])
    drive, steady_waf, physical_bytes, report = aged_drive(args.build, args.out)
    print(f"aged drive ({os.path.basename(drive)}): {report.strip()}\n")
    print(f"requests: {args.shape}, one of each dataset profile ({args.datasets}); lifetime at the aged drive's "
          f"steady-state WAF {steady_waf:.3f}, {ENDURANCE} P/E cycles, one request per minute\n")
    print("| system | written per request (MB) | request WAF (aged) | lifetime (days) | latency fresh (ms) "
          "| latency aged (ms) | peak RSS aged (MiB) |")
    print("|---|---|---|---|---|---|---|")
    for p in args.platforms.split(","):
        fresh = [run(ispsim, p, t, os.path.join(args.out, f"{p}_{d}_fresh.json")) for d, t in traces.items()]
        aged = [run(ispsim, p, t, os.path.join(args.out, f"{p}_{d}_aged.json"), drive) for d, t in traces.items()]
        print(row(p, fresh, aged, steady_waf, physical_bytes), flush=True)


if __name__ == "__main__":
    main()
