"""One canonical form for whatever is keyed or shown: tool arguments and results, message content and
outputs alike.  A set replays in another process, a cycle is a clear error naming where it sits, and
content that is not text is judged as its JSON, never as an empty turn."""

from __future__ import annotations

import json
import re

import pytest

from helpers import FAKE_CONFTEST
from helpers.runtime import own_judges
from pytest_llmjudge import JudgeError

WITH_A_SET = """
from pytest_llmjudge import PerTurn, Trajectory, assert_judged

TAGS = {"refund", "shoes", "policy", "days", "window", "card", "store", "online", "parcel"}
RUN = [
    {"role": "user", "content": "Refund order 7. SCORE=0.9"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "tag_order", "arguments": {"order": 7, "tags": TAGS}}}]},
    {"role": "tool", "tool_call_id": "c1", "content": {"tagged": TAGS}},
    {"role": "assistant", "content": "Done: order 7 is tagged for a refund. SCORE=0.9"},
]

def test_the_transcript():
    assert_judged(RUN, "Tags the order for a refund", threshold=0.7)

def test_the_trajectory():
    assert_judged(RUN, "Tags the order for a refund", input="Refund order 7. SCORE=0.9", rubric=Trajectory(), threshold=0.7)

def test_each_turn():
    assert_judged(RUN, "Answers the customer", rubric=PerTurn(), threshold=0.7)
"""


def test_a_set_in_tool_arguments_replays_in_another_process_with_another_hash_seed(pytester, monkeypatch):
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_agent=WITH_A_SET)
    monkeypatch.setenv("PYTHONHASHSEED", "1")
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--judge-mode=auto").assert_outcomes(passed=3)
    for seed in ("2", "3", "4"):
        monkeypatch.setenv("PYTHONHASHSEED", seed)
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--judge-mode=replay", "-rA")
        result.assert_outcomes(passed=3)


CYCLES = """
import pytest
from pytest_llmjudge import assert_judged, assert_trajectory

def looped():
    arguments = {"order": 7}
    arguments["again"] = arguments
    return [{"role": "user", "content": "Refund order 7"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "refund", "arguments": arguments}}]}]

def test_matched():
    assert_trajectory(looped(), [{"name": "refund", "arguments": {"order": 7}}], args="ignore")

def test_judged():
    assert_judged(looped(), "Refunds the order")

def test_an_output_that_holds_itself():
    output = {"answer": "yes"}
    output["parts"] = [output]
    assert_judged(output, "Says yes")
"""


def test_a_cycle_is_a_judge_error_naming_where_it_sits(pytester):
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_cycles=CYCLES)
    result = pytester.runpytest("-p", "no:cacheprovider", "--judge-mode=auto")
    result.assert_outcomes(failed=3)
    text = result.stdout.str()
    assert text.count("JudgeError: actual[1].tool_calls[0].arguments['again'] contains itself (a cycle)") == 1
    assert text.count("JudgeError: output[1].tool_calls[0].arguments['again'] contains itself (a cycle)") == 1
    assert "JudgeError: output['parts'][0] contains itself (a cycle)" in text
    assert "RecursionError" not in text and "Circular reference" not in text


def _prompts_of(content: object) -> list[str]:
    """The user messages the judge is sent for a two-turn conversation whose assistant turn has `content`."""
    seen: list[str] = []

    def judge(messages: list[dict[str, str]]) -> str:
        seen.append(messages[-1]["content"])
        return json.dumps({"reasoning": "fine", "score": 0.9})

    conversation = [{"role": "user", "content": "How many items?"}, {"role": "assistant", "content": content}]
    with own_judges(mode="live") as make:
        make(backend=judge).score(conversation, "Counts the items")
    return seen


@pytest.mark.parametrize(
    "content, shown",
    [(42, "assistant: 42"), ({"items": 3, "unit": "pairs"}, 'assistant: {"items": 3, "unit": "pairs"}')],
)
def test_content_that_is_not_text_is_judged_as_its_json(content, shown):
    (prompt,) = _prompts_of(content)
    assert shown in prompt
    (empty,) = _prompts_of("")
    assert prompt != empty


def test_an_unknown_role_is_named_in_the_error():
    conversation = [{"role": "user", "content": "Hi"}, {"role": "robot", "content": "Beep"}]
    with own_judges(mode="live") as make, pytest.raises(JudgeError, match=r"output\[1\] has the role 'robot'"):
        make(backend=lambda messages: "{}").score(conversation, "Answers")


NO_JSON = """
from pytest_llmjudge import assert_judged, assert_trajectory

def test_keys_written_alike():
    assert_judged({True: "refund", "true": "no refund"}, "Says refund")

def test_keys_written_alike_deeper():
    assert_judged({"orders": [{None: "a", "null": "b"}]}, "Lists the orders")

def test_too_long_a_number():
    assert_judged({"total": 10**5000}, "Gives the total")

def test_too_long_a_number_alone():
    assert_judged(10**5000, "Gives the total")

def test_too_long_a_number_in_a_tool_call():
    run = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "pay", "arguments": {"cents": 10**5000}}}]}]
    assert_trajectory(run, [{"name": "pay", "arguments": {"cents": 1}}])
"""


def test_what_json_cannot_write_as_given_is_a_judge_error_naming_where_it_sits(pytester):
    """Two keys JSON writes alike would silently become one; an integer too long for Python to write raised a
    bare ValueError from inside the plugin.  Each is a JudgeError naming the path, before any call."""
    pytester.makeconftest(FAKE_CONFTEST)
    pytester.makepyfile(test_no_json=NO_JSON)
    result = pytester.runpytest("-p", "no:cacheprovider", "--judge-mode=auto", "-rA")
    result.assert_outcomes(failed=5)
    text = result.stdout.str()
    assert "JudgeError: output has the keys True and 'true', which JSON writes alike ('true')" in text
    assert "JudgeError: output['orders'][0] has the keys None and 'null', which JSON writes alike ('null')" in text
    assert "JudgeError: output['total'] is an integer of more than 4300 digits" in text
    assert "JudgeError: output is an integer of more than 4300 digits" in text
    assert "JudgeError: actual[0].tool_calls[0].arguments['cents'] is an integer of more than 4300 digits" in text
    raised = [m[1] for line in result.stdout.lines if (m := re.match(r"E\s+([\w.]+(?:Error|Exception)):", line))]
    assert raised == ["pytest_llmjudge.JudgeError"] * 5, raised
    assert not list(pytester.path.rglob("judge_verdicts/**/*.json")), "nothing was judged"
