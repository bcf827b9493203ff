"""The three kinds of assessment question, their written forms, and the check each generated question passes.

    binary           Does the answer cite only the listed sources? (Pass = ..., Fail = ...)
    scaled           How complete is the summary? (1 = ..., 5 = ...)        anchors 1 and 5, any between
    multiple-choice  Which tone does the reply take? (A = ..., B = ..., C = ...; Pass = A, B)

A question passes the check when it is one question (one "?", ending the question part), followed by
its criterion in its kind's form, and is no longer than `MAX_QUESTION_CHARS`.  Pure functions, no I/O.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

KINDS = ("binary", "scaled", "multiple-choice")
MAX_QUESTION_CHARS = 600  # a single-focus question and its criterion fit in far less
SCALE = (1, 5)

_SPACE = re.compile(r"\s+")
# The question (up to its last "?") and the criterion in the closing parentheses.
_FORM = re.compile(r"(?P<question>.*\?)\s*\((?P<criterion>[^()]*)\)")
# A labelled part of a criterion starts the criterion or follows a comma or semicolon: "Pass = ...".
_LABELS = {
    "binary": re.compile(r"(?:^|[,;])\s*\b(?i:(pass|fail))\s*[=:]\s*"),
    "scaled": re.compile(r"(?:^|[,;])\s*\b(\d{1,2})\s*[=:]\s*"),
    "multiple-choice": re.compile(r"(?:^|[,;])\s*\b([A-Z]|(?i:pass(?:ing)?))\s*[=:]\s*"),
}
_CHOICE_SEPARATORS = re.compile(r"\s*(?:,|/|&|\band\b|\bor\b|\s)\s*", re.IGNORECASE)
_WORDS = re.compile(r"[^\w]+")


@dataclass(frozen=True)
class Dropped:
    """A question the model wrote that failed the check, and why."""

    question: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"question": self.question, "reason": self.reason}


def _parts(criterion: str, kind: str) -> list[tuple[str, str]] | None:
    """The criterion's (label, text) parts, or None when text comes before the first label."""
    pieces = _LABELS[kind].split(criterion.strip())
    if pieces[0].strip() or len(pieces) < 3:
        return None
    return [(pieces[i], pieces[i + 1].strip()) for i in range(1, len(pieces), 2)]


def _binary(parts: list[tuple[str, str]]) -> str | None:
    labels = [label.lower() for label, _ in parts]
    if sorted(labels) != ["fail", "pass"]:
        return "the criterion must give Pass = ... and Fail = ..., once each"
    return None


def _scaled(parts: list[tuple[str, str]]) -> str | None:
    numbers = [int(label) for label, _ in parts]
    low, high = SCALE
    if numbers[0] != low or numbers[-1] != high or any(b <= a for a, b in itertools.pairwise(numbers)):
        return f"the criterion must anchor the scale from {low} = ... to {high} = ..., in increasing order"
    return None


def _multiple_choice(parts: list[tuple[str, str]]) -> str | None:
    *options, (last, passing) = parts
    letters = [label for label, _ in options]
    if not last.lower().startswith("pass") or len(options) < 2:
        return "the criterion must list at least two options (A = ..., B = ...) and then Pass = <the passing options>"
    if letters != [chr(ord("A") + i) for i in range(len(letters))]:
        return "the options must be lettered A, B, C, ... in order"
    chosen = {c for c in _CHOICE_SEPARATORS.split(passing) if c}
    if not chosen or not chosen <= set(letters):
        return f"Pass = must name options among {', '.join(letters)}"
    if chosen == set(letters):
        return "every option passes: the question cannot fail"
    return None


_FORM_CHECKS = {"binary": _binary, "scaled": _scaled, "multiple-choice": _multiple_choice}


def check_question(text: str, kind: str) -> str | None:
    """Why `text` is not one well-formed question of `kind` (see the module docstring), or None when it is."""
    if len(text) > MAX_QUESTION_CHARS:
        return f"longer than {MAX_QUESTION_CHARS} characters: not a single-focus question"
    match = _FORM.fullmatch(text)
    if match is None:
        return "not in the form '<question>? (<criterion>)'"
    question = match.group("question")
    if question.count("?") > 1:
        return "more than one question"
    if len(_WORDS.sub(" ", question).split()) < 3:
        return "the question is too short to ask anything"
    parts = _parts(match.group("criterion"), kind)
    if parts is None or any(not part for _, part in parts):
        return f"the criterion is not in the {kind} form"
    return _FORM_CHECKS[kind](parts)


def normalized(text: str) -> str:
    """The question part of `text`, lower-cased, with punctuation and spacing evened out: what duplicates share."""
    match = _FORM.fullmatch(text)
    question = match.group("question") if match else text
    return " ".join(_WORDS.sub(" ", question.casefold()).split())


def select_questions(items: Iterable[object], kind: str, n: int) -> tuple[list[str], list[Dropped]]:
    """The first `n` well-formed, distinct questions among what the model wrote, and the rest with reasons."""
    kept: list[str] = []
    dropped: list[Dropped] = []
    seen: dict[str, int] = {}
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("question"), str):
            item = item["question"]  # {"question": "..."} items: the text is what counts
        if not isinstance(item, str):
            dropped.append(Dropped(repr(item)[:200], "not a question (a string)"))
            continue
        text = _SPACE.sub(" ", item).strip()
        reason = check_question(text, kind)
        if reason is None:
            first = seen.get(normalized(text))
            if first is not None:
                reason = f"a duplicate of question {first}"
            elif len(kept) >= n:
                reason = f"more than the {n} questions asked for"
        if reason is not None:
            dropped.append(Dropped(text, reason))
            continue
        kept.append(text)
        seen[normalized(text)] = len(kept)
    return kept, dropped
