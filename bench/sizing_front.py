#!/usr/bin/env python3
"""The default run (the sizing front: cycles, off-chip bytes and peak SRAM at the default ε) on every
workload given x every preset: wall time, peak memory, front size and the sizing figures, as a
Markdown table (issue 36's note). With --exact-limit S it also runs --exact with that time limit and,
where the exact front finishes, prints the largest coverage ratio of the ε-front over it (it must be
at most 1 + ε).

  bench/sizing_front.py --mapper build/release/mapper/mapper workloads/*.yaml workloads/models/*.tflite
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

PRESETS = ["ethos-u55-32", "ethos-u55-64", "ethos-u55-128", "ethos-u55-256", "ethos-u65-256", "ethos-u65-512"]


def run(mapper, workload, preset, extra, threads, time_limit=None):
    out = tempfile.mkdtemp(prefix="sizing_")
    cmd = [mapper, "-w", workload, "-a", preset, "-j", str(threads), "-q", "--keep-pareto", "-o", out + "/r"] + extra
    if time_limit:
        cmd += ["--time-limit", str(time_limit)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB, the largest child so far
    path = os.path.join(out, "r", "result.json")
    doc = json.load(open(path)) if os.path.exists(path) else {}
    return wall, max(rss, before), proc.returncode, doc


def coverage(eps_front, exact_front, objectives):
    worst = 1.0
    for x in exact_front:
        best = float("inf")
        for y in eps_front:
            ratio = 1.0
            for o in objectives:
                xv, yv = x[o], y[o]
                ratio = max(ratio, 1.0 if yv <= xv else (yv / xv if xv > 0 else float("inf")))
            best = min(best, ratio)
        worst = max(worst, best)
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mapper", default="build/release/mapper/mapper")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--presets", default=",".join(PRESETS))
    ap.add_argument("--limit", type=float, default=0.0, help="--time-limit of each default run (s; 0: none)")
    ap.add_argument("--exact-limit", type=float, default=0.0, help="also run --exact with this time limit (s)")
    ap.add_argument("workloads", nargs="+")
    a = ap.parse_args()
    keys = {"cycles": "cycles", "offchip_bytes": "offchip_bytes", "sram": "sram_bytes"}
    print("| workload | preset | wall s | RSS MiB | front | SRAM @1% | SRAM @5% | SRAM @10% | best cycles | coverage (exact front) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    times = []
    for w in a.workloads:
        for p in a.presets.split(","):
            wall, rss, rc, doc = run(a.mapper, w, p, [], a.threads, a.limit or None)
            times.append(wall)
            s = doc.get("front_summary", {})
            z = s.get("sizing", {})
            within = z.get("least_sram_within_latency", [])
            fig = ["%.1f KiB" % (e["sram_bytes"] / 1024) for e in within] + ["-"] * (3 - len(within))
            best = z.get("best_latency_at_sram_capacity", {}).get("cycles", float("nan"))
            cov = ""
            if a.exact_limit > 0 and rc == 0:
                _, _, rc2, ex = run(a.mapper, w, p, ["--exact"], a.threads, a.exact_limit)
                if rc2 == 0 and not ex.get("front_is_partial") and ex.get("front"):
                    objs = [keys[o] for o in doc["objectives"]]
                    cov = "%.5f (exact %d points)" % (coverage(doc["front"], ex["front"], objs), ex["front_size"])
                else:
                    cov = "exact > %gs" % a.exact_limit
            print("| %s | %s | %.2f | %.0f | %s | %s | %s | %s | %.0f | %s |" % (
                os.path.basename(w), p, wall, rss / 1024, ("stopped" if rc == 130 else doc.get("front_size", "rc %d" % rc)), fig[0], fig[1], fig[2], best, cov))
            sys.stdout.flush()
    times.sort()
    print("\nruns %d, median %.2f s, max %.2f s" % (len(times), times[len(times) // 2], times[-1]))


if __name__ == "__main__":
    main()
