"""Lookup: each call's stored answer, from the test's verdict file, the rest of the store or the local
cache, and the calls that must go live.  A replay that misses raises, with what the miss differs in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from ..errors import JudgeError, StoreError
from ..rubrics import Reply
from .plan import stored_elsewhere, stored_fields

if TYPE_CHECKING:
    from ..backends import CallResult
    from ..runtime import JudgeRuntime
    from ..store import Ledger
    from .plan import Call, Plan


class Answer(NamedTuple):
    """The judge's reply to one call, and where it came from."""

    reply: Reply
    source: str  # "replayed" (ledger), "cached" (local cache) or "live"
    stored: Mapping[str, Any] | None = None  # the ledger entry a replayed reply came from
    result: CallResult | None = None  # a live call's result (its cost)
    extra: Mapping[str, Any] = MappingProxyType({})  # stored beside a new reply (see reply_extra)


def reply_extra(fields: Mapping[str, Any]) -> dict[str, Any]:
    """What is stored beside a new reply: the response_format used, and earlier replies asked again."""
    return {k: fields[k] for k in ("structured", "retried_from") if fields.get(k) is not None}


def lookup(
    plan: Plan, runtime: JudgeRuntime, calls: Sequence[Call] | None = None
) -> tuple[dict[str, Answer], list[Call]]:
    """The stored answers, by key, and the calls that must go live (replay: raise on a miss), of `calls`
    (a later step's) or of every call planned.

    A key missed in the test's own file is looked up in the rest of the store (keys are content
    hashes: the same key is the same judgment wherever it is filed).  In auto mode an entry found
    there is copied into the test's file, so it migrates; prune later removes the unused copy.
    """
    mode = plan.settings.mode
    ledger = plan.ledger if mode in ("auto", "replay") else None
    answers: dict[str, Answer] = {}
    missing: list[Call] = []
    for call in plan.calls if calls is None else calls:
        if call.key in answers:
            continue
        entry = ledger.get(call.key) if ledger is not None else None
        if entry is None and ledger is not None:
            entry = adopt_from_elsewhere(runtime, ledger, call.key, copy=mode == "auto")
        if entry is not None:
            answers[call.key] = Answer(Reply(entry["reply"], entry.get("logprobs")), "replayed", entry)
            continue
        if mode == "replay":
            raise _replay_miss(plan, call)
        # The cache is opened on the first ledger miss: a run the ledger answers never imports diskcache.
        cache = runtime.cache if mode == "auto" else None
        value = cache.get(call.key) if cache is not None else None
        if value is not None:
            answers[call.key] = Answer(Reply(value["reply"], value.get("logprobs")), "cached", extra=reply_extra(value))
            continue
        missing.append(call)
    return answers, missing


def adopt_from_elsewhere(
    runtime: JudgeRuntime,
    ledger: Ledger,
    key: str,
    *,
    copy: bool,
    what: Literal["verdict", "generation"] = "verdict",
) -> dict[str, Any] | None:
    """The entry (a verdict, or a generation) for `key` from another verdict file, or None; with
    `copy`, written into `ledger` too.

    The other file's entry is also marked used (through the runtime's Ledger of that file), so a
    prune after a replay that relied on it keeps it.
    """
    index = stored_elsewhere(runtime)
    found = index.find_generation(key) if what == "generation" else index.find(key)
    if found is None or found.path == ledger.path:
        return None
    runtime.ledger_at(found.path).used.add(key)
    if copy:
        try:
            if what == "generation":
                ledger.put_generation(key, found.entry, replace=False)
            else:
                ledger.adopt(key, found.entry)
        except (StoreError, OSError) as exc:  # replayed all the same; a later writable run makes the copy
            from .unwritten import warn_unwritten  # on a failed write only

            warn_unwritten(ledger.path, key, exc, kept=found.path, what=what)
    return dict(found.entry)


def _replay_miss(plan: Plan, call: Call) -> JudgeError:
    from ..replay_miss import replay_miss  # the diagnosis loads only when a replay misses

    ledger = plan.ledger
    return replay_miss(
        call.key,
        stored_fields(plan, call),
        test=plan.context.nodeid if plan.context is not None else None,
        stored=ledger.entries() if ledger is not None else None,
        ledger_path=ledger.path if ledger is not None else None,
        settings=plan.settings,
    )
