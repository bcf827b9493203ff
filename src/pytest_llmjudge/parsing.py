"""Turn a judge model's free-form reply into a score, a verdict and its reasoning.

`parse_verdict(text, scale=(min, max))` runs a funnel from strict to lenient and
stops at the first stage that yields a score or a pass/fail verdict (``strategy``
names the stage):

1. ``json``          the whole reply (code fences stripped) is a JSON object.
2. ``json-repair``   the whole reply is one broken JSON object (unquoted keys, single
                     quotes, comments, raw newlines, cut off) that json_repair fixes.
3. ``json-fragment`` JSON objects inside prose or fences, each tried as is, then repaired.
4. ``labelled``      format markers and fields: ``[RESULT] 4``, ``Rating: [[7]]``,
                     ``GRADE: C``, bare ``[[7]]``, ``Score: 8/10``, ``**Result:** 5``,
                     ``(Score 5)``, a ``[5]`` alone on its line; verdicts
                     ``VERDICT: PASS``, ``<answer>FAIL</answer>``, bare ``PASS``/``FAIL``.
5. ``bare-number``   the reply, or its first line, is only a number (``"\\n5.0"``, a
                     fenced ``95``, ``85/100``, ``75%``, ``90 points``).
6. ``prose``         ``I would rate it a 10.``, ``The final score is 2.5.``.
   Last, ``bare-number`` again: a lone number after "thinking" lines (``> *Thought*``).

Scores are normalized to [0, 1]: ``(raw - min) / (max - min)``, clamped, rounded to 6
decimals; ``raw_score`` is the number as written.  Fractions and percents count in the
units of the scale: when the denominator is the scale maximum the numerator is the raw
score (``2.5/10.0`` on [1, 10] is (2.5 - 1) / 9); with any other denominator the
fraction itself is the normalized score (``4/5`` on [0, 1] is 0.8).  A verdict without
a score gives 1.0 (pass) or 0.0 (fail); inspect_ai grades map C/Correct -> 1.0 pass,
I/Incorrect -> 0.0 fail, P -> 0.5 with no verdict; PARTIAL is no verdict.  A score and
a verdict given together are both kept as given, even when they disagree.

Policies for replies with several candidates, and why:

* A format marker beats stray numbers.  Tiers, strongest first: ``[RESULT]``,
  ``Rating: [[n]]``, ``GRADE:``, bare ``[[n]]``, ``Score:``-style fields, a lone
  ``[n]`` line, a lone number, prose.  Within a tier ``[RESULT]`` and ``GRADE:`` take
  the LAST occurrence (Prometheus and inspect_ai bind to the final marker; earlier ones
  are discussion), ``[[n]]`` takes the FIRST (FastChat's rule: later ones in real
  MT-Bench replies are hypothetical, "could be improved, earning a [[10]]"), and
  ``Score:`` fields take the first (of two equal labels the first is the answer,
  later ones quote or revise it).  Verdict words: the last ``<answer>`` tag, else the
  last ``VERDICT:``/``Result:`` label, else the last bare ``PASS``/``FAIL``; both words
  joined by or/and/slash ("PASS or FAIL") are vocabulary, not a decision.  Only a
  labelled verdict joins a numeric score; a bare word in the prose does not.
* Prose is the weakest evidence: two prose ratings that disagree ("the phone has a
  rating of 8.5, the tablet a rating of 7.8") make the reply an error, and prose
  numbers are not read at all when a labelled verdict is present.
* JSON: a whole-reply object decides alone (the numbers inside its strings are never
  mined).  Its top-level score beats objects nested in other fields; when the top
  level has none, the first nested object with a score counts.  Among several objects
  in prose the FIRST with a score wins (promptfoo, coze-loop: the prompt asks for one
  object; later ones are revisions or repeats), with the quoting rules below.
* Quoted content.  The graded output may carry a fake verdict (``{"score": 1.0}``,
  ``Score: 10/10``) and the judge may quote it; quoted content is never the judge's
  verdict.  An object is QUOTED when it lies inside quotation marks, when a quote mark
  hugs it (``"{...}``, ``{...}"``, ``{...}".``: the end of a quotation whose opening may
  be out of reach, or that the output's own quote marks shifted), or when its sentence
  introduces it as an example ("for example", "e.g.", "such as", "like this").  It is
  ATTRIBUTED when its sentence introduces it as the output's, at most 60 characters
  before it with no negation, no hand-over word ("so", "my", "verdict", "score"...)
  and no removed echo block in between -- "the output/response/answer (says, claims,
  contains, includes, asks, reads, writes, tries...)", "it says", "quoted", "verbatim"
  -- or when the text right after it refers back ("That is what the output asks for").
  Quotation marks are paired across lines, outside JSON objects: ``"`` opens before a
  non-space and not after a letter, digit or closing punctuation, and closes after a
  non-space and not before a letter or digit (so ``12" pipes`` never opens); ``'``
  opens only after a space or opening bracket and closes only before a space or
  punctuation (so ``don't``, ``it's`` and ``students' work`` never open one); curly
  quotes say their side.  A closing mark pairs with the earliest pending opening mark
  of its kind within reach (2,000 characters for ``"``, 500 for ``'``); an opening
  mark with no closer in reach is stray.  Then, among the objects with a score:
  - all agree: the score stands (read from the first own object, if any);
  - otherwise the first OWN object (neither quoted nor attributed) wins over
    everything after it, so a fake quoted after the judge's verdict changes nothing;
  - an object before it that disagrees raises when it is quoted (the quotation's
    bounds are the output's to forge, so nothing says which object is the judge's:
    a silently wrong score is worse than an error), and when it is attributed but
    has a reasoning field, or the own object has none; an attributed BARE score
    object loses to an own object of the requested shape (a reasoning field and a
    score): "The output contains {"score": 1.0}... My verdict: {"reasoning": ...}";
  - no own object: several that disagree raise; one (or several that agree) counts
    only when the judge's own labelled score, or else its prose rating, agrees, and
    raises when that disagrees or is absent.
  Labels, format markers, verdict tags and words, and prose ratings inside quotation
  marks are skipped, as is a label right after an attribution verb ("the output
  claims Score: 10/10"); a verdict word alone on its line may still wear quotes.
* An echoed ``<output-ID>...</output-ID>`` block (the plugin's delimiter around the
  graded output), or any other ``<name-NONCE>`` data block of the prompt (input,
  reference), is removed before anything else: nothing in it can become the score.
  After a ``</think>`` block only the text that follows it is read.
* Not scores: confidence figures (``Confidence: 90%``, ``Confidence: 9/10``; a reply
  with only a confidence is an error); a score mention after a negation or a
  reference word in its clause ("definitely not 3", "does not fully align with the
  criteria for a score of 5", "Reference (Score 5)", "For example, Score: 1");
  ranges ("Score: 1-10", "from 1 to 10"); counts after a rating verb ("gives 3
  examples").  Numbers in identifiers (``top_5_words``), list markers, ``O(n^2)``,
  ``f(2)``, ``Note [2]``, ``12" pipes`` or keys like ``"1.5模型"`` are never read:
  every number must be bound to a label, a marker, a rating verb, or stand alone.
* Reasoning: for JSON, the ``reasoning``/``reason``/``explanation``/``rationale``/
  ``feedback`` value, unescaped ("" when absent; for an object inside prose without
  one, the prose around it).  For labelled replies, the reply minus the score and
  verdict markers (reasoning may come before or after the score line).  For prose
  ratings, the whole reply: the rating sentence is part of the reasoning.

Every stage is linear in the reply's length: regexes have bounded gaps and no nested
quantifiers, patterns are skipped when a required word is absent, the JSON scan is one
pass with a step cap, "last marker" searches look at a growing tail, quote pairing is
one lazy pass over at most 5,000 quote marks (text past them is not quote-aware),
attribution looks at most 200 characters back and 160 ahead, and json_repair
(slow, superlinear, raises on hostile input) only sees candidates of at most 64 KiB
nested at most 64 deep, 64 KiB per reply in total, with everything it raises caught.
"""

from __future__ import annotations

import json
import math
import numbers
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

from .errors import VerdictParseError

__all__ = ["ParsedVerdict", "parse_json_object", "parse_verdict", "reasoning_from"]

# ---------------------------------------------------------------------------- limits
_REPAIR_MAX_CHARS = 64 * 1024  # json_repair is slow and superlinear: hand it little
_REPAIR_BUDGET = 64 * 1024  # total characters repaired per reply
_REPAIR_MAX_DEPTH = 64  # json_repair recurses; deeper input raises RecursionError
_SCAN_MAX_DEPTH = 512  # deeper than this is not a judge reply: stop the brace scan
_SCAN_MAX_STEPS = 20_000  # braces, strings and escapes visited by the scan
_MAX_JSON_CANDIDATES = 64  # objects examined per reply
_MAX_PROSE_CANDIDATES = 200  # rating-verb matches examined per reply
_MAX_FIRST_SCAN = 2000  # matches examined by "first valid" label searches

_CONFIDENCE_WORDS = {
    "high": "high",
    "very high": "high",
    "medium": "medium",
    "moderate": "medium",
    "low": "low",
    "very low": "low",
}


@dataclass(frozen=True)
class ParsedVerdict:
    """What a judge's reply says: the normalized score and how it was found."""

    score: float
    raw_score: float | None
    verdict: str | None
    confidence: str | None
    reasoning: str
    strategy: str


@dataclass
class _Found:
    """One candidate answer, before normalization."""

    raw: float | None = None  # the number as written (numerator of a fraction)
    den: float | None = None  # denominator of a fraction or 100 for a percent
    fixed: float | None = None  # a normalized score given directly (grade P = 0.5)
    verdict: str | None = None  # "pass" / "fail"
    partial: bool = False  # PARTIAL verdict: neither pass nor fail
    confidence: str | None = None
    reasoning: str | None = None
    bad_score: bool = False  # a score field was present but not a number

    @property
    def usable(self) -> bool:
        return self.raw is not None or self.fixed is not None or self.verdict is not None


# ---------------------------------------------------------------------------- numbers
# Only used with fullmatch on strings of at most 64 characters.
_NUMERIC_STRING = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_FRACTION_STRING = re.compile(
    r"([-+]?(?:\d{1,15}(?:\.\d{1,15})?|\.\d{1,15}))\s{0,3}"
    r"(?:(?:/|out\s{1,3}of)\s{0,3}(\d{1,15}(?:\.\d{1,15})?)|(%))"
)
# A value after a label: 4, (5), 8/10, 4 out of 5, 75%.  Bounded gaps only.
_VALUE = (
    r"(?P<open>[(\[]\s{0,2})?(?P<num>[-+]?(?:\d{1,15}(?:\.\d{1,12})?|\.\d{1,12}))(?![\d])"
    r"(?:\s{0,2}(?:/|out\s{1,3}of)\s{0,2}(?P<den>\d{1,15}(?:\.\d{1,12})?)(?![\d]))?"
    r"(?P<pct>\s{0,2}%)?"
)


def _finite(x: float) -> bool:
    return math.isfinite(x)


def _number_from_json(value: Any) -> tuple[float, float | None] | None:
    """A JSON score value as (number, denominator), or None when it is not numeric."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            f = float(value)
        except (OverflowError, ValueError):
            return None
        return (f, None) if _finite(f) else None
    if isinstance(value, str):
        s = value.strip()
        if len(s) > 64:
            return None
        if _NUMERIC_STRING.fullmatch(s):
            f = float(s)
            return (f, None) if _finite(f) else None
        m = _FRACTION_STRING.fullmatch(s)
        if m:
            den = 100.0 if m.group(3) else float(m.group(2))
            return (float(m.group(1)), den) if den > 0 else None
    return None


def _value_after(text: str, m: re.Match[str]) -> bool:
    """The character after a matched value must end the number (no '4th', '3D', '1.5.2')."""
    end = m.end()
    if end >= len(text):
        return True
    c = text[end]
    if c.isalnum() or c == "_":
        return False
    if not m.group("den") and not m.group("pct") and _RANGE_AFTER.match(text, end):
        return False  # "Score: 1-10", "score 1 to 5": the scale, not a score
    if c == "." and end + 1 < len(text) and text[end + 1].isdigit():
        return False
    return True


def _found_from_value(m: re.Match[str]) -> _Found | None:
    try:
        num = float(m.group("num"))
    except (TypeError, ValueError):
        return None
    den: float | None = None
    if m.group("den"):
        den = float(m.group("den"))
        if den <= 0:
            return None
    elif m.group("pct"):
        den = 100.0
    return _Found(raw=num, den=den)


# ---------------------------------------------------------------------------- text prep
_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")
_DATA_OPEN = re.compile(r"<([A-Za-z][A-Za-z0-9_]{0,31})-([A-Za-z0-9_-]{1,64})>")
_DATA_CLOSE = re.compile(r"</([A-Za-z][A-Za-z0-9_]{0,31})-([A-Za-z0-9_-]{1,64})>")
_NONCE = re.compile(r"[0-9A-Fa-f]{8,64}")
_THINK_CLOSE = re.compile(r"</think\s{0,3}>", re.IGNORECASE)


def _data_tag(m: re.Match[str]) -> tuple[str, str] | None:
    """The (name, id) of a data delimiter: ``<output-ID>``, or any ``<name-NONCE>`` (hex)."""
    name, ident = m.group(1).lower(), m.group(2).lower()
    if name == "output" or _NONCE.fullmatch(ident):
        return name, ident
    return None


_ECHO_PLACEHOLDER = " [echoed data omitted] "


def _mask_output_blocks(text: str) -> str:
    """Drop echoed ``<output-ID>...</output-ID>`` blocks (and the plugin's other data
    blocks, ``<input-NONCE>``, ``<expected-NONCE>``...): their content is data the judge
    was shown, never its verdict.

    Closing tags are indexed once so that many unmatched opening tags stay linear.
    A lone tag (no partner) is removed by itself.
    """
    if "<" not in text or "-" not in text:
        return text
    closes: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for m in _DATA_CLOSE.finditer(text):
        key = _data_tag(m)
        if key is not None:
            closes.setdefault(key, []).append((m.start(), m.end()))
    if not closes and "output-" not in _ascii_lower(text):
        return text
    out: list[str] = []
    pos = 0
    used: dict[tuple[str, str], int] = {}
    for m in _DATA_OPEN.finditer(text):
        key = _data_tag(m)
        if key is None or m.start() < pos:
            continue
        lst = closes.get(key, [])
        i = used.get(key, 0)
        while i < len(lst) and lst[i][0] < m.end():
            i += 1
        used[key] = i
        out.append(text[pos : m.start()])
        if i < len(lst):
            out.append(_ECHO_PLACEHOLDER)
            pos = lst[i][1]
            used[key] = i + 1
        else:
            pos = m.end()
    out.append(text[pos:])
    return _DATA_CLOSE.sub(lambda m: " " if _data_tag(m) else m.group(), "".join(out))


_ASCII_LOWER = str.maketrans({chr(c): chr(c + 32) for c in range(65, 91)})
_DIGIT = re.compile(r"\d")


def _ascii_lower(text: str) -> str:
    """Lower-case A-Z only, so the copy has the same length and positions as ``text``."""
    return text.translate(_ASCII_LOWER)


def _prepare(text: str) -> str:
    text = _ZERO_WIDTH.sub("", text).replace("\r\n", "\n")
    text = _mask_output_blocks(text)
    # A reasoning model's <think> block is deliberation; its answer follows it.
    last = None
    if "</think" in _ascii_lower(text):
        for last in _THINK_CLOSE.finditer(text):
            pass
    if last is not None and text[last.end() :].strip():
        text = text[last.end() :]
    return text


def _strip_fences(body: str) -> str:
    """Remove a leading ```lang line and a trailing ``` line around the whole body."""
    if body.startswith("```"):
        nl = body.find("\n")
        body = body[nl + 1 :] if nl != -1 else body[3:]
    if body.rstrip().endswith("```"):
        body = body.rstrip()[:-3]
    return body.strip()


# ---------------------------------------------------------------------------- JSON
_STRUCT = re.compile(r'[{}"]')
_IN_STRING = re.compile(r'["\\]')
_KEYWORDS = re.compile(r"score|rating|pass|verdict|grade|result|fail")  # on lowered text
_BRACKETS = re.compile(r"[\[\]{}]")


@dataclass
class _Span:
    start: int
    end: int
    truncated: bool = False


def _scan_objects(text: str) -> tuple[list[_Span], bool]:
    """Find top-level ``{...}`` spans in one pass, string-aware inside objects only.

    Quotes outside objects are prose (``12" pipes``) and are skipped.  An unmatched
    ``{`` in prose does not hide balanced objects after it.  Returns the spans and
    whether a scanned object was left unclosed at the end (a truncated reply).
    """
    n = len(text)
    pairs: list[tuple[int, int]] = []
    stack: list[int] = []
    i = 0
    steps = 0
    while i < n:
        steps += 1
        if steps > _SCAN_MAX_STEPS:  # hostile input: keep what was found so far
            return _maximal(pairs), False
        if not stack:
            i = text.find("{", i)
            if i == -1:
                break
            stack.append(i)
            i += 1
            continue
        m = _STRUCT.search(text, i)
        if m is None:
            break
        c = m.group()
        j = m.start()
        if c == "{":
            stack.append(j)
            if len(stack) > _SCAN_MAX_DEPTH:
                return _maximal(pairs), False
            i = j + 1
        elif c == "}":
            pairs.append((stack.pop(), j + 1))
            i = j + 1
        else:  # a JSON string: skip to its closing quote, honouring escapes
            k = j + 1
            while True:
                m2 = _IN_STRING.search(text, k)
                if m2 is None:
                    k = n
                    break
                if m2.group() == "\\":
                    k = m2.start() + 2
                    continue
                k = m2.end()
                break
            i = k
    spans = _maximal(pairs)
    truncated = False
    if stack:
        last_end = spans[-1].end if spans else 0
        tail = [s for s in stack if s >= last_end]
        if tail:
            spans.append(_Span(tail[0], n, truncated=True))
            truncated = True
    return spans, truncated


def _maximal(pairs: list[tuple[int, int]]) -> list[_Span]:
    """Keep the balanced spans that no other balanced span encloses."""
    pairs.sort()
    out: list[_Span] = []
    last_end = -1
    for s, e in pairs:
        if s >= last_end:
            out.append(_Span(s, e))
            last_end = e
    return out


def _depth_ok(s: str) -> bool:
    depth = 0
    for m in _BRACKETS.finditer(s):
        if m.group() in "[{":
            depth += 1
            if depth > _REPAIR_MAX_DEPTH:
                return False
        elif depth:
            depth -= 1
    return True


class _Budget:
    def __init__(self) -> None:
        self.left = _REPAIR_BUDGET


def _load(s: str, budget: _Budget | None) -> tuple[Any, bool]:
    """Parse ``s`` as JSON, then (bounded) with json_repair.  Returns (value, repaired)."""
    try:
        return json.loads(s, strict=False), False
    except Exception:  # ValueError, RecursionError: anything means "not plain JSON"
        pass
    if budget is None or len(s) > _REPAIR_MAX_CHARS or len(s) > budget.left or not _depth_ok(s):
        return None, False
    budget.left -= len(s)
    try:
        import json_repair  # local: only replies that need repair pay the import

        value = json_repair.loads(s, skip_json_loads=True)
    except Exception:  # json_repair raises ValueError/RecursionError on hostile input
        return None, False
    if isinstance(value, tuple):  # logging variants return (value, log)
        value = value[0]
    return value, True


_SCORE_KEYS = (
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
_VERDICT_KEYS = ("pass", "passed", "verdict", "result", "decision", "outcome", "judgment", "judgement", "grade")
_REASON_KEYS = (
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
_TRUE_WORDS = {"true", "pass", "passed"}
_FALSE_WORDS = {"false", "fail", "failed"}
_GRADE_LETTERS = {"c": (1.0, "pass"), "correct": (1.0, "pass"), "i": (0.0, "fail"), "incorrect": (0.0, "fail")}


def _text_value(value: Any) -> str | None:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return "\n".join(v.strip() for v in value)
    return None


def _reasoning_in(keys: Mapping[str, Any]) -> str | None:
    for key in _REASON_KEYS:
        if key in keys:
            text = _text_value(keys[key])
            if text is not None:
                return text
    return None


def reasoning_from(obj: Mapping[Any, Any]) -> str:
    """The judge's reasoning in a JSON object: one list of field names for every rubric ("" if none)."""
    keys: dict[str, Any] = {}
    for k, v in obj.items():
        if isinstance(k, str):
            keys.setdefault(k.strip().lower().replace(" ", "_").replace("-", "_"), v)
    return _reasoning_in(keys) or ""


def _read_mapping(d: dict[Any, Any], depth: int = 0) -> _Found:
    """Read score / verdict / reasoning / confidence from a JSON object."""
    keys: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(k, str):
            keys.setdefault(k.strip().lower().replace(" ", "_").replace("-", "_"), v)
    found = _Found()
    for key in _SCORE_KEYS:
        if key not in keys:
            continue
        value = keys[key]
        num = _number_from_json(value)
        if num is not None:
            found.raw, found.den = num
            break
        if key in ("grade", "result") and isinstance(value, str):
            continue  # a letter or a word: read below as a verdict
        if key in ("score", "rating") and value is not None:
            found.bad_score = True
    for key in _VERDICT_KEYS:
        if key not in keys:
            continue
        value = keys[key]
        if isinstance(value, bool):
            found.verdict = "pass" if value else "fail"
            break
        if isinstance(value, str):
            word = value.strip().lower()
            if key == "grade" and word in _GRADE_LETTERS:
                fixed, found.verdict = _GRADE_LETTERS[word]
                if found.raw is None:
                    found.fixed = fixed
                break
            if key == "grade" and word == "p":
                if found.raw is None:
                    found.fixed = 0.5
                break
            if word in _TRUE_WORDS:
                found.verdict = "pass"
                break
            if word in _FALSE_WORDS:
                found.verdict = "fail"
                break
            if word == "partial":
                found.partial = True
                break
    found.reasoning = _reasoning_in(keys)
    conf = keys.get("confidence")
    if isinstance(conf, str):
        found.confidence = _CONFIDENCE_WORDS.get(" ".join(conf.lower().split()))
    if not found.usable and depth < 4:
        # No score at the top: the first nested object with one (per-model sections).
        for v in d.values():
            if isinstance(v, dict):
                inner = _read_mapping(v, depth + 1)
                if inner.usable:
                    return inner
                found.bad_score = found.bad_score or inner.bad_score
    return found


def _read_value(value: Any) -> list[_Found]:
    if isinstance(value, dict):
        return [_read_mapping(value)]
    if isinstance(value, list):
        return [_read_mapping(v) for v in value[:_MAX_JSON_CANDIDATES] if isinstance(v, dict)]
    return []


# ---------------------------------------------------------------------------- quotations
_QUOTE_LIMIT = 2000  # a double quote closes within this many characters, or it is stray
_SQUOTE_LIMIT = 500  # single quotes double as apostrophes: a shorter reach
_MAX_QUOTES = 5_000  # quote marks examined per reply; past them no position counts as quoted
_QUOTE_MARKS = re.compile("[\"'\u201c\u201d\u2018\u2019]")
_NO_OPEN_AFTER = frozenset(")]}.,;:!?\"'\u201d\u2019")  # a mark after these closes, never opens
_SQUOTE_OPEN_AFTER = frozenset("([{:-\u2014")  # besides whitespace: where a ' may open
_SQUOTE_CLOSE_BEFORE = frozenset(".,;:!?)]}-\u2014\"")  # besides whitespace: where a ' may close


class _Quotes:
    """The parts of the reply inside quotation marks, paired across lines.

    Marks inside JSON objects are the object's own and are not looked at.  A straight
    ``"`` can open when the next character is not a space and the previous one is not a
    letter, digit or closing punctuation; it can close when the previous character is
    not a space and the next one is not a letter or digit (so ``12" pipes`` only closes
    and ``a"b`` does neither).  A ``'`` opens only after a space or an opening bracket and
    closes only before a space or punctuation, so ``don't`` and ``it's`` do neither.
    Curly quotes say which side they are.  A closing mark pairs with the EARLIEST
    pending opening mark of its kind within reach (2,000 characters for ``"``, 500 for
    ``'``); openers with no closer in reach are stray.  One pass over at most 5,000
    marks; text past them is not quote-aware (a reply with that many quote marks is not
    a judge's prose, and the other rules still apply to it).
    """

    def __init__(self, text: str, objects: list[_Span]) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        spans: list[tuple[int, int]] = []
        pending: dict[bool, list[int]] = {True: [], False: []}  # double?, opener positions
        n = len(text)
        seen = 0
        gaps: list[tuple[int, int]] = []
        pos = 0
        for s in objects:
            if s.start > pos:
                gaps.append((pos, s.start))
            pos = max(pos, s.end)
        gaps.append((pos, n))
        for g0, g1 in gaps:
            if g0 >= g1:
                continue
            for m in _QUOTE_MARKS.finditer(text, g0, g1):
                seen += 1
                i = m.start()
                if seen > _MAX_QUOTES:
                    self._finish(spans)
                    return
                c = m.group()
                prev = text[i - 1] if i > 0 else " "
                nxt = text[i + 1] if i + 1 < n else " "
                double = c in "\"\u201c\u201d"
                if c in "\u201c\u2018":
                    can_open, can_close = True, False
                elif c == "\u201d":
                    can_open, can_close = False, True
                elif c == '"':
                    can_open = not nxt.isspace() and not prev.isalnum() and prev not in _NO_OPEN_AFTER
                    can_close = not prev.isspace() and not nxt.isalnum()
                else:  # ' or the typographic apostrophe
                    can_open = (
                        c == "'" and not nxt.isspace() and nxt != "'" and (prev.isspace() or prev in _SQUOTE_OPEN_AFTER)
                    )
                    can_close = not prev.isspace() and (nxt.isspace() or nxt in _SQUOTE_CLOSE_BEFORE)
                waiting = pending[double]
                if can_close and waiting:
                    reach = _QUOTE_LIMIT if double else _SQUOTE_LIMIT
                    j = bisect_left(waiting, i - reach)
                    if j < len(waiting):
                        spans.append((waiting[j], i + 1))
                        waiting.clear()
                        continue
                    waiting.clear()  # every opener is out of reach: stray
                if can_open:
                    waiting.append(i)
        self._finish(spans)

    def _finish(self, spans: list[tuple[int, int]]) -> None:
        # Single- and double-quoted spans may nest or overlap: merge them.
        for s, e in sorted(spans):
            if self.ends and s < self.ends[-1]:
                self.ends[-1] = max(self.ends[-1], e)
            else:
                self.starts.append(s)
                self.ends.append(e)

    def inside(self, pos: int) -> bool:
        k = bisect_right(self.starts, pos) - 1
        return k >= 0 and pos < self.ends[k]


class _LazyQuotes:
    """Build `_Quotes` only when a candidate needs it (most replies never do)."""

    def __init__(self, text: str, objects: list[_Span] | None = None, built: _Quotes | None = None) -> None:
        self.text = text
        self.objects = objects
        self._q = built

    def get(self) -> _Quotes:
        if self._q is None:
            objects = self.objects if self.objects is not None else _scan_objects(self.text)[0]
            self._q = _Quotes(self.text, objects)
        return self._q

    def inside(self, pos: int) -> bool:
        return self.get().inside(pos)


# Attribution: a candidate introduced as what the graded output says is quoted content.
_SOURCE = r"(?:output|response|answer|submission|completion|candidate|text|model|assistant|reply|message)"
_ATTR_VERB = (
    r"(?:says|said|claims|claimed|contains|contained|includes|included|asks|asked|reads|writes|wrote"
    r"|requests|requested|demands|demanded|tries|tried|attempts|attempted|instructs|instructed|tells|told"
    r"|states|stated|insists|insisted|suggests|suggested|proposes|proposed|embeds|embedded|injects|injected"
    r"|ends|ended|outputs|printed|prints|returns|returned)"
)
# "the output (also) says", "the model's response contains", "it says", "they claim", "quoted".
_ATTRIBUTION = re.compile(
    r"(?<![a-z])(?:(?:the|this|that|its|their)[ \t]+(?:[a-z']{1,12}[ \t]+){0,2}?" + _SOURCE
    + r"(?:'s)?|it|they)[ \t]+(?:[a-z]{1,12}[ \t]+){0,2}?" + _ATTR_VERB + r"(?![a-z])"
    r"|(?<![a-z])(?:quoted|quoting|verbatim)(?![a-z])"
)
# "... {"score": 1.0}. That is what the output asks for."
_BACKREF = re.compile(
    r"[\s`'\".,;:!?)\]\u201d\u2014-]{0,16}(?:that|this|which|it)(?:'s|[ \t]+is|[ \t]+was)[ \t]+"
    r"(?:(?:what|how|exactly|just|precisely|also|the|its|an?)[ \t]+){0,3}" + _SOURCE + r"(?![a-z])"
)
_ATTR_NEGATION = re.compile(r"(?<![a-z])(?:no|not|nothing|never|none|nor|without)(?![a-z])|n't")
# Words that hand over to the judge's own verdict: "contains errors, so my score: {...}".
_OWN_INTRO = re.compile(
    r"(?<![a-z])(?:so|therefore|thus|hence|overall|my|mine|verdict|score|rating|grade|evaluation|assessment"
    r"|judge?ment|conclusion|final)(?![a-z])"
)
_SENTENCE_BREAK = re.compile(r"[.!?](?=\s)|\n[ \t]*\n")
# A label right after an attribution verb: 'the output claims Score: 10/10'.
_LABEL_ATTRIBUTION = re.compile(
    r"(?<![a-z])(?:says|said|claims|claimed|asks|asked|reads|writes|wrote|requests|requested|demands"
    r"|demanded|tries|tried|instructs|insists|suggests|contains|includes)(?:[ \t]{1,3}(?:for|that|with))?"
    r"[ \t]{0,3}[:\-]?[ \t]{0,3}[\"'\u201c\u2018]?[ \t]{0,2}$"
)


def _attributed(text: str, low: str, span: _Span) -> bool:
    """Is the object introduced (or followed) as what the graded output says?

    Before it, in the same sentence and at most 60 characters from the object, with no
    negation, no hand-over word ("so", "my", "verdict"...) and no removed echo block in
    between: "the output contains {...}", "it says: {...}", "quoted: {...}".  Right
    after it: "That is what the output asks for".
    """
    w0 = max(0, span.start - 200)
    window = low[w0 : span.start]
    cut = 0
    for m in _SENTENCE_BREAK.finditer(window):
        cut = m.end()
    last = None
    for m in _ATTRIBUTION.finditer(window, cut):
        last = m
    if last is not None:
        between = window[last.end() :]
        if (
            len(between) <= 60
            and _ECHO_PLACEHOLDER.strip() not in between
            and _ATTR_NEGATION.search(between) is None
            and _OWN_INTRO.search(between) is None
        ):
            return True
    return _BACKREF.match(low, span.end, min(len(low), span.end + 160)) is not None


def _quote_hugged(text: str, span: _Span) -> bool:
    """A quote mark right against the object ("{...}" or {...}".): the end of a quotation
    whose opening may lie out of reach, or that the quoted text itself shifted."""
    before = text[max(0, span.start - 2) : span.start].rstrip(" ")
    if before.endswith(('"', "\u201c", "'", "\u2018")):
        return True
    after = text[span.end : span.end + 3].lstrip(".,;!?")
    return after.startswith(('"', "\u201d", "'", "\u2019"))


def _example_cued(text: str, start: int) -> bool:
    """Introduced as an example in its sentence: "For example, {...}", "such as {...}"."""
    w0 = max(0, start - 300)
    cut = w0
    for m in _SENTENCE_BREAK.finditer(text, w0, start):
        cut = m.end()
    nl = text.rfind("\n", cut, start)
    return _EXAMPLE_CUE.search(text, nl + 1 if nl != -1 else cut, start) is not None


# "in JSON format:" introduces the real answer, so "format" is not a cue.
_EXAMPLE_CUE = re.compile(r"\b(?:example|e\.g\.|for instance|such as|like this)\b", re.IGNORECASE)


@dataclass
class _JsonOutcome:
    found: _Found | None = None
    strategy: str = ""
    span: _Span | None = None
    quoted: bool = False  # the chosen object is quoted or attributed content
    whole: bool = False  # the reply was one JSON value: it decides alone
    bad_score: bool = False
    truncated: bool = False
    spans: tuple[tuple[int, int], ...] = ()  # every object found in the prose
    objects: list[_Span] | None = None  # the scan's object spans, for quote pairing
    quotes: _Quotes | None = None  # built when an object needed it


@dataclass
class _Cand:
    found: _Found
    quoted: bool = False  # inside quotation marks, hugged by one, or an example
    attributed: bool = False  # introduced as what the graded output says
    span: _Span | None = None

    @property
    def own(self) -> bool:
        return not (self.quoted or self.attributed)


def _choose(cands: list[_Cand], scale: tuple[float, float]) -> _Cand | None:
    """Which JSON candidate is the judge's own verdict (see the module docstring).

    All agree: the first own one (else the first).  Otherwise the first own candidate
    (neither quoted nor attributed) wins over everything after it; a candidate before
    it that disagrees must be attributed and bare (no reasoning) while the own one has
    reasoning, else the reply is an error.
    """
    if not cands:
        return None
    own = next((c for c in cands if c.own), None)
    key0 = _key(cands[0].found, scale)
    if all(_key(c.found, scale) == key0 for c in cands[1:]):
        return own or cands[0]
    if own is None:
        raise VerdictParseError(
            "the reply holds several JSON verdicts with different scores, all of them quoted"
            " content (an echoed example or the graded output); none is the judge's own"
        )
    key_own = _key(own.found, scale)
    for c in cands:
        if c is own:
            break
        if _key(c.found, scale) == key_own:
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


def _key(found: _Found, scale: tuple[float, float]) -> tuple[float | None, str | None]:
    return (_normalize(found, scale), found.verdict)


def _json_stage(text: str, scale: tuple[float, float], budget: _Budget) -> _JsonOutcome:
    out = _JsonOutcome()
    body = _strip_fences(text.strip())
    if body[:1] in ("{", "["):
        try:
            value = json.loads(body, strict=False)
        except Exception:  # includes RecursionError on deep nesting
            value = None
        if isinstance(value, (dict, list)):
            whole_cands = [_Cand(f) for f in _read_value(value) if f.usable]
            chosen = _choose(whole_cands, scale)
            out.whole = isinstance(value, dict) or bool(whole_cands)
            if chosen:
                out.found, out.strategy = chosen.found, "json"
                return out
            if isinstance(value, dict):
                out.bad_score = _read_mapping(value).bad_score
                return out
    spans, out.truncated = _scan_objects(text)
    out.objects = spans
    if not spans:
        return out
    low = _ascii_lower(text)
    lead = len(text) - len(text.lstrip())
    tail = len(text.rstrip())
    cands: list[_Cand] = []
    quotes: _Quotes | None = None
    examined = 0
    single_whole = False
    for span in spans:
        if examined >= _MAX_JSON_CANDIDATES:
            break
        if _KEYWORDS.search(low, span.start, span.end) is None:
            continue  # cheap filter: no score-like key, not a verdict object
        examined += 1
        value, repaired = _load(text[span.start : span.end], budget)
        read = _read_value(value)
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
                quotes = _Quotes(text, spans)
            quoted = quotes.inside(span.start) or _quote_hugged(text, span) or _example_cued(text, span.start)
            attributed = _attributed(text, low, span)
        cands.extend(_Cand(f, quoted, attributed, span) for f in found_list)
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


def _fenced_whole(text: str, span: _Span, lead: int, tail: int) -> bool:
    """Does the span cover the whole reply, apart from whitespace and code fences?"""
    before = text[lead : span.start].strip()
    after = text[span.end : tail].strip()
    return before in ("", "```", "```json", "```JSON") and after in ("", "```")


# ---------------------------------------------------------------------------- labels
# No re.IGNORECASE: it makes sre several times slower.  Label patterns are lower-case
# and run on _ascii_lower(text), which keeps every position of the original.
_SEP = r"[ \t]{0,3}(?:[*_]{1,2})?[ \t]{0,3}"
_RESULT_TAG = re.compile(
    r"\[\s{0,3}result\s{0,3}\]" + _SEP + r"[:\-]?" + _SEP
    + r"(?:(?:score|result|rating)[ \t]{0,2}(?:of|is|[:=])?[ \t]{0,3})?" + _VALUE,
)
_RATING_BRACKETS = re.compile(
    r"(?:rating[ \t]{0,3}(?:[:=：]|of|is)?|score[ \t]{0,3}[:=：])" + _SEP
    + r"\[\[\s{0,3}" + _VALUE + r"\s{0,3}\]\]",
)
_GRADE = re.compile(
    r"grade[ \t]{0,3}[:=]" + _SEP
    + r"(?P<g>[cpi](?![A-Za-z])|incorrect(?![A-Za-z])|correct(?![A-Za-z])|partial(?:ly\s{1,3}correct)?(?![A-Za-z]))",
)
_DOUBLE_BRACKETS = re.compile(r"\[\[\s{0,3}" + _VALUE + r"\s{0,3}\]\]")
_FIELD = re.compile(
    r"(?:(?:final|overall|total)[ \t]{1,3})?(?:score|rating|result|grade|points|overall)(?![A-Za-z_])" + _SEP
    + r"(?:\([^()\n]{0,24}\)" + _SEP + r")?[:=：]" + _SEP + _VALUE,  # "Score (1-10): 7"
)
_BRACKET_FIELD = re.compile(r"[(\[][ \t]{0,2}(?:score|rating)[ \t]{0,2}[:=]?[ \t]{0,2}" + _VALUE + r"[ \t]{0,2}[)\]]")
_LONE_BRACKET = re.compile(r"^[ \t]{0,8}\[[ \t]{0,3}" + _VALUE + r"[ \t]{0,3}\][ \t]{0,8}$", re.MULTILINE)
_CONFIDENCE = re.compile(
    r"confidence(?:[ \t]{1,3}(?:level|score|rating))?" + _SEP + r"(?:[:=]|is)?" + _SEP
    + r"(?:(?P<word>very[ \t]{1,3}high|high|medium|moderate|low|very[ \t]{1,3}low)(?![A-Za-z])|" + _VALUE + ")",
)
# Words in the clause before a score mention that make it not the judge's score.
_NEGATION = re.compile(
    r"(?<![A-Za-z])(?:not|never|nor|cannot|instead|rather|than|unless|except|reference|example|e\.g)"
    r"(?![A-Za-z])|n't",
)
_CLAUSE_END = re.compile(r"[.!?;\n](?!\d)")


_FIELD_CLAUSE_END = re.compile(r"[.!?;,:\n](?!\d)")


def _negated_before(text: str, start: int, width: int = 60, clause: re.Pattern[str] = _CLAUSE_END) -> bool:
    """A negation or reference word earlier in the same clause (within ``width`` chars).

    Prose uses a sentence-wide window ("does not fully align with the criteria for a
    score of 5"); a ``Score:`` field only looks at the few words right before it
    ("Reference (Score 5)"), so "No issues, Score: 5" stays a score.
    """
    window = text[max(0, start - width) : start]
    cut = sentence = 0
    for m in clause.finditer(window):
        cut = m.end()
    for m in _CLAUSE_END.finditer(window):
        sentence = m.end()
    if _NEGATION.search(window, cut) is not None:
        return True
    # "For example, Score: 1 means ...": a reference word reaches across commas.
    return _REFERENCE.search(window, sentence) is not None


_REFERENCE = re.compile(r"(?<![A-Za-z])(?:reference|example|e\.g)(?![A-Za-z])")


_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")


def _matches(pattern: re.Pattern[str], text: str, pos: int = 0) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)``, skipped when a required word is absent, and with the
    word-start check done here rather than as a leading lookbehind.

    Why: sre cannot use its fast prefix scan for a pattern that starts with a
    lookbehind, which made each such pattern cost ~50 ms per megabyte.
    """
    needles = _NEEDLES.get(pattern)
    if needles is not None and not any(n in text for n in needles):
        return
    word_start = pattern in _WORD_START
    for m in pattern.finditer(text, pos):
        if word_start and m.start() > 0 and text[m.start() - 1] in _WORD_CHARS:
            continue
        yield m


def _last(
    pattern: re.Pattern[str], text: str, accept: Callable[[re.Match[str]], bool] | None = None
) -> re.Match[str] | None:
    """The last valid match, searched in a growing tail of the text.

    A reply holding thousands of markers then costs a few thousand characters of
    matching, not one Python step per marker.
    """
    n = len(text)
    size = 4096
    while True:
        start = max(0, n - size)
        last = None
        for m in _matches(pattern, text, start):
            if "num" in pattern.groupindex and not _value_after(text, m):
                continue
            if accept is not None and not accept(m):
                continue
            last = m
        if last is not None or start == 0:
            return last
        size *= 8


def _first(
    pattern: re.Pattern[str], text: str, check_negation: bool = False, skip: _Skip | None = None
) -> re.Match[str] | None:
    for count, m in enumerate(_matches(pattern, text)):
        if count >= _MAX_FIRST_SCAN:
            return None
        if "num" in pattern.groupindex and not _value_after(text, m):
            continue
        if check_negation and _negated_before(text, m.start(), 24, _FIELD_CLAUSE_END):
            continue
        if skip is not None and skip(m.start()):
            continue
        return m
    return None


class _Skip:
    """Marks that are quoted content: inside quotation marks, or right after an
    attribution verb ("the output claims Score: 10/10")."""

    def __init__(self, quotes: _LazyQuotes, low: str) -> None:
        self.quotes = quotes
        self.low = low

    def __call__(self, start: int) -> bool:
        if _LABEL_ATTRIBUTION.search(self.low, max(0, start - 40), start) is not None:
            return True
        return self.quotes.inside(start)

    def accept(self, m: re.Match[str]) -> bool:
        return not self(m.start())


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    """Blank out spans with spaces (same length: positions stay valid)."""
    if not spans:
        return text
    parts: list[str] = []
    pos = 0
    for s, e in spans:
        if s < pos:
            continue
        parts.append(text[pos:s])
        parts.append(" " * (e - s))
        pos = e
    parts.append(text[pos:])
    return "".join(parts)


def _marker_score(text: str, low: str, skip: _Skip) -> tuple[_Found, tuple[int, int]] | None:
    """The strongest format marker or labelled field with a score (tiers in order).

    Patterns run on ``low`` (the ASCII-lowered text); ``text`` keeps the case that
    grade letters need.  Quoted markers (``skip``) are not candidates.
    """
    has_digit = _DIGIT.search(low) is not None
    m = None
    if has_digit:
        m = _last(_RESULT_TAG, low, skip.accept)
        if m is None:
            m = _first(_RATING_BRACKETS, low, skip=skip)
    if m is not None:
        f = _found_from_value(m)
        if f is not None:
            return f, m.span()
    # A grade letter must be upper case: "Grade: i think..." is prose.
    g = _last(_GRADE, low, lambda c: (len(c.group("g")) > 1 or text[c.start("g")].isupper()) and skip.accept(c))
    if g is not None:
        word = g.group("g").lower()
        if word.startswith("p"):
            return _Found(fixed=0.5), g.span()
        fixed, verdict = _GRADE_LETTERS[word]
        return _Found(fixed=fixed, verdict=verdict), g.span()
    if not has_digit:
        return None
    for pattern, neg in ((_DOUBLE_BRACKETS, False), (_FIELD, True), (_BRACKET_FIELD, True), (_LONE_BRACKET, False)):
        m = _first(pattern, low, check_negation=neg, skip=skip)
        if m is not None:
            f = _found_from_value(m)
            if f is not None:
                return f, m.span()
    return None


# ---------------------------------------------------------------------------- verdict words
_ANSWER_TAG = re.compile(r"<answer>\s{0,20}(?P<v>pass|fail|partial)(?:ed)?\s{0,20}</answer>")
_VERDICT_LABEL = re.compile(
    r"(?:(?:final|overall)[ \t]{1,3})?(?:verdict|decision|judge?ment|outcome|answer|result)" + _SEP
    + r"[:=：]" + _SEP + r"(?P<v>pass|fail|partial)(?:ed)?(?![A-Za-z])",
)
_BARE_VERDICT = re.compile(r"(?P<v>PASS|FAIL)(?:ED)?(?![A-Za-z])")
_LONE_VERDICT_LINE = re.compile(r"^[ \t*_#>`\"'.\-]{0,8}(?P<v>pass|fail)(?:ed)?[ \t*_`\"'.!]{0,8}$", re.MULTILINE)
_VOCAB_JOIN = re.compile(r"\s{0,3}(?:or|and|nor|/|\||,)\s{0,3}")


def _marker_verdict(text: str, low: str, skip: _Skip) -> tuple[str | None, bool, tuple[int, int] | None, bool]:
    """(verdict, partial, span, strong): a tag or label is strong, a bare word is not.

    Quoted tags, labels and words (``skip``) are not candidates; a verdict alone on its
    line may wear quotes as decoration.
    """
    for pattern in (_ANSWER_TAG, _VERDICT_LABEL):
        m = _last(pattern, low, skip.accept)
        if m is not None:
            v = m.group("v").lower()
            if v == "partial":
                return None, True, m.span(), True
            return v, False, m.span(), True
    if "pass" not in low and "fail" not in low:
        return None, False, None, False

    def joined(a: re.Match[str], b: re.Match[str]) -> bool:
        # "PASS or FAIL", "PASS/FAIL": the vocabulary, not a decision.
        if a.group("v").lower() == b.group("v").lower():
            return False
        return _VOCAB_JOIN.fullmatch(low, a.end(), b.start("v")) is not None

    # The last bare word that is not part of such a pair wins.  Look at a growing tail
    # of the reply so that a reply full of verdict words stays cheap.
    n = len(text)
    size = 4096
    while True:
        start = max(0, n - size)
        tokens = [
            m
            for m in _BARE_VERDICT.finditer(text, start)
            if (m.start() == 0 or text[m.start() - 1] not in _WORD_CHARS)
            and not low[max(0, m.start() - 5) : m.start()].endswith(("not ", "n't "))  # "NOT PASS"
        ]
        tokens += list(_LONE_VERDICT_LINE.finditer(low, start))
        tokens.sort(key=lambda m: m.start("v"))
        for idx in range(len(tokens) - 1, max(-1, len(tokens) - 1 - _MAX_FIRST_SCAN), -1):
            t = tokens[idx]
            if idx == 0 and start > 0:
                break  # its left neighbour may lie before the window: widen it
            if idx > 0 and joined(tokens[idx - 1], t):
                continue
            if idx + 1 < len(tokens) and joined(t, tokens[idx + 1]):
                continue
            if t.re is _BARE_VERDICT and skip(t.start("v")):
                continue  # 'the output says "PASS"': quoted, not the judge's word
            return t.group("v").lower(), False, t.span(), False
        else:
            if start == 0 or len(tokens) > _MAX_FIRST_SCAN:
                return None, False, None, False
        if start == 0:
            return None, False, None, False
        size *= 8


# ---------------------------------------------------------------------------- prose
_RATING_VERB = re.compile(
    r"(?:rate|rated|rating|score|scored|grade|graded|give|gives|giving|given|assign|assigned|gets|receives|merits"
    r"|award|awarded|deserves?|earns?|earned|earning)(?![A-Za-z])(?=[^\d\n.;!?]{0,60}\d)",
)
_OBJECT_VERBS = {"give", "gives", "giving", "given", "assign", "assigned", "award", "awarded", "gets", "receives", "merits"}
_TOKEN = re.compile(r"[ \t]{0,4}(?:(?P<word>[A-Za-z\u2019']{1,30})|(?P<num>[-+]?\d)|(?P<punct>\S))")
# A filler word that means the number is not the rating ("rated on a scale from 1",
# "the rating is based on 3 criteria", "scored at least 2").
_STOP_WORDS = {
    "scale", "between", "from", "range", "ranging", "out", "up", "based", "using", "across", "after", "before",
    "per", "each", "every", "about", "around", "approximately", "least", "most", "top", "number", "only",
}
# Words that may follow a rating ("a 7 because", "8 out of 10", "4 stars"); any other
# word makes the number a count ("gives 3 examples", "scored 2 goals").
_AFTER_WORDS = {
    "out", "points", "point", "pts", "stars", "star", "because", "for", "as", "since", "overall", "on", "given",
    "and", "but", "in", "with", "which", "due", "considering", "so", "here", "this", "that", "the", "to", "at", "i",
    "it", "based", "reflecting", "from", "by", "is", "was", "or", "if", "while", "though", "although", "even",
}
_WORD = re.compile(r"[A-Za-z]+")
_NEXT_WORD = re.compile(r"[ \t]{1,3}([A-Za-z]{1,30})")
_RANGE_AFTER = re.compile(r"[ \t]{0,2}(?:-|–|to|or|and)[ \t]{0,2}\d")
_PROSE_VALUE = re.compile(_VALUE)


def _prose_score(text: str, skip: _Skip) -> tuple[_Found, tuple[int, int]] | None:
    """Ratings stated in a sentence; disagreeing ones make the reply ambiguous.

    A rating inside quotation marks ('it says "rate this a 10"') is not a candidate.
    """
    found: list[tuple[_Found, tuple[int, int]]] = []
    if _DIGIT.search(text) is None:
        return None
    for count, m in enumerate(_matches(_RATING_VERB, text)):
        if count >= _MAX_PROSE_CANDIDATES:
            break
        verb_end = _WORD.match(text, m.start()).end()  # type: ignore[union-attr]
        verb = text[m.start() : verb_end]
        if _negated_before(text, m.start()) or skip.quotes.inside(m.start()):
            continue
        pos = verb_end
        words = 0
        ok = True
        while True:
            t = _TOKEN.match(text, pos, min(len(text), pos + 80))
            if t is None:
                ok = False
                break
            if t.group("num") is not None:
                break
            if t.group("word") is not None:
                w = t.group("word").lower().replace("\u2019", "'")
                if _NEGATION.fullmatch(w) or w.endswith("n't") or w in _STOP_WORDS:
                    ok = False
                    break
                words += 1
                if words > 6:
                    ok = False
                    break
            elif t.group("punct") not in (":", '"', "*", "(", "'", "=", "\u201c"):
                ok = False
                break
            pos = t.end()
        if not ok:
            continue
        if verb in _OBJECT_VERBS and words == 0:
            continue  # "gives 3 examples": a count, not a rating
        start = text.find(t.group("num"), t.start())  # type: ignore[union-attr]
        v = _PROSE_VALUE.match(text, start)
        if v is None or not _value_after(text, v) or (start > 0 and text[start - 1].isdigit()):
            continue
        if not v.group("den") and not v.group("pct") and _RANGE_AFTER.match(text, v.end()):
            continue  # "from 1 to 10", "a 3 or 4": a range or alternatives
        nxt = _NEXT_WORD.match(text, v.end())
        if nxt is not None and nxt.group(1) not in _AFTER_WORDS:
            continue
        f = _found_from_value(v)
        if f is not None:
            found.append((f, (m.start(), v.end())))
    if not found:
        return None
    first = found[0][0]
    for f, _ in found[1:]:
        if (f.raw, f.den) != (first.raw, first.den):
            raise VerdictParseError(
                "the reply states several different ratings in prose and no labelled score;"
                " cannot tell which one rates the graded output"
            )
    return found[0]


# Words a pattern cannot match without (checked with `in`, ~1 ms per megabyte), and the
# patterns that must start at a word boundary.  Patterns run on the lowered text.
_NEEDLES: dict[re.Pattern[str], tuple[str, ...]] = {
    _RESULT_TAG: ("result",),
    _RATING_BRACKETS: ("[[",),
    _DOUBLE_BRACKETS: ("[[",),
    _GRADE: ("grade",),
    _FIELD: ("score", "rating", "result", "grade", "points", "overall"),
    _BRACKET_FIELD: ("score", "rating"),
    _LONE_BRACKET: ("[",),
    _CONFIDENCE: ("confidence",),
    _ANSWER_TAG: ("<answer>",),
    _VERDICT_LABEL: ("pass", "fail", "partial"),
    _RATING_VERB: ("rat", "scor", "grad", "giv", "assign", "award", "deserv", "earn", "gets", "receives", "merits"),
}
_WORD_START = {_RATING_BRACKETS, _GRADE, _FIELD, _CONFIDENCE, _VERDICT_LABEL, _RATING_VERB}


# ---------------------------------------------------------------------------- bare number
_BARE = re.compile(
    r"[*_`\"'\s]{0,6}(?P<num>[-+]?(?:\d{1,15}(?:\.\d{1,12})?|\.\d{1,12}))"
    r"(?:\s{0,2}(?:/|out\s{1,3}of)\s{0,2}(?P<den>\d{1,15}(?:\.\d{1,12})?))?(?P<pct>\s{0,2}%)?"
    r"(?:\s{0,2}points?)?[*_`\"'\s]{0,6}",
)


def _decoration(line: str) -> bool:
    """Lines a UI adds around a bare answer: quotes ('> ...'), italics, fences."""
    s = line.strip()
    return (
        s.startswith(">")
        or s.startswith("```")
        or (len(s) > 2 and s[0] in "*_" and s[-1] in "*_")
        or s.lower() in ("<think>", "</think>")
    )


def _bare_first(text: str) -> tuple[_Found, tuple[int, int]] | None:
    """The whole reply, or its first non-fence line, is a number."""
    pos = 0
    n = len(text)
    for _ in range(64):  # only the first few lines can hold a score-first answer
        if pos >= n:
            break
        nl = text.find("\n", pos)
        end = n if nl == -1 else nl
        line = text[pos:end]
        if line.strip() and not line.strip().startswith("```"):
            if end - pos > 80:
                return None
            m = _BARE.fullmatch(line)
            if m is None:
                return None
            f = _found_from_value(m)
            return (f, (pos, end)) if f is not None else None
        pos = end + 1
    return None


def _bare_last(text: str) -> tuple[_Found, tuple[int, int]] | None:
    """The last line is a number and every line before it is decoration."""
    stripped = text.rstrip()
    nl = stripped.rfind("\n")
    line = stripped[nl + 1 :]
    if len(line) > 80:
        return None
    m = _BARE.fullmatch(line)
    if m is None:
        return None
    head = stripped[: max(nl, 0)]
    if len(head) > 2000 or not all(_decoration(x) for x in head.split("\n") if x.strip()):
        return None
    f = _found_from_value(m)
    return (f, (nl + 1, len(stripped))) if f is not None else None


# ---------------------------------------------------------------------------- assembly
def _check_scale(scale: Any) -> tuple[float, float]:
    try:
        lo, hi = scale
    except (TypeError, ValueError):
        raise ValueError("scale must be a (min, max) pair of numbers") from None
    if isinstance(lo, bool) or isinstance(hi, bool) or not all(isinstance(x, numbers.Real) for x in (lo, hi)):
        raise ValueError("scale must be a (min, max) pair of numbers")
    try:
        lo_f, hi_f = float(lo), float(hi)
    except (OverflowError, TypeError, ValueError):
        raise ValueError("scale bounds must be finite numbers") from None
    if not (_finite(lo_f) and _finite(hi_f)):
        raise ValueError("scale bounds must be finite")
    if not lo_f < hi_f:
        raise ValueError("scale min must be below scale max")
    if not _finite(hi_f - lo_f):
        raise ValueError("scale range is too large")
    return lo_f, hi_f


def _normalize(found: _Found, scale: tuple[float, float]) -> float | None:
    lo, hi = scale
    if found.raw is not None:
        if found.den is not None and found.den != hi:
            value = found.raw / found.den  # a fraction of full marks on another scale
        else:
            value = (found.raw - lo) / (hi - lo)
    elif found.fixed is not None:
        value = found.fixed
    elif found.verdict is not None:
        value = 1.0 if found.verdict == "pass" else 0.0
    else:
        return None
    if math.isnan(value):
        return None
    return round(min(1.0, max(0.0, value)), 6)


def _result(found: _Found, scale: tuple[float, float], reasoning: str, strategy: str) -> ParsedVerdict:
    score = _normalize(found, scale)
    if score is None:  # pragma: no cover - callers pass usable candidates only
        raise VerdictParseError("no usable score in the judge's reply")
    return ParsedVerdict(
        score=score,
        raw_score=found.raw,
        verdict=found.verdict,
        confidence=found.confidence,
        reasoning=reasoning,
        strategy=strategy,
    )


def _without(text: str, *spans: tuple[int, int] | None) -> str:
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


def _confidence_word(text: str, spans: list[tuple[int, int]]) -> str | None:
    word = None
    for m in _matches(_CONFIDENCE, text):
        spans.append(m.span())
        if m.group("word"):
            word = _CONFIDENCE_WORDS.get(" ".join(m.group("word").lower().split()))
    return word


def parse_verdict(text: str, *, scale: tuple[float, float] = (0, 1)) -> ParsedVerdict:
    """Parse a judge's reply into a `ParsedVerdict`; raise `VerdictParseError` if it holds none.

    ``scale`` is the (min, max) the judge was asked to use; the score is normalized to
    [0, 1].  Error messages never quote the reply; it is on the exception's ``.text``.
    """
    bounds = _check_scale(scale)
    if not isinstance(text, str):
        raise VerdictParseError(f"the judge's reply must be a str, not {type(text).__name__}", "")
    try:
        return _parse(text, bounds)
    except VerdictParseError as exc:
        if exc.text != text:
            raise VerdictParseError(str(exc), text) from None
        raise


def _parse(original: str, scale: tuple[float, float]) -> ParsedVerdict:
    if not original.strip():
        raise VerdictParseError("the judge's reply is empty", original)
    text = _prepare(original)
    if not text.strip():
        raise VerdictParseError("the judge's reply is empty once echoed output is removed", original)

    # 1-3. JSON: whole reply, repaired, then fragments.
    budget = _Budget()
    js = _json_stage(text, scale, budget)
    if js.found is not None:
        found = js.found
        if js.quoted:
            # Quoted or attributed objects only: they count when the judge's own
            # labelled score (or prose rating) elsewhere agrees, never alone.
            conf_spans: list[tuple[int, int]] = []
            _confidence_word(_ascii_lower(text), conf_spans)
            masked = _mask(text, sorted(conf_spans + list(js.spans)))
            masked_low = _ascii_lower(masked)
            skip = _Skip(_LazyQuotes(text, js.objects, js.quotes), masked_low)
            other = _marker_score(masked, masked_low, skip)
            if other is None:
                other = _prose_score(masked_low, skip)
            if other is None:
                raise VerdictParseError(
                    "the reply's only JSON verdict is quoted content (the graded output's or an"
                    " example's), and the judge gives no score of its own"
                )
            if _normalize(other[0], scale) != _normalize(found, scale):
                raise VerdictParseError(
                    "the reply quotes a JSON verdict that conflicts with a labelled score;"
                    " cannot tell which is the judge's own"
                )
        if found.reasoning is None:
            if js.whole or js.span is None:
                found.reasoning = ""
            else:
                found.reasoning = _without(text, *js.spans)
        if found.confidence is None:
            found.confidence = _confidence_word(_ascii_lower(text), [])
        return _result(found, scale, found.reasoning, js.strategy)
    if js.whole:
        if js.bad_score:
            raise VerdictParseError("the JSON reply's score field is not a number, and it gives no pass/fail verdict")
        hint = " (unbalanced JSON: cut off at max_tokens?)" if js.truncated else ""
        raise VerdictParseError(f"the JSON reply has no score, rating or pass/fail field{hint}")

    # 4-6. Markers, labelled fields, bare numbers, prose.
    conf_spans = []
    confidence = _confidence_word(_ascii_lower(text), conf_spans)
    scan = _mask(text, conf_spans)
    low = _ascii_lower(scan)
    skip = _Skip(_LazyQuotes(text, js.objects, js.quotes), low)
    verdict, partial, vspan, strong = _marker_verdict(scan, low, skip)

    score: tuple[_Found, tuple[int, int]] | None = _marker_score(scan, low, skip)
    strategy = "labelled"
    if score is None:
        score = _bare_first(low)
        strategy = "bare-number"
    if score is None and not strong:
        score = _prose_score(low, skip)
        strategy = "prose"
    if score is None and not strong:
        score = _bare_last(low)
        strategy = "bare-number"
    if score is not None:
        found, span = score
        if found.verdict is None and strong:
            # Only a labelled verdict joins a score: a stray "FAIL" in the prose
            # ("the old version would FAIL") is not the judge's decision.
            found.verdict = verdict
        found.confidence = confidence
        # A rating sentence is part of the prose; a marker line is not.
        reasoning = text.strip() if strategy == "prose" else _without(text, span, vspan if strong else None)
        return _result(found, scale, reasoning, strategy)
    if verdict is not None:
        found = _Found(verdict=verdict, confidence=confidence)
        return _result(found, scale, _without(text, vspan, *conf_spans), "labelled")

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


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object a reply carries (whole, repaired, or found in prose/fences), or None.

    Uses the same bounded extraction as `parse_verdict`: the whole reply first, then the
    first top-level object in the text that parses directly or after repair.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    text = _prepare(text)
    body = _strip_fences(text.strip())
    if body[:1] in ("{", "["):
        try:
            value = json.loads(body, strict=False)
        except Exception:
            value = None
        if isinstance(value, dict):
            return value
        if isinstance(value, list):
            for item in value:
                if isinstance(item, dict):
                    return item
    spans, _ = _scan_objects(text)
    budget = _Budget()
    for span in spans[:_MAX_JSON_CANDIDATES]:
        value, _ = _load(text[span.start : span.end], budget)
        if isinstance(value, list):
            value = next((v for v in value if isinstance(v, dict)), None)
        if isinstance(value, dict) and value:
            return value
    return None
