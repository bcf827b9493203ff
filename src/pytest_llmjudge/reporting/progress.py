"""A one-line progress bar for a long command (`llmjudge qualify`), drawn only where someone watches it.

On a terminal it redraws one line in place, at most ten times a second; in a pipe, a file or on CI
(`detect_ci`) it draws nothing, so logs hold only the report.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Mapping
from typing import TextIO

__all__ = ["Progress"]

_WIDTH = 24  # characters of the bar itself


class Progress:
    """Counts `total` steps of `what`, each with the source it came from; `close()` clears the line."""

    def __init__(self, total: int, what: str, stream: TextIO, *, shown: bool) -> None:
        self.total = total
        self.what = what
        self.stream = stream
        self.shown = shown
        self.done = 0
        self.sources: Counter[str] = Counter()
        self._began = time.monotonic()
        self._drawn = 0.0

    @staticmethod
    def wanted(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
        """Whether a bar helps: `stream` is a terminal, not a dumb one, and this is not CI."""
        from ..settings import detect_ci

        environ = os.environ if environ is None else environ
        try:
            terminal = stream.isatty()
        except (AttributeError, ValueError):  # a closed or odd stream
            return False
        return terminal and environ.get("TERM") != "dumb" and detect_ci(environ) is None

    def advance(self, source: str) -> None:
        """One more step done, answered from `source` (live, cached, replayed)."""
        self.done += 1
        self.sources[source] += 1
        now = time.monotonic()
        if self.shown and (now - self._drawn >= 0.1 or self.done == self.total):
            self._drawn = now
            self.stream.write("\r" + self.line(now))
            self.stream.flush()

    def line(self, now: float | None = None) -> str:
        """The bar as drawn: how far, by which source, and the time elapsed."""
        elapsed = (time.monotonic() if now is None else now) - self._began
        filled = _WIDTH * self.done // self.total if self.total else _WIDTH
        sources = ", ".join(f"{count} {source}" for source, count in sorted(self.sources.items()))
        return (
            f"[{'#' * filled}{'.' * (_WIDTH - filled)}] {self.done}/{self.total} {self.what}"
            f" ({sources}) {int(elapsed) // 60}:{int(elapsed) % 60:02d}"
        )

    def close(self) -> None:
        """Clear the bar's line, so the report starts on a clean one."""
        if self.shown and self._drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
