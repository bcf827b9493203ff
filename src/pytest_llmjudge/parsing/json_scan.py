"""Finding JSON objects in a reply and loading them, with bounded cost.

The brace scan is one pass with a step and depth cap. json_repair is slow, superlinear and raises on
hostile input, so it only sees candidates of at most 64 KiB nested at most 64 deep, 64 KiB per reply in
total, and everything it raises is caught.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .patterns import install, lazy
from .prepare import strip_fences

_REPAIR_BUDGET = 64 * 1024  # characters repaired per reply, in one candidate or several
_REPAIR_MAX_DEPTH = 64  # json_repair recurses; deeper input raises RecursionError
_SCAN_MAX_DEPTH = 512  # deeper than this is not a judge reply: stop the brace scan
_SCAN_MAX_STEPS = 20_000  # braces, strings and escapes visited by the scan
MAX_JSON_CANDIDATES = 64  # objects examined per reply

_STRUCT = lazy(r'[{}"]')
# The rest of a JSON string after its opening quote (unrolled: linear, one step per reply string).
_STRING_REST = lazy(r'[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
_BRACKETS = lazy(r"[\[\]{}]")
# A backslash that starts no JSON escape (run once "\\\\" pairs are set aside).
_BAD_ESCAPE = lazy(r'\\(?!["/bfnrtu])')


class Span:
    """Where a ``{...}`` object lies in the reply (to its end when it is never closed)."""

    # A plain class, not a dataclass: generating a dataclass's methods costs ~2 M instructions
    # at import, which every pytest run that imports the parser pays.
    __slots__ = ("end", "start")

    def __init__(self, start: int, end: int) -> None:
        self.start = start
        self.end = end


class RepairBudget:
    """Characters json_repair may still be handed for this reply."""

    def __init__(self) -> None:
        self.left = _REPAIR_BUDGET


def scan_objects(text: str) -> tuple[list[Span], bool]:
    """Top-level ``{...}`` spans, found in one pass, and whether the last object is never closed.

    Quotes are strings inside objects only (outside, ``12" pipes`` is prose); an unmatched ``{`` in
    prose does not hide balanced objects after it.
    """
    n = len(text)
    pairs: list[tuple[int, int]] = []
    stack: list[int] = []
    i = 0
    steps = 0
    while i < n:
        steps += 1
        if steps > _SCAN_MAX_STEPS:  # hostile input: keep what was found so far
            return _outermost(pairs), False
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
                return _outermost(pairs), False
            i = j + 1
        elif c == "}":
            pairs.append((stack.pop(), j + 1))
            i = j + 1
        else:  # a JSON string: skip to its closing quote, honouring escapes, in one match
            m2 = _STRING_REST.match(text, j + 1)
            i = m2.end() if m2 is not None else n
    spans = _outermost(pairs)
    # An object opened after the last closed one and never closed: the reply was cut off.
    tail = [s for s in stack if s >= (spans[-1].end if spans else 0)]
    if tail:
        spans.append(Span(tail[0], n))
    return spans, bool(tail)


def _outermost(pairs: list[tuple[int, int]]) -> list[Span]:
    """Keep the balanced spans that no other balanced span encloses."""
    pairs.sort()
    out: list[Span] = []
    last_end = -1
    for s, e in pairs:
        if s >= last_end:
            out.append(Span(s, e))
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


def _escape_stray_backslashes(s: str) -> str:
    """Make every backslash that starts no JSON escape a literal one (C-speed passes only)."""
    if "\x00" in s:
        return s
    return _BAD_ESCAPE.sub(r"\\\\", s.replace("\\\\", "\x00")).replace("\x00", "\\\\")


# One decoder for every reply: `json.loads` with an argument builds a new decoder (and its scanner) per call.
_LENIENT = json.JSONDecoder(strict=False)


def load_whole(text: str) -> dict[str, Any] | list[Any] | None:
    """The whole reply (trimmed, out of its code fence) as plain JSON: an object or a list, else None."""
    body = strip_fences(text.strip())
    if body[:1] not in ("{", "["):  # json.loads would only fail or give a scalar: spare it
        return None
    try:
        value = _LENIENT.decode(body)
    except (ValueError, RecursionError):  # not JSON, or nested too deep
        return None
    return value if isinstance(value, (dict, list)) else None


def load_json(s: str, budget: RepairBudget) -> tuple[Any, bool]:
    """Parse ``s`` as JSON, then (bounded) with json_repair.  Returns (value, repaired)."""
    try:
        return _LENIENT.decode(s), False
    except (ValueError, RecursionError):  # not plain JSON, or nested too deep
        pass
    if "\\" in s:
        # The most common defect, an invalid escape ("\;" in a regex a judge quotes), costs one
        # linear pass here instead of a json_repair call that is a hundred times slower.
        fixed = _escape_stray_backslashes(s)
        if fixed != s:
            try:
                return _LENIENT.decode(fixed), True
            except (ValueError, RecursionError):
                pass
    if len(s) > budget.left or not _depth_ok(s):  # json_repair is slow and superlinear: hand it little
        return None, False
    budget.left -= len(s)
    try:
        import json_repair  # local: only replies that need repair pay the import

        value = json_repair.loads(s, skip_json_loads=True)
    # json_repair raises ValueError and RecursionError on hostile input, and its bugs may raise
    # anything else: a reply it cannot repair is simply not JSON.
    except Exception:  # noqa: BLE001 - any failure means "not JSON"
        return None, False
    return value, True


install(globals())  # first uses swap the compiled patterns in (see patterns)
