"""The default kind: the judge gives a score in [0, 1], its reasoning first."""

from __future__ import annotations

from typing import Any

from ..case import Case, render_case
from .base import NUMBER, REASONING, Prompt, Rubric, chat, register_rubric, reply_object, system_prompt

__all__ = ["SCORE_INSTRUCTIONS", "Score"]

SCORE_INSTRUCTIONS = (
    "Think first, then score. Reply with one JSON object and nothing else:\n"
    '{"reasoning": "<a few sentences: what the output does and does not do against the criteria>", '
    '"score": <a number from 0.0 (fails the criteria entirely) to 1.0 (meets them fully)>}'
)


@register_rubric
class Score(Rubric):
    """The default: the judge gives a score in [0, 1], its reasoning first."""

    name = "score"

    def prompts(self, case: Case) -> list[Prompt]:
        return [Prompt(messages=chat(system_prompt(case, SCORE_INSTRUCTIONS), render_case(case)))]

    def reply_schema(self) -> dict[str, Any]:
        return reply_object(reasoning=REASONING, score=NUMBER)
