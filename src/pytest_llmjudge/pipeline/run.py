"""The one step loop every judgment and generation runs through: lookup, the live calls of what is
missing, the next step; then finish.

`steps` is that loop, for several plans at once (each step's live calls of every plan concurrent),
as a generator that hands out the live work and takes back its outcome: `run*` drives it on the
runtime's background loop from this thread, `arun` awaits it from the caller's own event loop.  The
background loop is asked for only when a call must go live: a replay never starts it.
"""

from __future__ import annotations

from collections.abc import Coroutine, Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import JudgeError, JudgmentFailed
from ..rubrics.base import Rubric
from .finish import finish, finish_generations, parse
from .item_cap import capped
from .lookup import Answer, lookup
from .plan import Call, Plan, Planned
from .record import note_error

if TYPE_CHECKING:
    from ..runtime import JudgeRuntime
    from ..verdict import Verdict
    from .generations import Generation, GenerationPlan  # a judgment's run never loads the generations' module

Outcome = dict[str, Answer] | BaseException  # a plan's answers by key, or its error
Live = Coroutine[Any, Any, list[Outcome]]
Steps = Generator[Live, list[Outcome], list[Outcome]]
MAX_STEPS = 8  # a rubric of your own that never stops asking is an error, not a bill


def run(plan: Plan, runtime: JudgeRuntime) -> Verdict:
    """All stages; the live calls (if any) run on the background loop while this thread waits."""
    return run_many([plan], runtime)[0]


async def arun(plan: Plan, runtime: JudgeRuntime) -> Verdict:
    """`run`, awaitable: the live calls are awaited, so the caller's own event loop keeps running."""
    return _finished([plan], await _awaited(steps([plan], runtime), runtime), runtime)[0]


def run_many(plans: Sequence[Plan], runtime: JudgeRuntime) -> list[Verdict]:
    """Several judgments, step by step together; the first error is raised after all finish."""
    return _finished(plans, _driven(steps(plans, runtime), runtime), runtime)


def generate(plan: GenerationPlan, runtime: JudgeRuntime) -> list[str]:
    """All stages for generations: their replies, stored or live, in the order asked for."""
    return _generated(plan, _driven(steps([plan], runtime), runtime), runtime)


async def agenerate(plan: GenerationPlan, runtime: JudgeRuntime) -> list[str]:
    """`generate`, awaitable."""
    return _generated(plan, await _awaited(steps([plan], runtime), runtime), runtime)


def steps(plans: Sequence[Planned[Any]], runtime: JudgeRuntime) -> Steps:
    """Lookup, then the live calls of what is missing, step after step, for every plan together.

    Yields each step's live work (every plan's missing calls at once) and is sent its outcomes;
    returns each plan's answers, or the error that ended it (a pipeline error, or a live call's)."""
    answers: list[dict[str, Answer]] = [{} for _ in plans]
    failed: dict[int, BaseException] = {}
    pending: list[tuple[int, Sequence[Call | Generation] | None]] = [(i, None) for i in range(len(plans))]
    while pending:
        going: list[tuple[int, list[Call | Generation]]] = []
        for i, calls in pending:
            try:
                found, missing = lookup(plans[i], runtime, calls)
            except (JudgeError, JudgmentFailed) as exc:
                failed[i] = exc
                continue
            answers[i].update(found)
            if missing:
                going.append((i, missing))
        if going:
            live = yield _live_all([(plans[i], missing) for i, missing in going], runtime)
            for (i, _), outcome in zip(going, live, strict=True):
                if isinstance(outcome, BaseException):
                    failed[i] = outcome
                else:
                    answers[i].update(outcome)
        stepped: list[tuple[int, Sequence[Call | Generation] | None]] = []
        for i, _ in pending:
            plan = plans[i]
            if i in failed or not isinstance(plan, Plan):  # a generation asks in one step
                continue
            try:
                more = next_calls(plan, answers[i])
            except (JudgeError, JudgmentFailed) as exc:
                failed[i] = exc
                continue
            if more:
                stepped.append((i, more))
        pending = stepped
    return [failed.get(i, each) for i, each in enumerate(answers)]


def next_calls(plan: Plan, answers: Mapping[str, Answer]) -> tuple[Call, ...]:
    """The calls of the next step of every judge and sample of `plan` (added to its calls), or () when
    no step is left.  A rubric of one step (the default `next_prompts`) is never asked.

    Every judge and sample is its own chain: its next step is built from its own earlier replies.
    """
    rubric = plan.rubric
    if type(rubric).next_prompts is Rubric.next_prompts:
        return ()
    chains = list(plan.chains().items())
    asked = [
        rubric.next_prompts(plan.case, [(c.prompt, parse(rubric, c, answers[c.key].reply)) for c in calls])
        for _, calls in chains
    ]
    # Every chain's next step is counted, with what the judgment asked before, before any of it is sent.
    before = sum(call.prompt.items for call in plan.calls)
    new: list[Call] = []
    for ((model_id, sample), calls), prompts in zip(
        chains, capped(rubric, plan.case, plan.settings, asked, before=before), strict=True
    ):
        if not prompts:
            continue
        last = calls[-1]
        if last.step >= MAX_STEPS:
            raise JudgeError(f"rubric {rubric!r} asked for more than {MAX_STEPS} steps; its next_prompts must end")
        new += [last.setup.call(model_id, last.send_model, sample, p, last.step + 1, run=last.run) for p in prompts]
    plan.calls += tuple(new)
    return tuple(new)


def _driven(loop: Steps, runtime: JudgeRuntime) -> list[Outcome]:
    """`loop` run to its end from this thread, its live work on the runtime's background loop."""
    try:
        live = next(loop)
        while True:
            live = loop.send(runtime.loop.run(live))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def _awaited(loop: Steps, runtime: JudgeRuntime) -> list[Outcome]:
    """`_driven`, awaited from the caller's event loop."""
    try:
        live = next(loop)
        while True:
            live = loop.send(await runtime.loop.wrap(live))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def _finished(plans: Sequence[Plan], outcomes: Sequence[Outcome], runtime: JudgeRuntime) -> list[Verdict]:
    """Each judgment finished and recorded (or its error recorded); the first error raised after all."""
    errors: list[BaseException] = []
    verdicts = []
    for plan, outcome in zip(plans, outcomes, strict=True):
        try:
            if isinstance(outcome, BaseException):
                raise outcome
            verdict = finish(plan, outcome, runtime)  # its record noted there, before its outcome is stored
        except (JudgeError, JudgmentFailed) as exc:
            note_error(plan, exc)
            errors.append(exc)
            continue
        verdicts.append(verdict)
    if errors:
        raise errors[0]
    return verdicts


def _generated(plan: GenerationPlan, outcomes: Sequence[Outcome], runtime: JudgeRuntime) -> list[str]:
    (answers,) = outcomes
    if isinstance(answers, BaseException):
        raise answers
    return finish_generations(plan, answers, runtime)


async def _live_all(
    going: Sequence[tuple[Planned[Any], list[Call | Generation]]], runtime: JudgeRuntime
) -> list[Outcome]:
    """Every plan's missing calls of this step, all at once."""
    import asyncio  # with the first live calls: a replay never waits on any

    from .live import call_live

    return await asyncio.gather(*(call_live(plan, runtime, missing) for plan, missing in going), return_exceptions=True)
