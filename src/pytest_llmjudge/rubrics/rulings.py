"""Rulings on a numbered list, read from one reply and checked item by item.

A kind that asks the judge to rule on several items in one call (a checklist's constraints, a RAG
answer's claims, retrieved passages) reads the reply here: exactly one answer per item asked, in
whatever order the judge wrote them.  A ruling missing, a ruling for a number no item has, or two
rulings that disagree for one item, or one ruling whose fields disagree (`"verdict": "no", "passed":
true`), is no verdict (`VerdictParseError`): a reply that lost track of the list is asked again, never
read as a score.  The same ruling written twice counts once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import VerdictParseError
from ..parsing.funnel import Asked, parse_json_object, reasoning_from
from .base import REASONING, Reply, reading, reply_object

_VERDICT_FIELDS = ("verdict", "result", "passed", "pass")
_PASSED = dict.fromkeys(("pass", "passed", "yes", "true", "met", "ok"), True)
_WORDS = _PASSED | dict.fromkeys(("fail", "failed", "no", "false", "not met"), False)  # verdict word -> passed


@dataclass(frozen=True)
class Numbered:
    """What the items of a list are called, and the two answers asked for each (as the prompt spells them)."""

    noun: str  # "constraint", "claim", "passage": a ruling names its item by `id` or by this field
    yes: str
    no: str

    def schema(self) -> dict[str, Any]:
        """The reply's JSON schema: `{"results": [{"id", "reasoning", "verdict"}, ...]}`."""
        item = reply_object(
            id={"type": "integer"}, reasoning=REASONING, verdict={"type": "string", "enum": [self.yes, self.no]}
        )
        return reply_object(results={"type": "array", "items": item})


def passed(value: Any) -> bool | None:
    """One item's ruling as a bool (True, "PASS", "yes", "met", ...), or None when it says neither."""
    if isinstance(value, str):
        return _WORDS.get(value.strip().lower())
    return value if isinstance(value, bool) else None


def read_rulings(kind: str, reply: Reply, asked: Asked, count: int, numbered: Numbered) -> list[tuple[bool, str]]:
    """The ruling (passed, reasoning) on each of `count` items numbered from 1, in their order.

    Read from the object the judge wrote itself (one it copied from the prompt is no reply, nor is a
    reasoning that is the format's placeholder or a copy); `VerdictParseError` naming `kind` unless
    every item has one ruling."""
    noun = numbered.noun
    by_id: dict[int, tuple[bool, str]] = {}
    with reading(kind, reply):
        obj = parse_json_object(reply.text, asked)
        results = None if obj is None else (obj.get("results") or obj.get(f"{noun}s"))
        if isinstance(results, Mapping):  # {"1": "PASS", ...}
            results = [{"id": k, "verdict": v} for k, v in results.items()]
        if not isinstance(results, list):
            raise VerdictParseError("the reply has no list of results")
        for item in results:
            if not isinstance(item, Mapping):
                continue
            ident = item.get("id", item.get(noun))
            try:
                number = int(str(ident).strip().rstrip("."))
            except ValueError:
                continue
            said = {k: passed(item[k]) for k in _VERDICT_FIELDS if k in item}
            verdicts = {v for v in said.values() if v is not None}
            if len(verdicts) > 1:  # {"verdict": "no", "passed": true}: neither field can be taken for the ruling
                fields = ", ".join(f"{k}: {item[k]!r}" for k, v in said.items() if v is not None)
                raise VerdictParseError(f"the reply's ruling on {noun} {number} says both yes and no ({fields})")
            if not verdicts:
                continue
            (verdict,) = verdicts
            if not 1 <= number <= count:
                raise VerdictParseError(
                    f"the reply rules on {noun} {number}, but {count} were asked (numbered 1 to {count})"
                )
            if by_id.get(number, (verdict,))[0] != verdict:
                raise VerdictParseError(f"the reply gives both {numbered.yes} and {numbered.no} for {noun} {number}")
            by_id.setdefault(number, (verdict, reasoning_from(item, asked)))
        missing = [str(i) for i in range(1, count + 1) if i not in by_id]
        if missing:
            raise VerdictParseError(
                f"the reply gives no {numbered.yes}/{numbered.no} for {noun}(s) {', '.join(missing)}"
            )
    return [by_id[i] for i in range(1, count + 1)]
