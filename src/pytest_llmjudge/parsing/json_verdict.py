"""The JSON stages of the funnel: a whole-reply object, a repaired one, or objects found in prose.

A whole-reply object decides alone.  Among objects in prose the first with a score wins, unless it is
quoted or attributed to the graded output: then the first own object wins, and a disagreeing quoted
object before it (or an attributed one of the same shape) makes the reply an error rather than a guess.
"""

from __future__ import annotations

import itertools

from ..errors import VerdictParseError
from .attribution import attributed_to_output, example_cued, quote_hugged
from .candidate import Found, normalize
from .json_fields import read_mapping, read_value
from .json_scan import MAX_JSON_CANDIDATES, RepairBudget, Span, load_json, load_whole, scan_objects
from .patterns import install, lazy
from .prepare import ascii_lower
from .quotes import Quotes

_KEYWORDS = lazy(r"score|rating|pass|verdict|grade|result|fail|answer|correct|success|satisf|met")  # lowered


class JsonOutcome:
    """What the JSON stages found: the chosen candidate and what the later stages need to know."""

    # Plain classes, not dataclasses: see json_scan.Span.
    __slots__ = (
        "bad_score",
        "found",
        "objects",
        "quoted",
        "quotes",
        "span",
        "spans",
        "strategy",
        "truncated",
        "whole",
    )

    def __init__(self) -> None:
        self.found: Found | None = None
        self.strategy = ""
        self.span: Span | None = None
        self.quoted = False  # the chosen object is quoted or attributed content
        self.whole = False  # the reply was one JSON value: it decides alone
        self.bad_score = False
        self.truncated = False
        self.spans: tuple[tuple[int, int], ...] = ()  # every object found in the prose
        self.objects: list[Span] | None = None  # the scan's object spans, for quote pairing
        self.quotes: Quotes | None = None  # built when an object needed it


class Candidate:
    """A JSON object's reading, with where it stands: the judge's own, quoted, or attributed."""

    __slots__ = ("attributed", "found", "quoted", "span")

    def __init__(self, found: Found, quoted: bool = False, attributed: bool = False, span: Span | None = None) -> None:
        self.found = found
        self.quoted = quoted  # inside quotation marks, hugged by one, or an example
        self.attributed = attributed  # introduced as what the graded output says
        self.span = span

    @property
    def own(self) -> bool:
        return not (self.quoted or self.attributed)


def _choose(cands: list[Candidate], scale: tuple[float, float]) -> Candidate | None:
    """Which JSON candidate is the judge's own verdict.

    All agree: the first own one (else the first).  Otherwise the first own candidate
    (neither quoted nor attributed) wins over everything after it; a candidate before
    it that disagrees must be attributed and bare (no reasoning) while the own one has
    reasoning, else the reply is an error.
    """
    if not cands:
        return None
    own = next((c for c in cands if c.own), None)
    decision0 = _decision(cands[0].found, scale)
    if all(_decision(c.found, scale) == decision0 for c in cands[1:]):
        return own or cands[0]
    if own is None:
        raise VerdictParseError(
            "the reply holds several JSON verdicts with different scores, all of them quoted"
            " content (an echoed example or the graded output); none is the judge's own"
        )
    decision_own = _decision(own.found, scale)
    for c in cands:
        if c is own:
            break
        if _decision(c.found, scale) == decision_own:
            continue
        if c.quoted:
            raise VerdictParseError(
                "the reply holds several JSON verdicts with different scores, and one before the"
                " judge's apparent own is quoted content (an echoed example or the graded output);"
                " cannot tell which is the judge's own"
            )
        if c.found.reasoning is not None or own.found.reasoning is None:
            raise VerdictParseError(
                "the reply holds several JSON verdicts with different scores, and one attributed"
                " to the graded output has the same shape as the judge's apparent own;"
                " cannot tell which is the judge's own"
            )
    return own


def _check_siblings(cands: list[Candidate], scale: tuple[float, float]) -> None:
    """Elements of one JSON array are parallel items (one per criterion, per sample): when they
    disagree, nothing makes one of them the answer, so the reply is an error, not a first pick."""
    if len({_decision(c.found, scale) for c in cands}) > 1:
        raise VerdictParseError(
            "the reply is a JSON array of several verdicts with different scores; nothing says which"
            " one is the answer (per-item scores are not a single score)"
        )


_ARRAY_GAP = lazy(r"\s{0,64},\s{0,64}")


def _check_array_siblings(text: str, cands: list[Candidate], scale: tuple[float, float]) -> None:
    """Objects in prose that sit side by side in one array (``{...}, {...}``) are siblings too."""
    for a, b in itertools.pairwise(cands):
        if a.span is None or b.span is None or a.span is b.span:
            continue
        if _ARRAY_GAP.fullmatch(text, a.span.end, b.span.start) and _decision(a.found, scale) != _decision(
            b.found, scale
        ):
            _check_siblings([a, b], scale)


def _decision(found: Found, scale: tuple[float, float]) -> tuple[float | None, str | None]:
    """What a candidate decides (normalized score, verdict): candidates that agree on it agree."""
    return (normalize(found, scale), found.verdict)


def json_stage(text: str, scale: tuple[float, float], budget: RepairBudget, verdict: bool | None = None) -> JsonOutcome:
    """Stages 1-3: the whole reply as JSON, repaired, then the objects inside the prose (``verdict``: whether
    a pass/fail verdict was asked, see `read_mapping`)."""
    out = JsonOutcome()
    value = load_whole(text)
    if value is not None:
        whole_cands = [Candidate(f) for f in read_value(value, verdict) if f.usable]
        if isinstance(value, list):
            _check_siblings(whole_cands, scale)
        chosen = _choose(whole_cands, scale)
        out.whole = isinstance(value, dict) or bool(whole_cands)
        if chosen:
            out.found, out.strategy = chosen.found, "json"
            return out
        if isinstance(value, dict):
            out.bad_score = read_mapping(value, 0, verdict).bad_score
            return out
    spans, out.truncated = scan_objects(text)
    out.objects = spans
    if not spans:
        return out
    low = ascii_lower(text)
    lead = len(text) - len(text.lstrip())
    tail = len(text.rstrip())
    cands: list[Candidate] = []
    quotes: Quotes | None = None
    examined = 0
    single_whole = False
    for span in spans:
        if examined >= MAX_JSON_CANDIDATES:
            break
        if _KEYWORDS.search(low, span.start, span.end) is None:
            continue  # cheap filter: no score-like key, not a verdict object
        examined += 1
        value, repaired = load_json(text[span.start : span.end], budget)
        read = read_value(value, verdict)
        out.bad_score = out.bad_score or any(f.bad_score for f in read)
        found_list = [f for f in read if f.usable]
        is_whole = len(spans) == 1 and _fenced_whole(text, span, lead, tail)
        if is_whole and isinstance(value, dict) and not found_list:
            out.whole = True  # the reply is one (repaired) object without a score
            return out
        if not found_list:
            continue
        quoted = attributed = False
        if is_whole:
            single_whole = True
            out.strategy = "json-repair" if repaired else "json"
        else:
            if quotes is None:
                quotes = Quotes(text, spans)
            quoted = quotes.inside(span.start) or quote_hugged(text, span) or example_cued(text, span.start)
            attributed = attributed_to_output(low, span)
        cands.extend(Candidate(f, quoted, attributed, span) for f in found_list)
    _check_array_siblings(text, cands, scale)
    chosen = _choose(cands, scale)
    if chosen is None:
        return out
    out.spans = tuple((s.start, s.end) for s in spans)
    out.found, out.quoted, out.span, out.quotes = chosen.found, not chosen.own, chosen.span, quotes
    if single_whole:
        out.whole = True
    else:
        out.strategy = "json-fragment"
    return out


def _fenced_whole(text: str, span: Span, lead: int, tail: int) -> bool:
    """Does the span cover the whole reply, apart from whitespace and code fences?"""
    before = text[lead : span.start].strip()
    after = text[span.end : tail].strip()
    return before in ("", "```", "```json", "```JSON") and after in ("", "```")


install(globals())  # first uses swap the compiled patterns in (see patterns)
