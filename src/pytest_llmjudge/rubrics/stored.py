"""A stored reply's score: one decision (the rubric's parse of the reply, never a hand-edited score),
made the same way by replay and by `llmjudge reparse`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..case import Case
from ..keys import messages_sha256
from ..parsing.funnel import ParsedVerdict, parse_verdict
from .base import DEFAULT_KIND, Prompt, Reply, Rubric, kind_named


def read_reply(rubric: Rubric, prompt: Prompt, reply: Reply) -> ParsedVerdict:
    """The rubric's reading of one reply (raises `VerdictParseError`): the one decision of its score."""
    return rubric.parse(prompt, reply)


def rebuild_stored(entry: Mapping[str, Any]) -> tuple[Rubric, Prompt] | None:
    """The rubric and prompt a stored entry was judged with, or None when no candidate's prompt hashes
    to the stored `messages_sha256` (the rubric had arguments that cannot be recovered)."""
    cls = kind_named(str(entry.get("rubric") or DEFAULT_KIND))
    wanted = entry.get("messages_sha256")
    if cls is None or not wanted:
        return None
    try:
        case = Case.build(
            entry.get("output"), entry.get("criteria"), entry.get("input"), entry.get("expected"), entry.get("context")
        )
        for rubric in cls.from_stored(entry):
            for prompt in rubric.prompts(case):
                if messages_sha256([dict(m) for m in prompt.messages]) == wanted:
                    return rubric, prompt
    except Exception:  # noqa: BLE001 - a stored entry that cannot be rebuilt is "not rebuildable", not a crash
        return None
    return None


def score_stored(entry: Mapping[str, Any]) -> ParsedVerdict | None:
    """The score of a stored entry's reply, decided as replay decides it (`VerdictParseError` when it does
    not parse); None when its rubric cannot be rebuilt (the default kind then parses plainly on 0-1)."""
    reply = Reply(str(entry.get("reply", "")), entry.get("logprobs"))
    rebuilt = rebuild_stored(entry)
    if rebuilt is not None:
        return read_reply(rebuilt[0], rebuilt[1], reply)
    if str(entry.get("rubric") or DEFAULT_KIND) == DEFAULT_KIND:
        return parse_verdict(reply.text, scale=(0, 1))
    return None
