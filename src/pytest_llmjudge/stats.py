"""The statistics every decision on the record uses: one definition each, pure functions, no I/O.

Calibration (agreement with human labels), pass-rate gates, the diff of two revisions' verdicts and the
qualification of a judge all report rates with intervals and agreement beyond chance; they take them from
here, so a figure means the same on every page that prints it.

- `wilson`: the Wilson score interval of a proportion (Wilson 1927), which keeps its coverage near the
  nominal level for small n and for rates near 0 or 1, where the Wald interval (p +- z se) collapses.
- `newcombe_difference`: the interval of the difference of two independent proportions, from their
  Wilson intervals (Newcombe 1998, method 10).
- `mean_interval`: the Student-t interval of a mean score, clamped to [0, 1].
- `mcnemar_exact`: the exact (conditional, binomial) McNemar test on paired flips.
- `cohen_kappa`: Cohen's kappa of a 2x2 table with its large-sample standard error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

__all__ = [
    "Z95",
    "Confusion",
    "Interval",
    "Kappa",
    "McNemar",
    "check_confidence",
    "cohen_kappa",
    "mcnemar_exact",
    "mean_interval",
    "newcombe_difference",
    "student_t_quantile",
    "wilson",
    "z_for",
]

# Two-sided 95%: the 0.975 quantile of the standard normal (1.959963984540054).
Z95 = NormalDist().inv_cdf(0.975)


def check_confidence(confidence: float) -> float:
    """`confidence` as a two-sided level strictly between 0 and 1; ValueError names a bad one."""
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.0 < confidence < 1.0:
        raise ValueError(f"a confidence level is a number between 0 and 1 (such as 0.95), got {confidence!r}")
    return float(confidence)


def z_for(confidence: float) -> float:
    """The standard normal quantile of a two-sided interval at `confidence` (1.96 for 0.95)."""
    return NormalDist().inv_cdf(0.5 + check_confidence(confidence) / 2.0)


@dataclass(frozen=True)
class Interval:
    """A two-sided interval around `estimate`, at `confidence`."""

    estimate: float
    low: float
    high: float
    confidence: float

    def to_json(self) -> list[float]:
        """`[low, high]`, as reports write an interval."""
        return [self.low, self.high]

    def __str__(self) -> str:
        return f"{self.estimate:.1%} [{self.low:.1%}, {self.high:.1%}]"


def wilson(successes: float, n: float, confidence: float = 0.95) -> Interval:
    """The Wilson score interval of `successes` in `n` (Wilson 1927; Newcombe 1998, method 3).

        center = (p + z^2 / 2n) / (1 + z^2 / n)
        half   = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / 4n^2)

    With n = 0 there is no estimate: the interval is [0, 1] around 0.  The counts may be fractional: an
    effective sample size (n divided by a design effect), as where the two orders of a pairwise comparison
    are two correlated answers about one pair and count as one trial, each answer a half.
    """
    if isinstance(successes, bool) or isinstance(n, bool) or not 0 <= successes <= n:
        raise ValueError(f"a proportion needs 0 <= successes <= n, got {successes!r} of {n!r}")
    confidence = check_confidence(confidence)
    if n == 0:
        return Interval(0.0, 0.0, 1.0, confidence)
    z = z_for(confidence)
    p = successes / n
    shrink = 1.0 + z * z / n
    center = (p + z * z / (2 * n)) / shrink
    half = z / shrink * math.sqrt(p * (1.0 - p) / n + z * z / (4 * n * n))
    # The bounds are exact at 0 and n (the formula gives them up to rounding).
    low = 0.0 if successes == 0 else max(0.0, center - half)
    high = 1.0 if successes == n else min(1.0, center + half)
    return Interval(p, low, high, confidence)


def newcombe_difference(first: Interval, second: Interval) -> Interval:
    """The interval of `first.estimate - second.estimate`, two independent proportions given with their
    Wilson intervals (Newcombe 1998, "Interval estimation for the difference between independent
    proportions", method 10, the hybrid score interval):

        low  = d - sqrt((p1 - l1)^2 + (u2 - p2)^2)
        high = d + sqrt((u1 - p1)^2 + (p2 - l2)^2)

    It keeps its coverage where the Wald interval of a difference fails (small n, rates near 0 or 1), and
    stays within [-1, 1].  Both intervals must be at one confidence level, which the result has.
    """
    if first.confidence != second.confidence:
        raise ValueError(f"the two intervals are at {first.confidence} and {second.confidence}: give one level")
    d = first.estimate - second.estimate
    low = d - math.hypot(first.estimate - first.low, second.high - second.estimate)
    high = d + math.hypot(first.high - first.estimate, second.estimate - second.low)
    return Interval(d, max(-1.0, low), min(1.0, high), first.confidence)


def mean_interval(values: Sequence[float], confidence: float = 0.95) -> Interval:
    """The Student-t interval of the mean of `values` (scores in [0, 1]), clamped to [0, 1].

    mean +- t(1 - alpha/2, n - 1) * s / sqrt(n), s the sample standard deviation.  With one value there is
    no spread to estimate: the interval is [0, 1]; with equal values it is the point itself (the data show no
    spread; read it with n).
    """
    confidence = check_confidence(confidence)
    n = len(values)
    if n == 0:
        return Interval(0.0, 0.0, 1.0, confidence)
    for value in values:
        if isinstance(value, bool) or not math.isfinite(value):
            raise ValueError(f"a score must be a finite number, got {value!r}")
    mean = math.fsum(values) / n
    if n == 1:
        return Interval(mean, 0.0, 1.0, confidence)
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = student_t_quantile(0.5 + confidence / 2.0, n - 1) * math.sqrt(variance / n)
    return Interval(mean, max(0.0, mean - half), min(1.0, mean + half), confidence)


def student_t_quantile(p: float, df: int) -> float:
    """The `p` quantile of Student's t with `df` degrees of freedom (bisection on its CDF)."""
    if not 0.0 < p < 1.0 or df < 1:
        raise ValueError(f"a t quantile needs 0 < p < 1 and df >= 1, got p={p!r}, df={df!r}")
    if p < 0.5:
        return -student_t_quantile(1.0 - p, df)
    low, high = 0.0, 1.0
    while _t_cdf(high, df) < p:
        high *= 2.0
    for _ in range(200):  # the bracket halves each step: far below any printed digit
        middle = (low + high) / 2.0
        if _t_cdf(middle, df) < p:
            low = middle
        else:
            high = middle
        if high - low < 1e-12:
            break
    return (low + high) / 2.0


def _t_cdf(t: float, df: int) -> float:
    """P(T <= t) for t >= 0: 1 - I_x(df/2, 1/2) / 2 with x = df / (df + t^2)."""
    return 1.0 - 0.5 * _incomplete_beta(df / (df + t * t), df / 2.0, 0.5)


def _incomplete_beta(x: float, a: float, b: float) -> float:
    """The regularized incomplete beta function I_x(a, b), by its continued fraction (Lentz's method)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1.0) / (a + b + 2.0):  # the fraction converges fast only below this point: use the symmetry
        return 1.0 - _incomplete_beta(1.0 - x, b, a)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    fraction = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            fraction *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return front * fraction / a


@dataclass(frozen=True)
class McNemar:
    """The exact McNemar test of paired outcomes: `worse` pairs went pass to fail, `better` fail to pass."""

    worse: int
    better: int
    p_value: float  # two-sided

    def significant(self, alpha: float = 0.05) -> bool:
        """Whether the flips are more than noise at `alpha` (two-sided)."""
        return self.p_value < alpha


def mcnemar_exact(worse: int, better: int) -> McNemar:
    """The exact (conditional) McNemar test: under no change, each of the n = worse + better discordant pairs
    flips either way with probability 1/2, so the two-sided p-value is
    min(1, 2 * P(X <= min(worse, better))), X ~ Binomial(n, 1/2).  Pairs that did not flip carry no
    information about a change and are not counted.  With no flip, p = 1.
    """
    if isinstance(worse, bool) or isinstance(better, bool) or worse < 0 or better < 0:
        raise ValueError(f"flip counts are whole numbers >= 0, got {worse!r} and {better!r}")
    n = worse + better
    tail = sum(math.comb(n, i) for i in range(min(worse, better) + 1))
    return McNemar(worse, better, min(1.0, 2.0 * tail / 2**n))


@dataclass(frozen=True)
class Confusion:
    """Human label (rows) against judge decision (columns); positive = pass."""

    tp: int  # human pass, judge pass
    fp: int  # human fail, judge pass
    tn: int  # human fail, judge fail
    fn: int  # human pass, judge fail

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.tn + self.fn

    @property
    def accuracy(self) -> float | None:
        """Share of examples where judge and human agree; None when there are none."""
        return (self.tp + self.tn) / self.n if self.n else None


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa with its standard error and 95% interval.

    `value` is None when kappa is undefined, `ci` is None when no interval is meaningful; `note`
    then says why (and is also set when kappa is 0 by construction).
    """

    value: float | None
    se: float | None
    ci: tuple[float, float] | None
    note: str | None = None


def cohen_kappa(table: Confusion) -> Kappa:
    """Cohen's kappa (Cohen 1960) of a 2x2 table, with a 95% Wald interval.

    kappa = (po - pe) / (1 - pe), po the observed agreement and pe the agreement expected from the
    two sides' marginals.  The standard error is the large-sample one of Fleiss, Cohen & Everitt
    (1969), "Large sample standard errors of kappa and weighted kappa", Psychological Bulletin 72(5),
    valid for kappa != 0 (the one used for an interval, as in statsmodels' `cohens_kappa`):

        var = (sum_i p_ii [1 - (p_i. + p_.i)(1 - k)]^2
               + (1 - k)^2 sum_{i != j} p_ij (p_.i + p_j.)^2
               - [k - pe (1 - k)]^2) / (n (1 - pe)^2)

    The interval is kappa +- 1.96 se, clamped to [-1, 1].  Like any Wald interval it is poor for
    small n and collapses to a point at perfect agreement (or perfect disagreement with balanced
    marginals): read it with n.

    Degenerate tables:
    - n = 0: no kappa, no interval;
    - both sides give every example the same single label: pe = 1, kappa is 0/0, so no kappa
      (accuracy is 1 and says it all);
    - one side gives a single label and the other both: po = pe, so kappa is exactly 0 whatever the
      data, and its standard error is 0 by construction; no interval is given, as a point would
      claim a certainty the data do not have.  This includes n = 1 with a disagreement.
    - perfect disagreement: the formula applies; kappa is -1 only when the marginals are balanced.
    """
    n = table.n
    if n == 0:
        return Kappa(None, None, None, "no examples")
    human_pass = (table.tp + table.fn) / n  # p_1. (rows: human; index 1 = pass)
    judge_pass = (table.tp + table.fp) / n  # p_.1 (columns: judge)
    rows = (human_pass, 1.0 - human_pass)
    cols = (judge_pass, 1.0 - judge_pass)
    po = (table.tp + table.tn) / n
    pe = rows[0] * cols[0] + rows[1] * cols[1]
    human_constant = table.tp + table.fn in (0, n)
    judge_constant = table.tp + table.fp in (0, n)
    if human_constant and judge_constant and po == 1.0:
        return Kappa(None, None, None, "every example has the same label from both sides; kappa is undefined")
    if human_constant or judge_constant:
        side = "human labels" if human_constant else "judge decisions"
        if human_constant and judge_constant:
            side = "human labels and judge decisions"
        return Kappa(0.0, None, None, f"the {side} are all one value: kappa is 0 by construction, with no interval")

    kappa = (po - pe) / (1.0 - pe)
    # p[i][j]: human i, judge j; index 0 = pass, 1 = fail.
    p = ((table.tp / n, table.fn / n), (table.fp / n, table.tn / n))
    diagonal = sum(p[i][i] * (1.0 - (rows[i] + cols[i]) * (1.0 - kappa)) ** 2 for i in (0, 1))
    off = (1.0 - kappa) ** 2 * sum(p[i][j] * (cols[i] + rows[j]) ** 2 for i in (0, 1) for j in (0, 1) if i != j)
    correction = (kappa - pe * (1.0 - kappa)) ** 2
    # Rounding can leave a tiny negative where the exact variance is 0 (perfect agreement).
    variance = max(0.0, (diagonal + off - correction) / (n * (1.0 - pe) ** 2))
    se = math.sqrt(variance)
    ci = (max(-1.0, kappa - Z95 * se), min(1.0, kappa + Z95 * se))
    return Kappa(kappa, se, ci)
