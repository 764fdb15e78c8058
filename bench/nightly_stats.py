"""Paired statistics of the nightly benchmark comparison (docs/nightly.md, "How a verdict is reached").

Each benchmark is run n times on the baseline build (A) and n times on the HEAD build (B),
interleaved: A B, B A, A B, ... so that whatever load the machine carries at a moment hits the two
members of a pair alike. A pair i gives one log-ratio d_i = ln(time_B,i / time_A,i): load that
slows both members by the same factor cancels in it, and what remains is the programs' difference
plus the noise of load that changed between the two members of a pair.

On the d_i:
  * the estimate is the Hodges-Lehmann estimator (the median of the n(n+1)/2 Walsh averages
    (d_i + d_j) / 2, i <= j): as robust as a median to the odd pair that a burst hit on one side
    only, and less noisy than the median when there is no such pair;
  * the confidence interval is the distribution-free interval that goes with it (the k-th smallest
    and k-th largest Walsh average, k from the exact null distribution of the Wilcoxon signed-rank
    statistic); it only assumes that the noise of a pair is symmetric, which the alternating order
    makes true of the order effects;
  * "significant" means the interval excludes 0 (the ratio 1): the same as the exact one-sided
    Wilcoxon signed-rank test at (1 - confidence) / 2, whose p-value is reported too.
  * with k benchmarks compared in one night, each interval is taken at 1 - (1 - confidence) / k
    (Bonferroni), so that the k intervals hold together with the stated confidence: the chance that
    a night without any real change calls some benchmark slower stays below (1 - confidence) / 2
    however many benchmarks the set has.

A benchmark regressed when its ratio exp(estimate) is at least 1 + threshold AND the interval's
lower end is above 1. The threshold keeps a real but negligible change from failing the night;
the test keeps a large but noisy ratio from failing it. Symmetrically, a ratio at most
1 / (1 + threshold) whose interval lies below 1 is an improvement (reported, never a failure).

Pure Python (no numpy/scipy), exact for any n: the null distributions are counted, not
approximated. Tested by bench/test_nightly_stats.py (ctest bench.nightly_stats).
"""

import math

__all__ = ["signed_rank_null_cdf", "wilcoxon_greater_p", "hodges_lehmann", "hl_interval", "compare_pairs",
           "Comparison", "sign_counts", "min_pairs"]


def _ranks(values):
    """Midranks (1-based) of values, ties sharing the average of their ranks."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        mid = (i + j) / 2.0 + 1.0
        for k in range(i, j + 1):
            ranks[order[k]] = mid
        i = j + 1
    return ranks


def _subset_sum_counts(weights):
    """counts[s] = number of subsets of the integer weights summing to s."""
    total = sum(weights)
    counts = [0] * (total + 1)
    counts[0] = 1
    reach = 0
    for w in weights:
        reach += w
        for s in range(reach, w - 1, -1):
            counts[s] += counts[s - w]
    return counts


def signed_rank_null_cdf(n):
    """P(T <= t) for t = 0 .. n(n+1)/2, T the signed-rank statistic of n untied, nonzero values under
    the null (each rank's sign + or - with probability 1/2)."""
    counts = _subset_sum_counts(list(range(1, n + 1)))
    denom = 2.0 ** n
    cdf, acc = [], 0
    for c in counts:
        acc += c
        cdf.append(acc / denom)
    return cdf


def wilcoxon_greater_p(d):
    """Exact one-sided p-value of the Wilcoxon signed-rank test of 'the d are centred above 0':
    P(W+ >= observed) over the 2^m equally likely sign patterns of the m nonzero |d| (ties keep their
    midranks, so the distribution is the exact conditional one). Zeros are dropped (Wilcoxon's rule).
    1.0 when no value is nonzero."""
    nz = [x for x in d if x != 0.0]
    if not nz:
        return 1.0
    # Doubled midranks are integers, so the null distribution is a subset-sum count.
    ranks2 = [int(round(2 * r)) for r in _ranks([abs(x) for x in nz])]
    observed = sum(r for r, x in zip(ranks2, nz) if x > 0)
    counts = _subset_sum_counts(ranks2)
    return sum(counts[observed:]) / float(2 ** len(nz))


def _walsh(d):
    n = len(d)
    return sorted((d[i] + d[j]) / 2.0 for i in range(n) for j in range(i, n))


def _median(sorted_values):
    m = len(sorted_values)
    return sorted_values[m // 2] if m % 2 else (sorted_values[m // 2 - 1] + sorted_values[m // 2]) / 2.0


def hodges_lehmann(d):
    """Median of the Walsh averages."""
    return _median(_walsh(d))


def hl_interval(d, confidence):
    """Distribution-free confidence interval for the centre of d: (W_(k), W_(M+1-k)) over the sorted
    Walsh averages, with k - 1 the largest t such that P(T <= t) <= (1 - confidence) / 2 under the
    null. When even the widest interval (k = 1) cannot reach the confidence (n too small), returns
    the whole range with achieved=False."""
    n = len(d)
    w = _walsh(d)
    tail = (1.0 - confidence) / 2.0
    cdf = signed_rank_null_cdf(n)
    k = 0
    while k < len(cdf) and cdf[k] <= tail:
        k += 1
    # k is now the number of t values with P(T <= t) <= tail, i.e. the largest such t is k - 1.
    achieved = k >= 1
    k = max(k, 1)
    return w[k - 1], w[len(w) - k], achieved, 1.0 - 2.0 * cdf[k - 1]


def sign_counts(d):
    """(pairs where B was slower, pairs where B was faster)."""
    return sum(1 for x in d if x > 0), sum(1 for x in d if x < 0)


class Comparison:
    """The comparison of one benchmark: ratio = exp(estimate) of time_B / time_A, its interval, the
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
    est = hodges_lehmann(d)
    each = 1.0 - (1.0 - confidence) / tests
    lo, hi, achieved, coverage = hl_interval(d, each)
    p_slower = wilcoxon_greater_p(d)
    p_faster = wilcoxon_greater_p([-x for x in d])
    up = math.log1p(threshold)
    if not achieved:
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
        tests=tests, interval_confidence=each, coverage=coverage, interval_reached=achieved, p_slower=p_slower, p_faster=p_faster,
        pairs_slower=slower, pairs_faster=faster, verdict=verdict, threshold=threshold,
        log_ratios=d,
        # How much the machine moved during the session: the spread of each side's own times
        # (max / min). The pairing is there so that this does not reach the ratio.
        base_spread=a_sorted[-1] / a_sorted[0], head_spread=b_sorted[-1] / b_sorted[0],
        base_median=_median(a_sorted), head_median=_median(b_sorted))


def min_pairs(confidence, tests):
    """The fewest pairs with which an interval can reach 1 - (1 - confidence) / tests at all (all
    pairs on one side has probability 2^-n under the null)."""
    tail = (1.0 - confidence) / tests / 2.0
    n = 1
    while 0.5 ** n > tail:
        n += 1
    return n
