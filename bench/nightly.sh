#!/usr/bin/env bash
# Nightly regression check for npu-mapper.
#
# Two things can silently get worse from one commit to the next: how fast the
# hot loops run (the Google Benchmark suites) and how good the mappings are
# (the Pareto fronts the mapper finds on the zoo workloads). Unit tests catch
# neither, because both are "still correct, just worse". This script measures
# both, writes a JSON report, and compares it with the committed
# bench/baseline.json:
#   - a throughput (per suite run the fastest repetition, then the median
#     over the runs) that drops by more than the threshold is a regression;
#   - a front whose best cycles or best off-chip bytes rose, or that lost a
#     baseline point (one no new point matches or dominates), is a regression.
# Fronts are deterministic, so they are compared with a 1e-9 relative epsilon;
# throughputs are noisy, so they get the (relative) threshold.
#
# Exit status: 0 no regression (or baseline updated), 1 regression(s),
# 2 usage error or a benchmark/mapper run that failed.
# See docs/nightly.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

BUILD_DIR="${NPUMAP_BUILD_DIR:-build/release}"
REPETITIONS=3
RUNS=3
THRESHOLD=0.10
REPORT=""
BASELINE="bench/baseline.json"
UPDATE=0

BENCHES=(model_bench pareto_bench mapper_bench sweep_bench)
# Every workload of the zoo (workloads/*.yaml), so a new one is covered without editing this file.
WORKLOADS=()
for f in workloads/*.yaml; do WORKLOADS+=("$(basename "$f" .yaml)"); done
PRESETS=(ethos-u55-64 ethos-u55-256 ethos-u65-256)

usage() {
  cat <<EOF
usage: bash bench/nightly.sh [options]
  --repetitions N     repetitions of each benchmark per suite run; the fastest is kept (default 3)
  --runs K            run the suites K times, interleaved; each rate is the median over the K runs (default 3)
  --threshold T       relative throughput drop that counts as a regression (default 0.10)
  --report PATH       where to write the JSON report (default runs/nightly-<timestamp>.json)
  --baseline PATH     baseline to compare with / to rewrite (default bench/baseline.json)
  --update-baseline   rewrite the baseline from this run and exit 0
  -h, --help          this text
environment: NPUMAP_BUILD_DIR  build directory holding bench/ and mapper/ (default build/release)
EOF
}

die() { echo "nightly: $*" >&2; exit 2; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --repetitions) [[ $# -ge 2 ]] || die "--repetitions needs a value"; REPETITIONS="$2"; shift 2 ;;
    --repetitions=*) REPETITIONS="${1#*=}"; shift ;;
    --runs) [[ $# -ge 2 ]] || die "--runs needs a value"; RUNS="$2"; shift 2 ;;
    --runs=*) RUNS="${1#*=}"; shift ;;
    --threshold) [[ $# -ge 2 ]] || die "--threshold needs a value"; THRESHOLD="$2"; shift 2 ;;
    --threshold=*) THRESHOLD="${1#*=}"; shift ;;
    --report) [[ $# -ge 2 ]] || die "--report needs a value"; REPORT="$2"; shift 2 ;;
    --report=*) REPORT="${1#*=}"; shift ;;
    --baseline) [[ $# -ge 2 ]] || die "--baseline needs a value"; BASELINE="$2"; shift 2 ;;
    --baseline=*) BASELINE="${1#*=}"; shift ;;
    --update-baseline) UPDATE=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option '$1'" ;;
  esac
done

[[ "$REPETITIONS" =~ ^[1-9][0-9]*$ ]] || die "--repetitions must be a positive integer, got '$REPETITIONS'"
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer, got '$RUNS'"
python3 -c 'import sys; t = float(sys.argv[1]); sys.exit(0 if 0 <= t < 1 else 1)' "$THRESHOLD" 2>/dev/null \
  || die "--threshold must be a number in [0, 1), got '$THRESHOLD'"

for exe in "${BENCHES[@]/#/bench/}" mapper/mapper; do
  [[ -x "$BUILD_DIR/$exe" ]] || die "missing $BUILD_DIR/$exe (build first: make build, or set NPUMAP_BUILD_DIR)"
done
if [[ $UPDATE -eq 0 && ! -f "$BASELINE" ]]; then
  die "no baseline at $BASELINE (create one with --update-baseline)"
fi

STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
[[ -n "$REPORT" ]] || REPORT="runs/nightly-$STAMP.json"
mkdir -p "$(dirname "$REPORT")"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/npumap-nightly.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

T0=$SECONDS
# Separate runs interleave the suites, so a burst of load from another process
# hits one run of a benchmark rather than all its repetitions.
for ((k = 1; k <= RUNS; k++)); do
  for b in "${BENCHES[@]}"; do
    echo "nightly: $b x$REPETITIONS (run $k/$RUNS)" >&2
    "$BUILD_DIR/bench/$b" --benchmark_repetitions="$REPETITIONS" \
        --benchmark_format=json \
        >"$WORK/bench-$b-$k.json" 2>"$WORK/bench-$b-$k.err" \
      || { cat "$WORK/bench-$b-$k.err" >&2; die "$b failed"; }
  done
done
T_BENCH=$((SECONDS - T0))

T0=$SECONDS
for w in "${WORKLOADS[@]}"; do
  for a in "${PRESETS[@]}"; do
    out="$WORK/map-$w@$a"
    mkdir -p "$out"
    echo "nightly: map $w on $a" >&2
    start=$(date +%s.%N)
    "$BUILD_DIR/mapper/mapper" --workload "workloads/$w.yaml" --arch "$a" --keep-pareto \
        --threads 2 --out "$out" -q >"$out/stdout" 2>"$out/stderr" \
      || { cat "$out/stderr" >&2; die "mapper failed on $w / $a"; }
    end=$(date +%s.%N)
    echo "$start $end" >"$out/wall"
  done
done
T_MAP=$((SECONDS - T0))

GIT_REV="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
GIT_DIRTY=false
if [[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]]; then GIT_DIRTY=true; fi

# JSON handling: extraction of the medians, the report, and the comparison.
set +e
python3 - "$WORK" "$REPORT" "$BASELINE" "$UPDATE" "$THRESHOLD" "$REPETITIONS" \
    "$RUNS" "$GIT_REV" "$GIT_DIRTY" "$(nproc)" "$(uname -m)" "$STAMP" "$BUILD_DIR" \
    "$T_BENCH" "$T_MAP" "${BENCHES[*]}" "${WORKLOADS[*]}" "${PRESETS[*]}" <<'PY'
import json, os, sys

(work, report_path, baseline_path, update, threshold, repetitions, runs, git_rev, git_dirty,
 nproc, machine, stamp, build_dir, t_bench, t_map, benches, workloads, presets) = sys.argv[1:]
threshold = float(threshold)


def crash(kind, value, tb):
    # A broken input (unreadable JSON, missing field) is a failed run, not a regression.
    sys.__excepthook__(kind, value, tb)
    os._exit(2)


sys.excepthook = crash
EPS = 1e-9
TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
STANDARD = {"name", "run_name", "run_type", "repetitions", "repetition_index", "threads",
            "iterations", "real_time", "cpu_time", "time_unit", "aggregate_name",
            "aggregate_unit", "family_index", "per_family_instance_index", "error_occurred",
            "error_message", "label"}


ANSWERS = ("front_size", "front_hash")


def is_rate(key):
    # Google Benchmark's own rates plus the suites' user counters (passes_per_s,
    # rows/s, pmappings_per_second, ...): every one is a "per second" figure.
    k = key.lower()
    return "per_second" in k or k.endswith("per_s") or k.endswith("/s")


def samples_of_run(path):
    # One suite run: per benchmark, its repetitions' real times and rates.
    data = json.load(open(path))
    rows = [r for r in data.get("benchmarks", []) if r.get("run_type", "iteration") == "iteration"]
    out = {}
    for r in rows:
        if r.get("error_occurred"):
            print(f"nightly: benchmark {r.get('run_name', r['name'])} reported an error: {r.get('error_message')}",
                  file=sys.stderr)
            sys.exit(2)
        real_ns = r["real_time"] * TO_NS[r.get("time_unit", "ns")]
        rates = {k: v for k, v in r.items() if k not in STANDARD and is_rate(k)}
        if not rates and real_ns > 0:
            # No counter of its own: the benchmark's throughput is runs of it per second.
            rates["runs_per_second"] = 1e9 / real_ns
        entry = out.setdefault(r.get("run_name", r["name"]), {"real_time_ns": [], "rates": {}, "answers": {}})
        entry["real_time_ns"].append(real_ns)
        # What a benchmark computed (BM_Join: the front's size and value hash): deterministic, so
        # compared exactly with the baseline; a fast but different answer is a regression.
        for c in ANSWERS:
            if c in r:
                entry["answers"][c] = r[c]
        for c, v in rates.items():
            entry["rates"].setdefault(c, []).append(v)
    return out


def median(values):
    v = sorted(values)
    m = len(v) // 2
    return v[m] if len(v) % 2 else (v[m - 1] + v[m]) / 2


# Per benchmark and rate: "rates" is the median over the runs of each run's median
# over its repetitions; "best_rates" is the fastest sample of all. Load from other
# jobs on a shared machine only ever slows a sample down, so a drop of the median
# that the best sample does not share is interference, not slower code.
throughputs = {}
for b in benches.split():
    per_run = [samples_of_run(os.path.join(work, f"bench-{b}-{k}.json")) for k in range(1, int(runs) + 1)]
    for name in per_run[0]:
        entries = [r[name] for r in per_run if name in r]
        counters = entries[0]["rates"].keys()
        throughputs[f"{b}:{name}"] = {
            "executable": b,
            "samples": sum(len(e["real_time_ns"]) for e in entries),
            "real_time_ns": median(median(e["real_time_ns"]) for e in entries),
            "rates": {c: median(median(e["rates"][c]) for e in entries if c in e["rates"]) for c in counters},
            "best_rates": {c: max(max(e["rates"][c]) for e in entries if c in e["rates"]) for c in counters}}
        if entries[0]["answers"]:
            throughputs[f"{b}:{name}"]["answers"] = entries[0]["answers"]

fronts = {}
for w in workloads.split():
    for a in presets.split():
        d = os.path.join(work, f"map-{w}@{a}")
        res = json.load(open(os.path.join(d, "result.json")))
        start, end = map(float, open(os.path.join(d, "wall")).read().split())
        points = sorted([p["cycles"], p["offchip_bytes"]] for p in res["front"])
        fronts[f"{w}@{a}"] = {
            "workload": f"workloads/{w}.yaml", "arch": a, "status": res.get("status"),
            "best_cycles": res["front_summary"]["best_cycles"],
            "best_offchip_bytes": res["front_summary"]["best_offchip_bytes"],
            "front": points, "wall_seconds": round(end - start, 3)}

report = {
    "tool": "npu-mapper nightly",
    "timestamp": stamp,
    "machine": {"nproc": int(nproc), "uname_m": machine},
    "git": {"revision": git_rev, "dirty": git_dirty == "true"},
    "build_dir": build_dir,
    "repetitions": int(repetitions),
    "runs": int(runs),
    "mapper_options": {"keep_pareto": True, "threads": 2},
    "seconds": {"benchmarks": int(t_bench), "mapping": int(t_map)},
    "throughputs": throughputs,
    "fronts": fronts,
}
with open(report_path, "w") as f:
    json.dump(report, f, indent=1, sort_keys=True)
    f.write("\n")
print(f"nightly: report written to {report_path}")

if update == "1":
    with open(baseline_path, "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"nightly: baseline {baseline_path} rewritten from this run "
          f"({len(throughputs)} benchmarks, {len(fronts)} fronts)")
    sys.exit(0)

base = json.load(open(baseline_path))
problems = []
notes = []

if base.get("machine") != report["machine"]:
    notes.append(f"baseline machine {base.get('machine')} differs from this one "
                 f"{report['machine']}: throughput comparisons are only indicative")

for key, b in sorted(base.get("throughputs", {}).items()):
    n = throughputs.get(key)
    if n is None:
        problems.append(f"throughput {key}: benchmark missing from this run")
        continue
    for counter, old in sorted(b.get("answers", {}).items()):
        new = n.get("answers", {}).get(counter)
        if new != old:
            problems.append(f"answer {key} {counter}: {new} vs baseline {old} (the benchmark computed another result)")
    for counter, old in sorted(b["rates"].items()):
        new = n["rates"].get(counter)
        if new is None:
            problems.append(f"throughput {key} {counter}: counter missing from this run")
            continue
        if not (old > 0 and new < old * (1.0 - threshold)):
            continue
        drop = f"median {new:.6g}/s vs baseline {old:.6g}/s ({(new / old - 1) * 100:+.1f}%)"
        old_best = b.get("best_rates", {}).get(counter)
        new_best = n["best_rates"].get(counter)
        if old_best and new_best and new_best >= old_best * (1.0 - threshold):
            notes.append(f"throughput {key} {counter}: {drop}, but the best sample {new_best:.6g}/s is within "
                         f"{threshold * 100:.0f}% of the baseline's {old_best:.6g}/s: interference, not slower code")
        else:
            best = f"; best sample {new_best:.6g}/s vs {old_best:.6g}/s" if old_best and new_best else ""
            problems.append(f"throughput {key} {counter}: {drop}{best} (threshold -{threshold * 100:.0f}%)")
for key in sorted(set(throughputs) - set(base.get("throughputs", {}))):
    notes.append(f"throughput {key}: new benchmark, not in the baseline")


def worse(new, old):
    return new > old + EPS * max(abs(old), abs(new))


def covered(p, pts):
    # Matched or dominated: some new point is no worse in both objectives.
    return any(not worse(q[0], p[0]) and not worse(q[1], p[1]) for q in pts)


for key, b in sorted(base.get("fronts", {}).items()):
    n = fronts.get(key)
    if n is None:
        problems.append(f"front {key}: workload/preset missing from this run")
        continue
    if worse(n["best_cycles"], b["best_cycles"]):
        problems.append(f"front {key}: best cycles {n['best_cycles']:.10g} > baseline {b['best_cycles']:.10g}")
    if worse(n["best_offchip_bytes"], b["best_offchip_bytes"]):
        problems.append(f"front {key}: best off-chip bytes {n['best_offchip_bytes']:.10g} > "
                        f"baseline {b['best_offchip_bytes']:.10g}")
    lost = [p for p in b["front"] if not covered(p, n["front"])]
    for p in lost:
        problems.append(f"front {key}: baseline point (cycles {p[0]:.10g}, offchip_bytes {p[1]:.10g}) "
                        f"is neither matched nor dominated by the new front ({len(n['front'])} points)")
    if not lost and sorted(map(tuple, n["front"])) != sorted(map(tuple, b["front"])):
        notes.append(f"front {key}: changed but not worse ({len(b['front'])} -> {len(n['front'])} points)")

for key in sorted(set(fronts) - set(base.get("fronts", {}))):
    notes.append(f"front {key}: new workload/preset, not in the baseline")

for note in notes:
    print(f"nightly: note: {note}")
rev = base.get("git", {}).get("revision", "?")[:12]
if problems:
    for p in problems:
        print(f"nightly: REGRESSION: {p}", file=sys.stderr)
    print(f"nightly: FAIL: {len(problems)} regression(s) against {baseline_path} (revision {rev})",
          file=sys.stderr)
    sys.exit(1)
print(f"nightly: PASS: {len(throughputs)} benchmarks within -{threshold * 100:.0f}% and "
      f"{len(fronts)} fronts no worse than {baseline_path} (revision {rev})")
PY
status=$?
set -e
echo "nightly: benchmarks ${T_BENCH}s, mapping ${T_MAP}s" >&2
exit $status
