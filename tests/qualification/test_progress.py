"""The progress bar: drawn on a terminal, never in a pipe, a file or on CI."""

from __future__ import annotations

import io

from pytest_llmjudge.reporting.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        super().isatty()  # a closed stream raises, as a real one does
        return True


def test_a_bar_only_where_someone_watches():
    assert Progress.wanted(Terminal(), {"TERM": "xterm"})
    assert not Progress.wanted(io.StringIO(), {}), "a pipe or a file"
    assert not Progress.wanted(Terminal(), {"CI": "true"})
    assert not Progress.wanted(Terminal(), {"GITHUB_ACTIONS": "true"})
    assert not Progress.wanted(Terminal(), {"TERM": "dumb"})
    closed = Terminal()
    closed.close()
    assert not Progress.wanted(closed, {})


def test_the_bar_counts_answers_by_source_and_clears_its_line():
    stream = Terminal()
    progress = Progress(4, "answers", stream, shown=True)
    for source in ("live", "replayed", "live", "live"):
        progress.advance(source)
    drawn = stream.getvalue()
    assert drawn.startswith("\r[") and "4/4 answers (3 live, 1 replayed)" in drawn
    assert "[" + "#" * 24 + "]" in drawn, "full at the end"
    progress.close()
    assert stream.getvalue().endswith("\r\x1b[2K")


def test_a_hidden_bar_writes_nothing():
    stream = Terminal()
    progress = Progress(2, "answers", stream, shown=False)
    progress.advance("live")
    progress.close()
    assert stream.getvalue() == "" and progress.done == 1
