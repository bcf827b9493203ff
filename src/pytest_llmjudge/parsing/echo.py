"""Copies of the prompt in a reply, recognized by content, tags or no tags.

A weak judge copies its prompt back: the instructions, the criteria, the output under test (which may
carry a score of its own).  A copy is a run of words the prompt also holds: at least `DATA_GRAM` words
of a message that fences data (the output, input or reference, and the criteria beside them: the text
that may carry a planted score), at least `TEXT_GRAM` words of any other message (the instructions: a
judge's own verdict may share a few words with them, "the student's answer is correct"), or a whole
data block copied verbatim.  All are found in linear time: the instructions' word runs go into sets
kept across judgments, and each run of the reply is looked up once (a short reply is searched for
directly in a short message).
"""

from __future__ import annotations

import re

from .lazy_patterns import install, lazy
from .prepare import ECHO_PLACEHOLDER, ascii_lower

__all__ = ["DATA_GRAM", "TEXT_GRAM", "mask_copies", "only_copies"]

DATA_GRAM = 6  # words in a copied run of a data block
TEXT_GRAM = 10  # words in a copied run of the instructions: longer than the phrases a judge reuses
_MIN_BLOCK = 8  # a data block this long (with a letter) is matched whole, however few its words
_CACHE_LIMIT = 256
_WORD = lazy(r"\w+")
_DATA_BLOCK = lazy(r"<([A-Za-z][A-Za-z0-9_]{0,31})-([0-9a-f]{8,64})>\n(.*?)\n</\1-\2>", re.DOTALL)
_GAP = lazy(r"[\W_]{0,3}")  # what may lie between two copies that make one
# A reasoning that is only a placeholder of a format instruction: "<a few sentences: ...>".
_PLACEHOLDER = lazy(r"<[^<>\n]{2,300}>")

_DIRECT_LIMIT = 200_000  # reply runs x prompt characters below which runs are searched for directly

# Word-run sets of the instructions, which repeat across judgments; a message holding data is unique to
# its judgment and is not kept.
_runs: dict[tuple[str, int], frozenset[tuple[str, ...]]] = {}
_blocks: dict[str, tuple[str, ...]] = {}


def _word_runs(words: list[str], size: int) -> list[tuple[str, ...]]:
    return list(zip(*(words[i:] for i in range(size)), strict=False))


def _prompt_runs(text: str, size: int, keep: bool) -> frozenset[tuple[str, ...]]:
    known = _runs.get((text, size))
    if known is None:
        known = frozenset(_word_runs(_WORD.findall(ascii_lower(text)), size))
        if keep:
            if len(_runs) >= _CACHE_LIMIT:
                _runs.clear()
            _runs[(text, size)] = known
    return known


def _data_blocks(text: str) -> tuple[str, ...]:
    known = _blocks.get(text)
    if known is None:
        known = tuple(m.group(3) for m in _DATA_BLOCK.finditer(text)) if "</" in text else ()
        if len(_blocks) >= _CACHE_LIMIT:
            _blocks.clear()
        _blocks[text] = known
    return known


def copied_spans(text: str, prompt: tuple[str, ...]) -> list[tuple[int, int]]:
    """Where ``text`` copies ``prompt``: merged, sorted (start, end) spans.

    A message that fences data (the output, input, reference) is searched at the data's run size,
    whole; any other message (the instructions) at the instructions' size.  When reply and message are
    short (the usual judgment), each of the reply's runs, as written with spaces folded, is searched for
    in the message's text, spaces folded: no tokenizing of a prompt that is new to each judgment (its
    system message carries the case's nonce).  Anything larger goes through a set of the message's runs
    (linear time), kept across judgments for a message that holds no data.
    """
    spans: list[tuple[int, int]] = []
    low = ascii_lower(text)
    words = _WORD.findall(low)
    where: list[tuple[int, int]] = []
    runs_of: dict[int, list[tuple[str, ...]]] = {}
    texts_of: dict[int, list[str]] = {}
    for message in prompt:
        blocks = _data_blocks(message)
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
        runs = runs_of.get(size)
        if runs is None:
            runs = runs_of[size] = _word_runs(words, size)
        if len(runs) * len(message) <= _DIRECT_LIMIT:
            if not where:
                where = [m.span() for m in _WORD.finditer(low)]
            texts = texts_of.get(size)
            if texts is None:
                texts = texts_of[size] = [
                    " ".join(low[where[i][0] : where[i + size - 1][1]].split()) for i in range(len(runs))
                ]
            folded = " ".join(ascii_lower(message).split())
            hits = [i for i, run in enumerate(texts) if run in folded]
        else:
            known = _prompt_runs(message, size, keep=not blocks)
            hits = [i for i, run in enumerate(runs) if run in known]
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


def mask_copies(text: str, prompt: tuple[str, ...]) -> str:
    """``text`` with every copy of the prompt replaced by the echo placeholder."""
    spans = copied_spans(text, prompt)
    if not spans:
        return text
    parts: list[str] = []
    pos = 0
    for s, e in spans:
        parts.append(text[pos:s])
        parts.append(ECHO_PLACEHOLDER)
        pos = e
    parts.append(text[pos:])
    return "".join(parts)


def only_copies(reasoning: str) -> bool:
    """Is this reasoning nothing of the judge's own: copies of the prompt, or a format placeholder?"""
    stripped = reasoning.strip()
    if _PLACEHOLDER.fullmatch(stripped):
        return True
    marker = ECHO_PLACEHOLDER.strip()
    if marker not in stripped:
        return False
    return not any(c.isalnum() for c in stripped.replace(marker, ""))


install(globals())  # first uses swap the compiled patterns in (see lazy_patterns)
