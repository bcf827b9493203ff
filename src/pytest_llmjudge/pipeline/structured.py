"""Structured output, the asking side: a rubric's reply schema as the `response_format` of its calls.

With `--judge-structured` auto or on, each call of a rubric that declares a reply schema asks for
`response_format` (a reference to its JSON schema: name and sha256) among its parameters (the
planning stage's `Setup.asked`), so the schema is part of every key and named in every verdict file
(off: nothing is added, and the keys are those of a plain prompt).  Whether a live call sends it, JSON
mode with the schema beside it, plain `{"type": "json_object"}` or nothing is the backend's decision
per model (`backends.formats`); what was sent is recorded beside the reply as "json_schema",
"json_object+schema", "json_object" or "none".  The parser reads every reply either way: a schema is a
request, not a guarantee.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..backends.formats import FORMATS, format_of, register_schema
from ..backends.litellm import LiteLLMBackend
from ..rubrics.base import Rubric

if TYPE_CHECKING:
    from ..backends.protocol import Backend

__all__ = [
    "USED",
    "format_for",
    "format_used",
    "response_format",
    "structured_backend",
    "structured_line",
    "structured_of",
]

USED = FORMATS  # what a live call sent, as recorded


def response_format(rubric: Rubric) -> dict[str, Any] | None:
    """The `response_format` a call's parameters carry for `rubric`'s reply schema (a reference: name and
    sha256, see `backends.formats.register_schema`), or None if the rubric declares no schema."""
    schema = rubric.reply_schema()
    if schema is None:
        return None
    name = re.sub(r"[^A-Za-z0-9_-]", "_", rubric.name)[:48] or "rubric"
    return register_schema(f"{name}_reply", schema)


def structured_backend(backend: Backend, mode: str) -> tuple[Backend, str]:
    """The backend set to send structured output as `mode` says, and the mode in effect for its calls:
    only the LiteLLM backend sends `response_format`; a backend of your own gets plain prompts ("off")."""
    if not isinstance(backend, LiteLLMBackend):
        return backend, "off"
    if mode != "off" and backend.structured != mode:
        backend = copy.copy(backend)  # a backend given to a Judge is shared: set the mode on a copy
        backend.structured = mode
    return backend, mode


# A run's references by rubric (`PlanMemo.formats`), each held with the rubric itself, so an id is
# never reused while its entry lives, and with its canonical description.
Formats = dict[int, tuple[Rubric, str, dict[str, Any] | None]]


def format_for(rubric: Rubric, mode: str, described: str, kept: Formats | None = None) -> dict[str, Any] | None:
    """The `response_format` reference `rubric`'s calls carry under `mode`, or None: mode off, or no schema.

    `kept`: the run's references, for a rubric judged again and again (building the schema and its
    canonical JSON is much of planning a replay).  `described`, the rubric's canonical description,
    changes whenever its parameters do, so a rubric changed in place never reuses a stale schema."""
    if mode == "off":
        return None
    held = kept.get(id(rubric)) if kept is not None else None
    if held is not None and held[0] is rubric and held[1] == described:
        return held[2]
    wanted = response_format(rubric)
    if kept is not None:
        if len(kept) >= 64:
            kept.clear()
        kept[id(rubric)] = (rubric, described, wanted)
    return wanted


def format_used(params: Mapping[str, Any] | None, sent: Mapping[str, Any] | None) -> str | None:
    """What a live call sent for a request with `params`: None where no schema was asked for."""
    if not (params or {}).get("response_format"):
        return None
    return format_of((sent or {}).get("response_format"))


def structured_of(entries: Iterable[Mapping[str, Any]]) -> str | None:
    """What a judgment's calls used, from their stored fields: one of `USED`, several joined by
    commas (a panel, or a fallback mid-judgment), or None where none asked for a schema."""
    found = {e.get("structured") for e in entries}
    return ",".join(u for u in USED if u in found) or None


def structured_line(used: Iterable[str | None]) -> str | None:
    """`llmjudge: structured output: 12 json_schema, 3 json_object, 2 off`: what the live judgments' calls used
    (their records' `structured`; "off": they asked for no schema), counted by judgment; None where none
    asked for a schema."""
    counts = Counter(part for u in used for part in set((u or "off").split(",")) if part in (*USED, "off"))
    if not any(counts[u] for u in USED):
        return None
    return "llmjudge: structured output: " + ", ".join(f"{counts[u]} {u}" for u in (*USED, "off") if counts[u])
