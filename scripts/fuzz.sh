#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ (CMake preset `asan`: clang++, ASan + UBSan, build/asan,
# the build CI also runs the unit tests from; separate from the GCC builds) and runs each for
# FUZZ_SECONDS seconds.
#   scripts/fuzz.sh [harness...]          (default: all); `make fuzz FUZZ_SECONDS=N`
#   FUZZ_SECONDS (default 60), FUZZ_JOBS (harnesses run at once, default 1), FUZZ_BUILD_JOBS (default nproc),
#   FUZZ_SEED (libFuzzer's -seed; default: a new random seed per run. CI fixes it, so a run repeats the
#   same inputs in the same order, as far as the time allows)
# Seed corpora are the repository's own inputs, by path (symlinks under build/fuzz/seeds/<harness>):
# test/errors/, the zoo (workloads/*.yaml), arch presets, sweeps/, test/golden, single records of
# test/data/*.json, and the .tflite models of workloads/models up to 256 KiB (fuzz_tflite also gets the
# dictionary fuzz/tflite.dict: the values the tflite mutation test writes into real models). New inputs
# libFuzzer finds go to build/fuzz/corpus/<harness> (kept between runs), crashes to
# build/fuzz/artifacts/; build/fuzz/logs/<harness>.log holds each run's log and the summary table
# (executions, coverage cov/ft, crashes) goes to build/fuzz/summary.txt and stdout.
# Exit status: 0 when no harness found a crash, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds=${FUZZ_SECONDS:-60}
parallel=${FUZZ_JOBS:-1}
bin=build/asan/fuzz  # the harness executables
build=build/fuzz     # seeds, corpus, artifacts, logs, summary
all=(fuzz_workload fuzz_arch fuzz_vela_ini fuzz_sweep_spec fuzz_pass_json fuzz_block_configs fuzz_result_json fuzz_tflite)
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=("${all[@]}")

command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (install the Debian packages clang and libclang-rt-dev)" >&2; exit 2; }
cmake --preset asan >/dev/null
cmake --build build/asan -j "${FUZZ_BUILD_JOBS:-$(nproc)}" --target "${harnesses[@]}"

seeds="$build/seeds"
rm -rf "$seeds"
link() {  # link DIR FILE...: seed files by path
  local dir=$1; shift
  mkdir -p "$seeds/$dir"
  for f in "$@"; do [ -f "$f" ] && ln -sf "$root/$f" "$seeds/$dir/$(echo "$f" | tr '/' '_')"; done
  return 0
}
link fuzz_workload test/errors/workload_*.yaml workloads/*.yaml
link fuzz_arch test/errors/arch_*.yaml arch/presets/*.yaml
link fuzz_vela_ini test/errors/ini_*.ini
link fuzz_sweep_spec test/errors/sweep_*.yaml sweeps/*.yaml
link fuzz_pass_json test/errors/pass_*.json
link fuzz_block_configs test/errors/blockcfg_*.json
link fuzz_result_json test/errors/result_*.json test/golden/*.json
link fuzz_tflite
# The reference data files are one large list each: a few single-record lists make better seeds.
python3 - "$seeds" <<'PY'
import json, sys, os
seeds = sys.argv[1]
for src, dest, step in [("test/data/npu_reference_passes.json", "fuzz_pass_json", 9),
                        ("test/data/npu_reference_block_configs.json", "fuzz_block_configs", 23)]:
    records = json.load(open(src))
    for i in range(0, len(records), step):
        with open(os.path.join(seeds, dest, "record%03d.json" % i), "w") as f:
            json.dump([records[i]], f, indent=1)
PY
# The small models (up to 256 KiB) keep executions fast; -max_len below matches.
while IFS= read -r m; do ln -sf "$(cd "$(dirname "$m")" && pwd)/$(basename "$m")" "$seeds/fuzz_tflite/"; done \
  < <(find workloads/models -name '*.tflite' -size -256k | sort)

mkdir -p "$build/logs" "$build/artifacts"
run_one() {
  local h=$1 max_len=65536 extra=()
  [ "$h" = fuzz_tflite ] && max_len=262144 && extra+=(-dict="$root/fuzz/tflite.dict")
  [ "$h" = fuzz_result_json ] && extra=(-close_fd_mask=3)
  [ -n "${FUZZ_SEED:-}" ] && extra+=(-seed="$FUZZ_SEED")
  mkdir -p "$build/corpus/$h"
  # Time and memory per input are bounded: 60 s (ASan, coverage and a shared machine slow an input
  # down 100x against Release) and 2 GiB.
  "$bin/$h" "$build/corpus/$h" "$seeds/$h" -max_total_time="$seconds" -max_len="$max_len" \
    -timeout=60 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/artifacts/$h-" "${extra[@]}" \
    > "$build/logs/$h.log" 2>&1
}
pids=()
status=0
for h in "${harnesses[@]}"; do
  run_one "$h" & pids+=($!)
  if [ ${#pids[@]} -ge "$parallel" ]; then wait "${pids[0]}" || true; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || true; done

summary="$build/summary.txt"
printf '%-20s %12s %8s %8s %8s %s\n' harness executions cov ft crashes note > "$summary"
for h in "${harnesses[@]}"; do
  log="$build/logs/$h.log"
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*' || echo "?")
  ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*' || echo "?")
  crashes=$(ls "$build/artifacts" 2>/dev/null | grep -c "^$h-\(crash\|leak\|timeout\|oom\)" || true)
  note=""
  if grep -qE '^==[0-9]+==ERROR|^SUMMARY: |deadly signal|ERROR: libFuzzer' "$log"; then
    note="FINDING: see $log"
    status=1
  fi
  printf '%-20s %12s %8s %8s %8s %s\n' "$h" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$crashes" "$note" >> "$summary"
done
cat "$summary"
exit $status
