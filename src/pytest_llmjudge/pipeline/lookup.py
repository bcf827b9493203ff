"""Lookup: each call's stored answer, from the test's verdict file, the rest of the store or the local
cache, and the calls that must go live.  A replay that misses raises, with what the miss differs in.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, cast

from ..errors import JudgeError, StoreError
from ..rubrics.base import Reply
from ..verdict import StoredScoreWarning
from .plan import Plan, stored_elsewhere, stored_fields

if TYPE_CHECKING:
    from ..backends.protocol import CallResult
    from ..runtime import JudgeRuntime
    from ..store.verdict_file import VerdictFile
    from .generations import Generation
    from .plan import Call, Planned


class Answer(NamedTuple):
    """The judge's reply to one call, and where it came from."""

    reply: Reply
    source: str  # "replayed" (verdict file), "cached" (local cache) or "live"
    stored: Mapping[str, Any] | None = None  # the verdict file entry a replayed reply came from
    result: CallResult | None = None  # a live call's result (its cost)
    extra: Mapping[str, Any] = MappingProxyType({})  # stored beside a new reply (see reply_extra)
    # Another test's verdict file the stored entry came from, where it is copied into this test's (auto mode)
    copied_from: Path | None = None


def reply_extra(fields: Mapping[str, Any]) -> dict[str, Any]:
    """What is stored beside a new reply: the response_format used, and earlier replies asked again."""
    return {k: fields[k] for k in ("structured", "retried_from") if fields.get(k) is not None}


def lookup(
    plan: Planned[Any], runtime: JudgeRuntime, calls: Sequence[Call | Generation] | None = None
) -> tuple[dict[str, Answer], list[Call | Generation]]:
    """The stored answers, by key, and the calls that must go live (replay: raise on a miss), of `calls`
    (a later step's) or of every call planned: a judgment's from the verdicts, a generation's from
    the generations of the verdict files.

    A key missed in the test's own file is looked up in the rest of the store (keys are content
    hashes: the same key is the same judgment wherever it is filed).  In auto mode an entry found
    there is copied into the test's file with the judgment's own (see `stored_elsewhere_for`).
    """
    mode = plan.settings.mode
    verdict_file = plan.verdict_file if mode in ("auto", "replay") else None
    answers: dict[str, Answer] = {}
    missing: list[Call | Generation] = []
    for call in plan.calls if calls is None else calls:
        if call.key in answers:
            continue
        entry, elsewhere = None, None
        if verdict_file is not None:
            entry = verdict_file.get(call.key, plan.what)
            if entry is not None:
                check_entry(call, entry, verdict_file.location)
            else:
                entry, elsewhere = stored_elsewhere_for(runtime, verdict_file, call, what=plan.what) or (None, None)
        if entry is not None:
            copy = elsewhere if mode == "auto" else None  # written with the judgment's own entries (finish)
            answers[call.key] = Answer(
                Reply(entry["reply"], entry.get("logprobs")), "replayed", entry, copied_from=copy
            )
            continue
        if mode == "replay":
            raise _replay_miss(plan, call)
        # The cache is opened on the first miss in the verdict file: a run it answers never imports diskcache.
        cache = runtime.cache if mode == "auto" else None
        value = cache.get(call.key) if cache is not None else None
        if value is not None and _mismatch(call, value) is not None:  # the cache is untrusted too: ask again
            runtime.note(f"llmjudge: ignored a local cache entry for key {call.key[:12]} recorded for another judgment")
            value = None
        if value is not None:
            answers[call.key] = Answer(Reply(value["reply"], value.get("logprobs")), "cached", extra=reply_extra(value))
            plan.cached_calls[0] += 1
            continue
        missing.append(call)
    return answers, missing


def stored_elsewhere_for(
    runtime: JudgeRuntime, verdict_file: VerdictFile, call: Call | Generation, *, what: Literal["verdict", "generation"]
) -> tuple[dict[str, Any], Path] | None:
    """The entry (a verdict, or a generation) for `call` from another verdict file, checked against it
    (`check_entry`), and that file; None where no other file holds it.

    The other file's entry is marked used (through the runtime's `VerdictFile` of that file), so a prune
    after a replay that relied on it keeps it.  Files the search could not read are noted for the run's
    summary.  In auto mode the entry is copied into the test's own file when the judgment is written, so
    it migrates; prune later removes the unused copy.
    """
    key = call.key
    index = stored_elsewhere(runtime)
    found = index.find(key, what)
    for problem in index.problems:
        runtime.note(f"llmjudge: skipped a verdict file: {problem}")
    if found is None or found.path == verdict_file.path:
        return None
    check_entry(call, found.entry, found.path)
    runtime.verdict_file_at(found.path).used.add(key)
    return dict(found.entry), found.path


def check_entry(call: Call | Generation, entry: Mapping[str, Any], path: Path | str) -> None:
    """Refuse a stored entry that was not recorded for `call` (copied under another key, or edited).

    The key is a hash of the request, and the entry keeps the hash of the messages it was recorded
    with (`messages_sha256`), its model and its sample: each must be this call's.  A stored score
    that is not a number is only warned about: the reply, parsed again, decides.
    """
    problem = _mismatch(call, entry)
    if problem is not None:
        raise StoreError(
            f"{path}: the entry under key {call.key[:12]} does not belong under it ({problem}); "
            "delete it and record again (--judge-mode=auto)"
        )
    score = entry.get("score", 0.0)
    if not isinstance(score, (int, float)) or isinstance(score, bool) or not math.isfinite(score):
        warnings.warn(
            StoredScoreWarning(
                f"{path}: key {call.key[:12]} stores score {str(score)[:40]!r}, not a number; its reply "
                "decides (re-record, or run `python -m pytest_llmjudge reparse`)"
            ),
            stacklevel=4,
        )


def _mismatch(call: Call | Generation, entry: Mapping[str, Any]) -> str | None:
    """What shows that `entry` was recorded for another call than `call`, or None."""
    model = entry.get("model", call.model_id)
    if model != call.model_id:
        return f"it was recorded with model {str(model)[:80]!r}, not {call.model_id!r}"
    sample = entry.get("sample", call.sample)
    if sample != call.sample or isinstance(sample, bool):
        return f"it was recorded as sample {str(sample)[:20]!r}, not {call.sample}"
    stored = entry.get("messages_sha256")
    if stored is None:  # written before messages were hashed: nothing to recompute
        return None
    if stored != call.messages_sha256:
        return "the judge messages it was recorded with are not this judgment's: messages_sha256 differs"
    return None


def _replay_miss(plan: Planned[Any], call: Call | Generation) -> JudgeError:
    from ..backends.litellm import LiteLLMBackend
    from .replay_miss import replay_miss  # the diagnosis loads only when a replay misses

    verdict_file = plan.verdict_file
    stored = None if verdict_file is None else verdict_file.entries(plan.what)
    return replay_miss(
        call.key,
        # A plan's calls are of its kind: a judgment's are Calls, a generation plan's Generations.
        stored_fields(plan, cast("Call", call)) if isinstance(plan, Plan) else cast("Generation", call).record(),
        test=plan.context.nodeid if plan.context is not None else None,
        stored=stored,
        verdict_file_path=verdict_file.path if verdict_file is not None else None,
        settings=plan.settings,
        what=plan.what,
        run=plan.context.run_text() if plan.context is not None else None,
        litellm=isinstance(plan.backend, LiteLLMBackend),
    )
