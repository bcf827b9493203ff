"""The decision on a group, alone: cases in, one result per group out, whatever order they arrive in.

The figures are the Wilson interval's and Student-t's, worked out from their formulas (see the stats
module's own tests for the published values they are checked against).
"""

from __future__ import annotations

import random

import pytest

from pytest_llmjudge.suites.gates import cases_needed, decide


def case(
    nodeid: str, passed: bool = True, score: float | None = 0.9, judged: int = 1, group: str = "t.py::test_f", **gate
):
    record = {"nodeid": nodeid, "group": group, "gate": gate or {"pass_rate": 0.9}, "passed": passed, "judged": judged}
    if score is not None:
        record["score"] = score
    if not passed:
        record["failures"] = [f"judged 0.20 < threshold 0.70\n  reasoning: {nodeid} was wrong"]
    return record


def by_id(cases: list[dict]) -> dict[str, dict]:
    """Cases by node id, as the session holds them."""
    return {c["nodeid"]: c for c in cases}


def forty(passing: int, **gate) -> list[dict]:
    return [case(f"t.py::test_f[{n}]", n < passing, 0.9 if n < passing else 0.2, **gate) for n in range(40)]


def test_36_and_34_of_40_at_a_pass_rate_of_90_percent():
    (passed,) = decide(by_id(forty(36)), dict.fromkeys((c["nodeid"] for c in forty(36)), "passed"))
    assert passed.passed and (passed.passed_cases, passed.cases) == (36, 40)
    assert (round(passed.rate.low, 4), round(passed.rate.high, 4)) == (0.7695, 0.9604)
    (failed,) = decide(by_id(forty(34)), dict.fromkeys((c["nodeid"] for c in forty(34)), "passed"))
    assert not failed.passed and failed.reasons == ("pass_rate",)
    assert [row.nodeid for row in failed.with_status("failed")] == [
        f"t.py::test_f[{n}]" for n in (34, 35, 36, 37, 38, 39)
    ]


def test_with_confidence_the_gate_reads_the_lower_bound():
    cases = forty(36, pass_rate=0.9, confidence=0.95)
    (result,) = decide(by_id(cases), dict.fromkeys((c["nodeid"] for c in cases), "passed"))
    assert not result.passed and round(result.rate.low, 2) == 0.77
    cases = forty(36, pass_rate=0.75, confidence=0.95)
    (result,) = decide(by_id(cases), dict.fromkeys((c["nodeid"] for c in cases), "passed"))
    assert result.passed


def test_the_decision_is_the_same_whatever_order_the_cases_arrive_in():
    cases = [*forty(34), case("u.py::test_g", group="u.py")]
    outcomes = dict.fromkeys((c["nodeid"] for c in cases), "passed")
    first = decide(by_id(cases), outcomes)
    shuffled = cases[:]
    random.Random(7).shuffle(shuffled)
    assert decide(by_id(shuffled), outcomes) == first
    assert [r.group for r in first] == ["t.py::test_f", "u.py"]


def test_what_is_not_counted_and_a_group_with_no_judged_case():
    cases = [
        case("t.py::test_f[0]"),
        case("t.py::test_f[1]", passed=False, score=0.2),
        case("t.py::test_f[2]"),  # crashed: its test failed on its own
        case("t.py::test_f[3]"),  # skipped
        case("t.py::test_f[4]", judged=0, score=None),  # made no judgment
    ]
    outcomes = {c["nodeid"]: "passed" for c in cases} | {"t.py::test_f[2]": "failed", "t.py::test_f[3]": "skipped"}
    (result,) = decide(by_id(cases), outcomes)
    assert (result.passed_cases, result.cases) == (1, 2)
    assert [(row.nodeid, row.status) for row in result.not_counted] == [
        ("t.py::test_f[2]", "failed on its own (not counted)"),
        ("t.py::test_f[3]", "skipped (not counted)"),
        ("t.py::test_f[4]", "no judgment"),
    ]
    (empty,) = decide(by_id([case("t.py::test_f[0]", judged=0, score=None)]), {"t.py::test_f[0]": "passed"})
    assert not empty.passed and empty.reasons == ("no cases",) and empty.cases == 0


def test_a_case_is_matched_to_its_test_by_pytests_node_id_and_shown_by_its_redacted_one():
    """A case's own node id is redacted (a parametrize id may hold a secret); its test's outcome is found by
    the node id pytest reported it under."""
    shown = case("t.py::test_f[[redacted]]", passed=False, score=0.2)
    (result,) = decide({"t.py::test_f[sk-secret]": shown}, {"t.py::test_f[sk-secret]": "passed"})
    assert [(row.nodeid, row.status) for row in result.rows] == [("t.py::test_f[[redacted]]", "failed")]


@pytest.mark.parametrize(
    ("gate", "passed"),
    [
        ({"mean_score": 0.75}, True),
        ({"mean_score": 0.76}, False),
        ({"mean_score": 0.27, "confidence": 0.95}, True),  # the t interval's lower bound: 0.2727
        ({"mean_score": 0.28, "confidence": 0.95}, False),
        ({"pass_rate": 0.75, "mean_score": 0.8}, False),  # both asked: both must hold
    ],
)
def test_a_mean_score_gate_reads_the_mean_of_the_cases_scores(gate, passed):
    cases = [case(f"t.py::test_f[{n}]", score=s, **gate) for n, s in enumerate((0.9, 0.9, 0.9, 0.3))]
    (result,) = decide(by_id(cases), dict.fromkeys((c["nodeid"] for c in cases), "passed"))
    assert result.mean is not None and round(result.mean.estimate, 4) == 0.75
    assert result.passed is passed


@pytest.mark.parametrize(
    ("nodeid", "group", "inside"),
    [
        ("t.py::test_f[3]", "t.py::test_f", True),
        ("t.py::test_f_other", "t.py::test_f", False),
        ("t.py::TestX::test_a", "t.py::TestX", True),
        ("t.py::test_a", "t.py", True),
        ("t2.py::test_a", "t.py", False),
        ("pkg/sub/t.py::test_a", "pkg/sub", True),
        ("pkg/subway/t.py::test_a", "pkg/sub", False),
    ],
)
def test_a_group_that_did_not_all_run_here_is_partial(nodeid, group, inside):
    (result,) = decide(by_id([case("x::y", group=group)]), {"x::y": "passed"}, not_run={nodeid})
    assert result.partial is inside


def test_cases_needed_is_the_fewest_passing_cases_whose_lower_bound_clears_the_rate():
    assert cases_needed(0.9, 40, 0.95) == 40
    assert cases_needed(0.9, 20, 0.95) is None  # even 20 of 20: lower bound 0.839
    assert cases_needed(0.8, 100, 0.95) == 88  # 87/100: lower bound 0.7902; 88/100: 0.8019
    assert cases_needed(0.9, 200, 0.95) == 189  # 188/200: 0.8981; 189/200: 0.9042
