"""Markdown that quotes untrusted text safely: what `llmjudge diff --format markdown` and the job summary write.

The texts quoted (a test's criteria, the judge's reasoning, the output under test) are data: they are
escaped so that they render as the characters they are, never as Markdown, HTML or an @mention (a pull
request comment notifies whoever it mentions), and fenced with a fence longer than any they hold.
"""

from __future__ import annotations

import html
import re

__all__ = ["cell", "code", "fenced", "html_text", "text"]

_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")
_TICKS = re.compile(r"`+")


def text(value: str) -> str:
    """`value` as literal Markdown text on one line: HTML and Markdown characters escaped, @mentions broken."""
    flat = " ".join(value.split())
    return _SPECIAL.sub(r"\\\1", html.escape(flat, quote=False)).replace("@", "@\u200b")


def html_text(value: str) -> str:
    """`value` as literal text on one line inside an HTML element (a `<summary>`, where Markdown is not read)."""
    return html.escape(" ".join(value.split()), quote=False).replace("@", "@\u200b")


def cell(value: str, width: int = 160) -> str:
    """`value` as one table cell's text, clipped to `width` characters."""
    flat = " ".join(value.split())
    if len(flat) > width:
        flat = flat[: width - 1] + "…"
    return text(flat)


def code(value: str) -> str:
    """`value` as an inline code span (on one line; `|` escaped, as a table cell needs it)."""
    flat = " ".join(value.split()).replace("|", "\\|")
    longest = max((len(run) for run in _TICKS.findall(flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def fenced(value: str, info: str = "") -> str:
    """`value` as a fenced code block, its fence longer than any backtick run inside."""
    longest = max((len(run) for run in _TICKS.findall(value)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{value.rstrip()}\n{fence}"
