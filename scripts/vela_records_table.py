#!/usr/bin/env python3
"""The table of issue 38's records: Vela 2.1's compile of each real model against our Vela schedule.

For every record of test/data/vela_tflite_reference.json (a model of workloads/models on one
accelerator config) this runs `mapper` on the model and config and prints one Markdown row: Vela's
cycles of its NPU passes and its SRAM used, ours for Vela's schedule (result.json `vela_baseline`),
whether the cycles are exact (within Vela's printed precision) with the difference in per cent, and
the front's gain at Vela's SRAM: the best front point using no more SRAM than our Vela point, as a
latency change from that point (negative: the front is faster). With --baseline-only the mapper runs
only Vela's schedule (fast) and the gain column is left empty.

Vela's cycles are those of its NPU subgraphs' cascaded passes (its printed total adds an estimate for
CPU operators, which our cycle model leaves out); docs/design/vela-schedule.md, "How close it is".

Usage: scripts/vela_records_table.py [--mapper build/release/mapper/mapper] [--baseline-only]
                                     [--filter SUBSTRING] [--work DIR] [--timeout SECONDS]
(gain "n/a": the default run took longer than --timeout; "none": no front point within that SRAM)
"""

import argparse
import json
import lzma
import os
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_reference(path):
    """The reference JSON, read from the .tar.xz the repo stores (or a plain .json)."""
    if path.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    with tarfile.open(fileobj=lzma.open(path)) as tar:
        for member in tar.getmembers():
            if member.name.endswith(".json"):
                return json.load(tar.extractfile(member))
    raise SystemExit(f"{path}: no .json inside")


def vela_npu_cycles(rec):
    return sum(cps["cycles"]["total"] for sg in rec["subgraphs"] if sg["placement"] != "Cpu"
               for cps in sg["cascaded_passes"])


def find_mapper(given):
    if given:
        return given
    for candidate in ("build/release/mapper/mapper", "build/release/bin/mapper", "build/release/mapper"):
        path = os.path.join(ROOT, candidate)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise SystemExit("mapper binary not found: build it or pass --mapper")


def run_record(mapper, rec, work, baseline_only, timeout):
    """result.json's vela_baseline of one record and whether the front was searched (a default run
    that exceeds `timeout` seconds is stopped and replaced by a --baseline-only run)."""
    model = os.path.join(ROOT, "workloads", "models", rec["model"] + ".tflite")
    for only in ([True] if baseline_only else [False, True]):
        out = os.path.join(work, f'{rec["model"]}__{rec["config"]}' + ("__baseline" if only else ""))
        cmd = [mapper, "--workload", model, "--arch", rec["config"], "--out", out, "-q"]
        if only:
            cmd.append("--baseline-only")
        try:
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, timeout=None if only else timeout)
        except subprocess.TimeoutExpired:
            continue
        with open(os.path.join(out, "result.json"), encoding="utf-8") as f:
            return json.load(f)["vela_baseline"], not only
    raise SystemExit(f'{rec["model"]} on {rec["config"]}: no result')


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mapper", help="the mapper binary (default: the release build's)")
    ap.add_argument("--reference", default=os.path.join(ROOT, "test", "data", "vela_tflite_reference.json.tar.xz"))
    ap.add_argument("--baseline-only", action="store_true", help="only Vela's schedule (no front, no gain column)")
    ap.add_argument("--filter", default="", help="only records whose model or config contains this")
    ap.add_argument("--work", help="where the runs go (default: a temporary folder, removed)")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds a default run may take before it is replaced by --baseline-only (gain: 'n/a')")
    args = ap.parse_args()
    mapper = find_mapper(args.mapper)
    ref = load_reference(args.reference)
    records = [r for r in ref["records"] if r.get("status") == "ok" and
               (args.filter in r["model"] or args.filter in r["config"])]
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or tmp
        os.makedirs(work, exist_ok=True)
        print("| model | config | Vela cycles | Vela SRAM KiB | ours cycles | cycles | ours SRAM KiB | SRAM | "
              "our peak KiB | front at <= Vela's SRAM |")
        print("|---|---|---:|---:|---:|---|---:|---|---:|---:|")
        exact = within5 = sram_exact = 0
        for rec in records:
            vb, searched = run_record(mapper, rec, work, args.baseline_only, args.timeout)
            vc, vs = vela_npu_cycles(rec), rec["printed_SRAM_used_KiB"]
            # Vela's "SRAM used" as our replay of its allocator gives it; the point's own peak (our
            # accounting, what the front is compared with) is the next column.
            oc, os_kib = vb["cycles"], vb.get("vela_sram_used_bytes", vb["sram_bytes"]) / 1024.0
            peak_kib = vb["sram_bytes"] / 1024.0
            dc = (oc - vc) / vc if vc else 0.0
            is_exact = abs(oc - vc) <= 0.5
            s_exact = abs(os_kib - vs) <= 0.05
            exact += is_exact
            within5 += abs(dc) <= 0.05
            sram_exact += s_exact
            gain = ""
            best = vb.get("front_best_cycles_within_sram")
            if searched and best is not None and oc > 0:
                gain = f"{100.0 * (best - oc) / oc:+.1f}%"
            elif not args.baseline_only:
                gain = "n/a" if not searched else "none"
            print(f'| {rec["model"]} | {rec["config"]} | {vc:.0f} | {vs:.1f} | {oc:.0f} | '
                  f'{"exact" if is_exact else f"{100.0 * dc:+.1f}%"} | {os_kib:.1f} | '
                  f'{"exact" if s_exact else f"{100.0 * (os_kib - vs) / max(vs, 0.1):+.1f}%"} | {peak_kib:.1f} | {gain} |')
            sys.stdout.flush()
        print(f"\n{len(records)} records: cycles exact {exact}, within 5% {within5}; SRAM exact {sram_exact}")


if __name__ == "__main__":
    main()
