"""Paired statistics of the nightly benchmark comparison (docs/nightly.md, "How a verdict is reached").

Each benchmark is run n times on the baseline build (A) and n times on the HEAD build (B),
interleaved: A B, B A, A B, ... so that whatever load the machine carries at a moment hits the two
members of a pair alike. A pair i gives one log-ratio d_i = ln(time_B,i / time_A,i): load that
slows both members by the same factor cancels in it, and what remains is the programs' difference
plus the noise of load that changed between the two members of a pair.

On a shared machine that noise is mostly small, but now and then the load changes between the two
members of a pair and that pair's d_i is off by 20-50% either way (on the 2-core development
machine under a load of 15-20, about one pair in ten). So the statistics are the sign test's,
which such a pair can only move by one count, whatever its size:
  * the estimate is the median of the d_i;
  * its confidence interval is the order-statistic interval of the sign test: [d_(j+1), d_(n-j)] with
    j the largest count such that P(X <= j) <= (1 - confidence) / 2 for X ~ Binomial(n, 1/2). It
    assumes nothing about the noise but that, were the programs the same, a pair would be as likely
    to favour either build (which the alternating order makes true of order effects);
  * "significant" means the interval excludes 0 (the ratio 1): the exact one-sided sign test at
    (1 - confidence) / 2, whose p-value (the binomial tail of the count of pairs where HEAD was
    slower) is reported too;
  * with k benchmarks compared in one night, each interval is taken at 1 - (1 - confidence) / k
    (Bonferroni), so that the k intervals hold together with the stated confidence: the chance that
    a night without any real change calls some benchmark slower stays below (1 - confidence) / 2
    however many benchmarks the set has.

A benchmark regressed when its ratio exp(median) is at least 1 + threshold AND the interval's lower
end is above 1. The threshold keeps a real but negligible change from failing the night; the test
keeps a large but noisy ratio from failing it. Symmetrically, a ratio at most 1 / (1 + threshold)
whose interval lies below 1 is an improvement (reported, never a failure).

Pure Python, exact for any n (the binomial distribution is summed, not approximated). Tested by
bench/test_nightly_stats.py (ctest bench.nightly_stats).
"""

import math

__all__ = ["binomial_cdf", "sign_test_greater_p", "median", "sign_interval", "compare_pairs", "Comparison",
           "sign_counts", "min_pairs"]


def binomial_cdf(n):
    """[P(X <= j) for j = 0 .. n], X ~ Binomial(n, 1/2)."""
    out, acc = [], 0
    for j in range(n + 1):
        acc += math.comb(n, j)
        out.append(acc / 2.0 ** n)
    return out


def sign_counts(d):
    """(pairs where B was slower, pairs where B was faster); equal times count for neither."""
    return sum(1 for x in d if x > 0), sum(1 for x in d if x < 0)


def sign_test_greater_p(d):
    """Exact one-sided p-value of 'B slower than A': P(X >= pairs slower), X ~ Binomial(m, 1/2) over
    the m pairs that are not ties. 1.0 when every pair is a tie."""
    up, down = sign_counts(d)
    m = up + down
    if m == 0:
        return 1.0
    return sum(math.comb(m, j) for j in range(up, m + 1)) / 2.0 ** m


def median(values):
    v = sorted(values)
    m = len(v)
    return v[m // 2] if m % 2 else (v[m // 2 - 1] + v[m // 2]) / 2.0


def sign_interval(d, confidence):
    """The sign test's confidence interval for the median of d: (d_(j+1), d_(n-j)) over the sorted
    values, j the largest count with P(X <= j) <= (1 - confidence) / 2, X ~ Binomial(n, 1/2).
    Returns (low, high, reached, coverage); when even (min, max) cannot reach the confidence
    (P(X <= 0) = 2^-n too large: too few pairs), returns (min, max) with reached=False."""
    n = len(d)
    v = sorted(d)
    tail = (1.0 - confidence) / 2.0
    cdf = binomial_cdf(n)
    j = -1
    while j + 1 <= n // 2 and cdf[j + 1] <= tail:
        j += 1
    reached = j >= 0
    j = max(j, 0)
    # P(d_(j+1) <= median <= d_(n-j)) = 1 - 2 P(X <= j) (for j = 0: 1 - 2^(1-n)).
    return v[j], v[n - 1 - j], reached, 1.0 - 2.0 * cdf[j]


def min_pairs(confidence, tests):
    """The fewest pairs with which an interval can reach 1 - (1 - confidence) / tests at all (all
    pairs on one side has probability 2^-n under the null)."""
    tail = (1.0 - confidence) / tests / 2.0
    n = 1
    while 0.5 ** n > tail:
        n += 1
    return n


class Comparison:
    """The comparison of one benchmark: ratio = exp(median) of time_B / time_A, its interval, the
    p-values, the verdict."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def as_dict(self):
        return dict(self.__dict__)


def compare_pairs(base_times, head_times, threshold=0.03, confidence=0.95, tests=1):
    """Compares paired times (seconds or any unit, > 0) of the baseline (A) and HEAD (B); `tests` is
    the number of benchmarks compared together (the Bonferroni factor of the interval).

    Verdicts:
      "slower"   ratio >= 1 + threshold and the interval lies above 1 (a regression);
      "faster"   ratio <= 1 / (1 + threshold) and the interval lies below 1;
      "same"     the interval lies within [1 / (1 + threshold), 1 + threshold];
      "noisy"    none of these: the run could not tell (too few or too noisy pairs) or the change is
                 significant but smaller than the threshold. Never a failure. Also when the pairs are
                 too few for the interval to reach its confidence at all.
    """
    if len(base_times) != len(head_times):
        raise ValueError("base and head need the same number of runs (one pair each)")
    if len(base_times) < 2:
        raise ValueError("at least two pairs are needed")
    if min(base_times) <= 0 or min(head_times) <= 0:
        raise ValueError("times must be positive")
    if not 0.0 <= threshold < 1.0:
        raise ValueError("threshold must be in [0, 1)")
    if not 0.5 <= confidence < 1.0:
        raise ValueError("confidence must be in [0.5, 1)")
    if tests < 1:
        raise ValueError("tests must be at least 1")
    d = [math.log(b / a) for a, b in zip(base_times, head_times)]
    est = median(d)
    each = 1.0 - (1.0 - confidence) / tests
    lo, hi, reached, coverage = sign_interval(d, each)
    p_slower = sign_test_greater_p(d)
    p_faster = sign_test_greater_p([-x for x in d])
    up = math.log1p(threshold)
    if not reached:
        verdict = "noisy"
    elif est >= up and lo > 0.0:
        verdict = "slower"
    elif est <= -up and hi < 0.0:
        verdict = "faster"
    elif lo >= -up and hi <= up:
        verdict = "same"
    else:
        verdict = "noisy"
    slower, faster = sign_counts(d)
    a_sorted, b_sorted = sorted(base_times), sorted(head_times)
    return Comparison(
        pairs=len(d), ratio=math.exp(est), low=math.exp(lo), high=math.exp(hi), confidence=confidence,
        tests=tests, interval_confidence=each, coverage=coverage, interval_reached=reached,
        p_slower=p_slower, p_faster=p_faster, pairs_slower=slower, pairs_faster=faster, verdict=verdict,
        threshold=threshold, log_ratios=d,
        # How much the machine moved during the session: the spread of each side's own times
        # (max / min). The pairing is there so that this does not reach the ratio.
        base_spread=a_sorted[-1] / a_sorted[0], head_spread=b_sorted[-1] / b_sorted[0],
        base_median=median(a_sorted), head_median=median(b_sorted))
