"""Text preparation: what of the judge's reply is read at all, and position-keeping helpers.

Echoed data blocks of the prompt (``<output-ID>...</output-ID>``, any ``<name-NONCE>``) are removed
before anything else, and after a ``</think>`` block only the text that follows it is read.
"""

from __future__ import annotations

import re

from .patterns import install, lazy

_ZERO_WIDTH = lazy("[\u200b\u200c\u200d\u2060\ufeff]")
_DATA_OPEN = lazy(r"<([A-Za-z][A-Za-z0-9_]{0,31})-([A-Za-z0-9_-]{1,64})>")
_DATA_CLOSE = lazy(r"</([A-Za-z][A-Za-z0-9_]{0,31})-([A-Za-z0-9_-]{1,64})>")
_NONCE = lazy(r"[0-9A-Fa-f]{8,64}")
# The end of a reasoning model's thinking: </think>, </thinking>, Kimi's close mark, or the
# "Thinking... / ...done thinking." section of chat front ends.
_THINK_CLOSE = lazy(
    r"</think(?:ing)?\s{0,3}>|\u25c1/think\u25b7|^[ \t]{0,8}\.{3}[ \t]{0,2}done thinking\.?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)

ECHO_PLACEHOLDER = " [echoed data omitted] "
DIGIT = lazy(r"\d")


def ascii_lower(text: str) -> str:
    """Lower-case A-Z only, so the copy has the same length and positions as ``text``."""
    if text.isascii():
        return text.lower()
    # bytes.lower changes ASCII bytes only, and UTF-8 never uses those inside a longer character:
    # forty times faster than str.translate with a table.
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


def _data_tag(m: re.Match[str]) -> tuple[str, str] | None:
    """The (name, id) of a data delimiter: ``<output-ID>``, or any ``<name-NONCE>`` (hex)."""
    name, ident = m.group(1).lower(), m.group(2).lower()
    if name == "output" or _NONCE.fullmatch(ident):
        return name, ident
    return None


def mask_data_blocks(text: str) -> str:
    """Drop echoed data blocks (``<output-ID>...</output-ID>``, ``<input-NONCE>``...): data the judge was shown.

    Closing tags are indexed once, so many unmatched opening tags stay linear.  An opening tag never
    closed hides the rest of the reply; a lone closing tag is removed by itself.
    """
    if "<" not in text or "-" not in text:
        return text
    closes: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for m in _DATA_CLOSE.finditer(text):
        tag = _data_tag(m)
        if tag is not None:
            closes.setdefault(tag, []).append((m.start(), m.end()))
    spans: list[tuple[int, int]] = []
    pos = 0
    used: dict[tuple[str, str], int] = {}
    for m in _DATA_OPEN.finditer(text):
        tag = _data_tag(m)
        if tag is None or m.start() < pos:
            continue
        ends = closes.get(tag, [])
        i = used.get(tag, 0)
        while i < len(ends) and ends[i][0] < m.end():
            i += 1
        used[tag] = i + 1
        # Never closed: the judge was copying the block when it stopped, so the rest is data too.
        pos = ends[i][1] if i < len(ends) else len(text)
        spans.append((m.start(), pos))
    text = blank_spans(text, spans, ECHO_PLACEHOLDER)
    return _DATA_CLOSE.sub(lambda m: " " if _data_tag(m) else m.group(), text)


_THINK_OPEN = lazy(r"<think(?:ing)?\s{0,3}>|\u25c1think\u25b7", re.IGNORECASE)


def thinking_unclosed(text: str) -> bool:
    """Does the reply open a thinking block and never close it (cut off before its answer)?"""
    low = ascii_lower(text)
    if "think" not in low or _THINK_OPEN.search(text) is None:
        return False
    return _THINK_CLOSE.search(text) is None


def prepare(text: str) -> str:
    """The part of a reply that is read: zero-width characters and echoed data removed."""
    text = _ZERO_WIDTH.sub("", text).replace("\r\n", "\n")
    text = mask_data_blocks(text)
    # A reasoning model's <think> block is deliberation; its answer follows it.
    last = None
    low = ascii_lower(text)
    if "</think" in low or "done thinking" in low or "\u25c1/think" in text:
        for last in _THINK_CLOSE.finditer(text):  # noqa: B007 - the last match is wanted
            pass
    if last is not None and text[last.end() :].strip():
        text = text[last.end() :]
    return text


def strip_fences(body: str) -> str:
    """Remove a leading ```lang line and a trailing ``` line around the whole body."""
    if body.startswith("```"):
        nl = body.find("\n")
        body = body[nl + 1 :] if nl != -1 else body[3:]
    if body.rstrip().endswith("```"):
        body = body.rstrip()[:-3]
    return body.strip()


def blank_spans(text: str, spans: list[tuple[int, int]], fill: str | None = None) -> str:
    """Replace sorted spans by ``fill``; by default blank them with spaces (same length: positions stay valid)."""
    if not spans:
        return text
    parts: list[str] = []
    pos = 0
    for s, e in spans:
        if s < pos:
            continue
        parts.append(text[pos:s])
        parts.append(" " * (e - s) if fill is None else fill)
        pos = e
    parts.append(text[pos:])
    return "".join(parts)


install(globals())  # first uses swap the compiled patterns in (see patterns)
