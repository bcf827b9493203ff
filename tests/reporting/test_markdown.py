"""Markdown that quotes untrusted text: it renders as the characters it holds, never as markup or a mention."""

from __future__ import annotations

from pytest_llmjudge.reporting import markdown as md


def test_text_escapes_html_markdown_and_mentions():
    assert md.text("<img src=x> **bold** | `code` @octocat\nnext") == (
        "&lt;img src=x&gt; \\*\\*bold\\*\\* \\| \\`code\\` @\u200boctocat next"
    )


def test_a_cell_is_one_clipped_line():
    assert md.cell("a\nb " + "c" * 300, width=10) == "a b ccccc…"


def test_code_spans_and_fences_outlast_the_backticks_inside():
    assert md.code("a ``b`` | c") == "```a ``b`` \\| c```"
    assert md.code("`x") == "`` `x ``"
    assert md.fenced("one\n````\ntwo", "diff") == "`````diff\none\n````\ntwo\n`````"
    assert md.fenced("plain") == "```\nplain\n```"
