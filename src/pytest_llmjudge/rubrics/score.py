"""The default kind: the judge gives a score in [0, 1], its reasoning first."""

from __future__ import annotations

from typing import Any

from ..case import Case
from .base import Prompt, Rubric, ask, register_rubric, score_reply

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
        return [ask(case, SCORE_INSTRUCTIONS)]

    def reply_schema(self) -> dict[str, Any]:
        return score_reply()
