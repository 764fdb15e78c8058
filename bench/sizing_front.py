#!/usr/bin/env python3
"""The sizing run (cycles, off-chip bytes and peak SRAM at ε = 0.01: --extra, which the defaults
do not yet give) on every workload given x every preset: wall time, peak memory, front size and the sizing figures, as a
Markdown table (issue 36's note). With --exact-limit S it also runs --exact with that time limit and,
where the exact front finishes, prints the largest coverage ratio of the ε-front over it (it must be
at most 1 + ε).

  bench/sizing_front.py --mapper build/release/mapper/mapper workloads/*.yaml workloads/models/*.tflite
"""
import argparse
import json
import os
import shutil
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
    rss_file = os.path.join(out, "rss")
    start = time.monotonic()
    # GNU time reports the mapper's own peak RSS (KiB) and CPU seconds (user, system); the driver's rusage of a forked child would
    # include this script's own memory.
    rc = subprocess.run(["/usr/bin/time", "-q", "-f", "%M %U %S", "-o", rss_file] + cmd, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL).returncode
    wall = time.monotonic() - start
    fields = open(rss_file).read().split() if os.path.exists(rss_file) else []
    # GNU time prints "Command exited with non-zero status N" first when the mapper fails.
    rss, cpu = (float(fields[-3]), float(fields[-2]) + float(fields[-1])) if len(fields) >= 3 else (float("nan"), float("nan"))
    path = os.path.join(out, "r", "result.json")
    doc = json.load(open(path)) if os.path.exists(path) else {}
    shutil.rmtree(out, ignore_errors=True)
    return wall, cpu, rss, rc, doc


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
    ap.add_argument("--extra", default="--objectives cycles,offchip_bytes,sram --epsilon 0.01",
                    help="options of the sizing run (the --exact run takes the same objectives)")
    ap.add_argument("workloads", nargs="+")
    a = ap.parse_args()
    keys = {"cycles": "cycles", "offchip_bytes": "offchip_bytes", "sram": "sram_bytes"}
    print("| workload | preset | wall s | CPU s | RSS MiB | front | SRAM @1% | SRAM @5% | SRAM @10% | best cycles | coverage (exact front) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    times = []
    for w in a.workloads:
        for p in a.presets.split(","):
            extra = a.extra.split()
            wall, cpu, rss, rc, doc = run(a.mapper, w, p, extra, a.threads, a.limit or None)
            times.append(wall)
            s = doc.get("front_summary") or {}
            z = s.get("sizing", {})
            within = z.get("least_sram_within_latency", [])
            fig = ["%.1f KiB" % (e["sram_bytes"] / 1024) for e in within] + ["-"] * (3 - len(within))
            best = z.get("best_latency_at_sram_capacity", {}).get("cycles", float("nan"))
            cov = ""
            if a.exact_limit > 0 and rc == 0:
                objectives = [x for i, x in enumerate(extra) if i > 0 and extra[i - 1] == "--objectives"]
                _, _, _, rc2, ex = run(a.mapper, w, p, ["--exact"] + ["--objectives"] * bool(objectives) + objectives, a.threads, a.exact_limit)
                if rc2 == 0 and not ex.get("front_is_partial") and ex.get("front"):
                    objs = [keys[o] for o in doc["objectives"]]
                    cov = "%.5f (exact %d points)" % (coverage(doc["front"], ex["front"], objs), ex["front_size"])
                else:
                    cov = "exact > %gs" % a.exact_limit
            print("| %s | %s | %.2f | %.2f | %.0f | %s | %s | %s | %s | %.0f | %s |" % (
                os.path.basename(w), p, wall, cpu, rss / 1024, ("stopped" if rc == 130 else doc.get("front_size", "rc %d" % rc)), fig[0], fig[1], fig[2], best, cov))
            sys.stdout.flush()
    times.sort()
    print("\nruns %d, median %.2f s, max %.2f s" % (len(times), times[len(times) // 2], times[-1]))


if __name__ == "__main__":
    main()
