"""An agent's trajectory: matched step by step (no judge), and judged against the task."""

import pytest
from support_agent import run_refund_agent

from pytest_llmjudge import Trajectory, assert_judged, assert_trajectory

REQUEST = "Please refund order A-1042, the shoes were too small."
EXPECTED = [
    {"name": "lookup_order", "arguments": {"order_id": "A-1042"}},
    {"name": "issue_refund", "arguments": {"order_id": "A-1042"}},
]


def test_the_agent_looks_the_order_up_then_refunds_it():
    # Deterministic, no model call: the same tools in the same order, the expected arguments among the actual ones.
    assert_trajectory(run_refund_agent(REQUEST), EXPECTED, args="superset")


def test_the_agent_never_calls_a_tool_it_should_not():
    # Every call the agent made is one of these (it may skip some): order="subset".
    allowed = [*EXPECTED, {"name": "escalate_to_human", "arguments": {}}]
    assert_trajectory(run_refund_agent(REQUEST), allowed, order="subset", args="ignore")


def test_the_trajectory_is_judged_against_the_task():
    # The judge sees the numbered tool calls with their results, the task, and the reference trajectory.
    assert_judged(
        run_refund_agent(REQUEST),
        "lookup_order and issue_refund for A-1042",
        input=REQUEST,
        rubric=Trajectory(reference=EXPECTED),
        threshold=0.7,
    )


@pytest.mark.xfail(strict=True, reason="fails on purpose: shows what a trajectory mismatch looks like (pytest -rx)")
def test_the_agent_escalates_first():
    assert_trajectory(run_refund_agent(REQUEST), [{"name": "escalate_to_human", "arguments": {}}, *EXPECTED])
