"""JSON verdicts: reading an object's fields, and choosing the judge's own object among those in a reply.

Field names are compared lower-cased with spaces and hyphens as underscores; when the top level has no
score, the first nested object with one counts (per-model sections).  A whole-reply object decides
alone.  Among objects in prose the first with a score wins, unless it is quoted or attributed to the
graded output: then the first own object wins, and a disagreeing quoted object before it (or an
attributed one of the same shape) makes the reply an error rather than a guess.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import VerdictParseError
from .answers import Answer
from .candidate import Found, normalize, number_from_json
from .json_scan import MAX_JSON_CANDIDATES, RepairBudget, Span, load_json, load_whole, scan_objects
from .labels import CONFIDENCE_WORDS, GRADE_LETTERS, WORD_VERDICTS, YES_NO
from .patterns import install, lazy, line_start
from .prepare import ascii_lower
from .quotes import Skip, attributed_to_output, example_cued, quote_hugged

_SCORE_FIELDS = (
    "score", "rating", "overall_score", "final_score", "total_score", "overall_rating", "final_rating", "grade",
    "result", "points",
)  # fmt: skip
_VERDICT_FIELDS = (
    "pass", "passed", "verdict", "result", "decision", "outcome", "judgment", "judgement", "grade", "status",
)  # fmt: skip
# A JSON boolean under a name that asks "did it pass / is it correct / is the criterion met"
# (`eval_passed`, `is_correct`, `criteria_met`, a rubric item's `answer`) is a pass/fail verdict.
# Only these affirmative names: `is_toxic: true` or `hallucination: true` mean the opposite.
_BOOLEAN_VERDICT_WORDS = frozenset([
    "pass", "passed", "passes", "passing", "correct", "success", "successful", "succeeded", "met", "meets",
    "satisfied", "answer", "verdict", "valid",
])  # fmt: skip
REASON_FIELDS = (
    "reasoning", "reason", "explanation", "rationale", "feedback", "justification", "reasons", "critique",
    "analysis", "comment", "comments", "evaluation",
)  # fmt: skip
_TRUE_WORDS = {"true", "pass", "passed", "success", "succeeded"}
_FALSE_WORDS = {"false", "fail", "failed", "failure"}


def reasoning_in(fields: Mapping[str, Any]) -> str | None:
    """The first reasoning field that holds text (a string or a list of strings), or None."""
    for name in REASON_FIELDS:
        value = fields.get(name)
        if isinstance(value, str):
            return value.strip()
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return "\n".join(v.strip() for v in value)
    return None


def fields_of(obj: Mapping[Any, Any]) -> dict[str, Any]:
    """The object's string-named fields, names lower-cased with spaces and hyphens as underscores
    (the first of two fields that normalize alike wins)."""
    fields: dict[str, Any] = {}
    for k, v in obj.items():
        if isinstance(k, str):
            fields.setdefault(k.strip().lower().replace(" ", "_").replace("-", "_"), v)
    return fields


def _yes_no(word: str) -> str | None:
    """'yes' / 'no' (or Y / N), alone or leading a sentence ("No, this is off-topic."), as a verdict."""
    i = next((i for i, c in enumerate(word) if not c.isalpha()), len(word))  # where the first word ends
    return YES_NO.get(word[:i]) if i == len(word) or word[i] in ",.;:!-— " else None


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
    # A boolean field whose name's last word says pass/fail ("is_correct") states a verdict.
    booleans = [n for n, v in fields.items() if isinstance(v, bool) and n.rsplit("_", 1)[-1] in _BOOLEAN_VERDICT_WORDS]
    verdict_fields = (*_VERDICT_FIELDS, *booleans, *(("value",) if verdict is not False else ()))
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
            # Verdict words such as "correct" count only where a pass/fail verdict was asked.
            said = "pass" if word in _TRUE_WORDS else "fail" if word in _FALSE_WORDS else None
            found.verdict = said or (WORD_VERDICTS.get(word) if verdict else None)
            if found.verdict is not None or word == "partial":  # partial: neither pass nor fail
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


_KEYWORDS = lazy(r"score|rating|pass|verdict|grade|result|fail|answer|correct|success|satisf|met")  # lowered


class JsonOutcome:
    """What the JSON stages found: the chosen candidate and what the later stages need to know."""

    __slots__ = ("bad_score", "found", "objects", "quoted", "spans", "strategy", "truncated", "whole")

    def __init__(self) -> None:
        self.found: Found | None = None
        self.strategy = ""
        self.quoted = False  # the chosen object is quoted or attributed content
        self.whole = False  # the reply was one JSON value: it decides alone
        self.bad_score = False
        self.truncated = False
        self.spans: tuple[tuple[int, int], ...] = ()  # every object found in the prose
        self.objects: list[Span] | None = None  # the scan's object spans, for quote pairing


class Candidate:
    """A JSON object's reading, with where it stands: the judge's own, quoted, or attributed."""

    __slots__ = ("found", "own", "quoted", "span")

    def __init__(self, found: Found, span: Span, quoted: bool = False, attributed: bool = False) -> None:
        self.found = found
        self.span = span
        self.quoted = quoted  # inside quotation marks, hugged by one, or an example
        self.own = not (quoted or attributed)  # attributed: introduced as what the graded output says


def _choose(cands: list[Candidate], scale: tuple[float, float], low: str = "") -> Candidate | None:
    """Which JSON candidate is the judge's own verdict.

    All agree: the first own one (else the first).  One marked final wins over drafts; own verdicts that
    disagree (pass and fail) with none marked final are an error.  Otherwise the first own candidate
    (neither quoted nor attributed) wins over everything after it; a candidate before
    it that disagrees must be attributed and bare (no reasoning) while the own one has
    reasoning, else the reply is an error.
    """
    if len(cands) < 2:  # none, or the one (most replies): nothing to weigh
        return cands[0] if cands else None
    own = next((c for c in cands if c.own), None)
    decision0 = _decision(cands[0].found, scale)
    if all(_decision(c.found, scale) == decision0 for c in cands[1:]):
        return own or cands[0]
    if low:
        marks = [revision_mark(low, c.span.start) for c in cands]
        finals = [c for c, mark in zip(cands, marks, strict=True) if mark == "final" and c.own]
        if finals and len({_decision(c.found, scale) for c in finals}) == 1:
            return finals[-1]  # "Draft: {...} Final: {...}": the one marked final
        if "draft" in marks:
            raise VerdictParseError(
                "the reply holds JSON verdicts that disagree, marked as drafts or revisions, and none is marked final"
            )
    if len({c.found.verdict for c in cands if c.own and c.found.verdict is not None}) > 1:
        # Two verdicts of the judge's own that say pass and fail: no order makes one of them the answer
        # (a correction would be marked final); reading the first could be the opposite of what it meant.
        raise VerdictParseError(
            "the reply holds several JSON verdicts of the judge's own that disagree (pass and fail), and none is"
            " marked final; cannot tell which is its answer"
        )
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
    """Elements of one JSON array, or objects in prose side by side in one (``{...}, {...}``), are
    parallel items (one per criterion, per sample): when they disagree, nothing makes one of them
    the answer, so the reply is an error, not a first pick."""
    if len(cands) > 1 and len({_decision(c.found, scale) for c in cands}) > 1:
        raise VerdictParseError(
            "the reply is a JSON array of several verdicts with different scores; nothing says which"
            " one is the answer (per-item scores are not a single score)"
        )


# How a reply marks one of several objects: the final one, or a draft or revision (which then needs a final one).
_FINAL_MARK = lazy(r"(?<![a-z])final(?![a-z])|最終|最终|최종")
_DRAFT_MARK = lazy(
    r"(?<![a-z])(?:draft|initial|preliminary|tentative|first[ \t](?:attempt|pass|take|try)|attempt[ \t]?#?\d|revised"
    r"|revision|corrected|updated|second[ \t]thought|reconsider(?:ed|ing)?)(?![a-z])|下書き|草稿|初稿"
)


def revision_mark(low: str, start: int) -> str | None:
    """ "final" or "draft" when the text before a JSON object (on its line, or the line before when the object opens
    its line) marks it so; else None."""
    begins = line_start(low, start, 80)
    before = low[begins:start]
    if not before.strip(" \t*_#>`-:") and begins > 0:
        prev = line_start(low, begins - 1, 80)
        before = low[prev:begins]
        if before.strip().startswith("```"):  # a fence: the line before it
            before = low[line_start(low, max(0, prev - 1), 80) : prev]
    if _FINAL_MARK.search(before) is not None:
        return "final"
    return "draft" if _DRAFT_MARK.search(before) is not None else None


_ARRAY_GAP = lazy(r"\s{0,64},\s{0,64}")


def _decision(found: Found, scale: tuple[float, float]) -> tuple[float | None, str | None]:
    """What a candidate decides (normalized score, verdict): candidates that agree on it agree."""
    return (normalize(found, scale), found.verdict)


def json_stage(
    text: str,
    scale: tuple[float, float],
    verdict: bool | None = None,
    answer: Answer | None = None,
    low: str | None = None,
) -> JsonOutcome:
    """Stages 1-3: the whole reply as JSON, repaired, then the objects inside the prose (``verdict``: whether
    a pass/fail verdict was asked, see `read_mapping`; ``answer``: what the template declares, see `Answer`;
    ``low``: the text already lowered, when the caller has it)."""
    out = JsonOutcome()
    value = load_whole(text)
    if value is not None:
        reads = read_value(value, verdict)
        if isinstance(value, dict) and (not reads[0].usable or (answer is not None and answer.field is not None)):
            own = _declared_or_lone(value, reads[0], scale, verdict, answer)
            if own is not None:
                reads = [own]
        whole_cands = [Candidate(f, Span(0, len(text))) for f in reads if f.usable]
        _check_siblings(whole_cands, scale)
        chosen = _choose(whole_cands, scale)
        out.whole = isinstance(value, dict) or bool(whole_cands)
        if chosen:
            out.found, out.strategy = chosen.found, "json"
            return out
        if isinstance(value, dict):
            out.bad_score = reads[0].bad_score
            return out
    spans, out.truncated = scan_objects(text)
    out.objects = spans
    if not spans:
        return out
    low = ascii_lower(text) if low is None else low
    budget = RepairBudget()
    cands: list[Candidate] = []
    skip = Skip(text, low, spans)
    is_whole = len(spans) == 1 and _fenced_whole(text, spans[0])
    repaired = False
    field = ascii_lower(answer.field) if answer is not None and answer.field else None
    # The reply's one object: its one numeric field may be the score ({"relevancy": 4}).
    alone = len(spans) == 1 and _NUMERIC_FIELD.search(low, spans[0].start, spans[0].end) is not None
    if alone or field is not None:  # a score-like key, the declared field, or the reply's only object
        keyed: Iterable[Span] = (
            s
            for s in spans
            if alone or _KEYWORDS.search(low, s.start, s.end) or (field is not None and field in low[s.start : s.end])
        )
    else:
        keyed = (s for s in spans if _KEYWORDS.search(low, s.start, s.end))  # cheap filter: a score-like key
    for span in itertools.islice(keyed, MAX_JSON_CANDIDATES):
        value, repaired = load_json(text[span.start : span.end], budget)
        read = read_value(value, verdict)
        if (alone or field is not None) and isinstance(value, dict) and read:
            own = _declared_or_lone(value, read[0], scale, verdict, answer)
            if own is not None:
                read = [own]
            elif not _KEYWORDS.search(low, span.start, span.end):
                continue  # looked at only for a field it does not have: as before
        out.bad_score = out.bad_score or any(f.bad_score for f in read)
        found_list = [f for f in read if f.usable]
        if is_whole and isinstance(value, dict) and not found_list:
            out.whole = True  # the reply is one (repaired) object without a score
            return out
        if not found_list:
            continue
        quoted = attributed = False
        if not is_whole:
            quoted = skip.quoted(span.start) or quote_hugged(text, span) or example_cued(text, span.start)
            attributed = attributed_to_output(low, span)
        cands.extend(Candidate(f, span, quoted, attributed) for f in found_list)
    for a, b in itertools.pairwise(cands):
        if a.span is not b.span and _ARRAY_GAP.fullmatch(text, a.span.end, b.span.start):
            _check_siblings([a, b], scale)
    chosen = _choose(cands, scale, low)
    if chosen is None:
        return out
    out.spans = tuple((s.start, s.end) for s in spans)
    out.found, out.quoted = chosen.found, not chosen.own
    out.whole = is_whole
    out.strategy = ("json-repair" if repaired else "json") if is_whole else "json-fragment"
    return out


_NUMERIC_FIELD = lazy(r"[\"'][ \t]{0,3}:[ \t]{0,3}[-+]?\.?\d")
# Numeric fields that are never a score: how sure the judge is, counts, positions.
_NOT_SCORES = frozenset([
    "confidence", "id", "index", "count", "total", "length", "tokens", "version", "year", "n", "answer", "expected",
    "output", "input", "number", "step", "steps", "line", "page", "words", "characters", "amount", "price", "age",
])  # fmt: skip


def _declared_or_lone(
    obj: dict[Any, Any], found: Found, scale: tuple[float, float], verdict: bool | None, answer: Answer | None
) -> Found | None:
    """A whole-reply object read under the field the template declares (``Answer(field=...)``), or, where it has no
    score or verdict field the parser knows and a score was asked, its one numeric field when that lies on the scale
    (``{"relevancy": 4}`` on 1-4).  None: read it as before."""
    name = None if answer is None or answer.field is None else answer.field.lower().replace("-", "_").replace(" ", "_")
    if name is None and (found.usable or verdict is True):
        return None  # most replies: a score field the parser knows, and nothing declared
    fields = fields_of(obj)
    if name is not None and name in fields:
        value = fields[name]
        declared = Found()
        num = number_from_json(value)
        if num is not None:
            declared.raw, declared.den = num
        elif isinstance(value, bool):
            declared.verdict = "pass" if value else "fail"
        elif isinstance(value, str):
            word = value.strip().lower()
            words = answer.words if answer is not None else {}
            meaning = words.get(word) or WORD_VERDICTS.get(word) or YES_NO.get(word)
            declared.verdict = meaning if meaning in ("pass", "fail") else None
        declared.reasoning = reasoning_in(fields)
        return declared if declared.usable else None
    if found.usable or verdict is True:
        return None
    numbers = [
        (k, v) for k, v in fields.items() if k not in _NOT_SCORES and k not in REASON_FIELDS and number_from_json(v)
    ]
    if len(numbers) != 1 or isinstance(numbers[0][1], bool):
        return None
    raw, den = number_from_json(numbers[0][1]) or (None, None)
    if raw is None or den is not None or not scale[0] <= raw <= scale[1]:
        return None  # off the scale: not the score asked for
    lone = Found(raw=raw)
    lone.reasoning = reasoning_in(fields)
    return lone


def _fenced_whole(text: str, span: Span) -> bool:
    """Does the span cover the whole reply, apart from whitespace and code fences?"""
    before = text[: span.start].strip()
    after = text[span.end :].strip()
    return before in ("", "```", "```json", "```JSON") and after in ("", "```")


install(globals())  # first uses swap the compiled patterns in (see patterns)
