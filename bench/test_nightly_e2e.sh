#!/usr/bin/env bash
# End to end on the real build, under load (ctest: bench.nightly_e2e, label slow, a minute or two):
# bench/nightly.sh compares the build with itself (--baseline-build = --head-build) while this
# script keeps a CPU hog running, on a small filter (the cycle model, CPU-timed, and the small sweep,
# wall-timed; one front). The same program must read as the same program however
# busy the machine: exit status 0, no benchmark "slower", the front identical, every file written.
#   usage: bench/test_nightly_e2e.sh <build dir with bench/*_bench and mapper/mapper>
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:?usage: $0 <build dir>}"
out="$(mktemp -d "${TMPDIR:-/tmp}/npumap-nightly-e2e.XXXXXX")"
hog=""
cleanup() {
  if [[ -n "$hog" ]]; then kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null; fi
  rm -rf "$out"
}
trap cleanup EXIT
fail() { echo "bench.nightly_e2e: FAIL: $*" >&2; exit 1; }

# The hog: a busy loop in a subshell of its own (its pid is $!), killed on exit whatever happens.
( while :; do :; done ) &
hog=$!

timeout 360 bash "$ROOT/bench/nightly.sh" --baseline-build "$BUILD" --head-build "$BUILD" \
  --filter '^model_bench:BM_EvaluateReferenceMix$' \
  --filter '^sweep_bench\+smoke:BM_Sweep/zoo/sharing:1/real_time$' \
  --fronts '^tiny_chain@ethos-u55-256$' --pairs 10 \
  --out "$out" --history "$out/history.jsonl" >"$out/stdout" 2>"$out/stderr"
rc=$?
cat "$out/stdout"
[[ $rc -eq 0 ]] || { cat "$out/stderr" >&2; fail "exit status $rc, expected 0 (the same build against itself)"; }
kill -0 "$hog" 2>/dev/null || fail "the CPU hog was not running to the end"
grep -qx "nightly: fronts 1/1 identical; benchmark answers 2/2 identical" "$out/stdout" \
  || fail "the first line is not 'fronts 1/1 identical; benchmark answers 2/2 identical'"
python3 - "$out" <<'PY' || fail "report check"
import json, sys, xml.etree.ElementTree as ET
out = sys.argv[1]
r = json.load(open(f"{out}/nightly.json"))
assert r["status"] == 0 and r["verdict"] == "PASS", r["verdict"]
assert len(r["speed"]) == 2, [d["name"] for d in r["speed"]]
for d in r["speed"]:
    assert d["verdict"] != "slower", (d["name"], d["ratio"], d["low"], d["high"])
    assert d["pairs"] == 10
assert {d["measure"] for d in r["speed"]} == {"cpu", "wall"}
ET.parse(f"{out}/nightly.svg")
assert open(f"{out}/nightly.md").read().startswith("# Nightly: PASS")
assert len(open(f"{out}/history.jsonl").read().splitlines()) == 1
PY
echo "bench.nightly_e2e: PASS"
