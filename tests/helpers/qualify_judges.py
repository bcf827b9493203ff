"""Judges of known behaviour for the qualification tests, as responders of the local OpenAI server.

Each reads the two responses from the Pairwise prompt (fenced as `<response_a-NONCE>` and `<response_b-NONCE>` in
the first user message; a re-ask for the format adds later ones) and answers as the Pairwise default prompt asks:
`{"reasoning": ..., "winner": "A" | "B"}`.  The one that picks the labelled better output looks the pair up in the
bundled data (and in pairs a test adds with `know`).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable

from pytest_llmjudge.qualification.pairs import Pair, bundled_subsets

__all__ = ["always_better", "always_first", "always_longer", "know", "unreadable_when_first"]

_RESPONSE = re.compile(r"<response_(a|b)-(\w+)>\n(.*?)\n</response_\1-\2>", re.S)
_BETTER: dict[tuple[str, str], str] = {}  # (response A, response B) -> the better one's letter


def know(pairs: Iterable[Pair]) -> None:
    """Teach `always_better` these pairs' labels (it knows the bundled ones)."""
    for pair in pairs:
        _BETTER[pair.output_1, pair.output_2] = "A" if pair.label == 1 else "B"
        _BETTER[pair.output_2, pair.output_1] = "B" if pair.label == 1 else "A"


@functools.cache
def _know_bundled() -> None:
    """Teach `always_better` the bundled pairs, once (whatever `know` was taught before)."""
    know(pair for subset in bundled_subsets() for pair in subset.pairs)


def responses(request: dict) -> tuple[str, str]:
    """The two responses a Pairwise prompt shows: A (first) and B."""
    first = next(m["content"] for m in request["messages"] if m["role"] == "user")
    found = {letter: text for letter, _, text in _RESPONSE.findall(first)}
    return found["a"], found["b"]


def _reply(winner: str, why: str) -> str:
    return json.dumps({"reasoning": f"fake judge: {why}", "winner": winner})


def always_better(request: dict) -> str:
    """Picks the labelled better output, whichever slot it is in."""
    _know_bundled()
    return _reply(_BETTER[responses(request)], "the labelled better response")


def always_first(request: dict) -> str:
    """Picks the response shown first."""
    return _reply("A", "the first response")


def always_longer(request: dict) -> str:
    """Picks the longer response (in characters; the first on equal length)."""
    a, b = responses(request)
    return _reply("A" if len(a) >= len(b) else "B", "the longer response")


def unreadable_when_first(*texts: str) -> Callable[[dict], str]:
    """A judge that picks the better output, but gives no verdict (asked again too) when one of `texts` is shown first."""

    def respond(request: dict) -> str:
        if responses(request)[0] in texts:
            return "Both responses have their merits; it is hard to say."
        return always_better(request)

    return respond
