"""The judgment pipeline: plan -> lookup (and replay-miss diagnosis) -> live calls -> finish.

One module per stage, each a function over plain, typed data.  `plan` merges the settings, chooses
the backend and names every call by its key.  `lookup` finds stored replies synchronously (a replay
never starts the background loop or imports LiteLLM).  `live.call_live` sends only the calls that
must go live, concurrently, on the runtime's background loop, under the budget and one lock per key.
`finish` parses, writes back, notes drift, aggregates and returns the Verdict.  `run`, `arun` and
`run_many` (here) chain the stages; `record` adds each judgment to its test's records for reports.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import JudgeError, JudgmentFailed
from ..lazy import lazy_exports
from .finish import finish
from .lookup import Answer, lookup
from .plan import Call, Options, Plan, plan, stored_elsewhere
from .record import note_error, note_verdict

if TYPE_CHECKING:
    from ..runtime import JudgeRuntime
    from ..verdict import Verdict
    from .live import call_live


# The live stage (retries, the limiter, asking again) loads on the first call that must go live:
# a run that replays every verdict never imports it.
__getattr__, __dir__ = lazy_exports(__name__, {"call_live": ".live"}, globals())


__all__ = [
    "Answer",
    "Call",
    "Options",
    "Plan",
    "arun",
    "call_live",
    "finish",
    "lookup",
    "plan",
    "run",
    "run_many",
    "stored_elsewhere",
]


def run(plan: Plan, runtime: JudgeRuntime) -> Verdict:
    """All stages; the live calls (if any) run on the background loop while this thread waits."""
    try:
        answers, missing = lookup(plan, runtime)
        if missing:
            from .live import call_live

            answers.update(runtime.loop.run(call_live(plan, runtime, missing)))
        verdict = finish(plan, answers, runtime)
    except (JudgeError, JudgmentFailed) as exc:
        note_error(plan, exc)
        raise
    note_verdict(plan, verdict)
    return verdict


async def arun(plan: Plan, runtime: JudgeRuntime) -> Verdict:
    """`run`, awaitable: the live calls are awaited, so the caller's own event loop keeps running."""
    try:
        answers, missing = lookup(plan, runtime)
        if missing:
            from .live import call_live

            answers.update(await runtime.loop.wrap(call_live(plan, runtime, missing)))
        verdict = finish(plan, answers, runtime)
    except (JudgeError, JudgmentFailed) as exc:
        note_error(plan, exc)
        raise
    note_verdict(plan, verdict)
    return verdict


def run_many(plans: Sequence[Plan], runtime: JudgeRuntime) -> list[Verdict]:
    """Several judgments, their live calls all concurrent; the first error is raised after all finish."""
    errors: list[BaseException] = []
    looked_up: list[tuple[Plan, dict[str, Answer], list[Call]]] = []
    for each in plans:
        try:
            answers, missing = lookup(each, runtime)
        except (JudgeError, JudgmentFailed) as exc:
            note_error(each, exc)
            errors.append(exc)
            continue
        looked_up.append((each, answers, missing))

    going_live = [(each, answers, missing) for each, answers, missing in looked_up if missing]

    async def live_all() -> list[dict[str, Answer] | BaseException]:
        from .live import call_live

        return await asyncio.gather(
            *(call_live(each, runtime, missing) for each, _, missing in going_live), return_exceptions=True
        )

    failed: set[int] = set()
    if going_live:
        for (each, answers, _), outcome in zip(going_live, runtime.loop.run(live_all()), strict=False):
            if isinstance(outcome, BaseException):
                note_error(each, outcome)
                errors.append(outcome)
                failed.add(id(each))
            else:
                answers.update(outcome)
    verdicts = []
    for each, answers, _ in looked_up:
        if id(each) in failed:
            continue
        try:
            verdict = finish(each, answers, runtime)
        except (JudgeError, JudgmentFailed) as exc:
            note_error(each, exc)
            errors.append(exc)
            continue
        note_verdict(each, verdict)
        verdicts.append(verdict)
    if errors:
        raise errors[0]
    return verdicts
