"""The pipeline of every recorded call: plan -> lookup (and replay-miss diagnosis) -> live calls -> finish.

One module per stage, each a function over plain, typed data.  `plan` merges the settings, chooses
the backend and names every call by its key.  `lookup` finds stored replies synchronously (a replay
never starts the background loop or imports LiteLLM).  `live.call_live` sends only the calls that
must go live, concurrently, on the runtime's background loop, under the budget and one lock per key.
`finish` parses, writes back, notes drift, aggregates and returns the Verdict.  `run`, `arun` and
`run_many` (here) chain the stages, one step at a time for a rubric that asks in steps (`steps`
builds a later step's calls from the earlier replies); `record` adds each judgment to its test's
records for reports.  A generation (`generations`: the model under test asked, its reply recorded)
takes the same stages through `generate` and `agenerate`; its replies are kept, not parsed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import JudgeError, JudgmentFailed
from ..lazy import lazy_exports
from .finish import finish, finish_generations
from .generations import Generation, GenerationPlan
from .lookup import Answer, lookup
from .plan import Call, Options, Plan, plan, stored_elsewhere
from .record import note_error, note_verdict
from .steps import next_calls

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
    "Generation",
    "GenerationPlan",
    "Options",
    "Plan",
    "agenerate",
    "arun",
    "call_live",
    "finish",
    "generate",
    "lookup",
    "plan",
    "run",
    "run_many",
    "stored_elsewhere",
]


def run(plan: Plan, runtime: JudgeRuntime) -> Verdict:
    """All stages, step by step; the live calls (if any) run on the background loop while this thread waits."""
    try:
        verdict = finish(plan, answered(plan, runtime), runtime)
    except (JudgeError, JudgmentFailed) as exc:
        note_error(plan, exc)
        raise
    note_verdict(plan, verdict)
    return verdict


async def arun(plan: Plan, runtime: JudgeRuntime) -> Verdict:
    """`run`, awaitable: the live calls are awaited, so the caller's own event loop keeps running."""
    try:
        verdict = finish(plan, await aanswered(plan, runtime), runtime)
    except (JudgeError, JudgmentFailed) as exc:
        note_error(plan, exc)
        raise
    note_verdict(plan, verdict)
    return verdict


def generate(plan: GenerationPlan, runtime: JudgeRuntime) -> list[str]:
    """All stages for generations: their replies, stored or live, in the order asked for."""
    return finish_generations(plan, answered(plan, runtime), runtime)


async def agenerate(plan: GenerationPlan, runtime: JudgeRuntime) -> list[str]:
    """`generate`, awaitable."""
    return finish_generations(plan, await aanswered(plan, runtime), runtime)


def answered(plan: Plan | GenerationPlan, runtime: JudgeRuntime) -> dict[str, Answer]:
    """Lookup, then the live calls of what is missing, step after step: every call's answer, by key."""
    answers: dict[str, Answer] = {}
    calls: Sequence[Call | Generation] | None = None  # the first step: every call planned
    while True:
        found, missing = lookup(plan, runtime, calls)
        answers.update(found)
        if missing:
            from .live import call_live

            answers.update(runtime.loop.run(call_live(plan, runtime, missing)))
        calls = next_calls(plan, answers) if isinstance(plan, Plan) else ()
        if not calls:
            return answers


async def aanswered(plan: Plan | GenerationPlan, runtime: JudgeRuntime) -> dict[str, Answer]:
    """`answered`, awaitable."""
    answers: dict[str, Answer] = {}
    calls: Sequence[Call | Generation] | None = None
    while True:
        found, missing = lookup(plan, runtime, calls)
        answers.update(found)
        if missing:
            from .live import call_live

            answers.update(await runtime.loop.wrap(call_live(plan, runtime, missing)))
        calls = next_calls(plan, answers) if isinstance(plan, Plan) else ()
        if not calls:
            return answers


def run_many(plans: Sequence[Plan], runtime: JudgeRuntime) -> list[Verdict]:
    """Several judgments, step by step together: each step's live calls of every judgment are concurrent.
    The first error is raised after all finish."""
    errors: list[BaseException] = []
    failed: set[int] = set()
    answers_of: dict[int, dict[str, Answer]] = {id(each): {} for each in plans}

    def fail(each: Plan, exc: BaseException) -> None:
        note_error(each, exc)
        errors.append(exc)
        failed.add(id(each))

    pending: list[tuple[Plan, Sequence[Call] | None]] = [(each, None) for each in plans]
    while pending:
        going_live: list[tuple[Plan, list[Call | Generation]]] = []
        for each, calls in pending:
            try:
                found, missing = lookup(each, runtime, calls)
            except (JudgeError, JudgmentFailed) as exc:
                fail(each, exc)
                continue
            answers_of[id(each)].update(found)
            if missing:
                going_live.append((each, missing))
        if going_live:
            for (each, _), outcome in zip(going_live, runtime.loop.run(_live_all(going_live, runtime)), strict=False):
                if isinstance(outcome, BaseException):
                    fail(each, outcome)
                else:
                    answers_of[id(each)].update(outcome)
        stepped: list[tuple[Plan, Sequence[Call] | None]] = []
        for each, _ in pending:
            if id(each) in failed:
                continue
            try:
                more = next_calls(each, answers_of[id(each)])
            except (JudgeError, JudgmentFailed) as exc:
                fail(each, exc)
                continue
            if more:
                stepped.append((each, more))
        pending = stepped
    verdicts = []
    for each in plans:
        if id(each) in failed:
            continue
        try:
            verdict = finish(each, answers_of[id(each)], runtime)
        except (JudgeError, JudgmentFailed) as exc:
            note_error(each, exc)
            errors.append(exc)
            continue
        note_verdict(each, verdict)
        verdicts.append(verdict)
    if errors:
        raise errors[0]
    return verdicts


async def _live_all(
    going_live: Sequence[tuple[Plan, list[Call | Generation]]], runtime: JudgeRuntime
) -> list[dict[str, Answer] | BaseException]:
    """Every judgment's missing calls of this step, all at once."""
    import asyncio  # with the first live calls: a replay never waits on any

    from .live import call_live

    return await asyncio.gather(
        *(call_live(each, runtime, missing) for each, missing in going_live), return_exceptions=True
    )
