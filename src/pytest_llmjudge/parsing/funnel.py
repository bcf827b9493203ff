"""The funnel: a judge's reply and what it was asked (`Asked`) in, a `ParsedVerdict` out, or a
`VerdictParseError` that says why.  Knowing the question, text copied from the prompt is never the
verdict, verdict words count only where a verdict was asked, and a score off the scale is an error.

Stages run from strict to lenient and the first that yields a score or a verdict decides: json,
json-repair, json-fragment, labelled, bare-number, prose (then a lone number after "thinking" lines).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ..errors import VerdictParseError
from .answers import Answer, declared_found
from .candidate import Found, Hit, fits_scale, normalize, retracted_after, unclamped
from .echo import OWN_WORDS, as_instructions, copied_spans, mostly_copied, only_copies
from .json_scan import MAX_JSON_CANDIDATES, RepairBudget, load_json, load_whole, scan_objects
from .json_verdict import REASON_FIELDS, fields_of, json_stage, reasoning_in, revision_mark
from .labels import bracket_list, confidence_word, marker_score, marker_verdict
from .prepare import ECHO_PLACEHOLDER, ascii_lower, blank_spans, prepare, thinking_unclosed
from .prose import bare_first, bare_last, prose_score
from .quotes import Skip

# "Beyond rounding": a score this share of the scale's width outside it is off the scale.
_OFF_SCALE = 1e-6


@dataclass(frozen=True)
class ParsedVerdict:
    """What a judge's reply says: the normalized score and how it was found."""

    score: float
    raw_score: float | None
    verdict: str | None
    confidence: str | None
    reasoning: str
    strategy: str


class Asked:
    """What a judge call asked for.

    ``prompt``: the texts of the messages sent (system and user), whose copies in a reply are data.
    ``verdict``: True when a pass/fail verdict was asked, False when a score was, None when unknown
    (then the parser accepts the vocabulary its corpus rules accept).  ``fields``: the field names
    of the reply schema (a score field named otherwise is read under its name).  ``answer``: what a template of
    the user's own declares its answers look like (see `Answer`), read before the parser's own vocabulary.
    ``restates``: the judge was asked to restate the prompt's text (list the claims of an output): a reply made
    of copies is its answer, so the echo rule does not refuse it (copies still never count as a verdict).
    """

    __slots__ = ("answer", "fields", "prompt", "restates", "verdict")

    def __init__(
        self,
        prompt: Iterable[str] = (),
        *,
        verdict: bool | None = None,
        fields: Iterable[str] = (),
        answer: Answer | None = None,
        restates: bool = False,
    ) -> None:
        self.prompt = tuple([t for t in prompt if isinstance(t, str) and t])
        self.verdict = verdict
        self.restates = restates
        names = [f for f in fields if isinstance(f, str)]
        self.fields = tuple([f.strip().lower().replace(" ", "_").replace("-", "_") for f in names])
        if answer is not None and not isinstance(answer, Answer):
            raise TypeError(f"answer must be an Answer, not {type(answer).__name__}")
        self.answer = answer

    def __repr__(self) -> str:
        sizes = [len(t) for t in self.prompt]
        declared = "" if self.answer is None else f", answer={self.answer!r}"
        return f"Asked(prompt={sizes} chars, verdict={self.verdict!r}, fields={self.fields!r}{declared})"


def reasoning_from(obj: Mapping[Any, Any], asked: Asked | None = None) -> str:
    """The judge's reasoning in a JSON object: one list of field names for every rubric ("" if none).

    A reasoning that is a format placeholder ("<one or two sentences>"), or with ``asked`` nothing but
    copies of the prompt, is no judgment: `VerdictParseError`.
    """
    reasoning = reasoning_in(fields_of(obj)) or ""
    _own_reasoning(_masked(reasoning, asked) if reasoning else reasoning)
    return reasoning


def _own_reasoning(reasoning: str) -> None:
    if only_copies(reasoning):
        raise VerdictParseError(
            "the reply fills in the prompt's reply template: its reasoning is the prompt's own text"
            " (a placeholder or a copy), so its verdict is no judgment"
        )


def own_text(text: str, asked: Asked | None) -> str:
    """The reply as it is read: prepared, every copy of the prompt masked; `VerdictParseError` if nothing
    of the judge's own is left, or (the echo rule) the reply is mostly a copy."""
    text = prepare(text)
    text = blank_spans(text, copies(text, asked), ECHO_PLACEHOLDER)
    _check_own(text)
    return text


# A reply longer than this that is mostly a copy is not a criterion restated in a sentence (the echo rule's
# second count, which sets the criteria's copies aside, is for replies of a sentence or two).
_RESTATED = 600
_ECHOED = ECHO_PLACEHOLDER.strip()


def copies(text: str, asked: Asked | None) -> list[tuple[int, int]]:
    """Where the prepared reply `text` copies the prompt `asked` holds; `VerdictParseError` where the reply
    is mostly that copy (`echo.mostly_copied`).  Every kind reads its reply through here (`own_text`,
    `parse_json_object`): the one place the echo rule is applied, alike for every kind."""
    if asked is None or not asked.prompt:
        return []
    spans = copied_spans(text, asked.prompt)
    # Counted first against every copy (most replies stop here), then, for a short copy, without the copies
    # of the criteria a judge restates in judging them; one with nothing of its own is `_check_own`'s to name.
    if (
        (spans or _ECHOED in text)  # most replies copy nothing: no count
        and not asked.restates
        and mostly_copied(text, spans)
        and (len(text) > _RESTATED or mostly_copied(text, copied_spans(text, as_instructions(asked.prompt))))
        and any(c.isalnum() for c in blank_spans(text, spans, ECHO_PLACEHOLDER).replace(ECHO_PLACEHOLDER.strip(), ""))
    ):
        raise VerdictParseError(
            "the judge's reply is mostly a copy of its prompt (of the output, a turn, a passage, the instructions "
            f"or their placeholder), with fewer than {OWN_WORDS} words of its own beside it: its verdict is no "
            "judgment"
        )
    return spans


def _masked(text: str, asked: Asked | None) -> str:
    """``text`` with every copy of the prompt in ``asked`` replaced by the echo placeholder."""
    if asked is None or not asked.prompt:
        return text
    return blank_spans(text, copied_spans(text, asked.prompt), ECHO_PLACEHOLDER)


def _check_own(text: str) -> None:
    if not any(c.isalnum() for c in text.replace(ECHO_PLACEHOLDER.strip(), "")):
        raise VerdictParseError(
            "the judge's reply holds nothing of its own once what it copied from the prompt"
            " (echoed output, instructions) is set aside"
        )


def _check_scale(scale: Any) -> tuple[float, float]:
    """The (min, max) scale as floats, or ValueError when it is not a finite, increasing pair."""
    try:
        lo, hi = scale
        # int and float are the common case: skip the slow ABC check for them.  A bool is no bound.
        if (type(lo) not in (int, float) or type(hi) not in (int, float)) and any(
            isinstance(x, bool) or not isinstance(x, numbers.Real) for x in (lo, hi)
        ):
            raise TypeError
        lo_f, hi_f = float(lo), float(hi)
    except (OverflowError, TypeError, ValueError):
        raise ValueError("scale must be a (min, max) pair of finite numbers") from None
    if not (math.isfinite(lo_f) and math.isfinite(hi_f)):
        raise ValueError("scale bounds must be finite")
    if not lo_f < hi_f:
        raise ValueError("scale min must be below scale max")
    if not math.isfinite(hi_f - lo_f):
        raise ValueError("scale range is too large")
    return lo_f, hi_f


def _fit(candidate: Hit | None, scale: tuple[float, float]) -> Hit | None:
    """The candidate, unless it is a fraction on another scale than the declared one."""
    return candidate if candidate is None or fits_scale(candidate[0], scale) else None


def _result(
    found: Found, scale: tuple[float, float], reasoning: str, strategy: str, asked: Asked | None = None
) -> ParsedVerdict:
    if asked is not None and asked.verdict and found.verdict is None:
        raise VerdictParseError("the reply gives no pass/fail verdict, which is what the judge was asked for")
    if found.raw is not None and _score_asked(asked, found):
        _on_scale(found, scale)
    score = normalize(found, scale)
    if score is None:
        raise VerdictParseError(
            "the reply's score is a fraction on another scale than the one asked for"
            f" (denominator {found.den:g}, scale maximum {scale[1]:g}); it is not this reply's score"
            if found.den is not None
            else "no usable score in the judge's reply"
        )
    return ParsedVerdict(score, found.raw, found.verdict, found.confidence, reasoning, strategy)


def _score_asked(asked: Asked | None, found: Found) -> bool:
    """Must this candidate's score lie on the scale?  Where a score was asked (or the question is known and no
    verdict was asked), and where a verdict word stands beside it: an off-scale score is no answer, and a verdict
    word does not rescue it ({"score": 9.3, "status": "PASS"} on 0-1).  Where a verdict was asked, a score is
    stray and the verdict answers; knowing nothing and finding no verdict, the corpus rule clamps."""
    if asked is None:
        return found.verdict is not None
    return asked.verdict is not True


def _on_scale(found: Found, scale: tuple[float, float]) -> None:
    """`VerdictParseError` when the candidate's score lies outside the scale (beyond rounding)."""
    value = unclamped(found, scale)
    if value is not None and not -_OFF_SCALE <= value <= 1 + _OFF_SCALE:
        raise VerdictParseError(
            f"the judge's score {found.raw:g}{'%' if found.pct else ''} lies outside the"
            f" {scale[0]:g}-{scale[1]:g} scale it was asked for"
        )


def text_without(text: str, *spans: tuple[int, int] | None) -> str:
    """The reply minus the marker spans: the judge's prose, before and after the score."""
    parts: list[str] = []
    pos = 0
    for span in sorted(s for s in spans if s is not None):
        if span[0] < pos:
            continue
        parts.append(text[pos : span[0]].strip())
        pos = span[1]
    parts.append(text[pos:].strip())
    # Leftovers such as "**" or "," around a removed marker are not reasoning.
    return "\n".join(p for p in parts if any(c.isalnum() for c in p))


def parse_verdict(text: str, *, scale: tuple[float, float] = (0, 1), asked: Asked | None = None) -> ParsedVerdict:
    """Parse a judge's reply into a `ParsedVerdict`; raise `VerdictParseError` if it holds none.

    ``scale`` is the (min, max) the judge was asked to use; the score is normalized to
    [0, 1].  ``asked`` says what the judge was asked (see `Asked`): given, copies of the prompt
    never count, and a score off the scale raises instead of being clamped.  Error messages
    never quote the reply; it is on the exception's ``.text``.
    """
    bounds = _check_scale(scale)
    return read_reply(text, asked, lambda reply: _parse(reply, bounds, asked))


T = TypeVar("T")


def read_reply(text: Any, asked: Any, read: Callable[[str], T]) -> T:
    """``read(text)``, once the reply is known to be a string with an answer in it (not empty, no thinking block
    left open) and ``asked`` an `Asked` or None; every `VerdictParseError` raised carries the reply."""
    if not isinstance(text, str):
        raise VerdictParseError(f"the judge's reply must be a str, not {type(text).__name__}", "")
    if asked is not None and not isinstance(asked, Asked):
        raise VerdictParseError(f"asked must be an Asked, not {type(asked).__name__}", text)
    try:
        if not text.strip():
            raise VerdictParseError("the judge's reply is empty")
        if thinking_unclosed(text):
            raise VerdictParseError("the reply's thinking block is never closed: it was cut off before its answer")
        return read(text)
    except VerdictParseError as exc:
        if exc.text != text:
            raise VerdictParseError(str(exc), text) from None
        raise


def _parse(original: str, scale: tuple[float, float], asked: Asked | None) -> ParsedVerdict:
    text = own_text(original, asked)
    conf_spans: list[tuple[int, int]] = []
    lowered = ascii_lower(text)  # lowered once: every stage below reads this copy where it can
    confidence = confidence_word(lowered, conf_spans)
    if (
        asked is not None
        and asked.answer is not None
        and (asked.answer.words or asked.answer.tag or asked.answer.label)
    ):
        declared = declared_found(text, asked.answer, scale)
        if declared is not None:  # the template's own form, read first
            found, span = declared
            found.confidence = confidence
            return _result(found, scale, text_without(text, span, *conf_spans), "declared", asked)

    # 1-3. JSON: whole reply, repaired, then fragments.
    js = json_stage(text, scale, asked.verdict if asked else None, asked.answer if asked else None, lowered)
    if js.found is not None:
        found = js.found
        if js.quoted:
            # Quoted or attributed objects only: they count when the judge's own
            # labelled score (or prose rating) elsewhere agrees, never alone.
            masked = blank_spans(text, sorted(conf_spans + list(js.spans)))
            masked_low = ascii_lower(masked)
            skip = Skip(text, masked_low, js.objects)
            other = marker_score(masked, masked_low, skip, scale)
            if other is None:
                other = _fit(prose_score(masked_low, skip), scale)
            if other is None:
                raise VerdictParseError(
                    "the reply's only JSON verdict is quoted content (the graded output's or an"
                    " example's), and the judge gives no score of its own"
                )
            if normalize(other[0], scale) != normalize(found, scale):
                raise VerdictParseError(
                    "the reply quotes a JSON verdict that conflicts with a labelled score;"
                    " cannot tell which is the judge's own"
                )
        if found.raw is None and found.verdict is not None and not js.whole and (asked is None or not asked.verdict):
            _no_score_off_scale(text, js.spans, conf_spans, scale)
        if found.reasoning is None:
            found.reasoning = "" if js.whole else text_without(text, *js.spans)
        else:
            _own_reasoning(found.reasoning)  # the text is masked already
        found.confidence = found.confidence or confidence
        return _result(found, scale, found.reasoning, js.strategy, asked)
    if js.whole:
        if js.bad_score:
            raise VerdictParseError("the JSON reply's score field is not a number, and it gives no pass/fail verdict")
        hint = " (unbalanced JSON: truncated, cut off at max_tokens?)" if js.truncated else ""
        raise VerdictParseError(f"the JSON reply has no score, rating or pass/fail field{hint}")

    # 4-6. Markers, labelled fields, bare numbers, prose.
    scan = blank_spans(text, conf_spans)
    low = lowered if scan is text else ascii_lower(scan)
    skip = Skip(text, low, js.objects)
    verdict, partial, vspan, strong = marker_verdict(scan, low, skip, asked.verdict if asked else None)

    named = tuple(f for f in asked.fields if f not in REASON_FIELDS) if asked else ()
    score: Hit | None = marker_score(scan, low, skip, scale, named)
    if score is None and bracket_list(low, skip):
        raise VerdictParseError("the reply rates several items in one bracket ([[a, b, c]]): no single score")
    strategy = "labelled"
    if score is None:
        score = _fit(bare_first(low), scale)
        strategy = "bare-number"
    if score is None and not strong:
        score = _fit(prose_score(low, skip), scale)
        strategy = "prose"
    if score is None and not strong:
        score = _fit(bare_last(low), scale)
        strategy = "bare-number"
    if score is not None:
        found, span = score
        if retracted_after(low, span[1]):
            raise VerdictParseError("the judge takes its score back for another number: no single score")
        if found.verdict is None and strong:
            # Only a labelled verdict joins a score: a stray "FAIL" in the prose
            # ("the old version would FAIL") is not the judge's decision.
            found.verdict = verdict
        found.confidence = confidence
        # A rating sentence is part of the prose; a marker line is not.
        reasoning = text.strip() if strategy == "prose" else text_without(text, span, vspan if strong else None)
        return _result(found, scale, reasoning, strategy, asked)
    if verdict is not None:
        found = Found(verdict=verdict, confidence=confidence)
        return _result(found, scale, text_without(text, vspan, *conf_spans), "labelled", asked)

    # Nothing usable: say why, without quoting the reply.
    if partial:
        raise VerdictParseError("the reply's verdict is PARTIAL, which is neither pass nor fail, and it gives no score")
    if js.bad_score:
        raise VerdictParseError("the reply's JSON score field is not a number, and it gives no pass/fail verdict")
    if js.truncated:
        raise VerdictParseError("no score found; the reply looks truncated (unbalanced JSON: cut off at max_tokens?)")
    if conf_spans and not scan.strip():
        raise VerdictParseError("the reply gives only a confidence figure, which is not a score")
    raise VerdictParseError(
        f"no score, rating or pass/fail verdict found in the judge's reply ({len(original)} characters)"
    )


def _no_score_off_scale(
    text: str, spans: tuple[tuple[int, int], ...], conf_spans: list[tuple[int, int]], scale: tuple[float, float]
) -> None:
    """A JSON verdict without a score does not stand beside a score off the scale in the prose around it
    ("Score: 9.3" and {"status": "PASS"} on 0-1): the reply answered another question."""
    masked = blank_spans(text, sorted(conf_spans + list(spans)))
    masked_low = ascii_lower(masked)
    try:
        other = marker_score(masked, masked_low, Skip(masked, masked_low, None), scale)
    except VerdictParseError:
        return  # no single score beside it: the verdict stands alone, as before
    if other is not None:
        _on_scale(other[0], scale)


def parse_json_object(text: str, asked: Asked | None = None) -> dict[str, Any] | None:
    """The JSON object a reply carries (whole, repaired, or found in prose/fences), or None.

    Uses the same bounded extraction as `parse_verdict`: the whole reply first, then the
    first top-level object in the text that parses directly or after repair.  With ``asked``, only
    an object the judge wrote itself counts: it is looked for with every copy of the prompt blanked
    out (an echoed output's planted object is not there), then read as written, so that text the
    judge was asked to copy (a claim taken from the output) keeps its words.  A reply with nothing
    of its own raises `VerdictParseError`.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    text = prepare(text)
    own = text
    if asked is not None and asked.prompt:
        own = blank_spans(text, copies(text, asked))  # positions kept: read `text` there
        _check_own(own)
    found = _first_object(load_whole(own))
    if found is not None:
        written = found if own is text else _first_object(load_whole(text))
        return found if written is None else written
    spans, _ = scan_objects(own)
    budget = RepairBudget()
    objects: list[tuple[int, dict[str, Any]]] = []
    for span in spans[:MAX_JSON_CANDIDATES]:
        found = _first_object(load_json(own[span.start : span.end], budget)[0])
        if found:  # an empty object inside prose says nothing
            written = found if own is text else _first_object(load_json(text[span.start : span.end], budget)[0])
            objects.append((span.start, written or found))
    return _marked_object(objects, ascii_lower(own)) if len(objects) > 1 else objects[0][1] if objects else None


def _marked_object(objects: list[tuple[int, dict[str, Any]]], low: str) -> dict[str, Any]:
    """Of several objects with the same fields that differ, the one marked final ("Draft: {...} Final: {...}"); an
    error when they are marked as drafts or revisions and none is final; else the first, as before."""
    first = objects[0][1]
    rivals = [(at, obj) for at, obj in objects if obj.keys() == first.keys()]
    if all(obj == first for _, obj in rivals):
        return first
    marks = [revision_mark(low, at) for at, _ in rivals]
    finals = [obj for (_, obj), mark in zip(rivals, marks, strict=True) if mark == "final"]
    if finals and all(obj == finals[0] for obj in finals):
        return finals[-1]
    if "draft" in marks:
        raise VerdictParseError(
            "the reply holds several JSON objects that disagree, marked as drafts or revisions, none marked final"
        )
    return first


def _first_object(value: Any) -> dict[str, Any] | None:
    """`value` if it is an object; the first object in it if it is a list."""
    if isinstance(value, dict):
        return value
    if isinstance(value, list):
        return next((v for v in value if isinstance(v, dict)), None)
    return None
