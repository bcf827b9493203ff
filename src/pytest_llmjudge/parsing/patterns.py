"""Regular expressions compiled on first use, and bounded searches with them.

Why lazy: compiling the parser's ~60 patterns at import cost ~30 ms in every pytest run that imports
the parser, although a replay or a clean JSON reply uses only a few.  `install(globals())` at the end
of each module lets a stand-in's first use put the compiled pattern under every module-level name that
held it, so the parser then calls the real `re.Pattern` with no extra step.

Every search is linear in the reply's length: a pattern is skipped when a word it requires is absent,
"last marker" searches look at a growing tail, and "first valid" searches stop after 2,000 matches.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from typing import Any, cast

MAX_FIRST_SCAN = 2000  # matches examined by "first valid" label searches
WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")

# Compiling and swapping in happen under one lock, so a module name only ever holds the stand-in or the
# one compiled pattern, and every first use (from any thread) gets that same pattern.
_LOCK = threading.Lock()


class LazyPattern:
    """A pattern's source, compiled on the first attribute use (``.search``, ``.groupindex``...)."""

    __slots__ = ("_compiled", "_flags", "_homes", "pattern")

    def __init__(self, source: str, flags: int) -> None:
        self.pattern = source  # as on re.Pattern; reading it compiles nothing
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None
        self._homes: list[tuple[dict[str, Any], str]] = []  # module namespaces and names holding this

    def compile(self) -> re.Pattern[str]:
        """The compiled pattern; the first call also puts it in place of this stand-in in its modules."""
        with _LOCK:  # only first uses get here: then the modules hold the compiled pattern
            if self._compiled is None:
                self._compiled = re.compile(self.pattern, self._flags)
                for namespace, name in self._homes:
                    namespace[name] = self._compiled
            return self._compiled

    def __getattr__(self, name: str) -> Any:
        # Only reached for names this class lacks: every re.Pattern method and attribute.
        return getattr(self.compile(), name)


def lazy(source: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)``, deferred until the pattern is first used."""
    return cast("re.Pattern[str]", LazyPattern(source, flags))


def install(namespace: dict[str, Any]) -> None:
    """Let the first use of each stand-in in a module's ``namespace`` replace it there by the compiled pattern."""
    with _LOCK:
        for name, value in list(namespace.items()):
            if isinstance(value, LazyPattern):
                if value._compiled is not None:
                    namespace[name] = value._compiled
                else:
                    value._homes.append((namespace, name))


# Words a pattern cannot match without (checked with `in`, ~1 ms per megabyte), and the
# patterns that must start at a word boundary, by pattern source (hashing the source is cheaper
# than hashing a pattern).  Patterns run on the lowered text.
_NEEDLES: dict[str, tuple[str, ...]] = {}
_WORD_START: set[str] = set()


def gated(source: str, needles: tuple[str, ...], flags: int = 0, *, word_start: bool = False) -> re.Pattern[str]:
    """`lazy` ``source``, which `matches` skips when none of ``needles`` is in the text.

    Why the word-start check is not a leading lookbehind: sre cannot use its fast prefix scan
    for a pattern that starts with one, which made each such pattern cost ~50 ms per megabyte.
    """
    _NEEDLES[source] = needles
    if word_start:
        _WORD_START.add(source)
    return lazy(source, flags)


def present(pattern: re.Pattern[str], text: str) -> bool:
    """Could a `gated` pattern match ``text`` at all (one of the words it needs is there)?  True when ungated."""
    needles = _NEEDLES.get(pattern.pattern)
    return needles is None or any(needle in text for needle in needles)


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
        return (m for m in pattern.finditer(text, pos) if m.start() == 0 or text[m.start() - 1] not in WORD_CHARS)
    return pattern.finditer(text, pos)  # most calls: no Python step per match


def last(pattern: re.Pattern[str], text: str, accept: Callable[[re.Match[str]], bool]) -> re.Match[str] | None:
    """The last accepted match, searched in a growing tail of the text: a reply holding thousands of
    markers costs a few thousand characters of matching, not one Python step per marker."""
    n = len(text)
    size = 4096
    while True:
        start = max(0, n - size)
        found = None
        for m in matches(pattern, text, start):
            if accept(m):
                found = m
        if found is not None or start == 0:
            return found
        size *= 8


def line_start(text: str, pos: int, reach: int = 4096) -> int:
    """Where the line holding ``pos`` starts, looking back at most ``reach`` characters (a longer line is cut
    there): per-candidate look-backs stay constant-time in a reply of one long line."""
    floor = max(0, pos - reach)
    return max(floor, text.rfind("\n", floor, pos) + 1)


def line_end(text: str, pos: int, reach: int = 4096) -> int:
    """Where the line holding ``pos`` ends (its newline, or the text's end), looking at most ``reach`` ahead."""
    ceiling = min(len(text), pos + reach)
    found = text.find("\n", pos, ceiling)
    return ceiling if found == -1 else found
