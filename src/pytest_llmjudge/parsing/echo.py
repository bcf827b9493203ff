"""Copies of the prompt in a reply, recognized by content, tags or no tags.

A weak judge copies its prompt back, the output under test (which may carry a score) included.  A copy
is a run of words the prompt also holds: `DATA_GRAM` words of a message that fences data (it may carry
a planted score), `TEXT_GRAM` words of the instructions (a judge's own verdict may share a few words
with them), or a whole data block verbatim.  All in linear time: each message's word runs go into a
set, each run of the reply is looked up once, and `_may_copy` rules most messages out before that.
"""

from __future__ import annotations

import re

from .patterns import install, lazy
from .prepare import ECHO_PLACEHOLDER, ascii_lower

DATA_GRAM = 6  # words in a copied run of a data block
TEXT_GRAM = 10  # words in a copied run of the instructions: longer than the phrases a judge reuses
_MIN_BLOCK = 8  # a data block this long (with a letter) is matched whole, however few its words
_WORD = lazy(r"\w+")
_DATA_BLOCK = lazy(r"<([A-Za-z][A-Za-z0-9_]{0,31})-([0-9a-f]{8,64})>\n(.*?)\n</\1-\2>", re.DOTALL)
_GAP = lazy(r"[\W_]{0,3}")  # what may lie between two copies that make one
# A reasoning that is only a placeholder of a format instruction: "<a few sentences: ...>".
_PLACEHOLDER = lazy(r"<[^<>\n]{2,300}>")

_DIRECT_LIMIT = 200_000  # distinct reply words x message characters below which words are looked for as text


def _word_runs(words: list[str], size: int) -> list[tuple[str, ...]]:
    return list(zip(*(words[i:] for i in range(size)), strict=False))


def _may_copy(words: list[str], distinct: set[str], message: str, size: int) -> bool:
    """Could ``message`` (lower-cased) hold ``size`` of the reply's words in a row?

    Each of the reply's ``distinct`` words is looked for as text, sparing the tokenizing of a message
    that is new to each judgment; a large pair takes the word set, in linear time.
    """
    if len(distinct) * len(message) <= _DIRECT_LIMIT:
        held = {w for w in distinct if w in message}
    else:
        held = distinct.intersection(_WORD.findall(message))
    stretch = 0
    for word in words:
        stretch = stretch + 1 if word in held else 0
        if stretch >= size:
            return True
    return False


def copied_spans(text: str, prompt: tuple[str, ...]) -> list[tuple[int, int]]:
    """Where ``text`` copies ``prompt``: merged, sorted (start, end) spans.

    A message that fences data (the output, input, reference) is searched at the data's run size,
    whole; any other message (the instructions) at the instructions' size.
    """
    spans: list[tuple[int, int]] = []
    low = ascii_lower(text)
    words = _WORD.findall(low)
    distinct = set(words)
    where: list[tuple[int, int]] = []
    for message in prompt:
        # A data block closes on a line of its own: the instructions, which name the tags inline, are not searched.
        blocks = [m.group(3) for m in _DATA_BLOCK.finditer(message)] if "\n</" in message else []
        for block in blocks:
            body = block.strip()
            if len(body) < _MIN_BLOCK or not any(c.isalpha() for c in body):
                continue  # too short to be told from the judge's own words
            at = text.find(body)
            while at != -1:
                spans.append((at, at + len(body)))
                at = text.find(body, at + len(body))
        size = DATA_GRAM if blocks else TEXT_GRAM
        if len(words) < size:
            continue
        message_low = ascii_lower(message)
        if not _may_copy(words, distinct, message_low, size):
            continue
        known = frozenset(_word_runs(_WORD.findall(message_low), size))
        hits = [i for i, run in enumerate(_word_runs(words, size)) if run in known]
        if hits and not where:
            where = [m.span() for m in _WORD.finditer(low)]
        # Consecutive runs make one copy: one span per stretch, not one per run.
        first = prev = hits[0] if hits else 0
        for i in hits[1:]:
            if i != prev + 1:
                spans.append((where[first][0], where[prev + size - 1][1]))
                first = i
            prev = i
        if hits:
            spans.append((where[first][0], where[prev + size - 1][1]))
    if not spans:
        return []
    spans.sort()
    merged = [spans[0]]
    for s, e in spans[1:]:
        last_s, last_e = merged[-1]
        if s <= last_e or _GAP.fullmatch(text, last_e, s):
            merged[-1] = (last_s, max(last_e, e))
        else:
            merged.append((s, e))
    return merged


def only_copies(reasoning: str) -> bool:
    """Is this reasoning nothing of the judge's own: copies of the prompt, or a format placeholder?"""
    stripped = reasoning.strip()
    marker = ECHO_PLACEHOLDER.strip()
    if marker in stripped:
        return not any(c.isalnum() for c in stripped.replace(marker, ""))
    return _PLACEHOLDER.fullmatch(stripped) is not None


install(globals())  # first uses swap the compiled patterns in (see patterns)
