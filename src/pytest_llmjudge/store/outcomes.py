"""A verdict file's "outcomes": what each judgment of its test decided, as `llmjudge diff` reads it.

The diff reads committed files, not a run, so each judgment's decision is kept beside its entries: one
outcome per judgment, under the key of its first call (the `Verdict.key`), holding the projection of
its report record (`verdict.JudgmentRecord`): `criteria`, `rubric`, `score`, `threshold` (absent when
none was given), `passed` (absent without a threshold), `verdict` (when the judge gave one), `run` and
`group` (when the record carries them), and `position`: which of the test's judgments of the same
criteria and rubric it is, in the order the test made them, counted within its run of a repeated test
(absent for the first).

A test's outcomes describe its latest recording: a judgment that takes the place of another (the same
criteria, rubric, run and position: its output changed, so its key did) drops the other's outcome,
while the other's entries stay until pruned.  Only the store's writer (`VerdictFile.put_many`) writes
them, only in auto and refresh; the reader (`VerdictDocument`) checks them with `checked_outcomes`
when they are asked for (a replay never is).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import StoreError

if TYPE_CHECKING:
    from ..verdict import JudgmentRecord

__all__ = ["OUTCOME_FIELDS", "Signature", "checked_outcomes", "outcome_of", "signature", "stale_outcomes"]

# The fields of a judgment's record an outcome keeps, in the order a reader expects them.
OUTCOME_FIELDS = ("criteria", "rubric", "score", "threshold", "passed", "verdict", "run", "group")

_KEY = re.compile(r"[0-9a-f]{64}")

Signature = tuple[str, str, int, int]  # criteria, rubric, run, position: what the test decides, not its key


def outcome_of(record: JudgmentRecord, position: int = 0) -> dict[str, Any]:
    """The outcome a verdict file keeps for the judgment `record` describes (see the module docstring)."""
    fields: Mapping[str, Any] = record  # `run` and `group` are the suites' fields, where a record has them
    outcome = {name: fields[name] for name in OUTCOME_FIELDS if fields.get(name) is not None}
    if "threshold" not in outcome:  # a score with no threshold decides nothing of its own
        outcome.pop("passed", None)
    if position:
        outcome["position"] = position
    return outcome


def signature(outcome: Mapping[str, Any]) -> Signature:
    """What pairs a judgment with the one it replaces: its criteria, rubric, run and position in its test."""
    return (
        str(outcome.get("criteria", "")),
        str(outcome.get("rubric", "")),
        int(outcome.get("run") or 0),
        int(outcome.get("position") or 0),
    )


def stale_outcomes(stored: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The stored outcomes `new` takes the place of: another key's, with a signature a new one has."""
    taken = {signature(outcome) for outcome in new.values()}
    return [key for key, outcome in stored.items() if key not in new and signature(outcome) in taken]


# name -> (what it must be, a check of the value)
_FIELDS: dict[str, tuple[str, Any]] = {
    "criteria": ("a string", lambda v: isinstance(v, str)),
    "rubric": ("a string", lambda v: isinstance(v, str)),
    "score": ("a number", lambda v: _number(v)),
    "threshold": ("a number", lambda v: _number(v)),
    "passed": ("true or false", lambda v: isinstance(v, bool)),
    "verdict": ("a string", lambda v: isinstance(v, str)),
    "run": ("a whole number >= 0", lambda v: _whole(v)),
    "group": ("a string", lambda v: isinstance(v, str)),
    "position": ("a whole number >= 0", lambda v: _whole(v)),
}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def checked_outcomes(path: Path | str, section: object) -> dict[str, dict[str, Any]]:
    """A file's "outcomes" section, checked: keys of 64 hex digits, each an object whose known fields have
    their types and which has a score; a StoreError names what is wrong.  Fields added later are kept."""
    if not isinstance(section, dict):
        raise StoreError(f"{path}: 'outcomes' is not a JSON object")
    for key, outcome in section.items():
        if not _KEY.fullmatch(key):
            raise StoreError(f"{path}: the outcome {key[:20]!r} is not under a verdict key (64 hex digits)")
        if not isinstance(outcome, dict):
            raise StoreError(f"{path}: the outcome of key {key[:12]} is not a JSON object")
        if "score" not in outcome:
            raise StoreError(f"{path}: the outcome of key {key[:12]} has no 'score'")
        for name, value in outcome.items():
            rule = _FIELDS.get(name)
            if rule is not None and not rule[1](value):
                raise StoreError(f"{path}: the outcome of key {key[:12]} has {name!r} {value!r:.40}, not {rule[0]}")
    return section
