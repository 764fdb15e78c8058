#!/usr/bin/env python3
"""The nightly benchmark regression of npu-mapper: a baseline revision against HEAD (docs/nightly.md).

Run it through bench/nightly.sh (or `make bench`). In short:
  1. builds the baseline revision (bench/baseline.json) and HEAD, each from a `git archive` export in
     build/nightly/<sha>/ (kept, so a revision is built once);
  2. checks the answers: the mapper's Pareto fronts on the zoo and what the benchmarks computed
     (front sizes and hashes, model cycle totals) must equal the baseline's recorded answers;
  3. runs every benchmark of the set on both builds, interleaved (A B, B A, A B, ...), and compares
     the paired times (bench/nightly_stats.py);
  4. writes nightly.json, nightly.md, nightly.svg and appends a line to the history (JSON lines).

Exit status: 0 answers identical and no speed regression; 1 answers differ; 3 speed regression only;
2 broken run (usage, build, a crash, a baseline build that does not reproduce its own answers).
"""

import argparse
import contextlib
import fcntl
import hashlib
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nightly_report  # noqa: E402
import nightly_stats  # noqa: E402

EXIT_OK, EXIT_ANSWERS, EXIT_BROKEN, EXIT_SPEED = 0, 1, 2, 3
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SUITES = ("model_bench", "pareto_bench", "mapper_bench", "sweep_bench", "tflite_bench")

# The quick set (every pull request, under 3 minutes on 2 cores): one benchmark per area, each a
# few tenths of a second a run, so that enough pairs fit. Regular expressions over "suite:name".
# A key "suite+smoke:name" is a benchmark of the suite's small registration (NPUMAP_BENCH_SMOKE=1,
# what the ctest smoke tests run): tiny_chain's 4-objective join takes under a millisecond where
# ResNet-50's takes seconds and half a minute of setup per process; the smoke sweep maps the two tiny
# networks instead of the zoo.
QUICK = [
    r"^model_bench:BM_EvaluateReferenceMix$",                             # the cycle model
    r"^pareto_bench:Pareto/uniform/objectives:3/rows:100000$",            # the Pareto kernel
    r"^mapper_bench:BM_PerLayerStage/resnet50/threads:2/real_time$",      # the per-layer stage
    r"^mapper_bench:BM_Join/resnet50/ethos-u55-256/[23]obj/real_time$",   # the join, 2 and 3 objectives
    r"^mapper_bench\+smoke:BM_Join/tiny_chain/ethos-u55-256/4obj/real_time$",  # ... and 4
    r"^sweep_bench\+smoke:BM_Sweep/zoo/sharing:1/real_time$",             # sweeps, with the layer cache
    r"^tflite_bench:LowerForNpu/lstm_697_ops$",                           # .tflite import: the lowering
]
QUICK_FRONTS = [r"^tiny_chain@", r"^tiny_residual@", r"^resnet18@ethos-u55-256$", r"^bert_base_layer@ethos-u55-64$"]
PRESETS = ("ethos-u55-64", "ethos-u55-256", "ethos-u65-256")

# Benchmarks that run on one thread are timed by their CPU time (Google Benchmark's cpu_time), the
# rest by wall time: on a shared machine the load of other processes mostly shows as time spent
# waiting for a core, which a single thread's CPU time leaves out (model_bench under a load of 14 on
# 2 cores: pairs' log-ratios spread 0.03 in CPU time, 0.12 in wall time). A multi-threaded benchmark's
# cpu_time is its main thread's alone, which says little, so these (and any benchmark not listed
# here) use the wall time and rely on the pairing alone.
# tiny_chain's joins (the smoke registration of BM_Join) are too small for the second thread to take
# part: on a quiet core their wall and CPU times agree (75-95 us), while under load their wall time is
# the idle worker's wake-up latency (1-100 ms), so they are CPU-timed too.
CPU_TIMED = [r"^model_bench(\+smoke)?:", r"^pareto_bench(\+smoke)?:",
             r"^tflite_bench(\+smoke)?:(ReadModel|LowerForNpu|EncodeWeights)/",
             r"^mapper_bench\+smoke:BM_Join/tiny_chain/"]

# Non-rate counters that are measurements rather than answers (they may vary between runs).
MEASURED_COUNTERS = {"rows_paired", "iterations"}
GB_FIELDS = {"name", "run_name", "run_type", "repetitions", "repetition_index", "threads", "iterations",
             "real_time", "cpu_time", "time_unit", "aggregate_name", "aggregate_unit", "family_index",
             "per_family_instance_index", "error_occurred", "error_message", "label"}
TO_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
# tflite_bench's messages when its models are not there: "is missing" (workloads/models), "is absent"
# (revisions from before the models moved into the repository, which read ../shared/models).
ABSENT_INPUTS = ("is missing", "is absent")


class Broken(Exception):
    """The nightly cannot reach a verdict: exit 2."""


def log(msg):
    print(f"nightly: {msg}", file=sys.stderr, flush=True)


def is_rate(key):
    k = key.lower()
    return "per_second" in k or k.endswith("per_s") or k.endswith("/s")


def git(*args, cwd=ROOT, check=True):
    p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise Broken(f"git {' '.join(args)}: {p.stderr.strip() or 'failed'}")
    return p.stdout.strip()


def resolve(rev):
    sha = git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
    if not sha:
        raise Broken(f"unknown revision '{rev}' (a commit, branch or tag of this repository; "
                     f"a shallow clone may need `git fetch --unshallow`)")
    return sha


def subject(sha):
    text = git("log", "-1", "--format=%s", sha, check=False)
    return text if len(text) <= 72 else text[:71] + "…"


def atomic_write(path, text):
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-" + os.path.basename(path))
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


# --------------------------------------------------------------------------------------------
# Builds


class Side:
    """One of the two programs compared: 'baseline' (A) or 'head' (B)."""

    def __init__(self, role, rev, src, build, desc, built_here=False):
        self.role, self.rev, self.src, self.build, self.desc = role, rev, src, build, desc
        self.built_here = built_here
        self.build_seconds = 0.0

    def exe(self, suite):
        return os.path.join(self.build, "bench", suite)

    def mapper(self):
        return os.path.join(self.build, "mapper", "mapper")

    def as_dict(self):
        return {"role": self.role, "revision": self.rev, "description": self.desc, "source": self.src,
                "build": self.build, "built_now": self.built_here, "build_seconds": round(self.build_seconds, 1)}


@contextlib.contextmanager
def locked(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def build_revision(role, sha, cache, jobs):
    """build/nightly/<sha>/{src,build}: a `git archive` export of the revision and its Release build
    (tests off). Reused when complete; a lock file keeps two nightlies from building one revision at
    once."""
    top = os.path.join(cache, sha)
    src, bld = os.path.join(top, "src"), os.path.join(top, "build")
    marker = os.path.join(top, "built")
    side = Side(role, sha, src, bld, f"{sha[:12]} {subject(sha)}")
    with locked(os.path.join(cache, f".{sha}.lock")):
        if os.path.exists(marker) and os.path.exists(side.mapper()):
            os.utime(top)  # most recently used, for the pruning
            return side
        t0 = time.monotonic()
        log(f"building {role} {sha[:12]} in {top} (once per revision; log: {top}/build.log)")
        if os.path.exists(top):
            shutil.rmtree(top)
        os.makedirs(src)
        archive = subprocess.run(["git", "archive", "--format=tar", sha], cwd=ROOT, capture_output=True)
        if archive.returncode != 0:
            raise Broken(f"git archive {sha}: {archive.stderr.decode(errors='replace').strip()}")
        tar = subprocess.run(["tar", "-x", "-C", src], input=archive.stdout, capture_output=True)
        if tar.returncode != 0:
            raise Broken(f"unpacking {sha}: {tar.stderr.decode(errors='replace').strip()}")
        configure = ["cmake", "-S", src, "-B", bld, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                     "-DNPUMAP_BUILD_TESTS=OFF", "-DNPUMAP_BUILD_BENCH=ON", "-DNPUMAP_BUILD_FUZZ=OFF"]
        env = dict(os.environ)
        if shutil.which("ccache"):
            configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
            # Paths relative to the cache folder: the same file of two revisions hits the cache.
            env["CCACHE_BASEDIR"] = os.path.realpath(cache)
        with open(os.path.join(top, "build.log"), "w") as out:
            for cmd in (configure, ["cmake", "--build", bld, "-j", str(jobs)]):
                out.write("$ " + " ".join(cmd) + "\n")
                out.flush()
                if subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env).returncode != 0:
                    tail = open(os.path.join(top, "build.log")).read().splitlines()[-15:]
                    raise Broken(f"building {role} {sha[:12]} failed ({top}/build.log):\n  " + "\n  ".join(tail))
        atomic_write(marker, datetime.now(timezone.utc).isoformat() + "\n")
        side.built_here = True
        side.build_seconds = time.monotonic() - t0
        return side


def existing_build(role, build_dir):
    """A build tree made elsewhere (--head-build/--baseline-build): its source is the tree CMake
    configured it from."""
    build_dir = os.path.abspath(build_dir)
    cache = os.path.join(build_dir, "CMakeCache.txt")
    if not os.path.exists(cache):
        raise Broken(f"{build_dir} is not a CMake build tree (no CMakeCache.txt)")
    src = None
    for line in open(cache):
        if line.startswith("CMAKE_HOME_DIRECTORY:"):
            src = line.split("=", 1)[1].strip()
    if not src:
        raise Broken(f"{cache}: no CMAKE_HOME_DIRECTORY")
    # A source folder inside another checkout (an export under build/) is no git tree of its own:
    # its revision is unknown, not the enclosing checkout's.
    top = git("rev-parse", "--show-toplevel", cwd=src, check=False)
    own = bool(top) and os.path.realpath(top) == os.path.realpath(src)
    rev = (git("rev-parse", "HEAD", cwd=src, check=False) or None) if own else None
    dirty = own and bool(git("status", "--porcelain", "--untracked-files=no", cwd=src, check=False))
    tree = f"tree at {rev[:12]}" if rev else "source not a git checkout"
    desc = f"{os.path.relpath(build_dir, ROOT)} ({tree}{', with uncommitted changes' if dirty else ''})"
    return Side(role, rev, src, build_dir, desc)


def prune(cache, keep, in_use):
    """Keeps the `keep` most recently used revision folders (and those in use)."""
    try:
        entries = [e for e in os.scandir(cache) if e.is_dir() and re.fullmatch(r"[0-9a-f]{40}", e.name)]
    except FileNotFoundError:
        return
    entries.sort(key=lambda e: e.stat().st_mtime, reverse=True)
    for e in entries[keep:]:
        if e.name not in in_use:
            log(f"removing the build of {e.name[:12]} (more than {keep} revisions cached)")
            shutil.rmtree(e.path, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# Running benchmarks and the mapper


def bench_env(smoke):
    env = dict(os.environ)
    env.pop("NPUMAP_BENCH_SLOW", None)
    env.pop("NPUMAP_BENCH_SMOKE", None)
    if smoke:
        env["NPUMAP_BENCH_SMOKE"] = "1"
    return env


def split_key(key):
    """'suite[+smoke]:name' -> (suite, smoke, name)."""
    suite, name = key.split(":", 1)
    return suite.removesuffix("+smoke"), suite.endswith("+smoke"), name


def list_benchmarks(side, suite, smoke=False):
    exe = side.exe(suite)
    if not os.access(exe, os.X_OK):
        return None
    p = subprocess.run([exe, "--benchmark_list_tests=true"], cwd=side.src, capture_output=True, text=True,
                       timeout=120, env=bench_env(smoke))
    if p.returncode != 0:
        raise Broken(f"{side.role} {suite} --benchmark_list_tests failed: {p.stderr.strip()[-300:]}")
    return [line.strip() for line in p.stdout.splitlines() if line.strip()]


def gb_regex(name):
    # Google Benchmark filters with a regular expression: match exactly this one name.
    return "^" + re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", name) + "$"


class RunFailure(Exception):
    def __init__(self, msg, kind):
        super().__init__(msg)
        self.kind = kind  # "absent" (input not there), "check" (the benchmark's own check failed), "crash"


def measure_of(key):
    return "cpu" if any(re.search(p, key) for p in CPU_TIMED) else "wall"


# A short benchmark (one iteration under SHORT_ITERATION seconds of CPU) gives per sample the fastest of
# SHORT_REPETITIONS repetitions of SHORT_REP_TIME seconds each; the others one repetition of --min-time.
SHORT_ITERATION = 2e-3
SHORT_REPETITIONS = 30
SHORT_REP_TIME = 0.005


def run_benchmark(side, key, min_time, timeout, short=False):
    """One sample: the benchmark alone in a fresh process. Returns (seconds per iteration, answers,
    CPU seconds per iteration); the first in the key's measure (measure_of).

    A short benchmark runs SHORT_REPETITIONS repetitions of SHORT_REP_TIME and the sample is the
    fastest. On a shared virtual machine the speed of a core switches between states for a second or
    so at a time (model_bench's CPU time per batch is 22-25 us in one, 36-39 us in the other, under a
    load of 17 on 2 cores); 30 repetitions span enough of a second for the fastest to have run in the
    fast state, on either build (the 10% slower model against its baseline, 16 pairs: fastest of 10
    repetitions, 3-9 pairs of 16 on the wrong side; fastest of 30, none)."""
    suite, smoke, name = split_key(key)
    measure = measure_of(key)
    reps, each = (SHORT_REPETITIONS, SHORT_REP_TIME) if short else (1, min_time)
    cmd = [side.exe(suite), f"--benchmark_filter={gb_regex(name)}", "--benchmark_format=json",
           f"--benchmark_min_time={each:g}", f"--benchmark_repetitions={reps}"]
    try:
        p = subprocess.run(cmd, cwd=side.src, capture_output=True, text=True, timeout=timeout,
                           env=bench_env(smoke))
    except subprocess.TimeoutExpired:
        raise RunFailure(f"{side.role} {key} did not finish in {timeout} s", "crash")
    try:
        data = json.loads(p.stdout)
    except ValueError:
        data = None
    rows = [r for r in (data or {}).get("benchmarks", []) if r.get("run_type", "iteration") == "iteration"]
    errors = [r.get("error_message", "?") for r in rows if r.get("error_occurred")]
    if errors:
        kind = "absent" if any(a in e for e in errors for a in ABSENT_INPUTS) else "check"
        raise RunFailure(f"{side.role} {key}: {errors[0]}", kind)
    if p.returncode != 0 or not rows:
        why = f"signal {-p.returncode}" if p.returncode < 0 else f"exit status {p.returncode}"
        tail = " | ".join(p.stderr.strip().splitlines()[-3:])
        raise RunFailure(f"{side.role} {key}: {why}, no result{': ' + tail if tail else ''}", "crash")

    def per_iteration(x, field):
        return x[field] * TO_SECONDS[x.get("time_unit", "ns")]

    seconds = min(per_iteration(x, "cpu_time" if measure == "cpu" else "real_time") for x in rows)
    cpu = min(per_iteration(x, "cpu_time") for x in rows)
    r = rows[0]
    answers = {k: v for k, v in r.items()
               if k not in GB_FIELDS and k not in MEASURED_COUNTERS and not is_rate(k)
               and isinstance(v, (int, float))}
    return seconds, answers, cpu


def front_answer(result_path):
    """A front's answer: its size, the best cycles and off-chip bytes, and a SHA-256 over every
    point's objective values (sorted), as recorded in bench/baseline.json."""
    res = json.load(open(result_path))
    keys = ("cycles", "offchip_bytes", "sram_bytes", "peak_sram_bytes", "energy_pj")
    pts = sorted([[p[k] for k in keys if k in p] for p in res["front"]])
    digest = hashlib.sha256(json.dumps(pts, separators=(",", ":")).encode()).hexdigest()[:16]
    summary = res.get("front_summary", {})
    return {"size": len(pts), "hash": digest, "best_cycles": summary.get("best_cycles"),
            "best_offchip_bytes": summary.get("best_offchip_bytes")}


def run_front(side, workload, arch, cache_dir, timeout):
    """The mapper's front of one zoo workload on one preset, as `mapper --keep-pareto --threads 2`
    writes it. Cached per revision for exported builds (the mapper is deterministic)."""
    key = f"{workload}@{arch}"
    cached = os.path.join(cache_dir, f"{key}.json") if cache_dir else None
    if cached and os.path.exists(cached):
        return json.load(open(cached)), True
    yaml = os.path.join(side.src, "workloads", f"{workload}.yaml")
    if not os.path.exists(yaml):
        return None, False
    with tempfile.TemporaryDirectory(prefix="npumap-nightly-front-") as out:
        cmd = [side.mapper(), "--workload", yaml, "--arch", arch, "--keep-pareto", "--threads", "2",
               "--out", out, "-q"]
        try:
            p = subprocess.run(cmd, cwd=side.src, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RunFailure(f"{side.role} mapper on {key} did not finish in {timeout} s", "crash")
        if p.returncode != 0:
            # An error the mapper reports (exit 2 or 3) is its answer; a signal is a crash.
            raise RunFailure(f"{side.role} mapper on {key} failed ({'signal ' + str(-p.returncode) if p.returncode < 0 else 'exit ' + str(p.returncode)}): "
                             f"{p.stderr.strip()[-300:]}", "crash" if p.returncode < 0 else "check")
        answer = front_answer(os.path.join(out, "result.json"))
    if cached:
        atomic_write(cached, json.dumps(answer, sort_keys=True) + "\n")
    return answer, False


# --------------------------------------------------------------------------------------------
# The comparison


def select(names, patterns):
    if patterns is None:
        return list(names)
    rx = [re.compile(p) for p in patterns]
    return [n for n in names if any(r.search(n) for r in rx)]


def compare_answers(reference, head, kind):
    """Differences between two {key: {field: value}} maps over their common keys."""
    diffs = []
    for key in sorted(set(reference) & set(head)):
        for field in sorted(set(reference[key]) | set(head[key])):
            a, b = reference[key].get(field), head[key].get(field)
            if a != b:
                diffs.append(f"{kind} {key}: {field} {b} (HEAD) vs {a} (baseline)")
    return diffs


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="bench/nightly.sh",
        description="Baseline revision against HEAD: answers (exact) and speed (interleaved, paired).",
        epilog="Exit status: 0 fine, 1 answers differ, 3 speed regression only, 2 broken run. "
               "See docs/nightly.md.")
    p.add_argument("--quick", action="store_true",
                   help="the quick set: one benchmark per area (model, Pareto kernel, stage, join with 2/3/4 "
                        "objectives, end to end, sweep, import) and a few fronts; under 3 min on 2 cores")
    p.add_argument("--pairs", type=int,
                   help="interleaved pairs per benchmark (default 16, or what the Bonferroni-adjusted "
                        "intervals need if more)")
    p.add_argument("--min-time", type=float,
                   help="Google Benchmark --benchmark_min_time of one run, seconds (default 0.05 quick, 0.2 full)")
    p.add_argument("--threshold", type=float, default=0.03,
                   help="a ratio HEAD/baseline of at least 1 + T counts as slower if significant (default 0.03)")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="confidence of the intervals; significant = the interval excludes 1 (default 0.95)")
    p.add_argument("--filter", action="append", metavar="REGEX",
                   help="only the benchmarks whose 'suite:name' matches (repeatable; replaces the set)")
    p.add_argument("--fronts", action="append", metavar="REGEX",
                   help="only the fronts whose 'workload@preset' matches (repeatable; 'none' for none)")
    p.add_argument("--baseline", default="bench/baseline.json", help="the baseline file (default %(default)s)")
    p.add_argument("--baseline-rev", help="compare against this revision instead of the baseline file's")
    p.add_argument("--head", default="HEAD", help="the revision to test (default HEAD)")
    p.add_argument("--head-build", metavar="DIR",
                   help="use this existing build tree as HEAD (e.g. build/release, uncommitted changes included)")
    p.add_argument("--baseline-build", metavar="DIR", help="use this existing build tree as the baseline")
    p.add_argument("--out", default="runs/nightly", help="folder of nightly.json/.md/.svg (default %(default)s)")
    p.add_argument("--history", default=None,
                   help="JSON-lines history to append to (default <out>/history.jsonl; 'none' for none)")
    p.add_argument("--cache", default="build/nightly", help="folder of the per-revision builds (default %(default)s)")
    p.add_argument("--keep-builds", type=int, default=4, help="revision builds kept in the cache (default 4)")
    p.add_argument("-j", "--jobs", type=int, default=2, help="build jobs (default 2)")
    p.add_argument("--timeout", type=int, default=600, help="seconds one benchmark or mapper run may take")
    p.add_argument("--set-baseline", metavar="REV",
                   help="build REV, record its answers and revision in the baseline file, exit 0")
    a = p.parse_args(argv)
    if a.pairs is not None and not 2 <= a.pairs <= 200:
        p.error("--pairs must be in 2..200")

    if not 0.0 <= a.threshold < 1.0:
        p.error("--threshold must be in [0, 1)")
    if not 0.5 <= a.confidence < 1.0:
        p.error("--confidence must be in [0.5, 1)")
    if a.min_time is not None and not 0.0 <= a.min_time <= 60.0:
        p.error("--min-time must be in [0, 60] seconds")
    if a.set_baseline and (a.head_build or a.baseline_build or a.baseline_rev):
        p.error("--set-baseline builds its revision itself; it takes none of --head-build, --baseline-build, "
                "--baseline-rev")
    return a


def load_baseline_file(path):
    try:
        base = json.load(open(path))
    except OSError as e:
        raise Broken(f"cannot read the baseline {path}: {e.strerror} (create it with --set-baseline REV)")
    except ValueError as e:
        raise Broken(f"{path}: not JSON ({e})")
    if not isinstance(base, dict) or not isinstance(base.get("revision"), str) or "answers" not in base:
        raise Broken(f"{path}: not a baseline of this nightly (needs 'revision' and 'answers'; "
                     f"write one with --set-baseline REV)")
    return base


def collect_answers(side, fronts, bench_names, timeout, cache_dir):
    """One run of every listed benchmark (min_time 0) and the fronts: a side's answers."""
    answers = {"benchmarks": {}, "fronts": {}}
    skipped = []
    for full in bench_names:
        try:
            _, ans, _ = run_benchmark(side, full, 0, timeout)
        except RunFailure as e:
            if e.kind == "absent":
                skipped.append(str(e))
                continue
            raise Broken(str(e))
        answers["benchmarks"][full] = ans
    for key in fronts:
        w, a = key.split("@")
        try:
            ans, _ = run_front(side, w, a, cache_dir, timeout)
        except RunFailure as e:
            raise Broken(str(e))
        if ans is not None:
            answers["fronts"][key] = ans
    return answers, skipped


def all_fronts(src):
    names = sorted(f[:-5] for f in os.listdir(os.path.join(src, "workloads")) if f.endswith(".yaml"))
    return [f"{w}@{a}" for w in names for a in PRESETS]


def set_baseline(args):
    cache = os.path.abspath(os.path.join(ROOT, args.cache))
    sha = resolve(args.set_baseline)
    side = build_revision("baseline", sha, cache, args.jobs)
    # What the full and the quick set run: every benchmark as registered, and the small (smoke)
    # registrations that the quick set names.
    names = []
    for suite in SUITES:
        names += [f"{suite}:{n}" for n in (list_benchmarks(side, suite) or [])]
        names += select([f"{suite}+smoke:{n}" for n in (list_benchmarks(side, suite, True) or [])],
                        [q for q in QUICK if "smoke" in q])
    log(f"recording the answers of {sha[:12]}: {len(names)} benchmarks, the zoo's fronts")
    answers, skipped = collect_answers(side, all_fronts(side.src), names, args.timeout,
                                       os.path.join(cache, sha, "fronts"))
    for s in skipped:
        log(f"note: not recorded: {s}")
    base = {
        "tool": "npu-mapper nightly (docs/nightly.md)",
        "revision": sha,
        "subject": subject(sha),
        "recorded": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "answers": answers,
        "note": "Answers are exact (fronts: size, best values and a SHA-256 of every point's objectives; "
                "benchmarks: the non-rate counters they report). Speed is not recorded: each night "
                "measures this revision and HEAD side by side.",
    }
    path = os.path.join(ROOT, args.baseline) if not os.path.isabs(args.baseline) else args.baseline
    atomic_write(path, json.dumps(base, indent=1, sort_keys=True) + "\n")
    log(f"baseline {os.path.relpath(path, ROOT)}: revision {sha[:12]}, {len(answers['benchmarks'])} benchmark "
        f"answers, {len(answers['fronts'])} fronts")
    return EXIT_OK


def main(argv):
    args = parse_args(argv)
    os.chdir(ROOT)
    if args.set_baseline:
        return set_baseline(args)
    t_start = time.monotonic()
    started = datetime.now(timezone.utc)
    load_start = os.getloadavg()
    cache = os.path.abspath(args.cache)
    min_time = args.min_time if args.min_time is not None else (0.05 if args.quick else 0.2)

    # ---- the two programs. The recorded answers apply only when the baseline side is the file's
    # revision, built here.
    recorded = None
    if args.baseline_build:
        base_side = existing_build("baseline", args.baseline_build)
    else:
        if args.baseline_rev:
            base_sha = resolve(args.baseline_rev)
        else:
            base_file = load_baseline_file(args.baseline)
            base_sha = resolve(base_file["revision"])
            recorded = base_file["answers"]
        base_side = build_revision("baseline", base_sha, cache, args.jobs)
    if args.head_build:
        head_side = existing_build("head", args.head_build)
    else:
        head_side = build_revision("head", resolve(args.head), cache, args.jobs)
        if args.head == "HEAD" and git("status", "--porcelain", "--untracked-files=no", check=False):
            log("note: the working tree has uncommitted changes, which are not measured "
                "(commit them, or measure a build of them with --head-build build/release)")
    prune(cache, max(args.keep_builds, 2), {s.rev for s in (base_side, head_side) if s.rev})
    t_built = time.monotonic()

    notes, answer_diffs, skipped = [], [], []
    head_failed = set()  # fronts and benchmarks whose HEAD run reported an error: different answers

    # ---- which benchmarks
    patterns = args.filter if args.filter else (QUICK if args.quick else [r"^[a-z_]+:"])
    # The small (smoke) registrations are listed only when a pattern can name them.
    modes = (False, True) if any("smoke" in p for p in patterns) else (False,)
    listing = {}
    for side in (base_side, head_side):
        for suite in SUITES:
            for smoke in modes:
                listed = list_benchmarks(side, suite, smoke)
                if listed is None and not smoke:
                    notes.append(f"{side.role} has no {suite}")
                listing[(side.role, f"{suite}{'+smoke' if smoke else ''}")] = set(listed or [])
    both, only = [], []
    for suite in sorted({k[1] for k in listing}, key=lambda x: (SUITES.index(x.split("+")[0]), x)):
        a, b = listing[("baseline", suite)], listing[("head", suite)]
        both += [f"{suite}:{n}" for n in sorted(a & b)]
        only += [f"{suite}:{n} (only in HEAD)" for n in sorted(b - a)]
        only += [f"{suite}:{n} (only in the baseline)" for n in sorted(a - b)]
    # The full set is every benchmark of the suites as registered (the small smoke registrations only
    # when a --filter names them).
    chosen = select(both, patterns)
    only = [o for o in only if select([o.split(" (")[0]], patterns)]
    for o in only:
        notes.append(f"benchmark {o}: not compared")
    if args.fronts == ["none"]:
        front_keys = []
    else:
        front_keys = select(all_fronts(head_side.src), [f for f in args.fronts] if args.fronts else
                            (QUICK_FRONTS if args.quick else None))
    if not chosen and not front_keys:
        raise Broken("nothing to compare: no benchmark of both builds matches the set/--filter, and no front")
    need = nightly_stats.min_pairs(args.confidence, max(len(chosen), 1))
    pairs = args.pairs or max(16, need + 1)
    if chosen and pairs < need:
        raise Broken(f"--pairs {pairs} is too few: {len(chosen)} benchmarks at {args.confidence:g} confidence "
                     f"need at least {need} pairs each (or fewer benchmarks, or a lower --confidence)")

    # ---- fronts: exact answers, HEAD against the reference
    t0 = time.monotonic()
    fronts = {"baseline": {}, "head": {}}
    for side in (base_side, head_side):
        cache_dir = os.path.join(cache, side.rev, "fronts") if side.rev and side.src.startswith(cache) else None
        for key in front_keys:
            w, a = key.split("@")
            try:
                ans, _ = run_front(side, w, a, cache_dir, args.timeout)
            except RunFailure as e:
                if e.kind == "check" and side.role == "head":
                    answer_diffs.append(f"front {key}: {e}")
                    head_failed.add(key)
                    continue
                raise Broken(str(e))
            if ans is None:
                notes.append(f"front {key}: workload absent from the {side.role}'s tree")
            else:
                fronts[side.role][key] = ans
    t_fronts = time.monotonic() - t0

    # ---- benchmarks: interleaved pairs
    t0 = time.monotonic()
    samples = {n: {"baseline": [], "head": [], "order": [], "seconds": 0.0} for n in chosen}
    bench_answers = {"baseline": {}, "head": {}}
    unstable = {"baseline": set(), "head": set()}
    dropped = {}  # name -> why (skipped input, HEAD's own check failed)
    log(f"{len(chosen)} benchmarks x {pairs} pairs, interleaved; {len(fronts['head'])} fronts "
        f"({t_fronts:.0f} s); baseline {base_side.desc}; HEAD {head_side.desc}")
    def one_pair(i, name):
        """Runs one more pair of the benchmark; the order alternates from pair to pair (and starts
        with the baseline on even-numbered benchmarks, HEAD on odd)."""
        s = samples[name]
        order = (base_side, head_side) if (len(s["order"]) + i) % 2 == 0 else (head_side, base_side)
        got = {}
        for side in order:
            try:
                t_run = time.monotonic()
                got[side.role] = run_benchmark(side, name, min_time, args.timeout, short[name])
                s["seconds"] += time.monotonic() - t_run
            except RunFailure as e:
                if e.kind == "absent":
                    dropped[name] = f"skipped: {e}"
                    skipped.append(str(e))
                elif e.kind == "check" and side.role == "head":
                    dropped[name] = f"HEAD failed its own check: {e}"
                    answer_diffs.append(f"benchmark {name}: HEAD's run failed its own check: {e}")
                    head_failed.add(name)
                else:
                    raise Broken(str(e))
                return
        s["order"].append("AB" if order[0] is base_side else "BA")
        for role in ("baseline", "head"):
            secs, ans, _ = got[role]
            s[role].append(secs)
            prev = bench_answers[role].setdefault(name, ans)
            if prev != ans:
                unstable[role].add(name)

    # A pilot run of each benchmark on both builds (not counted: it also warms the file cache) gives
    # the CPU time of one iteration on the baseline, which decides whether the benchmark is short
    # (run_benchmark) on both builds.
    short = {}
    for name in chosen:
        try:
            _, _, cpu = run_benchmark(base_side, name, min_time, args.timeout)
            run_benchmark(head_side, name, min_time, args.timeout)
            short[name] = cpu <= SHORT_ITERATION
        except RunFailure:
            short[name] = False  # the rounds meet the failure again and deal with it
    log(f"pilot runs done ({time.monotonic() - t0:.0f} s); {sum(short.values())} short benchmarks "
        f"(fastest of {SHORT_REPETITIONS} repetitions a sample)")

    # Every benchmark gets `pairs` pairs, in rounds over all of them, so that each benchmark's pairs
    # spread over the session.
    for r in range(pairs):
        for i, name in enumerate(chosen):
            if name not in dropped:
                one_pair(i, name)
        done = r + 1
        if done in (1, pairs) or done % max(1, pairs // 4) == 0:
            log(f"pair {done}/{pairs} done ({time.monotonic() - t0:.0f} s)")

    t_bench = time.monotonic() - t0

    # ---- answers
    for name in sorted(unstable["baseline"]):
        raise Broken(f"benchmark {name}: the baseline build's answers vary between runs")
    for name in sorted(unstable["head"]):
        answer_diffs.append(f"benchmark {name}: HEAD's answers vary between runs (nondeterminism)")
    live_ref = {"benchmarks": bench_answers["baseline"], "fronts": fronts["baseline"]}
    if recorded is not None:
        # The baseline build must reproduce the answers recorded for its revision; otherwise the
        # environment (compiler, libraries) changed and no comparison with the file means anything.
        mism = compare_answers(recorded.get("fronts", {}), fronts["baseline"], "front") + \
            compare_answers(recorded.get("benchmarks", {}), bench_answers["baseline"], "benchmark")
        if mism:
            raise Broken(f"the baseline build of {base_side.rev[:12]} does not reproduce {args.baseline} "
                         f"({len(mism)} differences, first: {mism[0].replace('HEAD', 'this build')}); the "
                         f"toolchain or libraries changed, or the file was edited: record it again with "
                         f"--set-baseline {base_side.rev[:12]}")
        reference = {"benchmarks": {k: v for k, v in recorded.get("benchmarks", {}).items() if k in chosen},
                     "fronts": {k: v for k, v in recorded.get("fronts", {}).items() if k in front_keys}}
        for kind in ("benchmarks", "fronts"):
            for k, v in live_ref[kind].items():
                if k not in reference[kind]:
                    reference[kind][k] = v
                    notes.append(f"{kind[:-1]} {k}: not in {args.baseline}, compared with the baseline build's")
        ref_source = f"{args.baseline} (revision {base_side.rev[:12]}), reproduced by its build"
    else:
        reference = live_ref
        ref_source = f"the baseline build ({base_side.desc})"
    head_fronts = fronts["head"]
    head_bench = {k: v for k, v in bench_answers["head"].items() if k not in dropped}
    answer_diffs += compare_answers(reference["fronts"], head_fronts, "front")
    answer_diffs += compare_answers(reference["benchmarks"], head_bench, "benchmark")
    for key in sorted(set(reference["fronts"]) - set(head_fronts) - head_failed):
        notes.append(f"front {key}: no HEAD front to compare")

    def tally(ref, head, universe):
        """(identical, compared): a HEAD run that failed its own check counts as compared and not
        identical, whether or not the baseline's answer of it was recorded before the failure."""
        compared = {k for k in ref if k in head} | {k for k in head_failed if k in universe}
        return sum(1 for k in compared if k in ref and head.get(k) == ref[k]), len(compared)

    fronts_same, fronts_total = tally(reference["fronts"], head_fronts, set(front_keys))
    bench_same, bench_total = tally(reference["benchmarks"], head_bench, set(chosen))

    # ---- speed
    results = []
    for name in chosen:
        if name in dropped:
            continue
        s = samples[name]
        c = nightly_stats.compare_pairs(s["baseline"], s["head"], args.threshold, args.confidence,
                                        tests=len(chosen) - len(dropped))
        d = c.as_dict()
        d.update(name=name, measure=measure_of(name), short=short[name], base_times=s["baseline"],
                 head_times=s["head"],
                 order=s["order"], seconds=round(s["seconds"], 1))
        results.append(d)
    results.sort(key=lambda d: -d["ratio"])
    for name, why in sorted(dropped.items()):
        if why.startswith("skipped"):
            notes.append(f"benchmark {name}: {why}")

    slower = [d for d in results if d["verdict"] == "slower"]
    if answer_diffs:
        status, verdict = EXIT_ANSWERS, "ANSWERS DIFFER"
    elif slower:
        status, verdict = EXIT_SPEED, "SPEED REGRESSION"
    else:
        status, verdict = EXIT_OK, "PASS"

    report = {
        "tool": "npu-mapper nightly",
        "started": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "status": status,
        "verdict": verdict,
        "set": "filter" if args.filter else ("quick" if args.quick else "full"),
        "settings": {"pairs": pairs, "min_time_s": min_time, "threshold": args.threshold,
                     "confidence": args.confidence, "filter": patterns, "fronts": front_keys},
        "machine": {"nproc": os.cpu_count(), "machine": platform.machine(), "node": platform.node(),
                    "loadavg_start": load_start, "loadavg_end": os.getloadavg()},
        "baseline": base_side.as_dict(),
        "head": head_side.as_dict(),
        "answers": {"reference": ref_source, "differences": answer_diffs,
                    "fronts": {"identical": fronts_same, "compared": fronts_total, "head": head_fronts},
                    "benchmarks": {"identical": bench_same, "compared": bench_total, "head": head_bench}},
        "speed": results,
        "notes": notes,
        "seconds": {"build": round(t_built - t_start, 1), "fronts": round(t_fronts, 1),
                    "benchmarks": round(t_bench, 1), "total": round(time.monotonic() - t_start, 1)},
    }
    out = args.out
    history = args.history if args.history is not None else os.path.join(out, "history.jsonl")
    summary = nightly_report.summary_lines(report)
    nightly_report.write_all(report, out, None if history == "none" else history)
    print("\n".join(summary))
    print(f"nightly: report {os.path.join(out, 'nightly.md')} (+ nightly.json, nightly.svg"
          f"{', history ' + history if history != 'none' else ''}); {report['seconds']['total']:.0f} s "
          f"(build {report['seconds']['build']:.0f}, fronts {report['seconds']['fronts']:.0f}, "
          f"benchmarks {report['seconds']['benchmarks']:.0f})")
    print(f"nightly: exit status {status} ({verdict})")
    return status


def finish(status):
    """Exits with the status, first telling bench/nightly.sh that it was decided here."""
    path = os.environ.get("NPUMAP_NIGHTLY_STATUS_FILE")
    if path:
        with open(path, "w") as f:
            f.write(f"{status}\n")
    sys.exit(status)


def on_sigterm(signum, frame):
    # As an exception, so that subprocess.run kills the benchmark it is waiting for on the way out.
    raise KeyboardInterrupt


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        code = main(sys.argv[1:])
    except Broken as e:
        log(f"BROKEN RUN: {e}")
        log("exit status 2 (broken run: no verdict)")
        code = EXIT_BROKEN
    except KeyboardInterrupt:
        log("interrupted (SIGINT or SIGTERM): exit status 2 (broken run)")
        code = EXIT_BROKEN
    except SystemExit as e:  # argparse: --help (0) or a usage error (2)
        code = EXIT_BROKEN if e.code not in (0, None) else 0
        if code == 0:
            sys.exit(0)
    except Exception:  # a bug of the nightly itself must not read as "answers differ" (1)
        import traceback
        traceback.print_exc()
        log("internal error: exit status 2 (broken run: no verdict)")
        code = EXIT_BROKEN
    finish(code)
