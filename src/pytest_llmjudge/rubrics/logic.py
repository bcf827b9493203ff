"""Logic: the consistency of an output and the validity of its reasoning, as `Dimensions` of their own
that read more from the reply into the details (issues; validity, fallacies and kind of reasoning)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from .base import REASONING, Outcome, register_rubric, reply_object
from .dimensions import Dimensions

LOGIC_WEIGHTS: Mapping[str, float] = {"contradiction": 0.5, "causal": 0.3, "data": 0.2}
LOGIC_DESCRIPTIONS: Mapping[str, str] = {
    "contradiction": "no two statements contradict each other (1.0: none do; 0.0: a direct contradiction)",
    "causal": "causes come before their effects and the sequence of events is possible",
    "data": "numbers, quantities and dates agree with each other (1.0 where the output has none)",
}
REASONING_KINDS = ("deductive", "inductive", "abductive")
ISSUE = reply_object(type={"type": "string", "enum": list(LOGIC_WEIGHTS)}, description=REASONING, evidence=REASONING)

LOGIC_INSTRUCTIONS = (
    "Audit the output for logical consistency: whether what it says fits together, not whether it is "
    "true. Score each dimension from 0.0 to 1.0:\n{dimensions}\n\n"
    "Think first, then score, then list each problem found (none: an empty list). Reply with one JSON "
    "object and nothing else:\n"
    '{{"reasoning": "<a few sentences>", "scores": {{{fields}}}, '
    '"issues": [{{"type": "contradiction", "causal" or "data", "description": "<the problem>", '
    '"evidence": "<the conflicting words, quoted>"}}, ...]}}'
)
VALIDITY_INSTRUCTIONS = (
    "Judge the validity of the output's reasoning: find its premises and its conclusion, say which kind "
    "of reasoning it uses (deductive, inductive or abductive), and name every fallacy in it (ad hominem, "
    "circular reasoning, hasty generalization, ...). Score its validity from 0.0 (the conclusion does not "
    "follow, or rests on fallacies) to 1.0 (the conclusion follows from the premises). It is valid when "
    "the conclusion follows and no fallacy remains.\n\n"
    "Think first, then answer. Reply with one JSON object and nothing else:\n"
    '{{"reasoning": "<a few sentences>", "scores": {{{fields}}}, "valid": true or false, '
    '"fallacies": ["<name>", ...], "reasoning_type": "deductive", "inductive" or "abductive"}}'
)


class _Audit(Dimensions):
    """Fixed dimensions with instructions of their own, and more read from the reply (`extras`)."""

    weights_of: ClassVar[Mapping[str, float]]
    descriptions_of: ClassVar[Mapping[str, str]]

    def __init__(self) -> None:
        super().__init__(weights=self.weights_of, descriptions=self.descriptions_of)

    def parameters(self) -> dict[str, Any]:
        return {}  # the dimensions and weights are the kind's own: its name and version say them


@register_rubric
class LogicConsistency(_Audit):
    """Internal consistency in three weighted sub-scores: contradiction 0.5, causal 0.3, data 0.2.

    `details["dimensions"]` holds the sub-scores, `details["issues"]` each problem the judge found
    (type, description, evidence); a failure lists them.
    """

    name = "logic_consistency"
    weights_of = LOGIC_WEIGHTS
    descriptions_of = LOGIC_DESCRIPTIONS
    instructions = LOGIC_INSTRUCTIONS
    extra_fields: ClassVar[Mapping[str, Mapping[str, Any]]] = {"issues": {"type": "array", "items": ISSUE}}

    def extras(self, obj: Mapping[str, Any], score: float) -> dict[str, Any]:
        found = obj.get("issues", obj.get("issues_found"))
        issues = []
        for item in found if isinstance(found, list) else ():
            if isinstance(item, str):
                item = {"description": item}
            if isinstance(item, Mapping) and item.get("description"):
                issues.append({k: str(item.get(k) or "") for k in ("type", "description", "evidence")})
        return {"issues": issues}

    def failure_details(self, outcome: Outcome) -> list[str]:
        lines = super().failure_details(outcome)
        issues = outcome.details.get("issues") or []
        return lines + [
            f"  - {i['type'] or 'issue'}: {i['description']}" + (f" ({i['evidence']})" if i["evidence"] else "")
            for i in issues
        ]


@register_rubric
class ReasoningValidity(_Audit):
    """Whether the output's conclusion follows from its premises: a validity score, and in the details
    `valid`, the `fallacies` named and the `reasoning_type` (deductive, inductive or abductive).

    A reply that does not say whether the argument is valid counts it valid from a score of 0.7 up.
    """

    name = "reasoning_validity"
    weights_of: ClassVar[Mapping[str, float]] = {"validity": 1.0}
    descriptions_of: ClassVar[Mapping[str, str]] = {
        "validity": "the conclusion follows from the premises, with no fallacy"
    }
    instructions = VALIDITY_INSTRUCTIONS

    extra_fields: ClassVar[Mapping[str, Mapping[str, Any]]] = {
        "valid": {"type": "boolean"},
        "fallacies": {"type": "array", "items": {"type": "string"}},
        "reasoning_type": {"type": "string", "enum": list(REASONING_KINDS)},
    }

    def extras(self, obj: Mapping[str, Any], score: float) -> dict[str, Any]:
        valid = obj.get("valid", obj.get("is_valid"))
        fallacies = obj.get("fallacies")
        kind = str(obj.get("reasoning_type") or "").strip().lower()
        return {
            "valid": valid if isinstance(valid, bool) else score >= 0.7,
            "fallacies": [str(f) for f in fallacies if str(f).strip()] if isinstance(fallacies, list) else [],
            "reasoning_type": kind if kind in REASONING_KINDS else None,
        }

    def failure_details(self, outcome: Outcome) -> list[str]:
        details = outcome.details
        fallacies = ", ".join(details.get("fallacies") or []) or "none named"
        kind = details.get("reasoning_type") or "not said"
        return [f"valid: {'yes' if details.get('valid') else 'no'}; fallacies: {fallacies}; reasoning: {kind}"]
