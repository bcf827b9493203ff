"""One cap for every kind that asks per item (passages, turns, claims, questions): --judge-max-items,
checked before the first call that would rule on them, raised by one option or the marker."""

from __future__ import annotations

import pytest

CONFTEST = r"""
import json, os, pytest

CALLS = []

@pytest.fixture(scope="session")
def judge_backend():
    def counting(messages):
        CALLS.append(messages)
        system = messages[0]["content"]
        if '"claims"' in system:  # as many claims as the test asks for
            return json.dumps({"claims": [f"Claim number {i}." for i in range(int(os.environ["CLAIMS"]))]})
        if '"verdict"' in system:
            return json.dumps({"reasoning": "supported", "verdict": "yes"})
        return json.dumps({"reasoning": "fine", "score": 0.9})
    counting.name = "counting-judge"
    return counting

@pytest.fixture
def calls():
    CALLS.clear()
    return CALLS
"""

TESTS = r"""
import pytest
from pytest_llmjudge import ContextPrecision, Faithfulness, JudgeError, PerTurn, Questions, assert_judged

PASSAGES = [f"Passage {i} says returns close after {i} days." for i in range(40)]
CHAT = [m for i in range(10_000) for m in ({"role": "user", "content": f"Question {i}?"},
                                          {"role": "assistant", "content": f"Answer {i}."})]

@pytest.mark.parametrize("rubric", [ContextPrecision(), ContextPrecision(batch=1)], ids=["batched", "per item"])
def test_forty_passages(calls, rubric):
    with pytest.raises(JudgeError, match=r"about 40 items in one judgment.*--judge-max-items=32") as info:
        assert_judged("Within 30 days.", "Ranks well", input="Returns?", context=PASSAGES, rubric=rubric)
    assert "LLMJUDGE_MAX_ITEMS" in str(info.value) and "max_items=N" in str(info.value)
    assert calls == []

def test_ten_thousand_turns(calls):
    with pytest.raises(JudgeError, match=r"PerTurn would ask the judge about more than 32 items \(at turn65\)"):
        assert_judged(CHAT, "Answers each question", rubric=PerTurn())
    assert calls == []

def test_forty_questions(calls):
    with pytest.raises(JudgeError, match=r"Questions would ask the judge about 40 items"):
        assert_judged("Fine.", "Is fine", rubric=Questions([f"Is point {i} covered?" for i in range(40)]))
    assert calls == []

@pytest.mark.parametrize("rubric", [Faithfulness(), Faithfulness(batch=1)], ids=["batched", "per item"])
def test_forty_claims(calls, monkeypatch, rubric):
    monkeypatch.setenv("CLAIMS", "40")
    with pytest.raises(JudgeError, match=r"Faithfulness would ask the judge about 40 items"):
        assert_judged("A long answer.", "Is faithful", context=PASSAGES[:2], rubric=rubric)
    assert len(calls) == 1, "the claims were listed, none was ruled on"

@pytest.mark.judge(max_items=40)
def test_the_marker_raises_it(calls):
    assert_judged("Within 30 days.", "Ranks well", input="Returns?", context=PASSAGES, rubric=ContextPrecision(batch=1))
    assert len(calls) == 40
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_cap=TESTS)
    return pytester


def test_every_kind_that_asks_per_item_stops_at_the_cap_before_its_calls(suite):
    suite.runpytest("-p", "no:cacheprovider", "--judge-mode=live").assert_outcomes(passed=7)


def test_the_option_raises_the_cap_for_the_run(suite):
    result = suite.runpytest("-p", "no:cacheprovider", "--judge-mode=live", "--judge-max-items=40", "-k", "forty_pass")
    result.assert_outcomes(failed=2)  # the passages are judged: no error is raised where the test expects one
    result.stdout.fnmatch_lines(["*DID NOT RAISE*"])


def test_a_bad_cap_is_a_usage_error(suite):
    result = suite.runpytest("-p", "no:cacheprovider", "--judge-max-items=0")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--judge-max-items must be a whole number >= 1, got *0*"])
