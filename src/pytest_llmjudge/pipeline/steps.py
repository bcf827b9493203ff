"""Steps: the calls of a rubric's next step, built from the parsed replies of the earlier ones.

A rubric that asks in steps (extract the claims, then verify each) gives its first step's prompts
at planning, like any rubric, and each later step's from `Rubric.next_prompts`.  Every judge and
sample is its own chain: its next step is built from its own earlier replies.  A later step's calls
are added to the plan's, so finishing, storing and reporting see every step's calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..errors import JudgeError
from ..rubrics.base import Rubric
from .finish import parse

if TYPE_CHECKING:
    from .lookup import Answer
    from .plan import Call, Plan

__all__ = ["MAX_STEPS", "next_calls"]

MAX_STEPS = 8  # a rubric of your own that never stops asking is an error, not a bill


def next_calls(plan: Plan, answers: Mapping[str, Answer]) -> tuple[Call, ...]:
    """The calls of the next step of every judge and sample of `plan` (added to its calls), or () when
    no step is left.  A rubric of one step (the default `next_prompts`) is never asked."""
    rubric = plan.rubric
    if type(rubric).next_prompts is Rubric.next_prompts:
        return ()
    chains: dict[tuple[str, int], list[Call]] = {}
    for call in plan.calls:
        chains.setdefault((call.model_id, call.sample), []).append(call)
    new: list[Call] = []
    for (model_id, sample), calls in chains.items():
        earlier = [(c.prompt, parse(rubric, c, answers[c.key].reply)) for c in calls]
        prompts = rubric.next_prompts(plan.case, earlier)
        if not prompts:
            continue
        last = calls[-1]
        if last.step >= MAX_STEPS:
            raise JudgeError(f"rubric {rubric!r} asked for more than {MAX_STEPS} steps; its next_prompts must end")
        new += [last.setup.call(model_id, last.send_model, sample, p, last.step + 1) for p in prompts]
    plan.calls += tuple(new)
    return tuple(new)
