"""Attribution cues: what marks a candidate as the graded output's words rather than the judge's.

A candidate is quoted when a quote mark hugs it or its sentence introduces it as an example; it is
attributed when its sentence introduces it as what the output says (within 60 characters, with no
negation or hand-over word between), or the text right after it refers back to the output.
"""

from __future__ import annotations

import re

from .json_scan import Span
from .patterns import install, lazy
from .prepare import ECHO_PLACEHOLDER
from .quotes import LazyQuotes

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
    w0 = max(0, start - 200)
    window = low[w0:start]
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
            and ECHO_PLACEHOLDER.strip() not in between
            and _ATTR_NEGATION.search(between) is None
            and _OWN_INTRO.search(between) is None
        ):
            return True
    return False


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
    """Marks that are quoted content: inside quotation marks, or right after an
    attribution verb ("the output claims Score: 10/10")."""

    def __init__(self, quotes: LazyQuotes, low: str) -> None:
        self.quotes = quotes
        self.low = low

    def __call__(self, start: int) -> bool:
        if _LABEL_ATTRIBUTION.search(self.low, max(0, start - 40), start) is not None:
            return True
        return self.quotes.inside(start)

    def accept(self, m: re.Match[str]) -> bool:
        return not self(m.start())


install(globals())  # first uses swap the compiled patterns in (see patterns)
