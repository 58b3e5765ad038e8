#!/usr/bin/env python3
"""Markdown tables from `ispsim compare --format json` runs of paper 1's platforms (tools/cim/tables.sh)."""
import json
import os
import sys

STAGES = ["weights", "KV write", "KV read/attention", "pursuit", "nonlinear", "transfers"]
CONTEXTS = ["1K", "64K", "256K"]


def runs(path):
    with open(path) as f:
        return {r["platform"]: r for r in json.load(f)["runs"]}


def key(stage):
    """The metric key of a stage: "KV read/attention" -> "kv_read_attention" (docs/results.md)."""
    return stage.lower().replace(" ", "_").replace("/", "_")


def milli(r, metric):
    """A metric of a run in thousandths of its SI unit (s -> ms, J -> mJ); a stage the run lacks is 0."""
    return 1e3 * r["metrics"].get(metric, 0.0)


def cell(r):
    if r["status"] != "ok":
        return "overflow" if r["status"] == "out_of_memory" else "failed"
    return f'{milli(r, "tbt_s"):.3f} / {milli(r, "energy_per_token_j"):.1f}'


def main_table(files):
    print("| platform | context | TBT (ms) | TBT eq.4 (ms) | energy/token (mJ) | speedup vs B1 | energy ratio vs B1 |")
    print("|---|---|---|---|---|---|---|")
    for ctx, path in zip(CONTEXTS, files):
        rs = runs(path)
        base = rs.get("B1")
        for name in ["B1", "B2", "S1", "S2"]:
            r = rs[name]
            if r["status"] != "ok":
                print(f"| {name} | {ctx} | {r['status']} | | | | |")
                continue
            tbt, e = milli(r, "tbt_s"), milli(r, "energy_per_token_j")
            sp = er = "-"
            if base and base["status"] == "ok":
                sp = f'{milli(base, "tbt_s") / tbt:.2f}'
                er = f'{e / milli(base, "energy_per_token_j"):.3f}'
            print(f'| {name} | {ctx} | {tbt:.3f} | {milli(r, "tbt_eq4_s"):.3f} | {e:.1f} | {sp} | {er} |')
    for ctx, path in zip(CONTEXTS, files):
        for name, r in runs(path).items():
            if "failure" in r:
                print(f"\n{name} at {ctx}: {r['failure']}")


def stages_table(path):
    rs = runs(path)
    print("| platform | " + " | ".join(f"{s} (ms)" for s in STAGES) + " | " + " | ".join(f"{s} (mJ)" for s in STAGES) + " |")
    print("|---" * (1 + 2 * len(STAGES)) + "|")
    for name, r in rs.items():
        if r["status"] != "ok":
            print(f"| {name} | " + " | ".join([r["status"]] + [""] * (2 * len(STAGES) - 1)) + " |")
            continue
        times = [f'{milli(r, f"stage.{key(s)}_s"):.3f}' for s in STAGES]
        energies = [f'{milli(r, f"stage_energy.{key(s)}_j"):.2f}' for s in STAGES]
        print(f"| {name} | " + " | ".join(times + energies) + " |")


def sensitivity_table(out):
    rows = [
        ("cim.pass_sharing = PER_BATCH (default)", "share_batch", ["B2", "S2"]),
        ("cim.pass_sharing = PER_TOKEN", "share_token", ["B2", "S2"]),
        ("cim.pass_sharing = PER_VECTOR", "share_vector", ["B2", "S2"]),
        ("cim.throughput_meaning = READ_BANDWIDTH", "read_bw", ["S2"]),
        ("READ_BANDWIDTH + PER_VECTOR", "read_bw_vector", ["S2"]),
        ("cim.pcie_score_bits = 8", "score8", ["S2"]),
        ("t_l = t_o = 0 (bus and PCIe)", "tl0", ["S2"]),
        ("bus t_l 1 us, t_o 0.5 us; PCIe t_l 1 us, t_o 5 us", "tl10", ["S2"]),
        ("cim.b2_pursuit_device = HOST_CPU (Sec. 5.5)", "b2cpu", ["B2"]),
    ]
    print("| setting | platform | " + " | ".join(f"{c}: TBT ms / mJ" for c in CONTEXTS) + " |")
    print("|---|---|---|---|---|")
    for label, stem, platforms in rows:
        for p in platforms:
            cells = [cell(runs(os.path.join(out, f"{stem}_{c}.json"))[p]) for c in CONTEXTS]
            print(f"| {label} | {p} | " + " | ".join(cells) + " |")


def s1_table(out):
    print("| setting (4K context) | B1 | B2 | S1 | S2 |")
    print("|---|---|---|---|---|")
    for s in ["PER_BATCH", "PER_TOKEN", "PER_VECTOR"]:
        rs = runs(os.path.join(out, f"s1_{s}_4K.json"))
        print(f"| cim.pass_sharing = {s} | " + " | ".join(cell(rs[p]) for p in ["B1", "B2", "S1", "S2"]) + " |")
    rs = runs(os.path.join(out, "s1_read_bw_4K.json"))
    print("| cim.throughput_meaning = READ_BANDWIDTH | | | " + cell(rs["S1"]) + " | " + cell(rs["S2"]) + " |")


def nonlinear_table(out):
    print("| context | platform | nonlinear on | TBT (ms) | nonlinear (ms) | share of TBT | energy/token (mJ) |")
    print("|---|---|---|---|---|---|---|")
    for c in CONTEXTS:
        for stem, where in [("nl_ctrl", "controller (integer)"), ("nl_npu", "host NPU (FP32, over PCIe)"),
                            ("nl_ctrl_big", "controller (integer)"), ("nl_npu_big", "host NPU (FP32, over PCIe)")]:
            for p, r in runs(os.path.join(out, f"{stem}_{c}.json")).items():
                if "big" in stem:
                    p = "S1* (16 GiB SRAM)"
                if r["status"] != "ok":
                    print(f"| {c} | {p} | {where} | {r['status']} | | | |")
                    continue
                tbt, nl = milli(r, "tbt_s"), milli(r, "stage.nonlinear_s")
                print(f'| {c} | {p} | {where} | {tbt:.3f} | {nl:.3f} | {100 * nl / tbt:.1f} % | '
                      f'{milli(r, "energy_per_token_j"):.1f} |')


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    {"main": lambda: main_table(args), "stages": lambda: stages_table(args[0]),
     "sensitivity": lambda: sensitivity_table(args[0]), "s1": lambda: s1_table(args[0]),
     "nonlinear": lambda: nonlinear_table(args[0])}[mode]()
