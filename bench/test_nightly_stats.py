#!/usr/bin/env python3
"""Tests of bench/nightly_stats.py on synthetic pairs (ctest: bench.nightly_stats).

The synthetic machine: a benchmark's true time t; pair i runs on a machine whose speed factor m_i
(>= 1: load only slows) hits both members alike, except that with some probability the load changes
between the two members, so one of them alone gets an extra factor. Every random draw comes from
random.Random(seed), so a failure is reproducible from the seed printed with it.
"""

import math
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nightly_stats as ns  # noqa: E402


def machine_pairs(rng, n, slowdown, swing=0.30, split=0.25, jitter=0.01, t=1.0):
    """n pairs (base, head) of a program whose HEAD takes `slowdown` times as long.

    swing:  the machine's speed moves by up to this much between pairs (factor 1 .. 1 + swing),
    split:  probability that the load changes between the two members of a pair (one member alone
            gets another factor 1 .. 1 + swing),
    jitter: independent timing noise of one run (log-normal sigma)."""
    base, head = [], []
    for _ in range(n):
        m = 1.0 + rng.uniform(0.0, swing)
        a = t * m * math.exp(rng.gauss(0.0, jitter))
        b = t * slowdown * m * math.exp(rng.gauss(0.0, jitter))
        if rng.random() < split:
            extra = 1.0 + rng.uniform(0.0, swing)
            if rng.random() < 0.5:
                a *= extra
            else:
                b *= extra
        base.append(a)
        head.append(b)
    return base, head


class ExactDistributions(unittest.TestCase):
    def test_signed_rank_null_n3(self):
        # n = 3: the 8 sign patterns of ranks {1, 2, 3} give T+ = 0, 1, 2, 3, 3, 4, 5, 6 (T+ = 3 twice:
        # {3} and {1, 2}), so P(T <= t) = 1/8, 2/8, 3/8, 5/8, 6/8, 7/8, 8/8.
        cdf = ns.signed_rank_null_cdf(3)
        self.assertEqual([round(c * 8) for c in cdf], [1, 2, 3, 5, 6, 7, 8])

    def test_signed_rank_null_n8_tail(self):
        # Tables of the Wilcoxon signed-rank test, n = 8: P(T <= 5) = 10/256, P(T <= 6) = 14/256
        # (subsets of {1..8} with sum <= 5: {}, 1, 2, 3, 4, 5, 12, 13, 14, 23 = 10; sum 6 adds 6, 15, 24, 123).
        cdf = ns.signed_rank_null_cdf(8)
        self.assertAlmostEqual(cdf[5], 10 / 256)
        self.assertAlmostEqual(cdf[6], 14 / 256)

    def test_wilcoxon_all_positive(self):
        # Every difference positive: only the all-plus pattern reaches W+ = max, p = 2^-n.
        self.assertAlmostEqual(ns.wilcoxon_greater_p([0.1, 0.2, 0.3, 0.4, 0.5]), 1 / 32)
        self.assertAlmostEqual(ns.wilcoxon_greater_p([-0.1, -0.2, -0.3]), 1.0)

    def test_wilcoxon_ties_use_midranks(self):
        # |d| = 1, 1, 2: midranks 1.5, 1.5, 3; W+ of (+1, -1, +2) = 4.5. Over the 8 sign patterns the
        # sums are 0, 1.5, 1.5, 3, 3, 4.5, 4.5, 6: P(W+ >= 4.5) = 3/8.
        self.assertAlmostEqual(ns.wilcoxon_greater_p([1.0, -1.0, 2.0]), 3 / 8)

    def test_wilcoxon_drops_zeros(self):
        self.assertAlmostEqual(ns.wilcoxon_greater_p([0.0, 0.0, 0.3, 0.4]), 1 / 4)
        self.assertEqual(ns.wilcoxon_greater_p([0.0, 0.0]), 1.0)

    def test_hodges_lehmann_by_hand(self):
        # d = 1, 2, 4: Walsh averages 1, 1.5, 2.5, 2, 3, 4 -> sorted 1, 1.5, 2, 2.5, 3, 4 -> median 2.25.
        self.assertAlmostEqual(ns.hodges_lehmann([1.0, 2.0, 4.0]), 2.25)

    def test_interval_by_hand(self):
        # n = 8 at 90%: P(T <= 5) = 0.039 <= 0.05 < P(T <= 6), so k = 6: the 6th smallest and 6th
        # largest of the 36 Walsh averages (i + j) / 2, i <= j, of d = 1..8. Smallest first: 1 (1,1),
        # 1.5 (1,2), 2 (1,3) (2,2), 2.5 (1,4) (2,3): the 6th is 2.5; by symmetry the 6th largest 6.5.
        lo, hi, reached, coverage = ns.hl_interval([float(i) for i in range(1, 9)], 0.90)
        self.assertEqual((lo, hi), (2.5, 6.5))
        self.assertTrue(reached)
        self.assertAlmostEqual(coverage, 1 - 2 * 10 / 256)

    def test_interval_too_few_pairs(self):
        # n = 3 at 95%: even the widest interval covers only 1 - 2/8 = 75%.
        lo, hi, reached, coverage = ns.hl_interval([0.1, 0.2, 0.3], 0.95)
        self.assertFalse(reached)
        self.assertEqual((lo, hi), (0.1, 0.3))
        self.assertAlmostEqual(coverage, 0.75)


class Metamorphic(unittest.TestCase):
    def test_common_factor_per_pair_cancels(self):
        # Load that hits both members of a pair alike does not move anything.
        rng = random.Random(7)
        base, head = machine_pairs(rng, 10, 1.05, swing=0.0, split=0.0)
        ref = ns.compare_pairs(base, head)
        factors = [1.0 + rng.uniform(0.0, 0.6) for _ in base]
        loaded = ns.compare_pairs([a * f for a, f in zip(base, factors)], [b * f for b, f in zip(head, factors)])
        for key in ("ratio", "low", "high", "p_slower", "verdict"):
            a, b = getattr(ref, key), getattr(loaded, key)
            if isinstance(a, float):
                self.assertAlmostEqual(a, b, places=12)
            else:
                self.assertEqual(a, b)

    def test_swapping_sides_inverts(self):
        rng = random.Random(11)
        base, head = machine_pairs(rng, 9, 1.08)
        ab, ba = ns.compare_pairs(base, head), ns.compare_pairs(head, base)
        self.assertAlmostEqual(ab.ratio * ba.ratio, 1.0, places=12)
        self.assertAlmostEqual(ab.low * ba.high, 1.0, places=12)
        self.assertAlmostEqual(ab.p_slower, ba.p_faster, places=12)
        self.assertEqual((ab.verdict, ba.verdict), ("slower", "faster"))

    def test_bad_input(self):
        with self.assertRaises(ValueError):
            ns.compare_pairs([1.0, 1.0], [1.0])
        with self.assertRaises(ValueError):
            ns.compare_pairs([1.0], [1.0])
        with self.assertRaises(ValueError):
            ns.compare_pairs([1.0, 0.0], [1.0, 1.0])


class SyntheticVerdicts(unittest.TestCase):
    """The brief's three cases, each over 400 seeds, with the nightly's defaults: 10 pairs, threshold
    3%, 95% intervals taken together over the quick set's 8 benchmarks (tests=8, each interval at
    99.4%). The rates are of one benchmark; the asserted bounds leave room for the sampling error of
    400 draws (a rate of 1% is 4 seeds)."""
    SEEDS = range(400)
    K = 8  # benchmarks in the quick set

    def rate(self, slowdown, verdict, n=10, tests=K, **machine):
        hits = [seed for seed in self.SEEDS
                if ns.compare_pairs(*machine_pairs(random.Random(seed), n, slowdown, **machine),
                                    tests=tests).verdict == verdict]
        return len(hits) / len(self.SEEDS), hits[:5]

    def test_no_difference_quiet_machine(self):
        for tests in (1, self.K):
            rate, seeds = self.rate(1.0, "slower", tests=tests, swing=0.02, split=0.1)
            self.assertEqual(rate, 0.0, f"tests={tests}: flagged slower at seeds {seeds}")
        same, _ = self.rate(1.0, "same", swing=0.02, split=0.1)
        self.assertGreater(same, 0.9, "a quiet run of one program against itself should mostly read 'same'")

    def test_five_percent_slower_is_flagged(self):
        # 1% timing noise, the machine moving 5% between pairs and, one pair in ten, within one.
        rate, seeds = self.rate(1.05, "slower", swing=0.05, split=0.1)
        self.assertGreater(rate, 0.95)

    def test_five_percent_slower_under_30_percent_swings_is_flagged(self):
        # Swings between pairs cancel in the log-ratios, however large.
        rate, _ = self.rate(1.05, "slower", swing=0.30, split=0.0)
        self.assertGreater(rate, 0.95)

    def test_thirty_percent_swings_without_difference_do_not_flag(self):
        # The machine moves by up to 30% between pairs and, a quarter of the time, within a pair
        # (one member alone slowed by up to 30% more). The same program must not read slower.
        for n in (10, 16):
            rate, seeds = self.rate(1.0, "slower", n=n, swing=0.30, split=0.25)
            self.assertLessEqual(rate, 0.005, f"n={n}: flagged slower in {rate:.1%}, seeds {seeds}")

    def test_thirty_percent_swings_inside_every_pair(self):
        # The worst case: the load changes inside every pair. One benchmark alone is then called
        # slower at about the test's level, (1 - 0.95) / 2; with the night's 8 benchmarks the
        # Bonferroni interval brings each one's rate far below, so that the night's stays near it.
        alone, _ = self.rate(1.0, "slower", tests=1, swing=0.30, split=1.0)
        self.assertLessEqual(alone, 0.05)
        each, seeds = self.rate(1.0, "slower", swing=0.30, split=1.0)
        self.assertLessEqual(each, 0.01, f"flagged slower in {each:.1%}, seeds {seeds}")

    def test_ten_percent_slower_under_swings_is_flagged(self):
        # 3% timing noise, 30% swings between pairs: a 10% slowdown reads slower nearly always.
        rate, _ = self.rate(1.10, "slower", swing=0.30, split=0.0, jitter=0.03)
        self.assertGreater(rate, 0.97)


if __name__ == "__main__":
    unittest.main(verbosity=2)
