"""Trajectory: a judge of an agent's tool calls against the task (and a reference trajectory, when given)."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..case import Case
from ..errors import JudgeError
from ..trajectory import steps_from, steps_of, steps_text
from .base import Prompt, Rubric, ask, register_rubric, score_reply

TRAJECTORY_INSTRUCTIONS = (
    "The output is an AI agent's trajectory: the tools it called, numbered in order, each with its arguments "
    "and, where recorded, the tool's result. The input is the task the agent was given. Judge whether the "
    "trajectory is a sensible, efficient way to accomplish the task and meets the criteria: the right tools, "
    "with the right arguments, in a workable order, with no needless or harmful steps. Where a reference "
    "trajectory is given, it is one good way to do the task: a different path that achieves the same is fine. "
    "Think first, then score. Reply with one JSON object and nothing else:\n"
    '{"reasoning": "<a few sentences: which steps help or hurt, and why>", '
    '"score": <a number from 0.0 (the trajectory fails the task) to 1.0 (it accomplishes it well)>}'
)


@register_rubric
class Trajectory(Rubric):
    """One judge call on an agent's trajectory (its numbered tool calls and their results) against the task
    in `input`, and against `reference` (a trajectory in any shape `assert_trajectory` reads) when given."""

    name = "trajectory"

    def __init__(self, reference: Any = None) -> None:
        steps = None if reference is None else steps_of(reference, "Trajectory(reference)")
        self.reference = None if steps is None else steps_text(steps)

    def parameters(self) -> dict[str, Any]:
        return {} if self.reference is None else {"reference": self.reference}

    def prompts(self, case: Case) -> list[Prompt]:
        if case.messages is None:
            raise JudgeError(
                "Trajectory judges an agent's trajectory: pass the agent's messages or run items as the output "
                "(chat messages with tool_calls, a Responses API output, Anthropic tool_use messages, ...)"
            )
        steps = steps_text(steps_from(case.messages))
        expected = self.reference if self.reference is not None else case.expected
        return [ask(dataclasses.replace(case, output=steps, expected=expected), TRAJECTORY_INSTRUCTIONS)]

    def reply_schema(self) -> dict[str, Any]:
        return score_reply()
