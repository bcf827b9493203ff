"""A checklist: PASS/FAIL per constraint in one call; the score is the share that passed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..case import Case, render_case
from ..errors import VerdictParseError
from ..parsing.funnel import ParsedVerdict, parse_json_object, reasoning_from
from .base import (
    REASONING,
    Outcome,
    Prompt,
    Reply,
    Rubric,
    ask,
    listing,
    reading,
    register_rubric,
    reply_object,
    text_items,
)
from .parsed import RubricParse

CHECKLIST_INSTRUCTIONS = (
    "Check the output against each numbered constraint, one at a time, independently of the others. "
    "A constraint passes only if the output clearly satisfies it. Reply with one JSON object and nothing else:\n"
    '{"results": [{"id": <the constraint\'s number>, "reasoning": "<one or two sentences>", '
    '"verdict": "PASS" or "FAIL"}, ... one entry per constraint, in order]}'
)

_VERDICT_FIELDS = ("verdict", "result", "passed", "pass")
_PASSED = dict.fromkeys(("pass", "passed", "yes", "true", "met", "ok"), True)
_WORDS = _PASSED | dict.fromkeys(("fail", "failed", "no", "false", "not met"), False)  # verdict word -> passed


def _pass_fail(value: Any) -> bool | None:
    """One constraint's verdict as a bool (True, "PASS", "met", ...), or None when it says neither."""
    if isinstance(value, str):
        return _WORDS.get(value.strip().lower())
    return value if isinstance(value, bool) else None


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
        return [ask(case, CHECKLIST_INSTRUCTIONS, render_case(case, criteria=criteria))]

    def reply_schema(self) -> dict[str, Any]:
        item = reply_object(
            id={"type": "integer"}, reasoning=REASONING, verdict={"type": "string", "enum": ["PASS", "FAIL"]}
        )
        return reply_object(results={"type": "array", "items": item})

    def parse(self, prompt: Prompt, reply: Reply) -> ParsedVerdict:
        """PASS/FAIL per constraint from the object the judge wrote itself (one it copied from the prompt is
        no reply, nor is a reasoning that is the format's placeholder or a copy).  A result for a number no
        constraint has, or PASS and FAIL for one constraint, is off the list asked: unreadable."""
        asked = self.asked(prompt)
        by_id: dict[int, tuple[bool, str]] = {}
        with reading("Checklist", reply):
            obj = parse_json_object(reply.text, asked)
            results = None if obj is None else (obj.get("results") or obj.get("constraints"))
            if isinstance(results, Mapping):  # {"1": "PASS", ...}
                results = [{"id": k, "verdict": v} for k, v in results.items()]
            if not isinstance(results, list):
                raise VerdictParseError("the reply has no list of results")
            for item in results:
                if not isinstance(item, Mapping):
                    continue
                ident = item.get("id", item.get("constraint"))
                try:
                    number = int(str(ident).strip().rstrip("."))
                except ValueError:
                    continue
                verdict = next((_pass_fail(item[k]) for k in _VERDICT_FIELDS if k in item), None)
                if verdict is None:
                    continue
                if not 1 <= number <= len(self.constraints):
                    raise VerdictParseError(
                        f"the reply rules on constraint {number}, but {len(self.constraints)} were asked"
                        f" (numbered 1 to {len(self.constraints)})"
                    )
                if by_id.get(number, (verdict,))[0] != verdict:
                    raise VerdictParseError(f"the reply gives both PASS and FAIL for constraint {number}")
                by_id.setdefault(number, (verdict, reasoning_from(item, asked)))
            missing = [str(i) for i in range(1, len(self.constraints) + 1) if i not in by_id]
            if missing:
                raise VerdictParseError(f"the reply gives no PASS/FAIL for constraint(s) {', '.join(missing)}")
        checks: list[dict[str, Any]] = [
            {"constraint": c, "passed": by_id[i][0], "reasoning": by_id[i][1]}
            for i, c in enumerate(self.constraints, 1)
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
