"""agentevals run on its own trajectory-match cases, and assert_trajectory on the same: they agree on
every case, on the plain dicts and on LangChain's own message objects.  Then the differences the docs
name, shown on agentevals itself, so that the docs say what agentevals does today."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from helpers.agentevals_cases import CASES, Case
from pytest_llmjudge import TrajectoryMismatch, assert_trajectory


def agentevals_score(outputs: Any, reference: Any, mode: str, args: str = "exact", overrides: Any = None) -> bool:
    from agentevals.trajectory.match import create_trajectory_match_evaluator

    evaluator = create_trajectory_match_evaluator(
        trajectory_match_mode=mode, tool_args_match_mode=args, tool_args_match_overrides=overrides
    )
    # Copies: agentevals' normalizer adds fields (`id`, `content`) to the dicts it is given.
    result = evaluator(outputs=copy.deepcopy(outputs), reference_outputs=copy.deepcopy(reference))
    return bool(result["score"])


def our_score(outputs: Any, reference: Any, mode: str, args: str = "exact", overrides: Any = None) -> bool:
    try:
        assert_trajectory(outputs, reference, order=mode, args=args, args_by_tool=overrides)
    except TrajectoryMismatch:
        return False
    return True


def langchain_objects(messages: list[dict]) -> list[Any]:
    """The LangChain message objects the cases' LangChain dicts stand for (others stay dicts)."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    classes = {"human": HumanMessage, "ai": AIMessage, "tool": ToolMessage}
    return [classes[m["type"]](**{k: v for k, v in m.items() if k != "type"}) if "type" in m else m for m in messages]


def settings(case: Case) -> tuple[str, str, Any]:
    return case.trajectory_match_mode, case.tool_args_match_mode, case.tool_args_match_overrides


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_agentevals_and_assert_trajectory_agree_on_its_own_cases(case: Case):
    theirs = agentevals_score(case.outputs, case.reference_outputs, *settings(case))
    assert theirs is case.score  # the case is ported as agentevals' test asserts it
    assert our_score(case.outputs, case.reference_outputs, *settings(case)) is theirs


LANGCHAIN_CASES = [c for c in CASES if any("type" in m for m in c.outputs)]


@pytest.mark.parametrize("case", LANGCHAIN_CASES, ids=[c.name for c in LANGCHAIN_CASES])
def test_they_agree_on_langchain_s_message_objects(case: Case):
    outputs, reference = langchain_objects(case.outputs), langchain_objects(case.reference_outputs)
    theirs = agentevals_score(outputs, reference, *settings(case))
    assert theirs is case.score
    assert our_score(outputs, reference, *settings(case)) is theirs


# -- the differences the docs name ---------------------------------------------------------------------


def asks(*calls: tuple[str, dict]) -> list[dict]:
    """A user question and one assistant message per call (each its own step, as agentevals reads them)."""
    messages: list[dict] = [{"role": "user", "content": "Get the order."}]
    for name, arguments in calls:
        function = {"name": name, "arguments": json.dumps(arguments)}
        messages.append(
            {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": function}]}
        )
    return messages


def test_agentevals_pairs_greedily_and_can_miss_a_match_that_exists():
    """With a loose argument rule, agentevals gives each expected call the first actual call that fits."""
    actual = asks(("get", {"id": 1, "full": True}), ("get", {"id": 1}))
    expected = asks(("get", {"id": 1}), ("get", {"id": 1, "full": True}))
    assert agentevals_score(actual, expected, "superset", "superset") is False
    assert our_score(actual, expected, "superset", "superset") is True


def test_agentevals_swaps_the_arguments_in_its_subset_mode():
    """Under trajectory_match_mode="subset", agentevals hands its argument rule (expected, actual):
    its "subset" then means the reverse of what it means under "strict".  Ours means the same in every mode."""
    fewer = asks(("get_flight", {"flight_no": "LX0112"}))
    more = asks(("get_flight", {"flight_no": "LX0112", "foo": "bar"}))
    assert agentevals_score(fewer, more, "strict", "subset") is True
    assert agentevals_score(fewer, more, "subset", "subset") is False
    assert our_score(fewer, more, "strict", "subset") is True
    assert our_score(fewer, more, "subset", "subset") is True


def test_agentevals_strict_compares_every_message_ours_the_tool_calls():
    """agentevals' strict also counts the messages without tool calls (a second closing reply fails it)."""
    run = asks(("get", {"id": 1}))
    chattier = [
        *run,
        {"role": "assistant", "content": "Here it is."},
        {"role": "assistant", "content": "Anything else?"},
    ]
    assert agentevals_score(chattier, run, "strict") is False
    assert our_score(chattier, run, "strict") is True


def test_agentevals_compares_arguments_with_python_s_equality_ours_as_json_values():
    """agentevals' "exact" is Python's ==, under which 1 == True: a call confirming with 1 matches one
    confirming with true.  Ours compares JSON values, types kept; 100 and 100.0 stay one number in both."""
    one, true = asks(("confirm", {"confirm": 1})), asks(("confirm", {"confirm": True}))
    assert agentevals_score(one, true, "strict") is True
    assert our_score(one, true, "strict") is False
    hundred, as_float = asks(("refund", {"amount": 100})), asks(("refund", {"amount": 100.0}))
    assert agentevals_score(hundred, as_float, "strict") is True
    assert our_score(hundred, as_float, "strict") is True
