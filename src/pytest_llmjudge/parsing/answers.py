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

import itertools
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from ..errors import VerdictParseError
from .candidate import VALUE, Found, fits_scale, found_from_value, normalize
from .labels import MARKED_FINAL, WORD_VERDICTS, YES_NO
from .patterns import install, lazy, line_end, line_start
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
_WIDE = lazy("[\uff01-\uff5e]")


# -- finding declared words in a reply -------------------------------------------------------------------

# Labels after which a word is the judge's answer, in the languages of the judges met; then a colon or "is".
_ANSWER_LABELS = (
    r"(?:(?:my|the|final|overall)[ \t]{1,3}){0,2}(?:output|choice|answer|verdict|decision|selection|result|judge?ment"
    r"|winner|preference|rating)|i[ \t]{1,3}(?:would[ \t]{1,3})?(?:choose|select|pick|output|answer|go[ \t]with)"
    r"|(?:最終的な|最後の行の)?(?:出力|選択|回答|評価|判定|結論|判断)|最终(?:选择|答案|结果)?|选择|答案|结果|输出"
    r"|(?:최종[ \t]?)?(?:선택|답변|결과|출력|판정)"
)
_LABEL_THEN = lazy(
    r"(?:"
    + _ANSWER_LABELS
    + r")[ \t*_]{0,3}(?:[:：=]|[ \t]is(?:[ \t]{1,3}that)?|は|(?<=[a-z])(?=[ \t]))[ \t*_\"'`]{0,4}"
    r"(?:\n[ \t]*){0,3}[ \t*_\"'`(\[]{0,4}$"
)
_CLAUSE_AFTER = lazy(r"[ \t*_\"'`)\]]{0,3}(?:[.,;:!。、]|[ \t]{1,3}(?:because|since|as|-|\u2013|\u2014)(?![a-z]))")
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
    wide = not text.isascii() and _WIDE.search(text) is not None
    low = ascii_lower(text.translate(_FULL_WIDTH) if wide else text)
    spots: list[tuple[int, int, str]] = []
    seen: set[int] = set()
    bounds = (len(low) - len(low.lstrip()), len(low.rstrip()))  # where the reply's own text starts and ends
    for word, meaning in words.items():
        if not word:
            continue
        pattern = _word_pattern(word)
        # The first 1,000 places, and the reply's last lines (where an answer most often stands) in any case.
        head = itertools.islice(pattern.finditer(low), 1000)
        for m in itertools.chain(head, pattern.finditer(low, max(0, bounds[1] - 2048))):
            start, end = m.start(), m.end()
            if start in seen or not _stands(low, start, end, first_line, bounds):
                continue
            seen.add(start)
            spots.append((start, end, meaning))
    spots.sort()
    return spots


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _word_pattern(word: str) -> re.Pattern[str]:
    found = _PATTERNS.get(word)
    if found is None:
        # A word of letters or digits is never part of a longer one ("12", "gpt4"): those places are not even looked at.
        # (The character before it is checked in `_stands`: a leading look-behind would cost the fast literal scan.)
        edge = word[-1:].isascii() and word[-1:].isalnum()
        found = _PATTERNS[word] = re.compile(re.escape(word) + ("(?![0-9a-z_])" if edge else ""))
        if len(_PATTERNS) > 256:  # a process judging with many templates: keep the cache small
            _PATTERNS.pop(next(iter(_PATTERNS)))
    return found


# What every answer label holds: a colon or "is", or an answering verb.  Checked before the label pattern runs, so
# that a reply full of the word costs a few substring tests per place, not a regular-expression search.
_LABEL_HINTS = (":", "\uff1a", "=", " is", "\u306f", "choose", "select", "pick", "output", "answer", "go with")


def _labelled(low: str, start: int, end: int) -> bool:
    """Does an answer label end right at ``end`` ("Output:", "I would choose:" and blank lines, "最終的な評価:")?"""
    window = low[start:end]
    return any(h in window for h in _LABEL_HINTS) and _LABEL_THEN.search(window) is not None


def _glued(c: str) -> bool:
    """Would this character, next to the word, make it part of a longer name or number?"""
    return c.isalnum() or c in "_/%-+"


def _stands(low: str, start: int, end: int, first_line: bool, bounds: tuple[int, int]) -> bool:
    """Does the word at [start, end) stand as the answer (see `declared_spots`)?  ``bounds``: where the reply's
    text starts and ends (checked in constant time: a reply full of the word stays linear)."""
    before = low[start - 1] if start > 0 else " "
    after = low[end] if end < len(low) else " "
    if _glued(before) and _VERB_AFTER.match(low, end) is None:
        return False  # part of a longer name or number ("Assistant 1", "12")
    begins, ends = line_start(low, start), line_end(low, end)
    labelled = _labelled(low, max(begins, start - 80), start)
    if after in ".," and not labelled and low[end + 1 : ends].strip(_DECOR):
        return False  # "1.5", "1. First point": a number or a list marker
    if _VERB_AFTER.match(low, end) is not None and not _glued(before):
        return True
    if _glued(before) or (_glued(after) and after not in "-"):
        return False
    head, tail = low[begins:start], low[end:ends]
    if low[max(0, start - 7) : start] == "\\boxed{" and tail.startswith("}"):
        return True
    if tail.strip(_DECOR):
        # Words after it on its line: a sentence, not the answer, unless a label gives it and a clause boundary ends
        # it ("Output: 2 because ...", "I choose 1, since ...").
        return labelled and _CLAUSE_AFTER.match(low, end) is not None
    if not head.strip(_DECOR):  # the word alone on its line
        last_line = ends >= bounds[1]
        first = begins <= bounds[0]
        return last_line or (first and first_line) or _labelled(low, max(0, begins - 160), begins)
    if labelled:
        return True  # "Output: 2", "最終的な評価: 3"
    # The reasoning's last sentence, then the word: "…アシスタント1の回答を選択します。1" (the reply's end).
    stripped = head.rstrip(_DECOR)
    return bool(stripped) and stripped[-1] in _SENTENCE_END and ends >= bounds[1]


# -- a verdict or a score where the template says it sits ------------------------------------------------


def declared_found(text: str, answer: Answer, scale: tuple[float, float]) -> tuple[Found, tuple[int, int]] | None:
    """The verdict or score the reply gives in the declared form: its declared words (see `declared_spots`), the
    declared tag's value, or the value after the declared label; several that disagree are no answer (unless the
    ones marked final agree).  None when the reply does not use the declared form."""
    low = ascii_lower(text)
    found: list[tuple[Found, tuple[int, int]]] = []
    if answer.words:
        for start, end, meaning in declared_spots(text, answer.meanings(VERDICT)):
            found.append((Found(verdict=meaning), (start, end)))
    for where, pattern in ((answer.tag, _tag_pattern), (answer.label, _label_pattern)):
        if where is None:
            continue
        for count, m in enumerate(pattern(where).finditer(low)):
            if count >= 2000:
                break
            said = _value_of(m.group("value"), answer, scale)
            if said is not None:
                found.append((said, m.span()))
    if not found:
        return None
    decisions = {(f.verdict, normalize(f, scale)) for f, _ in found}
    if len(decisions) > 1:
        marked = [x for x in found if MARKED_FINAL.search(low, line_start(low, x[1][0]), x[1][1]) is not None]
        if not marked or len({(f.verdict, normalize(f, scale)) for f, _ in marked}) > 1:
            raise VerdictParseError(
                "the reply gives its answer in the template's declared form more than once, the answers disagree,"
                " and none is marked final"
            )
        return marked[-1]
    return found[-1]


def _tag_pattern(tag: str) -> re.Pattern[str]:
    name = re.escape(ascii_lower(tag))
    return _compiled(r"<" + name + r"(?:[ \t][^<>\n]{0,80})?>\s{0,20}(?P<value>[^<>]{1,64}?)\s{0,20}</" + name + ">")


def _label_pattern(label: str) -> re.Pattern[str]:
    words = r"[ \t]{1,3}".join(re.escape(w) for w in ascii_lower(label).split())
    return _compiled(
        r"(?<![a-z0-9_])" + words + r"[ \t*_]{0,3}(?:[:：=][ \t*_]{0,4}|(?=[ \t]))[ \t]{0,3}(?P<value>[^\n]{1,64})"
    )


_VALUE_WORD = lazy(r"[ \t*_\"'`\[(]{0,4}(?P<v>[^\s*_\"'`.,;:!)\]]{1,40})")


def _value_of(value: str, answer: Answer, scale: tuple[float, float]) -> Found | None:
    """What a declared tag or label holds: a declared word, a verdict word, a boolean, or a number on the scale."""
    m = _VALUE_WORD.match(value)
    if m is None:
        return None
    word = fold(m.group("v"))
    if answer.words:
        meanings = answer.meanings(VERDICT)
        whole = fold(value.strip().strip(_DECOR + ".,;:!"))  # a declared word of several words: "NOT OK"
        meaning = meanings.get(whole) or meanings.get(word)
        return None if meaning is None else Found(verdict=meaning)
    said = {"true": "pass", "false": "fail", "pass": "pass", "fail": "fail", "passed": "pass", "failed": "fail"}
    if word in said or word in _VERDICT_WORDS:
        return Found(verdict=said.get(word) or _VERDICT_WORDS[word])
    num = _NUMBER_VALUE.match(value)
    if num is None:
        return None
    found = found_from_value(num)
    return found if found is not None and fits_scale(found, scale) else None


_NUMBER_VALUE = lazy(r"[ \t*_\"'`]{0,4}" + VALUE + r"(?![\d.])")
_VERDICT_WORDS = {**WORD_VERDICTS, **YES_NO}

_COMPILED: dict[str, re.Pattern[str]] = {}


def _compiled(source: str) -> re.Pattern[str]:
    found = _COMPILED.get(source)
    if found is None:
        found = _COMPILED[source] = re.compile(source)
        if len(_COMPILED) > 256:
            _COMPILED.pop(next(iter(_COMPILED)))
    return found


install(globals())  # first uses swap the compiled patterns in (see patterns)
