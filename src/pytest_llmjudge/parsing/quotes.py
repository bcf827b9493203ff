"""Quote pairing: which parts of the reply lie inside quotation marks.

Quoted content is never the judge's verdict.  Marks are paired across lines, outside JSON objects, in
one lazy pass over at most 5,000 marks (text past them is not quote-aware).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from .json_scan import Span, scan_objects
from .patterns import install, lazy

_QUOTE_LIMIT = 2000  # a double quote closes within this many characters, or it is stray
_SQUOTE_LIMIT = 500  # single quotes double as apostrophes: a shorter reach
_MAX_QUOTES = 5_000  # quote marks examined per reply; past them no position counts as quoted
_QUOTE_MARKS = lazy("[\"'\u201c\u201d\u2018\u2019]")
_NO_OPEN_AFTER = frozenset(")]}.,;:!?\"'\u201d\u2019")  # a mark after these closes, never opens
_SQUOTE_OPEN_AFTER = frozenset("([{:-\u2014")  # besides whitespace: where a ' may open
_SQUOTE_CLOSE_BEFORE = frozenset('.,;:!?)]}-\u2014"')  # besides whitespace: where a ' may close


class Quotes:
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

    def __init__(self, text: str, objects: list[Span]) -> None:
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


class LazyQuotes:
    """Build `Quotes` only when a candidate needs it (most replies never do)."""

    def __init__(self, text: str, objects: list[Span] | None = None, built: Quotes | None = None) -> None:
        self.text = text
        self.objects = objects
        self._q = built

    def get(self) -> Quotes:
        if self._q is None:
            objects = self.objects if self.objects is not None else scan_objects(self.text)[0]
            self._q = Quotes(self.text, objects)
        return self._q

    def inside(self, pos: int) -> bool:
        return self.get().inside(pos)


install(globals())  # first uses swap the compiled patterns in (see patterns)
