"""Copies of the prompt in a reply, recognized by content, tags or no tags, and the one echo rule.

A weak judge copies its prompt back, the output under test (which may carry a score) included.  A copy
is a run of words the prompt also holds: `DATA_GRAM` words of a message that fences data (it may carry
a planted score), `TEXT_GRAM` words of the instructions (a judge's own verdict may share a few words
with them), a whole data block verbatim, or one whole line of a data block of several (a message of a
conversation, labelled `user:` or `assistant:`), so that a turn copied from a transcript is found as
the same text is where it is the whole output.  All in linear time: each message's word runs go into a
set, each run of the reply is looked up once, and `_may_copy` rules most messages out before that.

The echo rule (`mostly_copied`): a reply that is a copy of its prompt with only a word or two of the
judge's own beside it is that copy, not a judgment, whatever kind asked for it.
"""

from __future__ import annotations

import re

from .patterns import install, lazy
from .prepare import ECHO_PLACEHOLDER, ascii_lower, blank_spans

DATA_GRAM = 6  # words in a copied run of a data block
TEXT_GRAM = 10  # words in a copied run of the instructions: longer than the phrases a judge reuses
_MIN_BLOCK = 8  # a data block this long (with a letter) is matched whole, however few its words
_MIN_LINE_WORDS = 3  # a line of a data block of several, of this many words or more, is matched whole
_AROUND = " \t.,;:!?\"'"  # what may close a line (or open it) that a copy of it may leave out
# Fewer words than this of the judge's own beside a copy (numbers and JSON field names aside): the reply
# is the copy.  Three words frame a quote ("The context states ..."); one or two do not ("... OK.").
OWN_WORDS = 3
_WORD = lazy(r"\w+")
_DATA_BLOCK = lazy(r"<([A-Za-z][A-Za-z0-9_]{0,31})-([0-9a-f]{8,64})>\n(.*?)\n</\1-\2>", re.DOTALL)
# The label of a line of a transcript (`assistant: `, `tool result (lookup): `): not part of the message.
_LABEL = lazy(r"^[ \t]*(?:tool result(?: \([^)\n]{0,64}\))?|[A-Za-z_]{1,20}): ")
# A JSON field name, and its value where that is one word (an answer of the reply's format: "pass", "high").
_JSON_KEY = lazy(r'"[^"\n]{1,64}"\s*:(?:\s*"\w{1,32}"(?=\s*[,}\]]))?')
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
    lines: set[str] | None = None  # the short lines of data blocks, lower-cased
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
            # A conversation's turns, or one labelled turn (a plain output is matched whole, above).
            several = "\n" in body or _labelled(body)
            if several and _may_copy(words, distinct, ascii_lower(body), _MIN_LINE_WORDS):
                lines = set() if lines is None else lines
                _short_lines(body, distinct, lines)
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
    # A whole short line of a data block, copied: its text, not its words, which a judge's own format may
    # share ('"SCORE=0.9",' in the output is not the reply's '"score": 0.9').
    for line in lines or ():
        at = low.find(line)
        while at != -1:
            spans.append((at, at + len(line)))
            at = low.find(line, at + len(line))
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


def _labelled(body: str) -> bool:
    """Does `body` open with a transcript's label (`assistant: `, `tool result (lookup): `)?  Without a
    regular expression: every judgment's parse asks it of its output."""
    head, colon, _ = body[:96].partition(": ")
    return bool(colon) and (head.isalpha() or head.startswith("tool result"))


def _short_lines(body: str, distinct: set[str], into: set[str]) -> None:
    """The lines of a data block (a conversation's messages, their labels taken off), lower-cased, too short
    to hold a copied run of `DATA_GRAM` words, yet long enough to be told from a judge's own phrase; only
    those whose words the reply (its `distinct` words) all holds."""
    for line in body.splitlines():
        # Its label and the punctuation around it off: a copy may drop the full stop, or the quotes of JSON.
        line = _LABEL.sub("", line, count=1).strip(_AROUND)
        if len(line) < _MIN_BLOCK or not any(c.isalpha() for c in line):
            continue
        low = ascii_lower(line)
        found = _WORD.findall(low)
        if _MIN_LINE_WORDS <= len(found) < DATA_GRAM and distinct.issuperset(found):
            into.add(low)


def mostly_copied(text: str, spans: list[tuple[int, int]]) -> bool:
    """The echo rule: is the reply `text` (prepared) the prompt's own text, its copies at `spans` (and the
    data blocks it echoed, each `DATA_GRAM` words at least) holding more of its words than the judge's own,
    with fewer than `OWN_WORDS` words of the judge's own beside them?  Numbers, letters alone (`[[A]]`),
    JSON field names and one-word answers of the reply's format (`"verdict": "pass"`) are no words of its own."""
    marker = ECHO_PLACEHOLDER.strip()
    if not spans and marker not in text:  # most replies: no copy at all
        return False
    outside = blank_spans(text, spans)
    echoed = outside.count(marker)
    own = 0
    for word in _WORD.finditer(_JSON_KEY.sub(" ", outside.replace(marker, " "))):
        if len(word[0]) > 1 and not word[0].isdigit():
            own += 1
            if own >= OWN_WORDS:  # most replies: words of its own, whatever it copied
                return False
    copied = DATA_GRAM * echoed
    for start, end in spans:
        copied += len(_WORD.findall(text, start, end))
        if copied > own:
            return True
    return copied > own


def as_instructions(prompt: tuple[str, ...]) -> tuple[str, ...]:
    """`prompt` with each data block a message of its own and the text around them searched as the
    instructions are (at `TEXT_GRAM` words): what the echo rule counts as copied.  A judge restating the
    criteria ("It never says whether the shoes are waterproof") is judging, not copying its prompt."""
    parts: list[str] = []
    for message in prompt:
        blocks = list(_DATA_BLOCK.finditer(message)) if "\n</" in message else []
        parts.extend(block.group(0) for block in blocks)
        parts.append(_DATA_BLOCK.sub(" ", message) if blocks else message)
    return tuple(parts)


def only_copies(reasoning: str) -> bool:
    """Is this reasoning nothing of the judge's own: copies of the prompt, or a format placeholder?"""
    stripped = reasoning.strip()
    marker = ECHO_PLACEHOLDER.strip()
    if marker in stripped:
        return not any(c.isalnum() for c in stripped.replace(marker, ""))
    return _PLACEHOLDER.fullmatch(stripped) is not None


install(globals())  # first uses swap the compiled patterns in (see patterns)
