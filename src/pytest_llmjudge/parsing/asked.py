"""What the judge was asked: the prompt's texts, whether a pass/fail verdict was asked, the schema's fields.

A rubric hands this to `parse_verdict` so that the parser reads a reply knowing its question: text the
judge copies from the prompt is never its verdict, verdict words (yes/no, correct/incorrect...) count
only where a verdict was asked, and a score off the asked scale is an error rather than clamped.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["Asked"]


class Asked:
    """What a judge call asked for.

    ``prompt``: the texts of the messages sent (system and user), whose copies in a reply are data.
    ``verdict``: True when a pass/fail verdict was asked, False when a score was, None when unknown
    (then the parser accepts the vocabulary its corpus rules accept).  ``fields``: the field names
    of the reply schema (a score field named otherwise is read under its name).
    """

    # A plain class, not a dataclass: see json_scan.Span.
    __slots__ = ("fields", "prompt", "verdict")

    def __init__(self, prompt: Iterable[str] = (), *, verdict: bool | None = None, fields: Iterable[str] = ()) -> None:
        self.prompt = tuple(t for t in prompt if isinstance(t, str) and t)
        self.verdict = verdict
        self.fields = tuple(f.strip().lower().replace(" ", "_").replace("-", "_") for f in fields if isinstance(f, str))

    def __repr__(self) -> str:
        sizes = [len(t) for t in self.prompt]
        return f"Asked(prompt={sizes} chars, verdict={self.verdict!r}, fields={self.fields!r})"
