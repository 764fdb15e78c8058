#!/usr/bin/env python3
"""The nightly's verdicts and exit statuses end to end, on fake builds (ctest: bench.nightly_cli).

Each fake build is a folder with a CMakeCache.txt naming a fake source tree (workloads/*.yaml),
bench/<suite> executables that answer --benchmark_list_tests and print Google Benchmark JSON with
the times and answers its fake.json says, and a mapper/mapper that writes a result.json. So
bench/nightly.sh runs exactly as on real builds (--baseline-build/--head-build), in a second, with
times chosen by the test: a 10% slower HEAD must give exit 3, a different front exit 1, a crash
exit 2, equal builds exit 0, and the files must be written.
"""

import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
NIGHTLY = os.path.join(HERE, "nightly.sh")

FAKE_BENCH = r'''#!{python}
import json, math, os, random, re, sys
cfg = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fake.json")))
suite = os.path.basename(sys.argv[0])
names = cfg["benchmarks"].get(suite, [])
args = dict(a.split("=", 1) if "=" in a else (a, "") for a in sys.argv[1:])
if "--benchmark_list_tests=true" in sys.argv[1:]:
    print("\n".join(names)); sys.exit(0)
if cfg.get("crash") == suite:
    os.kill(os.getpid(), 11)
if cfg.get("check_fails") == suite:  # the benchmark's own check: SkipWithError, exit 1
    print(json.dumps({"context": {}, "benchmarks": [{"name": names[0], "run_name": names[0], "run_type": "iteration",
                      "error_occurred": True, "error_message": "front differs from the reference"}]}))
    sys.exit(1)
rx = re.compile(args.get("--benchmark_filter", "."))
reps = int(args.get("--benchmark_repetitions", "1"))
# A reproducible machine shared by the fake builds of one test: its load moves by up to cfg["load"]
# from one pair of runs to the next (the nightly runs the two members of a pair back to back).
state = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "calls")
calls = int(open(state).read()) if os.path.exists(state) else 0
open(state, "w").write(str(calls + 1))
load = 1.0 + random.Random(calls // 2).uniform(0.0, cfg.get("load", 0.0))
rng = random.Random(cfg["seed"] * 100003 + calls)
rows = []
for n in names:
    if not rx.search(n):
        continue
    for i in range(reps):
        t = 1000.0 * cfg["scale"] * load * math.exp(rng.gauss(0.0, 0.003))
        rows.append({"name": n, "run_name": n, "run_type": "iteration", "iterations": 10,
                     "real_time": t, "cpu_time": t, "time_unit": "ns", "front_hash": cfg["answer"],
                     "items_per_second": 1e9 / t})
print(json.dumps({"context": {}, "benchmarks": rows}))
'''

FAKE_MAPPER = r'''#!{python}
import json, os, sys
cfg = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fake.json")))
out = sys.argv[sys.argv.index("--out") + 1]
if cfg.get("mapper_fails"):
    print("tiny.yaml:1:1: error: no valid mapping", file=sys.stderr)
    sys.exit(2)
front = [{"cycles": 100.0 + cfg["answer"], "offchip_bytes": 50.0}, {"cycles": 120.0, "offchip_bytes": 40.0}]
json.dump({"front": front, "front_summary": {"best_cycles": front[0]["cycles"], "best_offchip_bytes": 40.0}},
          open(os.path.join(out, "result.json"), "w"))
'''


def write(path, text, executable=False):
    with open(path, "w") as f:
        f.write(text)
    if executable:
        os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)


def read(path):
    with open(path) as f:
        return f.read()


def make_build(root, name, scale=1.0, answer=7, crash=None, load=0.0, seed=1, check_fails=None, mapper_fails=False):
    src = os.path.join(root, name + "-src")
    os.makedirs(os.path.join(src, "workloads"), exist_ok=True)
    write(os.path.join(src, "workloads", "tiny.yaml"), "name: tiny\n")
    build = os.path.join(root, "builds", name)
    for d in ("bench", "mapper"):
        os.makedirs(os.path.join(build, d), exist_ok=True)
    write(os.path.join(build, "CMakeCache.txt"), f"CMAKE_HOME_DIRECTORY:INTERNAL={src}\n")
    cfg = {"scale": scale, "answer": answer, "crash": crash, "load": load, "seed": seed, "check_fails": check_fails,
           "mapper_fails": mapper_fails,
           "benchmarks": {"model_bench": ["BM_Model"], "mapper_bench": ["BM_Join/a/real_time"]}}
    write(os.path.join(build, "fake.json"), json.dumps(cfg))
    for suite in ("model_bench", "mapper_bench"):  # the nightly notes the other suites as absent
        write(os.path.join(build, "bench", suite), FAKE_BENCH.replace("{python}", sys.executable, 1), True)
    write(os.path.join(build, "mapper", "mapper"), FAKE_MAPPER.replace("{python}", sys.executable, 1), True)
    return build


class NightlyCli(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="npumap-nightly-cli-")
        self.root = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def run_nightly(self, base, head, *extra, both=False):
        """One benchmark (6 pairs, the fewest its interval needs) and one front, so that a run spawns
        about 20 processes; both=True adds the second benchmark (7 pairs)."""
        out = os.path.join(self.root, "out")
        benches = ["--filter", "^model_bench:"] + (["--filter", "^mapper_bench:"] if both else [])
        cmd = ["bash", NIGHTLY, "--baseline-build", base, "--head-build", head, "--pairs", "7" if both else "6",
               "--min-time", "0.01", *benches, "--fronts", "^tiny@ethos-u55-256$",
               "--out", out, "--history", os.path.join(out, "history.jsonl"), *extra]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        return p, out

    def report(self, out):
        with open(os.path.join(out, "nightly.json")) as f:
            return json.load(f)

    def test_same_builds_pass(self):
        a = make_build(self.root, "a", load=0.3)  # a machine that swings by 30% between samples
        p, out = self.run_nightly(a, a)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0], "nightly: fronts 1/1 identical; benchmark answers 1/1 identical")
        self.assertTrue(lines[1].startswith("nightly: speed: time HEAD/baseline"))
        r = self.report(out)
        self.assertEqual((r["status"], r["verdict"]), (0, "PASS"))
        self.assertEqual(len(r["speed"]), 1)
        self.assertNotIn("slower", [d["verdict"] for d in r["speed"]])
        # The files a CI owner reads.
        self.assertTrue(read(os.path.join(out, "nightly.md")).startswith("# Nightly: PASS (exit status 0)"))
        ET.parse(os.path.join(out, "nightly.svg"))  # well-formed XML
        # A second night appends a second history line.
        self.run_nightly(a, a)
        history = [json.loads(line) for line in read(os.path.join(out, "history.jsonl")).splitlines()]
        self.assertEqual(len(history), 2)
        self.assertEqual(set(history[0]["speed"]), {"model_bench:BM_Model"})
        self.assertTrue(os.path.exists(os.path.join(out, "trend.svg")))  # two nights: a trend

    def test_ten_percent_slower_is_a_speed_regression(self):
        a = make_build(self.root, "a", load=0.3, seed=1)
        b = make_build(self.root, "b", scale=1.10, load=0.3, seed=2)
        p, out = self.run_nightly(a, b, both=True)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        r = self.report(out)
        self.assertEqual(r["verdict"], "SPEED REGRESSION")
        for d in r["speed"]:
            self.assertEqual(d["verdict"], "slower")
            self.assertAlmostEqual(d["ratio"], 1.10, delta=0.03)
            self.assertLess(d["low"], 1.10)
            self.assertGreater(d["high"], 1.10)
        self.assertIn("every benchmark moved together", p.stdout)
        self.assertIn("nightly: SPEED REGRESSION: 2 benchmark(s) slower", p.stdout)

    def test_faster_head_passes(self):
        a = make_build(self.root, "a")
        b = make_build(self.root, "b", scale=0.8, seed=2)
        p, out = self.run_nightly(a, b)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual({d["verdict"] for d in self.report(out)["speed"]}, {"faster"})

    def test_different_answers_exit_1_even_when_slower(self):
        a = make_build(self.root, "a")
        b = make_build(self.root, "b", scale=1.2, answer=8, seed=2)
        p, out = self.run_nightly(a, b)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertTrue(p.stdout.startswith("nightly: fronts 0/1 identical; benchmark answers 0/1 identical"))
        r = self.report(out)
        self.assertEqual(r["verdict"], "ANSWERS DIFFER")
        self.assertTrue(any("front_hash 8 (HEAD) vs 7 (baseline)" in d for d in r["answers"]["differences"]))

    def test_head_failing_its_own_check_is_an_answer(self):
        a = make_build(self.root, "a")
        b = make_build(self.root, "b", check_fails="model_bench", seed=2)
        p, out = self.run_nightly(a, b, both=True)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertTrue(p.stdout.startswith("nightly: fronts 1/1 identical; benchmark answers 1/2 identical"))
        self.assertEqual([d["name"] for d in self.report(out)["speed"]], ["mapper_bench:BM_Join/a/real_time"])

    def test_head_mapper_error_is_an_answer(self):
        a = make_build(self.root, "a")
        b = make_build(self.root, "b", mapper_fails=True, seed=2)
        p, out = self.run_nightly(a, b)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertTrue(p.stdout.startswith("nightly: fronts 0/1 identical; benchmark answers 1/1 identical"))
        self.assertIn("no valid mapping", p.stdout)

    def test_baseline_failing_is_a_broken_run(self):
        a = make_build(self.root, "a", check_fails="model_bench")
        p, _ = self.run_nightly(a, make_build(self.root, "b", seed=2))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)

    def test_crash_is_a_broken_run(self):
        a = make_build(self.root, "a")
        b = make_build(self.root, "b", crash="model_bench", seed=2)
        p, _ = self.run_nightly(a, b)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("signal 11", p.stderr)

    def test_usage_errors_are_broken_runs(self):
        a = make_build(self.root, "a")
        p, _ = self.run_nightly(a, a, "--threshold", "2")
        self.assertEqual(p.returncode, 2)
        p, _ = self.run_nightly(a, a, "--pairs", "5")  # too few for the interval of one benchmark (6)
        self.assertEqual(p.returncode, 2)
        self.assertIn("too few", p.stderr)
        p = subprocess.run(["bash", NIGHTLY, "--baseline-build", os.path.join(self.root, "nowhere")],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("not a CMake build tree", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
