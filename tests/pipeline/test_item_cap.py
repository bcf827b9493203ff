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
from pytest_llmjudge import Checklist, ContextPrecision, Faithfulness, JudgeError, PerTurn, Questions, assert_judged

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
    # Named as the user counts turns: the 33rd assistant turn, which is output[65] of the list passed.
    with pytest.raises(JudgeError, match=r"PerTurn would ask the judge about more than \d+ items in one judgment "
                       r"\(it passes the cap at turn 33, output\[65\]\)"):
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

# -- every item of a judgment counts: across samples, panels and nested rubrics -------------------------

TEN_TURNS = CHAT[:20]
TEN_CHECKS = Checklist([f"Mentions point {i}" for i in range(10)])

@pytest.mark.judge(samples=5)
def test_ten_turns_five_samples(calls):
    with pytest.raises(JudgeError, match=r"PerTurn would ask the judge about 50 items in one judgment "
                       r"\(10 for each of 5 samples; it passes the cap at turn 7, output\[13\]\).*--judge-max-items=32"):
        assert_judged(TEN_TURNS, "Answers each question", rubric=PerTurn())
    assert calls == []

@pytest.mark.judge(samples=3)
def test_twenty_claims_three_samples(calls, monkeypatch):
    monkeypatch.setenv("CLAIMS", "20")
    with pytest.raises(JudgeError, match=r"Faithfulness would ask the judge about 60 items in one judgment "
                       r"\(over 3 samples\).*--judge-max-items=32"):
        assert_judged("A long answer.", "Is faithful", context=PASSAGES[:2], rubric=Faithfulness())
    assert len(calls) == 3, "each sample listed its claims; none was ruled on"

def test_ten_turns_of_a_ten_item_checklist(calls):
    with pytest.raises(JudgeError, match=r"PerTurn would ask the judge about 100 items in one judgment"):
        assert_judged(TEN_TURNS, "Answers each question", rubric=PerTurn(TEN_CHECKS))
    assert calls == []

def test_a_forty_item_checklist(calls):
    with pytest.raises(JudgeError, match=r"Checklist would ask the judge about 40 items in one judgment, each"):
        assert_judged("Fine.", "Is fine", rubric=Checklist([f"Mentions point {i}" for i in range(40)]))
    assert calls == []

@pytest.mark.judge(model="a,b")
def test_a_panel_of_two(calls):
    with pytest.raises(JudgeError, match=r"Questions would ask the judge about 40 items in one judgment "
                       r"\(20 for each of 2 judges\)"):
        assert_judged("Fine.", "Is fine", rubric=Questions([f"Is point {i} covered?" for i in range(20)]))
    assert calls == []

@pytest.mark.judge(samples=3, max_items=30)
def test_within_the_cap_every_sample_is_judged(calls):
    assert_judged(TEN_TURNS, "Answers each question", rubric=PerTurn())
    assert len(calls) == 30

def test_a_call_of_over_a_million_characters_is_sent_with_a_warning(calls):
    with pytest.warns(UserWarning, match=r"Score sends the judge 1,00\d,\d{3} characters in one call"):
        assert_judged("x" * 1_000_001, "Is fine")
    assert len(calls) == 1

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
    suite.runpytest("-p", "no:cacheprovider", "--judge-mode=live").assert_outcomes(passed=14)


def test_the_option_raises_the_cap_for_the_run(suite):
    result = suite.runpytest("-p", "no:cacheprovider", "--judge-mode=live", "--judge-max-items=40", "-k", "forty_pass")
    result.assert_outcomes(failed=2)  # the passages are judged: no error is raised where the test expects one
    result.stdout.fnmatch_lines(["*DID NOT RAISE*"])


def test_a_bad_cap_is_a_usage_error(suite):
    result = suite.runpytest("-p", "no:cacheprovider", "--judge-max-items=0")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--judge-max-items must be a whole number >= 1, got *0*"])
