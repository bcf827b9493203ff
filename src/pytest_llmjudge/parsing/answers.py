"""Answers a template declares: the words its judge answers with, and where the answer sits.

A prompt ported from another tool asks for its own vocabulary ("output 1, 2 or 3", "\\boxed{A} for correct",
"<is_correct>true</is_correct>", ``{"relevancy": 4}``).  `Answer` says so once; the parser reads those forms
first, and the rest of its vocabulary must agree with them.  A declared word counts where it stands as the
answer: alone on the reply's first or last line, after a label (``Output: 2``, ``I would choose:`` and the
word on a line of its own), after the reasoning's last sentence (``…選択します。1``), with an answering verb
(``3を出力します``), in the declared tag, in ``\\boxed{}``, or as the declared JSON field.  Anywhere else (a
list number, "Assistant 1", a fraction) it is not the answer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from .patterns import install, lazy
from .prepare import ascii_lower

# What a declared word may mean, by the kind of question.
COMPARISON = {"first": "A", "second": "B", "tie": "tie"}
VERDICT = {"pass": "pass", "fail": "fail"}

_NAME = lazy(r"[A-Za-z_][A-Za-z0-9_.\-]{0,63}")


class Answer:
    """What a template of your own asks its judge to answer with (see the docs' "Templates that declare their
    answers").

    ``words``: each word the judge may answer with and what it means ("first", "second" or "tie" for a
    comparison; "pass" or "fail" for a verdict).  ``tag``: the XML tag the answer sits in (``is_correct`` for
    ``<is_correct>true</is_correct>``).  ``field``: the JSON field it is under (``relevancy``).  ``label``: the
    label it follows (``Total rating``).  Give any of them; nothing declared is never read as an answer.
    """

    __slots__ = ("field", "label", "tag", "words")

    def __init__(
        self,
        words: Mapping[str, str] | None = None,
        *,
        tag: str | None = None,
        field: str | None = None,
        label: str | None = None,
    ) -> None:
        if words is not None and not isinstance(words, Mapping):
            raise TypeError(f"words must be a mapping of answer word -> meaning, not {type(words).__name__}")
        cleaned: dict[str, str] = {}
        for word, meaning in (words or {}).items():
            if not isinstance(word, str) or not word.strip() or len(word) > 40 or "\n" in word:
                raise ValueError(f"answer word {word!r} must be a short non-empty string on one line")
            if not isinstance(meaning, str):
                raise ValueError(f"the meaning of answer word {word!r} must be a string, not {meaning!r}")
            key = fold(word.strip())
            if key in cleaned and cleaned[key] != meaning.strip().lower():
                raise ValueError(f"answer word {word!r} is declared twice with different meanings")
            cleaned[key] = meaning.strip().lower()
        for what, value in (("tag", tag), ("field", field)):
            if value is not None and (not isinstance(value, str) or _NAME.fullmatch(value.strip()) is None):
                raise ValueError(f"{what} must be a name of letters, digits, '_', '-' or '.', not {value!r}")
        if label is not None and (not isinstance(label, str) or not label.strip() or len(label) > 60 or "\n" in label):
            raise ValueError(f"label must be a short non-empty string on one line, not {label!r}")
        self.words = cleaned
        self.tag = None if tag is None else tag.strip()
        self.field = None if field is None else field.strip()
        self.label = None if label is None else label.strip()
        if not (self.words or self.tag or self.field or self.label):
            raise ValueError("an Answer declares at least one of words, tag, field or label")

    def describe(self) -> dict[str, Any]:
        """JSON-safe, for a rubric's parameters (so part of its keys)."""
        out: dict[str, Any] = {}
        if self.words:
            out["words"] = dict(sorted(self.words.items()))
        for name in ("tag", "field", "label"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out

    def meanings(self, allowed: Mapping[str, str]) -> dict[str, str]:
        """The declared words with their meanings translated through ``allowed``; ValueError on another one."""
        out: dict[str, str] = {}
        for word, meaning in self.words.items():
            if meaning not in allowed:
                raise ValueError(f"answer word {word!r} means {meaning!r}; use one of {', '.join(allowed)}")
            out[word] = allowed[meaning]
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Answer) and self.describe() == other.describe()

    def __hash__(self) -> int:
        return hash(repr(self.describe()))

    def __repr__(self) -> str:
        return "Answer(" + ", ".join(f"{k}={v!r}" for k, v in self.describe().items()) + ")"


def answer_of(value: Any, allowed: Mapping[str, str] | None) -> Answer:
    """An `Answer` from what a rubric was given: an `Answer`, or a mapping of words (the shorthand).  Its words'
    meanings must be among ``allowed`` (None: no words may be declared).  ValueError or TypeError otherwise."""
    answer = value if isinstance(value, Answer) else Answer(value) if isinstance(value, Mapping) else None
    if answer is None:
        raise TypeError(f"expected a mapping of answer word -> meaning or an Answer, got {type(value).__name__}")
    if answer.words:
        if allowed is None:
            raise ValueError("this kind reads a score: declare where it sits (tag, field or label), not words")
        answer.meanings(allowed)
    return answer


def fold(text: str) -> str:
    """A word as declared words are compared: compatibility-normalized (full-width digits), ASCII lower-cased."""
    return ascii_lower(unicodedata.normalize("NFKC", text))


# Full-width ASCII (\uff01-\uff5e) as ASCII, one character for one: judges of Japanese prompts answer "１".
_FULL_WIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}


# -- finding declared words in a reply -------------------------------------------------------------------

# Labels after which a word is the judge's answer, in the languages of the judges met; then a colon or "is".
_ANSWER_LABELS = (
    r"(?:(?:my|the|final|overall)[ \t]{1,3}){0,2}(?:output|choice|answer|verdict|decision|selection|result|judge?ment"
    r"|winner|preference|rating)|i[ \t]{1,3}(?:would[ \t]{1,3})?(?:choose|select|pick|output|answer|go[ \t]with)"
    r"|(?:最終的な|最後の行の)?(?:出力|選択|回答|評価|判定|結論|判断)|最终(?:选择|答案|结果)?|选择|答案|结果|输出"
    r"|(?:최종[ \t]?)?(?:선택|답변|결과|출력|판정)"
)
_LABEL_THEN = lazy(
    r"(?:" + _ANSWER_LABELS + r")[ \t*_]{0,3}(?:[:：=]|[ \t]is(?:[ \t]{1,3}that)?|は)[ \t*_\"'`]{0,4}(?:\n[ \t]*){0,3}"
    r"[ \t*_\"'`(\[]{0,4}$"
)
# An answering verb right after the word: "3を出力します", "1を選びます", "2번을 선택".
_VERB_AFTER = lazy(r"[ \t]{0,2}(?:を|번을|번)?[ \t]{0,2}(?:出力|選|選択|선택|출력)")
_SENTENCE_END = "。.!！?？"
_DECOR = " \t*_\"'`#>()[]【】「」."


def declared_spots(text: str, words: Mapping[str, str], *, first_line: bool = True) -> list[tuple[int, int, str]]:
    """Where the reply gives a declared word as its answer: (start, end, meaning), in reply order.

    ``text`` is the reply as read (copies of the prompt masked).  A word counts alone on the first (with
    ``first_line``) or last non-empty line, after an answer label (on its line or on the next lines),
    right after the last sentence of the reasoning, before an answering verb, or inside ``\\boxed{}``.
    """
    if not words:
        return []
    low = ascii_lower(text.translate(_FULL_WIDTH) if not text.isascii() else text)
    spots: list[tuple[int, int, str]] = []
    seen: set[int] = set()
    for word, meaning in words.items():
        if not word:
            continue
        pattern = _word_pattern(word)
        count = 0
        for m in pattern.finditer(low):
            count += 1
            if count > 2000:
                break
            start, end = m.start(), m.end()
            if start in seen or not _stands(text, low, start, end, first_line):
                continue
            seen.add(start)
            spots.append((start, end, meaning))
    spots.sort()
    return spots


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _word_pattern(word: str) -> re.Pattern[str]:
    found = _PATTERNS.get(word)
    if found is None:
        found = _PATTERNS[word] = re.compile(re.escape(word))
        if len(_PATTERNS) > 256:  # a process judging with many templates: keep the cache small
            _PATTERNS.pop(next(iter(_PATTERNS)))
    return found


def _glued(c: str) -> bool:
    """Would this character, next to the word, make it part of a longer name or number?"""
    return c.isalnum() or c in "_/%-+"


def _stands(text: str, low: str, start: int, end: int, first_line: bool) -> bool:
    """Does the word at [start, end) stand as the answer (see `declared_spots`)?"""
    before = low[start - 1] if start > 0 else " "
    after = low[end] if end < len(low) else " "
    if after in ".,":  # "1.5", "1. First point": a number or a list marker, unless the line ends there
        rest = low[end + 1 : low.find("\n", end) if "\n" in low[end:] else len(low)]
        if rest.strip(_DECOR):
            return False
    if _VERB_AFTER.match(low, end) is not None and not _glued(before):
        return True
    if _glued(before) or (_glued(after) and after not in "-"):
        return False
    line_start = low.rfind("\n", 0, start) + 1
    line_end = low.find("\n", end)
    line_end = len(low) if line_end == -1 else line_end
    head, tail = low[line_start:start], low[end:line_end]
    if low[max(0, start - 7) : start] == "\\boxed{" and tail.startswith("}"):
        return True
    if tail.strip(_DECOR):
        return False  # words after it on its line: a sentence, not the answer
    if not head.strip(_DECOR):  # the word alone on its line
        last_line = not low[line_end:].strip()
        first = not low[:line_start].strip()
        return (
            last_line
            or (first and first_line)
            or _LABEL_THEN.search(low, max(0, line_start - 160), line_start) is not None
        )
    if _LABEL_THEN.search(low, max(line_start, start - 80), start) is not None:
        return True  # "Output: 2", "最終的な評価: 3"
    # The reasoning's last sentence, then the word: "…アシスタント1の回答を選択します。1" (the reply's end).
    stripped = head.rstrip(_DECOR)
    return bool(stripped) and stripped[-1] in _SENTENCE_END and not low[line_end:].strip()


install(globals())  # first uses swap the compiled patterns in (see patterns)
