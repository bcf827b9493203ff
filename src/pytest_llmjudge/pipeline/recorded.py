"""Which model recorded a replayed call, when none is configured (CI replaying what was recorded).

Keys are content hashes, so a stored entry belongs to a call when its key is one the call computes
with the entry's model: trying each stored model in turn finds the one that recorded it, for a
judgment's calls and a generation's alike.  The calls keyed for it are returned with it: the replay
uses them, and keys them once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from ..errors import JudgeError


class Keyed(Protocol):
    """A call named by its key (a judge call, a generation)."""

    @property
    def key(self) -> str: ...


K = TypeVar("K", bound=Keyed)


def recorded_model(
    entries: Mapping[str, Mapping[str, Any]],
    calls_for: Callable[[str], Sequence[K]],
    has: Callable[[str], bool] | None = None,
    *,
    several: str,
) -> tuple[str, Sequence[K]] | None:
    """The model under which `calls_for(model)` has a stored key, of the models named in `entries`, and
    those calls.

    `has` says whether a key is stored (default: it is one of `entries`).  One model matches: that
    model.  None: None (the replay misses as usual).  Several: a JudgeError, `several` with the models
    in place of `{models}` (it names the option that picks one).
    """
    matching: list[tuple[str, Sequence[K]]] = []
    for model in dict.fromkeys(str(e.get("model")) for e in entries.values() if isinstance(e.get("model"), str)):
        calls = calls_for(model)
        keys = {call.key for call in calls}
        if any(has(k) for k in keys) if has is not None else not keys.isdisjoint(entries):
            matching.append((model, calls))
    if len(matching) > 1:
        raise JudgeError(several.format(models=", ".join(sorted(model for model, _ in matching))))
    return matching[0] if matching else None
