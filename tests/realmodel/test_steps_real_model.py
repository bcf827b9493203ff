"""The kinds that ask in steps and the conversation and agent kinds, against the real model.

The model is far too weak to judge; what is checked is what the plugin does with a real server's
real replies to each step: every step a stored entry that replays offline with the server stopped
(0 live calls, the same outcome), or a clear error of the plugin's own; nothing crashes inside it.
"""

from __future__ import annotations

import re

import pytest

from helpers.verdicts import stored_entries
from realmodel.judging import assert_no_crash_inside_the_plugin, real_args, summary_line

pytestmark = pytest.mark.slow

KINDS = """
from pytest_llmjudge import ContextPrecision, Faithfulness, PerTurn, Trajectory, assert_judged

PASSAGES = ["Returns are accepted within 30 days of delivery.", "Refunds go back to the original card."]
ANSWER = "You can return shoes within 30 days. The refund goes back to your card."


def test_faithfulness():
    assert_judged(ANSWER, "Answers from the passages only", rubric=Faithfulness(), context=PASSAGES, threshold=0.5)


def test_context_precision():
    assert_judged(ANSWER, "Retrieves what the question needs", rubric=ContextPrecision(),
                  input="Can I return shoes?", context=PASSAGES, threshold=0.5)


def test_per_turn():
    chat = [
        {"role": "user", "content": "Can I return shoes?"},
        {"role": "assistant", "content": "Yes, within 30 days of delivery."},
    ]
    assert_judged(chat, "Answers the customer's question about returns", rubric=PerTurn(), threshold=0.5)


def test_trajectory():
    calls = [{"name": "lookup_order", "arguments": {"id": 42}}, {"name": "refund", "arguments": {"id": 42}}]
    assert_judged(calls, "Looks the order up before refunding it", rubric=Trajectory(),
                  input="Refund order 42", threshold=0.5)
"""  # fmt: skip


def test_steps_are_recorded_then_replayed_with_the_server_stopped(pytester, own_llama_server, openai_key, observe):
    pytester.makepyfile(test_kinds=KINDS)
    recorded = pytester.runpytest(*real_args(own_llama_server.api_base, "--judge-mode=auto", "-rA"))
    output = recorded.stdout.str()
    assert_no_crash_inside_the_plugin(output)
    outcomes = recorded.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 4, output
    # A failure is a judgment under its threshold or the plugin's own error, never anything else.
    raised = set(re.findall(r"^E\s+(?:pytest_llmjudge\.)?(\w+(?:Error|Failed))\b", output, re.M))
    assert raised <= {"JudgmentFailed", "VerdictParseError", "BackendError"}, output
    assert len(raised) or not outcomes.get("failed"), output
    entries = stored_entries(pytester.path)
    observe(f"steps: {summary_line(output)}; {len(entries)} entries stored")
    assert entries, f"no step of four judgments was stored: {output}"
    steps = sorted({str(e.get("step", "")) for e in entries})
    observe(f"stored steps: {steps}")

    own_llama_server.stop()
    replay = pytester.runpytest(*real_args(own_llama_server.api_base, "--judge-mode=replay"))
    replay_outcomes = replay.parseoutcomes()
    # Every judgment that got a verdict replays as it was judged; one that errored misses, naming what.
    assert replay_outcomes.get("passed", 0) == outcomes.get("passed", 0), replay.stdout.str()
    assert " 0 live" in summary_line(replay.stdout.str()), replay.stdout.str()
