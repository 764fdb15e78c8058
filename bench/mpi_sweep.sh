#!/usr/bin/env bash
# Scaling of `mpirun -np N mapper sweep` on this machine: arch points per second with 1, 2 and 3 ranks
# (1 rank runs the sweep in-process; N > 1 is one coordinator and N-1 workers), the coordinator's time
# per point (receive, journal with fdatasync, reply) and bytes per point, and the per-point compute
# time and journal-line size from the journal. Every run starts from an empty folder, and its final
# files are compared with the 1-rank run's (a fast wrong result fails the script).
#
#   bench/mpi_sweep.sh [--spec sweeps/example.yaml] [--ranks "1 2 3"] [-j THREADS_PER_RANK]
#
# Exit status: 0 done, 1 a run's files differ from the 1-rank run's, 2 usage or a failed run.
# See docs/distributed-sweeps.md for the figures and what they predict.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${NPUMAP_BUILD_DIR:-build/release}"
MAPPER="$ROOT/$BUILD_DIR/mapper/mapper"
SPEC=sweeps/example.yaml
RANKS="1 2 3"
THREADS=1

while [ $# -gt 0 ]; do
  case "$1" in
    --spec) SPEC="$2"; shift 2 ;;
    --ranks) RANKS="$2"; shift 2 ;;
    -j) THREADS="$2"; shift 2 ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) echo "mpi_sweep.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$MAPPER" ] || { echo "mpi_sweep.sh: no $MAPPER (build first: cmake --build $BUILD_DIR)" >&2; exit 2; }
MPIRUN="$(command -v mpirun || true)"
[ -n "$MPIRUN" ] || { echo "mpi_sweep.sh: no mpirun (install openmpi-bin)" >&2; exit 2; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
status=0
reference=""
echo "spec $SPEC, $THREADS thread(s) per rank, $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ)"
printf "%-6s %9s %10s %12s  %s\n" "ranks" "wall s" "points/s" "speed-up" "coordinator"
base_rate=""
for r in $RANKS; do
  out="$WORK/np$r"
  start=$(date +%s.%N)
  if ! "$MPIRUN" --allow-run-as-root --oversubscribe -np "$r" "$MAPPER" sweep "$SPEC" --out "$out" -j "$THREADS" \
      > "$WORK/np$r.txt" 2> "$WORK/np$r.err"; then
    echo "mpi_sweep.sh: the $r-rank run failed:" >&2
    cat "$WORK/np$r.err" >&2
    exit 2
  fi
  end=$(date +%s.%N)
  if [ -z "$reference" ]; then
    reference="$out"
  else
    for f in sweep.csv sweep.json pareto.csv pareto.svg; do
      cmp -s "$reference/$f" "$out/$f" || { echo "mpi_sweep.sh: $f of the $r-rank run differs from the first run's" >&2; status=1; }
    done
  fi
  python3 - "$WORK/np$r.txt" "$out/points.jsonl" "$r" "$start" "$end" "${base_rate}" > "$WORK/row" <<'EOF'
import json, re, sys
text, journal, ranks, start, end, base = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
lines = open(journal).read().splitlines()[1:]
points = len(lines)
wall = end - start
rate = points / wall
coord = re.search(r"coordinator \(rank 0\): ([0-9.]+) ms per point to receive, journal and reply \(([0-9.]+) ms of it the journal's write and sync, ([0-9]+) syncs\); ([0-9]+) B per point received", open(text).read())
coord_text = (f"{coord.group(1)} ms/point ({coord.group(2)} ms journal sync, {coord.group(3)} syncs), {coord.group(4)} B/point received"
              if coord else "(in-process: no coordinator)")
speedup = f"{rate / float(base):.2f}x" if base else "1.00x"
print(f"{ranks:<6} {wall:9.2f} {rate:10.3f} {speedup:>12}  {coord_text}")
print(f"RATE {rate}")
elapsed = sorted(json.loads(l)["elapsed_s"] for l in lines)
sizes = sorted(len(l) + 1 for l in lines)
print(f"POINTS {points} points; compute per point: median {elapsed[len(elapsed)//2]:.3f} s, mean {sum(elapsed)/points:.3f} s, "
      f"min {elapsed[0]:.3f} s, max {elapsed[-1]:.3f} s; journal line: mean {sum(sizes)/points:.0f} B, max {sizes[-1]} B")
EOF
  grep -v '^RATE \|^POINTS ' "$WORK/row"
  [ -n "$base_rate" ] || base_rate="$(sed -n 's/^RATE //p' "$WORK/row")"
  last_points="$(sed -n 's/^POINTS //p' "$WORK/row")"
done
echo "last run: $last_points"
exit $status
