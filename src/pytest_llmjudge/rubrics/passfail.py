"""Pass/fail with a confidence: the judge's verdict and how sure it is, mapped to a score by a table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..case import Case
from ..parsing.answers import VERDICT, Answer
from ..parsing.funnel import Asked, ParsedVerdict, parse_verdict
from .base import (
    REASONING,
    Prompt,
    Reply,
    Rubric,
    RubricError,
    ask,
    declaration,
    parse_failure,
    register_rubric,
    reply_object,
    unit_score,
)
from .parsed import RubricParse
from .template import DECLARED_INSTRUCTIONS, TEMPLATE_FIELDS, placeholders, render

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

    `template` (optional) is your own prompt, with `{output}` (required), `{criteria}`, `{input}` and `{expected}`
    placeholders as in `Template`; `answer` declares what it asks the judge to answer with: its words and the
    verdict each means (`{"CORRECT": "pass", "INCORRECT": "fail"}`), or an `Answer` that also says where the verdict
    sits (`Answer({"true": "pass", "false": "fail"}, tag="is_correct")`).  The declared form is read first.
    """

    name = "pass_fail"

    def __init__(
        self,
        scores: Mapping[Any, float] | None = None,
        *,
        template: str | None = None,
        answer: Mapping[str, str] | Answer | None = None,
    ) -> None:
        self.template: str | None = template
        self.fields: tuple[str, ...] = ()
        if template is not None:
            self.fields = placeholders("PassFail", template, TEMPLATE_FIELDS)
            if "output" not in self.fields:
                raise RubricError("PassFail: the template must contain {output}, where the output under test goes")
        if answer is not None:
            self.declared = declaration("PassFail(answer=...)", answer, VERDICT, template)
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
        params: dict[str, Any] = {"scores": dict(sorted(self.scores.items()))}
        if self.template is not None:  # only your own template's keys carry it: the default's stay as they were
            params["template"] = self.template
        if self.declared is not None:
            params["answer"] = self.declared.describe()
        return params

    def prompts(self, case: Case) -> list[Prompt]:
        if self.template is None:
            return [ask(case, PASS_FAIL_INSTRUCTIONS)]
        return [
            ask(
                case, DECLARED_INSTRUCTIONS.format(what="verdict"), render("PassFail", self.template, self.fields, case)
            )
        ]

    def asked(self, prompt: Prompt) -> Asked:
        asked = super().asked(prompt)
        asked.verdict = True  # a verdict is what this kind asks for, in its own prompt or in yours
        return asked

    def reply_schema(self) -> dict[str, Any] | None:
        if self.template is not None:
            return None  # your template says what the reply looks like
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
