#!/usr/bin/env python3
"""Combine several nightly reports of one build into a baseline (docs/nightly.md).

    python3 bench/make_baseline.py runs/nightly-A.json runs/nightly-B.json runs/nightly-C.json \
        -o bench/baseline.json

On a shared machine one nightly run can fall in an unusually quiet (or busy) stretch; a baseline
taken from it makes later checks flap. This keeps, per benchmark and counter, the median over the
reports of their `rates` and of their `best_rates`, so the baseline describes the machine's typical
state. The fronts must be identical in every report (the mapper is deterministic); anything else is
an error, because the reports would not be of one build.
"""
import argparse
import json
import sys


def median(values):
    v = sorted(values)
    m = len(v) // 2
    return v[m] if len(v) % 2 else (v[m - 1] + v[m]) / 2


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", help="nightly reports (JSON) of one build")
    parser.add_argument("-o", "--output", required=True, help="baseline to write")
    args = parser.parse_args()
    if len(args.reports) < 2:
        parser.error("give at least two reports (one report is what --update-baseline writes)")

    reports = []
    for path in args.reports:
        try:
            with open(path) as f:
                reports.append(json.load(f))
        except (OSError, ValueError) as e:
            print(f"make_baseline: {path}: {e}", file=sys.stderr)
            return 2
    def fronts_of(report):
        # Everything but the wall time, which is a measurement.
        return {k: {kk: v for kk, v in f.items() if kk != "wall_seconds"} for k, f in report.get("fronts", {}).items()}

    first = reports[0]
    for path, r in zip(args.reports[1:], reports[1:]):
        if fronts_of(r) != fronts_of(first):
            print(f"make_baseline: {path}: fronts differ from {args.reports[0]}; reports of one build have equal fronts",
                  file=sys.stderr)
            return 2
        if set(r.get("throughputs", {})) != set(first.get("throughputs", {})):
            print(f"make_baseline: {path}: not the same benchmarks as {args.reports[0]}", file=sys.stderr)
            return 2

    base = dict(first)
    throughputs = {}
    for name, t in first["throughputs"].items():
        entries = [r["throughputs"][name] for r in reports]
        merged = dict(t)
        merged["real_time_ns"] = median(e["real_time_ns"] for e in entries)
        for key in ("rates", "best_rates"):
            merged[key] = {c: median(e[key][c] for e in entries) for c in t.get(key, {})}
        throughputs[name] = merged
    base["throughputs"] = throughputs
    for key, front in base["fronts"].items():
        front["wall_seconds"] = median(r["fronts"][key]["wall_seconds"] for r in reports)
    base["throughputs_note"] = (f"per counter, the median over {len(reports)} nightly reports of one build "
                                f"({', '.join(r.get('timestamp', '?') for r in reports)})")
    with open(args.output, "w") as f:
        json.dump(base, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"make_baseline: wrote {args.output} from {len(reports)} reports ({len(throughputs)} benchmarks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
