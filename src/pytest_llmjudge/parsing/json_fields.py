"""Reading a JSON object: which field names hold the score, the verdict, the reasoning and the confidence.

Field names are compared lower-cased with spaces and hyphens as underscores.  When the top level has no
score, the first nested object with one counts (per-model sections).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .candidate import Found, number_from_json
from .json_scan import MAX_JSON_CANDIDATES
from .labels import CONFIDENCE_WORDS, GRADE_LETTERS

_SCORE_FIELDS = (
    "score",
    "rating",
    "overall_score",
    "final_score",
    "total_score",
    "overall_rating",
    "final_rating",
    "grade",
    "result",
    "points",
)
_VERDICT_FIELDS = (
    "pass", "passed", "verdict", "result", "decision", "outcome", "judgment", "judgement", "grade", "status",
)  # fmt: skip
# A JSON boolean under a name that asks "did it pass / is it correct / is the criterion met"
# (`eval_passed`, `is_correct`, `criteria_met`, a rubric item's `answer`) is a pass/fail verdict.
# Only these affirmative names: `is_toxic: true` or `hallucination: true` mean the opposite.
_BOOLEAN_VERDICT_WORDS = frozenset(
    [
        "pass",
        "passed",
        "passes",
        "passing",
        "correct",
        "success",
        "successful",
        "succeeded",
        "met",
        "meets",
        "satisfied",
        "answer",
        "verdict",
        "valid",
    ]
)
# A yes/no answer to the rubric's question "does the output meet the criteria?" (see the README).
_YES_WORDS = {"yes": "pass", "y": "pass", "no": "fail", "n": "fail"}
REASON_FIELDS = (
    "reasoning",
    "reason",
    "explanation",
    "rationale",
    "feedback",
    "justification",
    "reasons",
    "critique",
    "analysis",
    "comment",
    "comments",
    "evaluation",
)
_TRUE_WORDS = {"true", "pass", "passed", "success", "succeeded"}
_FALSE_WORDS = {"false", "fail", "failed", "failure"}
# Verdict words that count where a pass/fail verdict was asked (see labels._WORD_VERDICTS).
_ASKED_TRUE = {"correct", "valid", "right", "yes", "acceptable"}
_ASKED_FALSE = {"incorrect", "invalid", "wrong", "no", "unacceptable"}


def _text_value(value: Any) -> str | None:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return "\n".join(v.strip() for v in value)
    return None


def reasoning_in(fields: Mapping[str, Any]) -> str | None:
    """The first reasoning field that holds text (a string or a list of strings), or None."""
    for name in REASON_FIELDS:
        if name in fields:
            text = _text_value(fields[name])
            if text is not None:
                return text
    return None


def fields_of(obj: Mapping[Any, Any]) -> dict[str, Any]:
    """The object's string-named fields, names lower-cased with spaces and hyphens as underscores
    (the first of two fields that normalize alike wins)."""
    fields: dict[str, Any] = {}
    for k, v in obj.items():
        if isinstance(k, str):
            fields.setdefault(k.strip().lower().replace(" ", "_").replace("-", "_"), v)
    return fields


def _boolean_verdict_fields(fields: Mapping[str, Any]) -> list[str]:
    """Names of boolean fields that state a pass/fail verdict: the last word of the name says so."""
    return [
        name
        for name, value in fields.items()
        if isinstance(value, bool) and name not in _VERDICT_FIELDS and name.rsplit("_", 1)[-1] in _BOOLEAN_VERDICT_WORDS
    ]


def _yes_no(word: str) -> str | None:
    """'yes' / 'no' (or Y / N), alone or leading a sentence ("No, this is off-topic."), as a verdict."""
    head = word
    for i, c in enumerate(word):
        if not c.isalpha():
            if c not in ",.;:!-— ":
                return None
            head = word[:i]
            break
    return _YES_WORDS.get(head)


def read_mapping(d: dict[Any, Any], depth: int = 0, verdict: bool | None = None) -> Found:
    """Read score / verdict / reasoning / confidence from a JSON object.

    ``verdict``: whether a pass/fail verdict was asked (None: unknown).  Where it was, verdict words
    (``"correct"``, ``"valid"``) and a boolean score (``{"score": true}``) are verdicts.  A ``value`` field
    holds the score, or a Y/N verdict unless a score was asked, when no other field does.
    """
    fields = fields_of(d)
    found = Found()
    for name in (*_SCORE_FIELDS, "value"):
        if name not in fields:
            continue
        value = fields[name]
        num = number_from_json(value)
        if num is not None:
            found.raw, found.den = num
            break
        if name in ("grade", "result", "value") and isinstance(value, str):
            continue  # a letter or a word: read below as a verdict
        if name == "score" and isinstance(value, bool) and verdict:
            found.verdict = "pass" if value else "fail"  # openevals' {"score": true}, where a verdict was asked
            continue
        if name in ("score", "rating") and value is not None:
            found.bad_score = True
    verdict_fields = (*_VERDICT_FIELDS, *_boolean_verdict_fields(fields), *(("value",) if verdict is not False else ()))
    for name in verdict_fields if found.verdict is None else ():
        if name not in fields:
            continue
        value = fields[name]
        if isinstance(value, bool):
            found.verdict = "pass" if value else "fail"
            break
        if isinstance(value, str):
            word = value.strip().lower()
            if name == "grade" and word in GRADE_LETTERS:
                fixed, found.verdict = GRADE_LETTERS[word]
                if found.raw is None:
                    found.fixed = fixed
                break
            if name == "grade" and word == "p":
                if found.raw is None:
                    found.fixed = 0.5
                break
            if word in _TRUE_WORDS or (verdict and word in _ASKED_TRUE):
                found.verdict = "pass"
                break
            if word in _FALSE_WORDS or (verdict and word in _ASKED_FALSE):
                found.verdict = "fail"
                break
            if word == "partial":
                found.partial = True
                break
            yes_no = _yes_no(word) if name != "grade" and verdict is not False else None
            if yes_no is not None:
                found.verdict = yes_no
                break
    found.reasoning = reasoning_in(fields)
    conf = fields.get("confidence")
    if isinstance(conf, str):
        found.confidence = CONFIDENCE_WORDS.get(" ".join(conf.lower().split()))
    if not found.usable and depth < 4:
        # No score at the top: the first nested object with one (per-model sections).
        for v in d.values():
            if isinstance(v, dict):
                inner = read_mapping(v, depth + 1, verdict)
                if inner.usable:
                    return inner
                found.bad_score = found.bad_score or inner.bad_score
    return found


def read_value(value: Any, verdict: bool | None = None) -> list[Found]:
    """The candidates of a JSON value: an object, or the objects in a list."""
    if isinstance(value, dict):
        return [read_mapping(value, 0, verdict)]
    if isinstance(value, list):
        return [read_mapping(v, 0, verdict) for v in value[:MAX_JSON_CANDIDATES] if isinstance(v, dict)]
    return []
