"""A checklist: PASS/FAIL per constraint in one call; the score is the share that passed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..case import Case, render_case
from ..parsing.funnel import ParsedVerdict
from .base import Outcome, Prompt, Reply, Rubric, ask, listing, register_rubric, text_items
from .parsed import RubricParse
from .rulings import Numbered, read_rulings

CHECKLIST_INSTRUCTIONS = (
    "Check the output against each numbered constraint, one at a time, independently of the others. "
    "A constraint passes only if the output clearly satisfies it. Reply with one JSON object and nothing else:\n"
    '{"results": [{"id": <the constraint\'s number>, "reasoning": "<one or two sentences>", '
    '"verdict": "PASS" or "FAIL"}, ... one entry per constraint, in order]}'
)

CONSTRAINTS = Numbered("constraint", "PASS", "FAIL")


@register_rubric
class Checklist(Rubric):
    """PASS/FAIL per constraint in one call; the score is the share that passed.

    A failure message names the constraints that failed, with the judge's reason for each.
    """

    name = "checklist"

    def __init__(self, constraints: Sequence[str]) -> None:
        self.constraints = text_items("Checklist(constraints)", constraints)

    def parameters(self) -> dict[str, Any]:
        return {"constraints": list(self.constraints)}

    def prompts(self, case: Case) -> list[Prompt]:
        numbered = "\n".join(f"{i}. {c}" for i, c in enumerate(self.constraints, 1))
        criteria = f"{case.criteria}\n\nConstraints:\n{numbered}"
        return [ask(case, CHECKLIST_INSTRUCTIONS, render_case(case, criteria=criteria), items=len(self.constraints))]

    def reply_schema(self) -> dict[str, Any]:
        return CONSTRAINTS.schema()

    def parse(self, prompt: Prompt, reply: Reply) -> ParsedVerdict:
        """PASS/FAIL per constraint, each checked as `read_rulings` does (a result for a number no
        constraint has, or PASS and FAIL for one constraint, is off the list asked: unreadable)."""
        rulings = read_rulings("Checklist", reply, self.asked(prompt), len(self.constraints), CONSTRAINTS)
        checks: list[dict[str, Any]] = [
            {"constraint": c, "passed": ok, "reasoning": why}
            for c, (ok, why) in zip(self.constraints, rulings, strict=True)
        ]
        passed = sum(c["passed"] for c in checks)
        score = round(passed / len(checks), 6)
        failed = [c["constraint"] for c in checks if not c["passed"]]
        reasoning = "; ".join(
            f"{'PASS' if c['passed'] else 'FAIL'} {c['constraint']}: {c['reasoning']}" for c in checks
        )
        details = {"constraints": checks, "failed": failed, "passed": passed, "total": len(checks)}
        return RubricParse(score, None, "pass" if not failed else "fail", None, reasoning, "json-checklist", details)

    def failure_details(self, outcome: Outcome) -> list[str]:
        checks = [c for c in outcome.details.get("constraints", ()) if not c["passed"]]
        if not checks:
            return []
        total = outcome.details.get("total", len(self.constraints))
        rows = ((c["constraint"], c["reasoning"]) for c in checks)
        return listing(f"failed constraints ({len(checks)} of {total}):", rows)
