"""The qualification's figures, worked out by hand on small sets of judged pairs, and the decision on them."""

from __future__ import annotations

import math

import pytest

from pytest_llmjudge.qualification.figures import Judged, Thresholds, compute, shortfalls
from pytest_llmjudge.qualification.pairs import Pair, QualificationError
from pytest_llmjudge.stats import wilson


def pair(index: int, label: int = 1, *, longer: int = 1, subset: str = "S") -> Pair:
    """A pair whose output `longer` is the longer one."""
    short, long = "short", "a much longer output"
    return Pair(subset, index, "do it", long if longer == 1 else short, short if longer == 1 else long, label)


def figures(*judged: Judged):
    return compute({"S": ("test", list(judged))})


def test_accuracy_counts_readable_answers_and_a_tie_is_never_right():
    result = figures(
        Judged(pair(0, 1), "1", "1"),  # right twice
        Judged(pair(1, 1), "1", "tie"),  # right once, one tie
        Judged(pair(2, 2), None, "1"),  # one unreadable, one wrong
    )
    overall = result.overall
    assert (overall.n, overall.readable, overall.correct, overall.ties, overall.unreadable) == (3, 5, 3, 1, 1)
    assert overall.accuracy.value == pytest.approx(3 / 5)
    # Each answer is half a trial: the interval is Wilson's at 1.5 of 2.5, wider than at 3 of 5.
    assert overall.accuracy.interval == wilson(1.5, 2.5)
    assert overall.accuracy.interval.low < wilson(3, 5).low
    assert result.unreadable.value == pytest.approx(1 / 6)
    assert result.subsets[0].name == "S" and result.subsets[0].accuracy == overall.accuracy


def test_position_consistency_and_first_slot_rate():
    result = figures(
        Judged(pair(0), "1", "1"),  # consistent: output 1 both times (first shown, then second shown)
        Judged(pair(1), "1", "2"),  # inconsistent: the first shown both times
        Judged(pair(2), "tie", "tie"),  # consistent: a tie both times
        Judged(pair(3), "2", None),  # one unreadable: not counted in consistency
    )
    consistency = result.overall.position_consistency
    assert (consistency.value, consistency.n) == (pytest.approx(2 / 3), 3)
    assert consistency.interval == wilson(2, 3), "pairs are the trials of consistency: no halving"
    first = result.overall.first_slot_rate
    # Answers naming an output: 1/first, 1/second, 1/first, 2/second, 2/first -> the first shown in 3 of 5.
    assert (first.value, first.n) == (pytest.approx(3 / 5), 5)


def test_a_judge_that_always_picks_the_first_shown():
    judged = [Judged(pair(i, label=1 + i % 2), "1", "2") for i in range(10)]
    result = figures(*judged)
    assert result.overall.accuracy.value == 0.5
    assert result.overall.position_consistency.value == 0.0
    assert result.overall.first_slot_rate.value == 1.0


def test_length_bias_of_a_judge_that_always_picks_the_longer():
    # Output 1 is the longer in every pair; it is the better one in pairs 0-3 only.
    judged = [Judged(pair(i, label=1 if i < 4 else 2), "1", "1") for i in range(10)]
    bias = figures(*judged).length_bias
    assert (bias.better_longer.value, bias.better_longer.n) == (1.0, 4)
    assert (bias.better_shorter.value, bias.better_shorter.n) == (0.0, 6)
    assert bias.gap is not None and bias.gap.estimate == 1.0
    assert bias.gap.low > 0.3, "even on ten pairs its interval is far from no bias (0)"
    assert bias.equal_length == 0


def test_pairs_of_equal_length_count_in_neither_bucket_and_a_gap_needs_both():
    same = Pair("S", 0, "x", "same", "SAME", 1)
    bias = figures(Judged(same, "1", "1"), Judged(pair(1), "1", "1")).length_bias
    assert bias.equal_length == 1 and bias.better_longer.n == 1 and bias.better_shorter.n == 0
    assert bias.better_shorter.value is None and bias.gap is None


def test_kappa_is_on_mt_bench_only_with_both_orders_answers():
    mt = [Judged(pair(i, label=1 + i % 2, subset="MT-Bench"), str(1 + i % 2), "1") for i in range(8)]
    result = compute({"MT-Bench": ("bundled", mt), "S": ("test", [Judged(pair(0), "2", "2")])})
    kappa = result.kappa
    assert kappa is not None and kappa.n == 16
    # Human 1: judge 1, 1 (4 pairs: 8 answers all "1"); human 2: judge 2 then 1 -> 4 of each.
    po, pe = 12 / 16, (8 / 16) * (12 / 16) + (8 / 16) * (4 / 16)
    assert kappa.value == pytest.approx((po - pe) / (1 - pe))
    assert kappa.interval is not None and kappa.interval[0] < kappa.value < kappa.interval[1]
    assert compute({"S": ("test", [Judged(pair(0), "1", "1")])}).kappa is None


def test_thresholds_decide_and_name_what_fell_short():
    judged = [Judged(pair(i, label=1 if i < 4 else 2), "1", "1") for i in range(10)]  # always output 1 (the longer)
    result = figures(*judged)
    found = shortfalls(result, Thresholds())
    assert found == (
        "accuracy 40.0% < min_accuracy 75.0%",
        "length gap 100.0 points > max_length_gap 20.0 points",
    )
    assert shortfalls(result, Thresholds(min_accuracy=0.4, max_length_gap=None)) == ()
    assert shortfalls(result, Thresholds(min_kappa=0.2)) == (
        "accuracy 40.0% < min_accuracy 75.0%",
        "length gap 100.0 points > max_length_gap 20.0 points",
        "kappa is undefined (no MT-Bench pair was judged), so it cannot meet min_kappa 0.20",
    )


def test_an_unreadable_judge_has_undefined_figures_that_cannot_qualify():
    result = figures(*(Judged(pair(i), None, None) for i in range(3)))
    assert result.overall.accuracy.value is None and result.unreadable.value == 1.0
    found = shortfalls(result, Thresholds())
    assert found[0] == "accuracy is undefined (no readable answer), so it cannot meet min_accuracy 75.0%"
    assert "unreadable 100.0% > max_unreadable 5.0%" in found


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"min_accuracy": 1.5}, r"min_accuracy must be a number in \[0, 1\]"),
        ({"min_kappa": -2}, r"min_kappa must be a number in \[-1, 1\]"),
        ({"max_unreadable": True}, "max_unreadable must be a number"),
        ({"max_length_gap": math.nan}, "max_length_gap must be a number"),
    ],
)
def test_bad_thresholds_are_named(given, message):
    with pytest.raises(QualificationError, match=message):
        Thresholds(**given)


def test_nothing_judged_is_an_error():
    with pytest.raises(QualificationError, match="no pairs were judged"):
        compute({"S": ("test", [])})
