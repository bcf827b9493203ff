"""The one statistics module, checked against published values (each test cites its source)."""

from __future__ import annotations

import math

import pytest

from pytest_llmjudge.stats import (
    mcnemar_exact,
    mean_interval,
    newcombe_difference,
    student_t_quantile,
    wilson,
    z_for,
)


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        # Newcombe (1998), "Two-sided confidence intervals for the single proportion: comparison of seven
        # methods", Statistics in Medicine 17, Table II, method 3 (Wilson score, no continuity correction).
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_matches_newcombe_1998(successes: int, n: int, low: float, high: float) -> None:
    interval = wilson(successes, n, 0.95)
    assert interval.low == pytest.approx(low, abs=5e-5)
    assert interval.high == pytest.approx(high, abs=5e-5)
    assert interval.estimate == successes / n


def test_wilson_lower_bound_of_36_in_40_is_about_077() -> None:
    # The gate example of the suites work: 90% observed, but the 95% interval reaches down to ~0.77.
    interval = wilson(36, 40, 0.95)
    assert interval.low == pytest.approx(0.7695, abs=5e-4)
    assert interval.high == pytest.approx(0.9604, abs=5e-4)


def test_wilson_at_the_edges_and_with_no_cases() -> None:
    assert wilson(10, 10).high == 1.0
    assert wilson(0, 10).low == 0.0
    empty = wilson(0, 0)
    assert (empty.low, empty.high) == (0.0, 1.0)
    assert wilson(5, 10, 0.99).low < wilson(5, 10, 0.95).low < wilson(5, 10, 0.80).low


def test_wilson_takes_an_effective_sample_size() -> None:
    # Two correlated answers per pair counted as one trial (design effect 2): the counts halve, and the
    # interval widens by about sqrt(2) where n is large; a fractional count lies between its neighbours.
    pairs, answers = wilson(81, 100), wilson(162, 200)
    assert pairs.estimate == answers.estimate
    assert (pairs.high - pairs.low) / (answers.high - answers.low) == pytest.approx(math.sqrt(2), rel=0.02)
    half = wilson(40.5, 50)
    assert wilson(40, 50).low < half.low < wilson(41, 50).low
    assert wilson(40, 50).high < half.high < wilson(41, 50).high
    assert wilson(2.5, 2.5).high == 1.0 and wilson(0.0, 0.5).low == 0.0


@pytest.mark.parametrize(
    ("first", "second", "low", "high"),
    [
        # Newcombe (1998), "Interval estimation for the difference between independent proportions: comparison
        # of eleven methods", Statistics in Medicine 17, Table II, method 10 (score, no continuity correction).
        ((56, 70), (48, 80), 0.0524, 0.3339),
        ((9, 10), (3, 10), 0.1705, 0.8090),
        ((6, 7), (2, 7), 0.0582, 0.8062),
        ((5, 56), (0, 29), -0.0381, 0.1926),
        ((0, 10), (0, 20), -0.1611, 0.2775),
        ((0, 10), (0, 10), -0.2775, 0.2775),
        ((10, 10), (0, 20), 0.6791, 1.0),
        ((10, 10), (0, 10), 0.6075, 1.0),
    ],
)
def test_newcombe_difference_matches_newcombe_1998(
    first: tuple[int, int], second: tuple[int, int], low: float, high: float
) -> None:
    interval = newcombe_difference(wilson(*first), wilson(*second))
    assert interval.low == pytest.approx(low, abs=5e-5)
    assert interval.high == pytest.approx(high, abs=5e-5)
    assert interval.estimate == pytest.approx(first[0] / first[1] - second[0] / second[1])


def test_newcombe_difference_needs_one_confidence_level() -> None:
    with pytest.raises(ValueError, match="one level"):
        newcombe_difference(wilson(1, 2, 0.95), wilson(1, 2, 0.90))


@pytest.mark.parametrize(("successes", "n", "confidence"), [(-1, 3, 0.95), (4, 3, 0.95), (1, 3, 1.0), (1, 3, 0)])
def test_wilson_refuses_what_is_not_a_proportion(successes: int, n: int, confidence: float) -> None:
    with pytest.raises(ValueError):
        wilson(successes, n, confidence)


def test_z_for_two_sided_levels() -> None:
    assert z_for(0.95) == pytest.approx(1.959964, abs=1e-6)
    assert z_for(0.90) == pytest.approx(1.644854, abs=1e-6)
    assert z_for(0.99) == pytest.approx(2.575829, abs=1e-6)


@pytest.mark.parametrize(
    ("p", "df", "expected"),
    [
        # Student's t table (e.g. NIST/SEMATECH e-Handbook of Statistical Methods, 1.3.6.7.2).
        (0.975, 1, 12.706),
        (0.975, 2, 4.303),
        (0.975, 10, 2.228),
        (0.975, 30, 2.042),
        (0.95, 5, 2.015),
        (0.995, 20, 2.845),
        (0.975, 100, 1.984),
    ],
)
def test_student_t_quantile_matches_the_table(p: float, df: int, expected: float) -> None:
    assert student_t_quantile(p, df) == pytest.approx(expected, abs=5e-4)
    assert student_t_quantile(1 - p, df) == pytest.approx(-expected, abs=5e-4)


def test_mean_interval_is_the_t_interval_clamped() -> None:
    values = [0.2, 0.4, 0.6, 0.8, 1.0]
    interval = mean_interval(values, 0.95)
    sd = math.sqrt(sum((v - 0.6) ** 2 for v in values) / 4)
    half = 2.776445 * sd / math.sqrt(5)  # t(0.975, 4)
    assert interval.estimate == pytest.approx(0.6)
    assert interval.low == pytest.approx(0.6 - half, abs=1e-5)
    assert interval.high == pytest.approx(0.6 + half, abs=1e-5)
    assert mean_interval([0.5, 1.0, 1.0]).high == 1.0  # 0.83 + 0.72 would pass 1: clamped
    assert mean_interval([0.7]).to_json() == [0.0, 1.0]  # one value: no spread to estimate
    assert mean_interval([0.7, 0.7, 0.7]).to_json() == [pytest.approx(0.7), pytest.approx(0.7)]


def test_mcnemar_exact_matches_fagerland_2013() -> None:
    # Fagerland, Lydersen & Laake (2013), "The McNemar test for binary matched-pairs data: mid-p and
    # asymptotic are better than exact conditional", BMC Medical Research Methodology 13:91: the airway
    # hyper-responsiveness example (discordant pairs 1 and 7): exact conditional p = 0.070.
    result = mcnemar_exact(1, 7)
    assert result.p_value == pytest.approx(0.0703125)
    assert not result.significant()
    assert mcnemar_exact(7, 1).p_value == result.p_value  # two-sided: symmetric


def test_mcnemar_exact_edges() -> None:
    assert mcnemar_exact(0, 0).p_value == 1.0
    assert mcnemar_exact(3, 3).p_value == 1.0
    assert mcnemar_exact(6, 0).p_value == pytest.approx(2 / 64)  # six flips one way: p = 0.03125
    assert mcnemar_exact(6, 0).significant()
    assert not mcnemar_exact(5, 0).significant()  # p = 0.0625: five flips alone are not enough
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)
