#!/usr/bin/env python3
"""The drive-lifetime table: each MemLLM-study system on a fresh and on an aged 1 TiB drive.

For one request (default: SmolLM2-1.7B on the hpt profile, the README's example)
and each of the eight systems of the default compare group, runs the request on
a fresh 1 TiB drive and on an aged one (`ispsim_age_drive`: filled, then
overwritten in 64-page runs at random until the WAF settles; saved once and
loaded by every aged run) and prints a Markdown table: bytes the request wrote
to flash (host programs, GC excluded), the request's own WAF on the aged drive
((host + GC programs) / host programs), the drive's lifetime in days at one
request per minute, the latency on the fresh and on the aged drive, and the
aged run's peak RSS.

Lifetime = endurance x physical bytes / (WAF x bytes written per day), with the
aged drive's steady-state WAF (its last aging window): the rate at which GC
multiplies writes once the drive is full, which a single request is too short to
measure (models/ssd/ftl/README.md, "Lifetime").

Usage:
  python3 tools/ftl/drive_lifetime.py OUT_DIR [--build build/release]
    [--shape SmolLM2-1.7B] [--dataset hpt]
Only the Python standard library is used; peak RSS needs /usr/bin/time.
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
        stats = flat(json.load(f))
    stats["maxrss_kb"] = int(re.search(r"maxrss_kb (\d+)", done.stderr).group(1))
    return stats


def row(platform, fresh, aged, steady_waf, physical_bytes):
    host_pages = aged["system.ssd.nand_pages_programmed"]
    written = aged["system.ssd.nand_bytes_programmed"]
    gc_pages = aged["system.ssd.gc_pages_programmed"]
    request_waf = f"{(host_pages + gc_pages) / host_pages:.2f}" if host_pages else "-"
    days = f"{ENDURANCE * physical_bytes / (steady_waf * written * REQUESTS_PER_DAY):,.0f}" if written else "unbounded (writes nothing)"
    return (f"| {platform} | {written / 1e6:.1f} | {request_waf} | {days} | "
            f"{fresh['system.run.latency'] / 1e6:.3f} | {aged['system.run.latency'] / 1e6:.3f} | "
            f"{aged['maxrss_kb'] / 1024:.0f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    parser.add_argument("--shape", default="SmolLM2-1.7B")
    parser.add_argument("--dataset", default="hpt")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    ispsim = os.path.join(args.build, "tools", "ispsim", "ispsim")
    trace = os.path.join(args.out, f"{args.dataset}.trace")
    check([ispsim, "trace", "gen", "--shape", args.shape, "--dataset", args.dataset, "--out", trace])
    drive, steady_waf, physical_bytes, report = aged_drive(args.build, args.out)
    print(f"aged drive ({os.path.basename(drive)}): {report.strip()}\n")
    print(f"request: {args.shape} on {args.dataset}; lifetime at the aged drive's steady-state WAF {steady_waf:.3f}, "
          f"3000 P/E cycles, one request per minute\n")
    print("| system | written per request (MB) | request WAF (aged) | lifetime (days) | latency fresh (ms) "
          "| latency aged (ms) | peak RSS aged (MiB) |")
    print("|---|---|---|---|---|---|---|")
    for p in PLATFORMS:
        fresh = run(ispsim, p, trace, os.path.join(args.out, f"{p}_fresh.json"))
        aged = run(ispsim, p, trace, os.path.join(args.out, f"{p}_aged.json"), drive)
        print(row(p, fresh, aged, steady_waf, physical_bytes), flush=True)


if __name__ == "__main__":
    main()
