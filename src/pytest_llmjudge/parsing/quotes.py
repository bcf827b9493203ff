"""Quoted and attributed content: what in a reply is a quotation or the graded output's words.

Such content is never the judge's verdict.  Quote marks are paired across lines, outside JSON objects,
in one lazy pass over at most 5,000 marks (text past them is not quote-aware).  A candidate is also
quoted when a quote mark hugs it or its sentence introduces it as an example; it is attributed when
its sentence introduces it as what the output says (within 60 characters, with no negation or
hand-over word between), or the text right after it refers back to the output.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left, bisect_right

from .json_scan import Span, scan_objects
from .patterns import install, lazy
from .prepare import ECHO_PLACEHOLDER

_QUOTE_LIMIT = 2000  # a double quote closes within this many characters, or it is stray
_SQUOTE_LIMIT = 500  # single quotes double as apostrophes: a shorter reach
_MAX_QUOTES = 5_000  # quote marks examined per reply; past them no position counts as quoted
_QUOTE_MARKS = lazy("[\"'\u201c\u201d\u2018\u2019]")
_NO_OPEN_AFTER = frozenset(")]}.,;:!?\"'\u201d\u2019")  # a mark after these closes, never opens
_SQUOTE_OPEN_AFTER = frozenset("([{:-\u2014")  # besides whitespace: where a ' may open
_SQUOTE_CLOSE_BEFORE = frozenset('.,;:!?)]}-\u2014"')  # besides whitespace: where a ' may close


class Quotes:
    """The parts of the reply inside quotation marks, paired across lines, outside JSON objects.

    A straight ``"`` opens before a non-space unless a letter, digit or closing punctuation precedes
    it, and closes after a non-space unless a letter or digit follows (``12" pipes`` only closes,
    ``a"b`` does neither).  A ``'`` opens only after a space or an opening bracket and closes only
    before a space or punctuation (``don't``, ``it's`` do neither); curly quotes say their side.  A
    closing mark pairs with the EARLIEST pending opener of its kind within reach (2,000 characters
    for ``"``, 500 for ``'``); openers out of reach are stray.
    """

    def __init__(self, text: str, objects: list[Span]) -> None:
        spans: list[tuple[int, int]] = []
        pending: dict[bool, list[int]] = {True: [], False: []}  # double?, opener positions
        n = len(text)
        edges = [0, *(x for s in objects for x in (s.start, s.end)), n]  # objects are sorted, not nested
        marks = itertools.chain.from_iterable(
            _QUOTE_MARKS.finditer(text, a, b) for a, b in zip(edges[::2], edges[1::2], strict=True)
        )
        for m in itertools.islice(marks, _MAX_QUOTES):
            i = m.start()
            c = m.group()
            prev = text[i - 1] if i > 0 else " "
            nxt = text[i + 1] if i + 1 < n else " "
            double = c in '"\u201c\u201d'
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
                j = bisect_left(waiting, i - (_QUOTE_LIMIT if double else _SQUOTE_LIMIT))
                if j < len(waiting):
                    spans.append((waiting[j], i + 1))
                    waiting.clear()
                    continue
                waiting.clear()  # every opener is out of reach: stray
            if can_open:
                waiting.append(i)
        # Single- and double-quoted spans may nest or overlap: merge them.
        self.starts: list[int] = []
        self.ends: list[int] = []
        for s, e in sorted(spans):
            if self.ends and s < self.ends[-1]:
                self.ends[-1] = max(self.ends[-1], e)
            else:
                self.starts.append(s)
                self.ends.append(e)

    def inside(self, pos: int) -> bool:
        return self.span_of(pos) is not None

    def span_of(self, pos: int) -> tuple[int, int] | None:
        """The (start, end) of the quotation holding ``pos``, or None when ``pos`` is not quoted."""
        k = bisect_right(self.starts, pos) - 1
        return (self.starts[k], self.ends[k]) if k >= 0 and pos < self.ends[k] else None


# Attribution: a candidate introduced as what the graded output says is quoted content.
_SOURCE = r"(?:output|response|answer|submission|completion|candidate|text|model|assistant|reply|message)"
_ATTR_VERB = (
    r"(?:says|said|claims|claimed|contains|contained|includes|included|asks|asked|reads|writes|wrote"
    r"|requests|requested|demands|demanded|tries|tried|attempts|attempted|instructs|instructed|tells|told"
    r"|states|stated|insists|insisted|suggests|suggested|proposes|proposed|embeds|embedded|injects|injected"
    r"|ends|ended|outputs|printed|prints|returns|returned|mentions|mentioned|shows|showed|displays|displayed"
    r"|(?:is|was)[ \t]+(?:an?|the)(?=[ \t]+(?:[a-z]{1,12}[ \t]+){0,2}?(?:json|object|dict|structure)))"
)
# "the output (also) says", "the model's response contains", "it says", "they claim", "quoted".
_ATTRIBUTION = lazy(
    r"(?<![a-z])(?:(?:the|this|that|its|their)[ \t]+(?:[a-z']{1,12}[ \t]+){0,2}?"
    + _SOURCE
    + r"(?:'s)?|it|they)[ \t]+(?:[a-z]{1,12}[ \t]+){0,2}?"
    + _ATTR_VERB
    + r"(?![a-z])"
    r"|(?<![a-z])(?:quoted|quoting|verbatim)(?![a-z])"
)
# "... {"score": 1.0}. That is what the output asks for."
_BACKREF = lazy(
    r"[\s`'\".,;:!?)\]\u201d\u2014-]{0,16}(?:that|this|which|it)(?:'s|[ \t]+is|[ \t]+was)[ \t]+"
    r"(?:(?:what|how|exactly|just|precisely|also|the|its|an?)[ \t]+){0,3}" + _SOURCE + r"(?![a-z])"
)
_ATTR_NEGATION = lazy(r"(?<![a-z])(?:no|not|nothing|never|none|nor|without)(?![a-z])|n't")
# Words that hand over to the judge's own verdict: "contains errors, so my score: {...}".
_OWN_INTRO = lazy(
    r"(?<![a-z])(?:so|therefore|thus|hence|overall|my|mine|verdict|score|rating|grade|evaluation|assessment"
    r"|judge?ment|conclusion|final)(?![a-z])"
)
_SENTENCE_BREAK = lazy(r"[.!?](?=\s)|\n[ \t]*\n")
# A label right after an attribution verb: 'the output claims Score: 10/10'.
_LABEL_ATTRIBUTION = lazy(
    r"(?<![a-z])(?:says|said|claims|claimed|asks|asked|reads|writes|wrote|requests|requested|demands"
    r"|demanded|tries|tried|instructs|insists|suggests|contains|includes)(?:[ \t]{1,3}(?:for|that|with))?"
    r"[ \t]{0,3}[:\-]?[ \t]{0,3}[\"'\u201c\u2018]?[ \t]{0,2}$"
)
# "in JSON format:" introduces the real answer, so "format" is not a cue.
_EXAMPLE_CUE = lazy(r"\b(?:example|e\.g\.|for instance|such as|like this)\b", re.IGNORECASE)


def attributed_to_output(low: str, span: Span) -> bool:
    """Is the object introduced (or followed) as what the graded output says?

    Before it, in the same sentence and at most 60 characters from the object, with no
    negation, no hand-over word ("so", "my", "verdict"...) and no removed echo block in
    between: "the output contains {...}", "it says: {...}", "quoted: {...}", "the output is a
    JSON object with this structure: {...}".  Right after it: "That is what the output asks for".
    """
    if attributed_before(low, span.start):
        return True
    return _BACKREF.match(low, span.end, min(len(low), span.end + 160)) is not None


def attributed_before(low: str, start: int) -> bool:
    """Does the sentence before ``start`` introduce what follows as the graded output's words
    ("the output includes a rating of ...")?"""
    window = low[max(0, start - 200) : start]
    cut = 0
    for m in _SENTENCE_BREAK.finditer(window):
        cut = m.end()
    last = None
    for m in _ATTRIBUTION.finditer(window, cut):
        last = m
    between = window[last.end() :] if last is not None else None
    return (
        between is not None
        and len(between) <= 60
        and ECHO_PLACEHOLDER.strip() not in between
        and _ATTR_NEGATION.search(between) is None
        and _OWN_INTRO.search(between) is None
    )


def quote_hugged(text: str, span: Span) -> bool:
    """A quote mark right against the object ("{...}" or {...}".): the end of a quotation
    whose opening may lie out of reach, or that the quoted text itself shifted."""
    before = text[max(0, span.start - 2) : span.start].rstrip(" ")
    if before.endswith(('"', "\u201c", "'", "\u2018")):
        return True
    after = text[span.end : span.end + 3].lstrip(".,;!?")
    return after.startswith(('"', "\u201d", "'", "\u2019"))


def example_cued(text: str, start: int) -> bool:
    """Introduced as an example in its sentence: "For example, {...}", "such as {...}"."""
    w0 = max(0, start - 300)
    cut = w0
    for m in _SENTENCE_BREAK.finditer(text, w0, start):
        cut = m.end()
    nl = text.rfind("\n", cut, start)
    return _EXAMPLE_CUE.search(text, nl + 1 if nl != -1 else cut, start) is not None


class Skip:
    """Marks that are quoted content: inside quotation marks, or right after an attribution verb
    ("the output claims Score: 10/10").  Quotes are paired on first need: most replies never need it."""

    def __init__(self, text: str, low: str, objects: list[Span] | None) -> None:
        self.text = text
        self.low = low
        self.objects = objects  # the JSON objects' spans, when already scanned
        self._quotes: Quotes | None = None

    def quoted(self, pos: int) -> bool:
        if self._quotes is None:
            objects = self.objects if self.objects is not None else scan_objects(self.text)[0]
            self._quotes = Quotes(self.text, objects)
        return self._quotes.inside(pos)

    def __call__(self, start: int) -> bool:
        if _LABEL_ATTRIBUTION.search(self.low, max(0, start - 40), start) is not None:
            return True
        return self.quoted(start)

    def accept(self, m: re.Match[str]) -> bool:
        return not self(m.start())

    def quoted_away(self, start: int, label: int) -> bool:
        """Is the score marker at ``start`` (its label at ``label``) quoted content?  As `__call__`, except that a
        quotation ending the reply is the judge's own: its last words quoting the format it was asked for
        (... as follows: "Rating: [[9]]".)."""
        if _LABEL_ATTRIBUTION.search(self.low, max(0, label - 40), label) is not None:
            return True
        if not self.quoted(start):
            return False
        assert self._quotes is not None  # paired by quoted()
        span = self._quotes.span_of(start)
        if span is None or self.text[span[1] :].strip(" \t\n.!*_"):
            return True
        # Quoted at the very end, unless the quotation is introduced as the output's ("The output claims: "...").
        opening = span[0] + 1
        return _LABEL_ATTRIBUTION.search(self.low, max(0, opening - 40), opening) is not None or attributed_before(
            self.low, span[0]
        )


install(globals())  # first uses swap the compiled patterns in (see patterns)
