"""One candidate answer found in a reply, how its numbers are read, and how it becomes a [0, 1] score.

Scores are normalized as ``(raw - min) / (max - min)``, clamped and rounded to 6 decimals.  A fraction
counts only when its denominator is the scale maximum (a percent, when the scale starts at 0).
"""

from __future__ import annotations

import math
import re
from typing import Any

from .patterns import install, lazy

# Only used with fullmatch on strings of at most 64 characters.
_NUMERIC_STRING = lazy(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_FRACTION_STRING = lazy(
    r"([-+]?(?:\d{1,15}(?:\.\d{1,15})?|\.\d{1,15}))\s{0,3}"
    r"(?:(?:/|out\s{1,3}of)\s{0,3}(\d{1,15}(?:\.\d{1,15})?)|(%))"
)
# A value after a label: 4, (5), 8/10, 4 out of 5, 75%.  Bounded gaps only.
_NUMBER = r"(?P<num>[-+]?(?:\d{1,15}(?:\.\d{1,12})?|\.\d{1,12}))(?![\d])"
_DENOMINATOR = r"\s{0,2}(?:/|out\s{1,3}of)\s{0,2}(?P<den>\d{1,15}(?:\.\d{1,12})?)(?![\d])"
VALUE = r"(?P<open>[(\[]\s{0,2})?" + _NUMBER + r"(?:" + _DENOMINATOR + r")?(?P<pct>\s{0,2}%)?"
# A fraction only ("8/10"), with the groups of a `VALUE` (``pct`` always empty).
FRACTION = r"(?P<open>[(\[]\s{0,2})?" + _NUMBER + _DENOMINATOR + r"(?P<pct>)"
# "Score: 1-10", "from 1 to 10", "a 3 or 4", "0.0 (poor) to 1.0 (good)": a range or alternatives after a
# number, with at most one short parenthetical (what the range end means) between.
_RANGE_AFTER = lazy(r"(?:[ \t]{0,2}\([^()\n]{0,80}\))?[ \t]{0,2}(?:-|–|to|or|and)[ \t]{0,2}[-+]?\.?\d")


_ARITHMETIC_AFTER = lazy(r"[ \t]{0,2}[+*\u00d7][ \t]{0,2}\(?[ \t]{0,2}\d")


class Found:
    """One candidate answer, before normalization."""

    # A plain class, not a dataclass: see json_scan.Span.
    __slots__ = ("bad_score", "confidence", "den", "fixed", "pct", "raw", "reasoning", "verdict")

    def __init__(
        self,
        *,
        raw: float | None = None,
        den: float | None = None,
        fixed: float | None = None,
        verdict: str | None = None,
        confidence: str | None = None,
        pct: bool = False,
    ) -> None:
        self.raw = raw  # the number as written (numerator of a fraction)
        self.den = den  # denominator of a fraction or 100 for a percent
        self.fixed = fixed  # a normalized score given directly (grade P = 0.5)
        self.verdict = verdict  # "pass" / "fail"
        self.confidence = confidence
        self.reasoning: str | None = None
        self.bad_score = False  # a score field was present but not a number
        self.pct = pct  # the value was written as a percent

    @property
    def usable(self) -> bool:
        return self.raw is not None or self.fixed is not None or self.verdict is not None


Hit = tuple[Found, tuple[int, int]]  # a candidate and where the reply states it


def number_from_json(value: Any) -> tuple[float, float | None] | None:
    """A JSON score value as (number, denominator), or None when it is not numeric."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            f = float(value)
        except (OverflowError, ValueError):
            return None
        return (f, None) if math.isfinite(f) else None
    if isinstance(value, str) and len(s := value.strip()) <= 64:
        if _NUMERIC_STRING.fullmatch(s):
            f = float(s)
            return (f, None) if math.isfinite(f) else None
        m = _FRACTION_STRING.fullmatch(s)
        if m:
            den = 100.0 if m.group(3) else float(m.group(2))
            return (float(m.group(1)), den) if den > 0 else None
    return None


def value_after(text: str, m: re.Match[str]) -> bool:
    """The character after a matched value must end the number (no '4th', '3D', '1.5.2')."""
    end = m.end()
    if end >= len(text):
        return True
    c = text[end]
    # ASCII only: "4th", "3D" are not numbers, but a CJK word may follow a score directly ("[[1]]です", "8点").
    if (c.isascii() and c.isalnum()) or c == "_":
        return False
    if not m.group("den") and not m.group("pct") and _RANGE_AFTER.match(text, end) is not None:
        return False  # "Score: 1-10", "score 1 to 5": the scale, not a score
    if _ARITHMETIC_AFTER.match(text, end) is not None:
        return False  # "Score: 3 + 4 = 7": a term of a sum, not the score
    return not (c == "." and end + 1 < len(text) and text[end + 1].isdigit())  # "1.5.2"


def inside_word(text: str, start: int) -> bool:
    """A number glued to the word before it (``foo2``, ``gpt4``, ``GPT-4``, ``top_5``) is part of a name."""
    if start <= 0:
        return False
    c = text[start - 1]
    if (c.isascii() and c.isalnum()) or c == "_":
        return True  # also "GPT-4" read as the signed number "-4"
    # "gpt-4", "v+2": a hyphen or plus right after a letter or digit.
    return c in "-+" and start > 1 and (text[start - 2].isalnum() or text[start - 2] == "_")


def found_from_value(m: re.Match[str]) -> Found | None:
    """The candidate a matched `VALUE` states: a number, a fraction or a percent."""
    den = float(m.group("den")) if m.group("den") else 100.0 if m.group("pct") else None
    if den is not None and den <= 0:
        return None
    return Found(raw=float(m.group("num")), den=den, pct=bool(m.group("pct")) and not m.group("den"))


def fits_scale(found: Found, scale: tuple[float, float]) -> bool:
    """A fraction counts only against the declared scale: its denominator is the scale maximum
    (a percent is read when the scale starts at 0).  Any other denominator is a per-item score or
    another scale's, not the answer."""
    return found.den in (None, scale[1]) or (found.den == 100.0 and found.pct and scale[0] == 0)


def normalize(found: Found, scale: tuple[float, float]) -> float | None:
    """The candidate's score on [0, 1], or None when it states none."""
    value = unclamped(found, scale)
    return None if value is None else round(min(1.0, max(0.0, value)), 6)


def unclamped(found: Found, scale: tuple[float, float]) -> float | None:
    """The candidate's score as a share of the scale, before clamping (off the scale: below 0 or above 1)."""
    lo, hi = scale
    if found.raw is not None:
        if not fits_scale(found, scale):
            return None  # a fraction on another scale: not this reply's score
        # A percent on a scale starting at 0 is a share of full marks.
        value = found.raw / 100.0 if found.pct and hi != 100.0 else (found.raw - lo) / (hi - lo)
    elif found.fixed is not None:
        value = found.fixed
    elif found.verdict is not None:
        value = 1.0 if found.verdict == "pass" else 0.0
    else:
        return None
    return None if math.isnan(value) else value


# Words in the clause before a score mention that make it not the judge's score.
NEGATION = lazy(
    r"(?<![A-Za-z])(?:not|never|nor|cannot|instead|rather|than|unless|except|reference|example|e\.g)"
    r"(?![A-Za-z])|n't"
)
_REFERENCE = lazy(r"(?<![A-Za-z])(?:reference|example|e\.g)(?![A-Za-z])")
_CLAUSE_END = lazy(r"[.!?;\n](?!\d)")
_FIELD_CLAUSE_END = lazy(r"[.!?;,:\n](?!\d)")

# Right after a score, on its line: a retraction ("No,", "Actually,", "wait,") that leads to another
# number ("The score is 5. No, it is 6."): the judge takes the score back, so it is not the answer.
_RETRACTION = lazy(
    r"[ \t*_.;,!)\]\-\u2013\u2014]{0,6}(?:no|nope|actually|wait|correction|sorry|i[ \t]mean)[ \t]{0,2}"
    r"[,:!\-\u2013\u2014][^\n.!?]{0,40}?(?<![A-Za-z0-9_.])\d"
)


def retracted_after(low: str, end: int) -> bool:
    """Does the judge take back the score that ends at ``end`` for another number?"""
    return _RETRACTION.match(low, end) is not None


def negated_before(text: str, start: int, field: bool = False) -> bool:
    """A negation or reference word earlier in the same clause.

    Prose looks sentence-wide, 60 characters back ("does not fully align with the criteria for a
    score of 5"); a ``Score:`` ``field`` only at the few words right before it ("Reference (Score 5)"),
    so "No issues, Score: 5" stays a score.
    """
    window = text[max(0, start - (24 if field else 60)) : start]
    cut = sentence = 0
    for m in _CLAUSE_END.finditer(window):
        sentence = m.end()
    for m in _FIELD_CLAUSE_END.finditer(window) if field else ():
        cut = m.end()
    if NEGATION.search(window, cut if field else sentence) is not None:
        return True
    # "For example, Score: 1 means ...": a reference word reaches across commas.
    return _REFERENCE.search(window, sentence) is not None


install(globals())  # first uses swap the compiled patterns in (see patterns)
