"""Calibration figures against values computed by hand for small tables, degenerate ones included.

Notation in the comments: rows are the human label, columns the judge's decision, index 1 = pass,
2 = fail; p_ij = cell / n, p_i. the row marginals, p_.j the column marginals, k = kappa.
The standard error is that of Fleiss, Cohen & Everitt (1969):
  var = (sum_i p_ii [1 - (p_i. + p_.i)(1 - k)]^2 + (1 - k)^2 sum_{i!=j} p_ij (p_.i + p_j.)^2
         - [k - pe (1 - k)]^2) / (n (1 - pe)^2)
"""

from __future__ import annotations

import json
import math

import pytest

from pytest_llmjudge.calibration.stats import (
    Confusion,
    Judged,
    average_ranks,
    best_threshold,
    calibrate,
    candidate_thresholds,
    cohen_kappa,
    confusion,
    spearman,
)

Z = 1.959963984540054  # the two-sided 95% normal quantile


def approx(value: float) -> object:
    return pytest.approx(value, abs=1e-12)


# --- confusion matrix -------------------------------------------------------------------------


def test_confusion_counts_pass_as_positive_and_score_at_threshold_as_pass() -> None:
    pairs = [(True, 0.5), (True, 0.49), (False, 0.5), (False, 0.1), (True, 1.0)]
    table = confusion(pairs, 0.5)
    # 0.5 >= 0.5 passes: (T,0.5) tp, (T,0.49) fn, (F,0.5) fp, (F,0.1) tn, (T,1.0) tp
    assert table == Confusion(tp=2, fp=1, tn=1, fn=1)
    assert table.n == 5
    assert table.accuracy == approx(3 / 5)
    judged = [Judged(str(i), "c", human, score) for i, (human, score) in enumerate(pairs)]
    assert calibrate(judged, 0.5).to_json()["confusion"] == {"tp": 2, "fp": 1, "tn": 1, "fn": 1}


def test_confusion_of_nothing_has_no_accuracy() -> None:
    assert confusion([], 0.5).accuracy is None


@pytest.mark.parametrize("score", [float("nan"), -0.1, 1.5, float("inf")])
def test_confusion_rejects_scores_outside_0_1(score: float) -> None:
    with pytest.raises(ValueError, match="judge score"):
        confusion([(True, score)], 0.5)


# --- Cohen's kappa ------------------------------------------------------------------------------


def test_kappa_and_interval_of_a_50_example_table() -> None:
    # tp=20 fn=10 / fp=5 tn=15, n=50.  po = 35/50 = 0.7; p_1. = 30/50 = 0.6, p_.1 = 25/50 = 0.5
    # pe = 0.6*0.5 + 0.4*0.5 = 0.5;  k = (0.7-0.5)/(1-0.5) = 0.4;  1-k = 0.6
    # p11=0.4 p12=0.2 p21=0.1 p22=0.3
    # diagonal: 0.4*(1-(0.6+0.5)*0.6)^2 + 0.3*(1-(0.4+0.5)*0.6)^2 = 0.4*0.1156 + 0.3*0.2116 = 0.10972
    # off: 0.36*(0.2*(0.5+0.4)^2 + 0.1*(0.5+0.6)^2) = 0.36*(0.162+0.121) = 0.10188
    # correction: (0.4 - 0.5*0.6)^2 = 0.01
    # var = (0.10972 + 0.10188 - 0.01) / (50 * 0.25) = 0.2016 / 12.5 = 0.016128
    kappa = cohen_kappa(Confusion(tp=20, fp=5, tn=15, fn=10))
    assert kappa.value == approx(0.4)
    assert kappa.se == approx(math.sqrt(0.016128))
    se = math.sqrt(0.016128)  # 0.126996...
    assert kappa.ci == (approx(0.4 - Z * se), approx(0.4 + Z * se))  # (0.15109, 0.64891)
    assert kappa.note is None


def test_kappa_interval_is_clamped_to_1() -> None:
    # tp=2 fn=0 / fp=1 tn=1, n=4.  po = 3/4; p_1. = 2/4, p_.1 = 3/4; pe = 0.5*0.75 + 0.5*0.25 = 0.5
    # k = (0.75-0.5)/0.5 = 0.5;  p11=0.5 p12=0 p21=0.25 p22=0.25
    # diagonal: 0.5*(1-1.25*0.5)^2 + 0.25*(1-0.75*0.5)^2 = 0.0703125 + 0.09765625 = 0.16796875
    # off: 0.25*(0 + 0.25*(0.25+0.5)^2) = 0.03515625;  correction: (0.5-0.25)^2 = 0.0625
    # var = 0.140625 / (4*0.25) = 0.140625, se = 0.375; 0.5 + 1.96*0.375 = 1.235 -> 1
    kappa = cohen_kappa(Confusion(tp=2, fp=1, tn=1, fn=0))
    assert kappa.value == approx(0.5)
    assert kappa.se == approx(0.375)
    assert kappa.ci == (approx(0.5 - Z * 0.375), 1.0)


def test_kappa_of_perfect_agreement_with_both_labels_is_1_with_a_point_interval() -> None:
    # tp=2 tn=2: po = 1, pe = 0.5*0.5*2 = 0.5, k = 1; diagonal = sum p_ii * 1 = 1, off = 0,
    # correction = (1 - 0)^2 = 1  -> var = 0
    kappa = cohen_kappa(Confusion(tp=2, fp=0, tn=2, fn=0))
    assert kappa.value == approx(1.0)
    assert kappa.se == approx(0.0)
    assert kappa.ci == (approx(1.0), approx(1.0))


def test_kappa_of_balanced_perfect_disagreement_is_minus_1() -> None:
    # fp=2 fn=2: po = 0, p_1. = p_.1 = 0.5, pe = 0.5, k = -0.5/0.5 = -1; 1-k = 2
    # diagonal = 0; off = 4*(0.5*(0.5+0.5)^2 + 0.5*(0.5+0.5)^2) = 4; correction = (-1 - 0.5*2)^2 = 4
    # var = 0
    kappa = cohen_kappa(Confusion(tp=0, fp=2, tn=0, fn=2))
    assert kappa.value == approx(-1.0)
    assert kappa.se == approx(0.0)
    assert kappa.ci == (approx(-1.0), approx(-1.0))


def test_kappa_of_unbalanced_perfect_disagreement_is_above_minus_1() -> None:
    # fp=1 fn=3, n=4: po = 0; p_1. = 3/4, p_.1 = 1/4; pe = 3/16 + 3/16 = 0.375; k = -0.375/0.625 = -0.6
    # p12 = 0.75 (human pass, judge fail), p21 = 0.25; 1-k = 1.6
    # off: 2.56*(0.75*(0.25+0.25)^2 + 0.25*(0.75+0.75)^2) = 2.56*0.75 = 1.92
    # correction: (-0.6 - 0.375*1.6)^2 = 1.44;  var = 0.48 / (4*0.625^2) = 0.3072
    kappa = cohen_kappa(Confusion(tp=0, fp=1, tn=0, fn=3))
    assert kappa.value == approx(-0.6)
    assert kappa.se == approx(math.sqrt(0.3072))
    assert kappa.ci == (-1.0, approx(-0.6 + Z * math.sqrt(0.3072)))


@pytest.mark.parametrize("table", [Confusion(tp=5, fp=0, tn=0, fn=0), Confusion(tp=0, fp=0, tn=3, fn=0)])
def test_kappa_is_undefined_when_both_sides_give_one_and_the_same_label(table: Confusion) -> None:
    # pe = 1 and po = 1: kappa = 0/0
    kappa = cohen_kappa(table)
    assert kappa.value is None
    assert kappa.se is None and kappa.ci is None
    assert kappa.note is not None and "undefined" in kappa.note


def test_kappa_is_0_without_interval_when_one_side_gives_one_label() -> None:
    # humans all pass (tp=2 fn=1): p_1. = 1, pe = p_.1 = 2/3 = po  ->  k = 0 whatever the judge does
    kappa = cohen_kappa(Confusion(tp=2, fp=0, tn=0, fn=1))
    assert kappa.value == 0.0
    assert kappa.ci is None
    assert kappa.note is not None and "human labels" in kappa.note
    judge_constant = cohen_kappa(Confusion(tp=0, fp=0, tn=2, fn=2))  # judge fails everything
    assert judge_constant.value == 0.0
    assert judge_constant.note is not None and "judge decisions" in judge_constant.note


def test_kappa_of_one_example() -> None:
    agree = cohen_kappa(Confusion(tp=1, fp=0, tn=0, fn=0))
    assert agree.value is None  # one label on both sides: undefined
    # disagree: human pass, judge fail: p_1. = 1, p_.1 = 0, pe = 0 = po -> k = 0, no interval
    disagree = cohen_kappa(Confusion(tp=0, fp=0, tn=0, fn=1))
    assert disagree.value == 0.0
    assert disagree.ci is None


def test_kappa_of_nothing() -> None:
    kappa = cohen_kappa(Confusion(0, 0, 0, 0))
    assert kappa.value is None and kappa.ci is None
    assert kappa.note == "no examples"


# --- best threshold -------------------------------------------------------------------------------

# Dyadic scores, so that every midpoint and distance below is exact in binary floating point.
PAIRS = [(True, 0.875), (True, 0.625), (False, 0.5), (False, 0.125), (True, 0.25)]
# Candidates: 0, 1 and the midpoints 0.1875, 0.375, 0.5625, 0.75.  Correct answers (judge passes
# when score >= t), in the order of PAIRS:
#   t=0       all pass:                 T T F F T -> 3/5
#   t=0.1875  0.125 fails:              ok ok NO ok ok -> 4/5
#   t=0.375   0.125, 0.25 fail:         ok ok NO ok NO -> 3/5
#   t=0.5625  0.5, 0.125, 0.25 fail:    ok ok ok ok NO -> 4/5
#   t=0.75    only 0.875 passes:        ok NO ok ok NO -> 3/5
#   t=1       none pass:                2/5
# Best 4/5 at 0.1875 and at 0.5625.


def test_candidate_thresholds_are_0_1_the_midpoints_and_the_configured_one() -> None:
    assert candidate_thresholds([s for _, s in PAIRS]) == [0.0, 0.1875, 0.375, 0.5625, 0.75, 1.0]
    assert candidate_thresholds([0.5, 0.5], configured=0.3) == [0.0, 0.3, 1.0]


def test_best_threshold_breaks_a_tie_toward_the_configured_threshold() -> None:
    # configured 0.5: |0.5625-0.5| = 0.0625 < |0.1875-0.5| = 0.3125
    choice = best_threshold(PAIRS, 0.5)
    assert choice is not None
    assert (choice.threshold, choice.accuracy) == (0.5625, approx(0.8))
    # configured 0.3125 splits like 0.375 (3/5): |0.1875-0.3125| = 0.125 < |0.5625-0.3125| = 0.25
    low = best_threshold(PAIRS, 0.3125)
    assert low is not None and low.threshold == 0.1875


def test_best_threshold_breaks_an_equidistant_tie_toward_the_lower_threshold() -> None:
    # configured 0.375 is 0.1875 from both 0.1875 and 0.5625
    choice = best_threshold(PAIRS, 0.375)
    assert choice is not None and choice.threshold == 0.1875


def test_best_threshold_keeps_the_configured_one_when_it_is_as_good_as_any() -> None:
    # 0.55 splits like 0.5625 (0.5 fails, 0.625 passes): 4/5, and it is the configured threshold
    choice = best_threshold(PAIRS, 0.55)
    assert choice is not None
    assert (choice.threshold, choice.accuracy) == (0.55, approx(0.8))


def test_best_threshold_finds_a_perfect_split() -> None:
    # passes score 0.7, 0.9; fails 0.2, 0.4: midpoint 0.55 separates them (4/4); 0.3 and 0.8 do not
    pairs = [(True, 0.9), (False, 0.2), (True, 0.7), (False, 0.4)]
    choice = best_threshold(pairs, 0.8)
    assert choice is not None
    assert (choice.threshold, choice.accuracy) == (approx(0.55), 1.0)


def test_best_threshold_of_one_example_and_of_none() -> None:
    # one (pass, 0.3) at configured 0.5: candidates 0 (pass: right), 0.5 and 1 (fail: wrong)
    choice = best_threshold([(True, 0.3)], 0.5)
    assert choice is not None and (choice.threshold, choice.accuracy) == (0.0, 1.0)
    assert best_threshold([], 0.5) is None


# --- Spearman's rho -------------------------------------------------------------------------------


def test_average_ranks_share_the_mean_rank_of_ties() -> None:
    # sorted: 1 (rank 1), 2 (rank 2), 3, 3, 3 (ranks 3, 4, 5 -> 4 each)
    assert average_ranks([3, 1, 3, 2, 3]) == [4.0, 1.0, 4.0, 2.0, 4.0]
    assert average_ranks([]) == []


def test_spearman_without_ties() -> None:
    # ranks x = 1..5, y = 2 1 4 3 5: d = -1 1 -1 1 0, sum d^2 = 4, rho = 1 - 6*4/(5*24) = 0.8
    pairs = [(0.1, 0.2), (0.2, 0.1), (0.3, 0.4), (0.4, 0.3), (0.5, 0.5)]
    assert spearman(pairs) == approx(0.8)


def test_spearman_with_ties_uses_average_ranks_and_pearson() -> None:
    # x = 1 2 2 3 -> ranks 1 2.5 2.5 4;  y = 0.1 0.3 0.2 0.4 -> ranks 1 3 2 4; both means 2.5
    # dx = -1.5 0 0 1.5, dy = -1.5 0.5 -0.5 1.5: sxy = 4.5, sxx = 4.5, syy = 5
    # rho = 4.5 / sqrt(4.5*5) = sqrt(0.9) = 0.94868...  (the no-ties shortcut would give 0.95)
    pairs = [(1.0, 0.1), (2.0, 0.3), (2.0, 0.2), (3.0, 0.4)]
    assert spearman(pairs) == approx(math.sqrt(0.9))


def test_spearman_of_perfect_orders() -> None:
    assert spearman([(0.0, 0.1), (0.5, 0.2), (1.0, 0.9)]) == approx(1.0)
    assert spearman([(0.0, 0.9), (0.5, 0.2), (1.0, 0.1)]) == approx(-1.0)


@pytest.mark.parametrize(
    "pairs",
    [
        [],
        [(0.5, 0.5)],  # n = 1
        [(0.5, 0.1), (0.5, 0.9), (0.5, 0.3)],  # humans constant
        [(0.1, 0.7), (0.9, 0.7)],  # judge constant
    ],
)
def test_spearman_is_none_without_variation(pairs: list[tuple[float, float]]) -> None:
    assert spearman(pairs) is None


def test_spearman_rejects_nan() -> None:
    with pytest.raises(ValueError, match="finite"):
        spearman([(float("nan"), 0.1), (0.2, 0.3)])


# --- calibrate ------------------------------------------------------------------------------------


def passfail_items() -> list[Judged]:
    return [
        Judged("a", "polite", True, 0.9),
        Judged("b", "polite", False, 0.8, reasoning="looks polite"),  # fp, gap 0.8
        Judged("c", "polite", True, 0.6),
        Judged("d", "brief", True, 0.1, reasoning="too long"),  # fn, gap 0.9
        Judged("e", "brief", False, 0.2),
        Judged("f", "brief", False, 0.3),
    ]


def test_calibrate_gathers_every_figure() -> None:
    result = calibrate(passfail_items(), 0.5)
    # tp = a, c; fp = b; tn = e, f; fn = d
    assert result.confusion == Confusion(tp=2, fp=1, tn=2, fn=1)
    assert (result.n, result.kind, result.threshold) == (6, "pass/fail", 0.5)
    assert result.accuracy == approx(4 / 6)
    # po = 4/6, p_1. = 3/6, p_.1 = 3/6, pe = 0.5, k = (2/3 - 1/2)/(1/2) = 1/3
    assert result.kappa.value == approx(1 / 3)
    assert result.spearman is None  # pass/fail labels
    # candidates 0, 0.15, 0.25, 0.45, 0.5 (configured), 0.7, 0.85, 1; right answers for a..f:
    #   0: 3/6 | 0.15: a b- c d- e- f- 2/6 | 0.25: 3/6 | 0.45 and 0.5: a c e f 4/6 | 0.7: a e f 3/6
    #   0.85: a b e f 4/6 | 1: b e f 3/6.  Best 4/6 at 0.45, 0.5 and 0.85: the configured 0.5 stays.
    assert (result.best_threshold, result.accuracy_at_best) == (0.5, approx(4 / 6))
    assert [d.id for d in result.disagreements] == ["d", "b"]  # gap 0.9 before gap 0.8
    assert result.disagreements[0].reasoning == "too long"
    assert result.disagreements[0].gap == approx(0.9)
    polite, brief = result.per_criteria
    assert (polite.criteria, polite.n, polite.confusion) == ("polite", 3, Confusion(tp=2, fp=1, tn=0, fn=0))
    # polite: humans T F T, judge all pass -> judge constant, kappa 0 by construction
    assert polite.kappa.value == 0.0 and polite.kappa.ci is None
    assert (brief.criteria, brief.confusion) == ("brief", Confusion(tp=0, fp=0, tn=2, fn=1))
    assert brief.accuracy == approx(2 / 3)


def test_calibrate_to_json_is_json_with_the_documented_keys() -> None:
    data = calibrate(passfail_items(), 0.5).to_json()
    required = {"n", "accuracy", "kappa", "kappa_ci", "confusion", "best_threshold", "accuracy_at_best"}
    assert required | {"threshold", "spearman", "per_criteria", "disagreements"} <= data.keys()
    assert data["confusion"] == {"tp": 2, "fp": 1, "tn": 2, "fn": 1}
    assert data["disagreements"][0] == {
        "id": "d",
        "criteria": "brief",
        "label": "pass",
        "score": 0.1,
        "gap": pytest.approx(0.9),
        "reasoning": "too long",
    }
    assert data["per_criteria"][0]["criteria"] == "polite"
    assert isinstance(data["kappa_ci"], list) and len(data["kappa_ci"]) == 2
    assert json.loads(json.dumps(data)) == data  # plain JSON, nothing lost


def test_calibrate_score_labels_gives_rho_and_reads_labels_at_the_threshold() -> None:
    items = [
        Judged("a", "c", 0.9, 0.8),
        Judged("b", "c", 0.7, 0.3),  # human passes at 0.5, judge fails: gap 0.4
        Judged("c", "c", 0.2, 0.1),
        Judged("d", "c", 0.4, 0.6),  # human fails at 0.5, judge passes: gap 0.2
    ]
    result = calibrate(items, 0.5)
    assert result.kind == "score"
    # human passes: a, b; judge passes: a, d  -> tp=a, fn=b, tn=c, fp=d
    assert result.confusion == Confusion(tp=1, fp=1, tn=1, fn=1)
    # ranks labels 4 3 1 2, scores 4 2 1 3: d = 0 1 0 -1, rho = 1 - 6*2/(4*15) = 0.8
    assert result.spearman == approx(0.8)
    assert [d.id for d in result.disagreements] == ["b", "d"]
    assert result.to_json()["disagreements"][0]["label"] == 0.7
    assert result.per_criteria[0].spearman == approx(0.8)


def test_calibrate_nothing() -> None:
    result = calibrate([], 0.5)
    assert (result.n, result.kind, result.accuracy, result.best_threshold) == (0, None, None, None)
    assert result.kappa.value is None and result.disagreements == () and result.per_criteria == ()
    assert json.loads(json.dumps(result.to_json()))["n"] == 0


def test_calibrate_refuses_mixed_labels_bad_scores_and_bad_thresholds() -> None:
    with pytest.raises(ValueError, match="mix"):
        calibrate([Judged("a", "c", True, 0.5), Judged("b", "c", 0.5, 0.5)], 0.5)
    with pytest.raises(ValueError, match="judge score"):
        calibrate([Judged("a", "c", True, 1.2)], 0.5)
    for threshold in (1.5, float("nan"), True):
        with pytest.raises(ValueError, match="threshold"):
            calibrate([Judged("a", "c", True, 0.5)], threshold)
