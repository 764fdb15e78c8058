#!/usr/bin/env python3
"""Runs one `mapper` binary over a matrix of workloads x presets x objective sets, or compares the
outputs of two such runs: result.json (without the git revision of the provenance), front.csv and
layers.csv must be byte-identical. For refactors that must not change any output.

  scripts/compare_outputs.py run  --mapper OLD/mapper --out /tmp/old [--time-limit 30] [--threads 2]
  scripts/compare_outputs.py run  --mapper build/release/mapper/mapper --out /tmp/new [same options]
  scripts/compare_outputs.py diff /tmp/old /tmp/new

The matrix: every zoo workload (workloads/*.yaml) on the six presets, and every model of
--models (default ../shared/models, top level only, when it exists) on ethos-u55-128,
ethos-u55-256 and ethos-u65-256; each with the default objectives and with
cycles,offchip_bytes,sram (--objectives to choose). Every run uses --keep-pareto, so front.csv holds
the whole front. A run that hits --time-limit (exit status 130, partial result) is recorded as
skipped: a partial result depends on timing. `diff` reports identical, different and skipped cases
and exits 1 when some case differs (or ran in one tree only).
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import time

PRESETS = ["ethos-u55-32", "ethos-u55-64", "ethos-u55-128", "ethos-u55-256", "ethos-u65-256", "ethos-u65-512"]
MODEL_PRESETS = ["ethos-u55-128", "ethos-u55-256", "ethos-u65-256"]
OBJECTIVE_SETS = {"default": None, "3obj": "cycles,offchip_bytes,sram"}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cases(models_dir, objective_sets):
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "workloads", "*.yaml"))):
        for preset in PRESETS:
            for obj in objective_sets:
                out.append((path, preset, obj))
    if models_dir and os.path.isdir(models_dir):
        for path in sorted(glob.glob(os.path.join(models_dir, "*.tflite"))):
            for preset in MODEL_PRESETS:
                for obj in objective_sets:
                    out.append((path, preset, obj))
    return out


def case_name(path, preset, obj):
    return f"{os.path.splitext(os.path.basename(path))[0]}__{preset}__{obj}"


def run(args):
    os.makedirs(args.out, exist_ok=True)
    status_path = os.path.join(args.out, "status.json")
    status = json.load(open(status_path)) if os.path.exists(status_path) else {}
    for path, preset, obj in cases(args.models, args.objectives.split(",")):
        name = case_name(path, preset, obj)
        if name in status:
            continue  # resumable
        folder = os.path.join(args.out, name)
        cmd = [args.mapper, "--workload", path, "--arch", preset, "--keep-pareto", "-q", "-j", str(args.threads),
               "--out", folder]
        if OBJECTIVE_SETS[obj]:
            cmd += ["--objectives", OBJECTIVE_SETS[obj]]
        if args.time_limit > 0:
            cmd += ["--time-limit", str(args.time_limit)]
        start = time.monotonic()
        rc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        status[name] = {"rc": rc, "seconds": round(time.monotonic() - start, 2)}
        print(f"{name}: exit {rc}, {status[name]['seconds']} s", flush=True)
        with open(status_path + ".tmp", "w") as f:
            json.dump(status, f, indent=1, sort_keys=True)
        os.replace(status_path + ".tmp", status_path)


def normalised_result(path):
    doc = json.load(open(path))
    doc.get("provenance", {}).pop("git_revision", None)
    return json.dumps(doc, sort_keys=True)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def diff(args):
    a_status = json.load(open(os.path.join(args.a, "status.json")))
    b_status = json.load(open(os.path.join(args.b, "status.json")))
    same, different, skipped, missing = [], [], [], []
    for name in sorted(set(a_status) | set(b_status)):
        if name not in a_status or name not in b_status:
            missing.append(name)
            continue
        ra, rb = a_status[name]["rc"], b_status[name]["rc"]
        if ra == 130 or rb == 130:
            skipped.append(name)
            continue
        problems = []
        if ra != rb:
            problems.append(f"exit {ra} vs {rb}")
        for f in ["result.json", "front.csv", "layers.csv"]:
            pa, pb = os.path.join(args.a, name, f), os.path.join(args.b, name, f)
            if os.path.exists(pa) != os.path.exists(pb):
                problems.append(f"{f} in one tree only")
            elif os.path.exists(pa):
                equal = normalised_result(pa) == normalised_result(pb) if f == "result.json" else read(pa) == read(pb)
                if not equal:
                    problems.append(f"{f} differs")
        (different if problems else same).append((name, problems))
    for name, problems in different:
        print(f"DIFFERENT {name}: {', '.join(problems)}")
    for name in skipped:
        print(f"skipped (time limit) {name}")
    for name in missing:
        print(f"MISSING in one tree {name}")
    print(f"{len(same)} identical, {len(different)} different, {len(skipped)} skipped, {len(missing)} in one tree only")
    return 1 if different or missing else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--mapper", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--models", default=os.path.join(ROOT, "..", "shared", "models"))
    r.add_argument("--objectives", default="default,3obj", help="comma-separated of: default, 3obj")
    r.add_argument("--time-limit", type=float, default=30.0, help="seconds per run; 0: none")
    r.add_argument("--threads", type=int, default=2)
    d = sub.add_parser("diff")
    d.add_argument("a")
    d.add_argument("b")
    args = parser.parse_args()
    if args.command == "run":
        args.mapper = os.path.abspath(args.mapper)
        run(args)
        return 0
    return diff(args)


if __name__ == "__main__":
    sys.exit(main())
