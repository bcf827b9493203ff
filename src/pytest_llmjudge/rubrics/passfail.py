"""Pass/fail with a confidence: the judge's verdict and how sure it is, mapped to a score by a table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..case import Case
from ..parsing.funnel import ParsedVerdict, parse_verdict
from .base import (
    REASONING,
    Prompt,
    Reply,
    Rubric,
    RubricError,
    ask,
    parse_failure,
    register_rubric,
    reply_object,
    unit_score,
)
from .parsed import RubricParse

PASS_FAIL_SCORES: Mapping[str, float] = {
    "pass/high": 1.0,
    "pass/medium": 0.85,
    "pass/low": 0.6,
    "fail/high": 0.0,
    "fail/medium": 0.15,
    "fail/low": 0.4,
}

PASS_FAIL_INSTRUCTIONS = (
    "Decide whether the output meets the criteria. Think first, then decide, then say how sure you "
    "are. Reply with one JSON object and nothing else:\n"
    '{"reasoning": "<a few sentences: what the output does and does not do against the criteria>", '
    '"verdict": "pass" or "fail", "confidence": "high", "medium" or "low"}'
)


@register_rubric
class PassFail(Rubric):
    """A Pass/Fail verdict with a High/Medium/Low confidence, mapped to a score by a table.

    `scores` overrides entries of the default table (`PASS_FAIL_SCORES`), keyed `"pass/high"` or
    `("pass", "high")`.  A reply without a confidence is scored as *medium* (and
    `details["confidence_assumed"]` is True): no signal either way, so the middle row.
    """

    name = "pass_fail"

    def __init__(self, scores: Mapping[Any, float] | None = None) -> None:
        table = dict(PASS_FAIL_SCORES)
        for key, value in (scores or {}).items():
            name = "/".join(key) if isinstance(key, tuple) else str(key)
            name = name.strip().lower()
            if name not in PASS_FAIL_SCORES:
                known = ", ".join(PASS_FAIL_SCORES)
                raise RubricError(f"PassFail(scores=...): unknown entry {key!r}; known: {known}")
            if unit_score(value) is None or isinstance(value, str):
                raise RubricError(f"PassFail(scores=...): {key!r} must be a number in [0, 1], got {value!r}")
            table[name] = float(value)
        self.scores = table

    def parameters(self) -> dict[str, Any]:
        return {"scores": dict(sorted(self.scores.items()))}

    def prompts(self, case: Case) -> list[Prompt]:
        return [ask(case, PASS_FAIL_INSTRUCTIONS)]

    def reply_schema(self) -> dict[str, Any]:
        return reply_object(
            reasoning=REASONING,
            verdict={"type": "string", "enum": ["pass", "fail"]},
            confidence={"type": "string", "enum": ["high", "medium", "low"]},
        )

    def parse(self, prompt: Prompt, reply: Reply) -> ParsedVerdict:
        parsed = parse_verdict(reply.text, asked=self.asked(prompt))
        if parsed.verdict not in ("pass", "fail"):
            raise parse_failure("PassFail: the reply gives no pass/fail verdict", reply)
        confidence = parsed.confidence or "medium"
        score = self.scores[f"{parsed.verdict}/{confidence}"]
        details = {"confidence_assumed": parsed.confidence is None}
        return RubricParse(score, None, parsed.verdict, confidence, parsed.reasoning, parsed.strategy, details)
