"""Bounded pattern searches over the reply, and the clause test that disqualifies a score mention.

Every search is linear in the reply's length: a pattern is skipped when a word it requires is absent,
"last marker" searches look at a growing tail, and "first valid" searches stop after 2,000 matches.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from .candidate import value_after
from .lazy_patterns import install, lazy

MAX_FIRST_SCAN = 2000  # matches examined by "first valid" label searches
WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")

# Words in the clause before a score mention that make it not the judge's score.
NEGATION = lazy(
    r"(?<![A-Za-z])(?:not|never|nor|cannot|instead|rather|than|unless|except|reference|example|e\.g)"
    r"(?![A-Za-z])|n't",
)
_REFERENCE = lazy(r"(?<![A-Za-z])(?:reference|example|e\.g)(?![A-Za-z])")
_CLAUSE_END = lazy(r"[.!?;\n](?!\d)")
FIELD_CLAUSE_END = lazy(r"[.!?;,:\n](?!\d)")

# Right after a score, on its line: a retraction ("No,", "Actually,", "wait,") that leads to another
# number ("The score is 5. No, it is 6."): the judge takes the score back, so it is not the answer.
_RETRACTION = lazy(
    r"[ \t*_.;,!)\]\-\u2013\u2014]{0,6}(?:no|nope|actually|wait|correction|sorry|i[ \t]mean)[ \t]{0,2}"
    r"[,:!\-\u2013\u2014][^\n.!?]{0,40}?(?<![A-Za-z0-9_.])\d"
)


def retracted_after(low: str, end: int) -> bool:
    """Does the judge take back the score that ends at ``end`` for another number?"""
    return _RETRACTION.match(low, end) is not None


# Words a pattern cannot match without (checked with `in`, ~1 ms per megabyte), and the
# patterns that must start at a word boundary, by pattern source: a pattern is compiled on
# first use (see lazy_patterns), and hashing the source is cheaper than hashing a pattern.
# Patterns run on the lowered text.
_NEEDLES: dict[str, tuple[str, ...]] = {}
_WORD_START: set[str] = set()


def gated(pattern: re.Pattern[str], needles: tuple[str, ...], *, word_start: bool = False) -> re.Pattern[str]:
    """Register the words ``pattern`` cannot match without, and whether it starts at a word boundary.

    Why the word-start check is not a leading lookbehind: sre cannot use its fast prefix scan
    for a pattern that starts with one, which made each such pattern cost ~50 ms per megabyte.
    """
    _NEEDLES[pattern.pattern] = needles
    if word_start:
        _WORD_START.add(pattern.pattern)
    return pattern


def matches(pattern: re.Pattern[str], text: str, pos: int = 0) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)``, skipped when a required word is absent, with the word-start check."""
    source = pattern.pattern
    needles = _NEEDLES.get(source)
    if needles is not None:
        for needle in needles:  # a plain loop: any() over a generator costs more than the check
            if needle in text:
                break
        else:
            return iter(())
    if source in _WORD_START:
        return _at_word_start(pattern.finditer(text, pos), text)
    return pattern.finditer(text, pos)  # most calls: no Python step per match


def _at_word_start(found: Iterator[re.Match[str]], text: str) -> Iterator[re.Match[str]]:
    for m in found:
        if m.start() == 0 or text[m.start() - 1] not in WORD_CHARS:
            yield m


def last(
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
        found = None
        for m in matches(pattern, text, start):
            if "num" in pattern.groupindex and not value_after(text, m):
                continue
            if accept is not None and not accept(m):
                continue
            found = m
        if found is not None or start == 0:
            return found
        size *= 8


def first(
    pattern: re.Pattern[str], text: str, check_negation: bool = False, skip: Callable[[int], bool] | None = None
) -> re.Match[str] | None:
    """The first valid match: a whole number, not negated (when asked), not skipped."""
    for count, m in enumerate(matches(pattern, text)):
        if count >= MAX_FIRST_SCAN:
            return None
        if "num" in pattern.groupindex and not value_after(text, m):
            continue
        if check_negation and negated_before(text, m.start(), 24, FIELD_CLAUSE_END):
            continue
        if skip is not None and skip(m.start()):
            continue
        return m
    return None


def negated_before(text: str, start: int, width: int = 60, clause: re.Pattern[str] | None = None) -> bool:
    """A negation or reference word earlier in the same clause (within ``width`` chars).

    Prose uses a sentence-wide window ("does not fully align with the criteria for a
    score of 5"); a ``Score:`` field only looks at the few words right before it
    ("Reference (Score 5)"), so "No issues, Score: 5" stays a score.
    ``clause`` defaults to the sentence end (a default argument would keep the uncompiled stand-in).
    """
    window = text[max(0, start - width) : start]
    cut = sentence = 0
    for m in (_CLAUSE_END if clause is None else clause).finditer(window):
        cut = m.end()
    for m in _CLAUSE_END.finditer(window):
        sentence = m.end()
    if NEGATION.search(window, cut) is not None:
        return True
    # "For example, Score: 1 means ...": a reference word reaches across commas.
    return _REFERENCE.search(window, sentence) is not None


install(globals())  # first uses swap the compiled patterns in (see lazy_patterns)
